"""Waves: units whose lease sets do not conflict run together; the lock order across units."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from fleet.plan._units import containers
from fleet.types import LeaseMode, WorkUnit

__all__ = ["assign_waves", "expected_parallelism"]


@dataclass
class _Wave:
    held: dict[str, set[str]] = field(default_factory=dict)  # symbol -> modes held on it
    under: dict[str, set[str]] = field(default_factory=dict)  # ancestor -> modes held inside

    def conflicts(self, symbol: str, mode: LeaseMode) -> bool:
        def clash(modes: set[str] | None) -> bool:
            return bool(modes) and (mode == "write" or "write" in (modes or set()))

        if clash(self.held.get(symbol)) or clash(self.under.get(symbol)):
            return True
        return any(clash(self.held.get(a)) for a in containers(symbol))

    def add(self, symbol: str, mode: LeaseMode) -> None:
        self.held.setdefault(symbol, set()).add(mode)
        for anc in containers(symbol):
            self.under.setdefault(anc, set()).add(mode)


def _requests(unit: WorkUnit) -> list[tuple[str, LeaseMode]]:
    writes: list[tuple[str, LeaseMode]] = [(s, "write") for s in unit.write_set]
    return writes + [(s, "read") for s in unit.read_set if s not in unit.write_set]


def assign_waves(units: Sequence[WorkUnit]) -> list[WorkUnit]:
    """Greedy colouring in ``(rank, key)`` order: each unit goes to the first wave where none of
    its leases conflicts (hierarchically) with a lease of a unit already there."""
    waves: list[_Wave] = []
    out = []
    for unit in sorted(units, key=lambda u: (u.rank, u.key)):
        requests = _requests(unit)
        index = next(
            (i for i, w in enumerate(waves) if not any(w.conflicts(s, m) for s, m in requests)),
            len(waves),
        )
        if index == len(waves):
            waves.append(_Wave())
        wave = waves[index]
        for symbol, mode in requests:
            wave.add(symbol, mode)
        out.append(replace(unit, wave=index))
    return out


def expected_parallelism(wave_sizes: Sequence[int], max_parallel: int) -> float:
    """Units per sequential step when each wave runs at most ``max_parallel`` units at once."""
    steps = sum(math.ceil(size / max_parallel) for size in wave_sizes)
    return round(sum(wave_sizes) / steps, 2) if steps else 0.0
