"""``map_in_threads``: a cold index's extraction over files, in threads that take the files
one by one from a shared counter, the calling thread being one of them.

``ThreadPoolExecutor.map`` made a future per file and left the calling thread waiting on each
in turn: for every file the caller woke up and took the GIL from an extracting thread only to
store one result (Django: 2,788 futures, thousands of forced GIL hand-offs). Here the caller
extracts as well, and reports the files done so far, in order, after each file of its own.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

__all__ = ["map_in_threads"]

T = TypeVar("T")
R = TypeVar("R")


def map_in_threads(fn: Callable[[T], R], items: Sequence[T], threads: int,
                   done: Callable[[int, R], None] | None = None) -> list[R]:
    """``[fn(x) for x in items]`` in ``threads`` threads (the caller one of them). ``done(i,
    result)`` is called in the calling thread for every item in order, as soon as it and
    every item before it are done. An exception in any thread stops the others taking new
    items and is raised here."""
    n = len(items)
    results: list[R] = []
    finished = [False] * n
    slots: list[R | None] = [None] * n
    counter = itertools.count()  # next() is atomic under the GIL: each index taken once
    failed: list[BaseException] = []

    def work() -> None:
        while not failed:
            i = next(counter)
            if i >= n:
                return
            try:
                slots[i] = fn(items[i])
            except BaseException as exc:
                failed.append(exc)
                raise
            finished[i] = True

    def report() -> None:
        while len(results) < n and finished[len(results)]:
            i = len(results)
            result = slots[i]
            slots[i] = None
            results.append(result)  # type: ignore[arg-type]
            if done is not None:
                done(i, result)  # type: ignore[arg-type]

    with ThreadPoolExecutor(max(1, threads - 1), "fleet-index") as pool:
        helpers = [pool.submit(work) for _ in range(threads - 1)]
        try:
            while not failed:
                i = next(counter)
                if i >= n:
                    break
                slots[i] = fn(items[i])
                finished[i] = True
                report()
        except BaseException as exc:
            failed.append(exc)
            raise
        for helper in helpers:
            helper.result()  # the first helper's exception, if any
    report()
    return results
