"""The ``compat`` gate: a patch must not raise the minimum Python its files need above the
oldest Python the target supports (:mod:`fleet.verify.target`). The minimum a file needs is
measured by vermin (a well-kept detector of the version each construct, module, member and
keyword first appeared in), before and after the patch, so a construct the file already used
is not held against the patch."""

from __future__ import annotations

import re
from collections.abc import Iterable

from vermin import Config, visit

from fleet.types import Verdict
from fleet.verify._patch import FilePatch, Trees, read
from fleet.verify.target import Version, supported_pythons, version_text

__all__ = ["gate_compat", "needs"]

_LINE = re.compile(r"^(L\d+(?: C\d+)?): (.*) requires? (.*)$")  # "named expressions require"


def _config() -> Config:
    config = Config()
    config.set_verbose(3)
    # A file written for Python 2 and 3 at once (freezegun 0.3.15's api.py: ``collections.abc``
    # and ``str.decode`` behind version checks) makes vermin raise InvalidVersionException, a
    # BaseException, when it combines them; the floor here is a Python 3 one, so 2-only
    # constructs are set aside and the minimum is that of the constructs Python 3 has.
    config.set_ignore_incomp(True)
    return config


def needs(source: str) -> tuple[Version | None, list[tuple[Version, str]]]:
    """The minimum Python 3 ``source`` needs, and each finding as ``(version, "L4: pattern
    matching")``; ``(None, [])`` when vermin cannot tell (a file that does not parse)."""
    try:
        visitor = visit(source, _config())
    except (SyntaxError, ValueError, RecursionError):
        return None, []
    if not hasattr(visitor, "output_text"):  # vermin's minimum to parse it: not a Python 3 file
        return None, []
    minimum = visitor.minimum_versions()[1]
    found: list[tuple[Version, str]] = []
    for line in visitor.output_text().splitlines():
        match = _LINE.match(line.strip())
        if not match:
            continue
        versions = re.findall(r"\b3\.(\d+)\b", match[3])
        if versions:
            found.append(((3, int(versions[-1])), f"{match[1]}: {match[2]}"))
    if not isinstance(minimum, tuple):  # 2-only constructs set aside: the greatest 3.x named
        minimum = max((v for v, _ in found), default=(3, 0))
    return minimum, found


def gate_compat(trees: Trees, files: Iterable[FilePatch]) -> Verdict:
    """Rejects when a patched Python file needs a newer Python than the target's floor and than
    the same file needed before; accepts (``details.skipped``) when the target declares none."""
    target = supported_pythons(trees.base)
    floor = target.floor
    if floor is None:
        return Verdict("compat", "accept", "the target declares no supported Python: nothing "
                       "to hold the patch to", {"skipped": True})
    raised: list[str] = []
    checked = 0
    for fp in files:
        if fp.binary or fp.new_path is None or not fp.new_path.endswith(".py"):
            continue
        after = read(trees.patched, fp.new_path)
        if after is None:
            continue
        checked += 1
        need_after, found = needs(after)
        if need_after is None or need_after <= floor:
            continue
        before = read(trees.base, fp.old_path)
        need_before = needs(before)[0] if before is not None else None
        if need_before is not None and need_after <= need_before:
            continue
        old = {why for v, why in needs(before)[1]} if before is not None else set()
        why = [f"{w} ({version_text(v)})" for v, w in found
               if v > floor and w.split(": ", 1)[-1] not in {o.split(": ", 1)[-1] for o in old}]
        was = "" if need_before is None else f" ({version_text(need_before)} before)"
        raised.append(f"{fp.new_path} needs Python {version_text(need_after)}{was}: "
                      f"{'; '.join(why[:5]) or 'vermin'}")
    details: dict[str, object] = {"floor": version_text(floor),
                                  "sources": list(target.sources), "raised": raised,
                                  "python2_not_judged": target.python2}
    if raised:
        return Verdict("compat", "reject", f"the patch raises the minimum Python above "
                       f"{version_text(floor)}, the oldest the target supports "
                       f"({'; '.join(target.sources)}): " + "; ".join(raised), details)
    python2 = f"; {target.python2_note()}" if target.python2 else ""
    return Verdict("compat", "accept", f"{checked} Python file(s) still run on "
                   f"{version_text(floor)}+ ({'; '.join(target.sources)}){python2}", details)
