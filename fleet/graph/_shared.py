"""Small helpers the graph's modules share (the two Python extractors, the index, the
graph and snapshots)."""

from __future__ import annotations

import contextlib
import gc
import sys
from collections.abc import Iterator

__all__ = ["count_lines", "gc_paused", "pytest_file", "release_free_memory", "scope_at"]


def count_lines(src: bytes) -> int:
    return src.count(b"\n") + (1 if src and not src.endswith(b"\n") else 0)


def pytest_file(path: str) -> bool:
    """Whether ``path`` holds pytest tests or fixtures (its functions' parameters may name
    fixtures): conftest.py and the test modules of ``_graph.is_test_file``."""
    base = path.rsplit("/", 1)[-1]
    return (base in ("conftest.py", "tests.py") or base.startswith("test_")
            or base.endswith("_test.py") or path == "test.py")


def scope_at(spans: list[tuple[int, int, str]], module_id: str, byte: int) -> str:
    """The innermost definition containing ``byte`` (spans sorted by start, outer first)."""
    scope = module_id
    for s_start, s_end, s_id in spans:  # imports sit mostly above the first definition
        if s_start > byte:
            break
        if s_end > byte:
            scope = s_id
    return scope


def release_free_memory() -> None:
    """Hand the C heap's free pages back to the system (glibc ``malloc_trim``; a no-op
    elsewhere). The parser threads' trees are malloc'ed in per-thread arenas and freed file by
    file: after Django's extraction 14 MB of free pages stay resident without it, and the
    forked resolvers start with them too."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has none)
        return
    trim(0)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector: indexing allocates millions of small acyclic
    objects, and the collector re-scanning them costs about a third of the run."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            # The objects allocated meanwhile are all still in the youngest generation: the
            # first collection after re-enabling would scan every one of them (and the next
            # the survivors again). Freezing and unfreezing moves them to the oldest
            # generation without a scan; any cycle among them is still freed by the next
            # full collection.
            gc.freeze()
            gc.unfreeze()
            gc.enable()
