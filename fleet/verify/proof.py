"""Evidence where tests cannot run: the alias-rename proof.

A test file that no longer imports on the current Python is exactly the kind of file a migration
touches, and then the impacted tests can only be ``unknown``. A patch whose *every* change is the
rename of an alias to the object it aliases is safe without running anything, if that is shown:
:func:`alias_rename_proof` compares the token streams of each file before and after (any other
difference - an argument, a literal, a new line - and there is no proof), and asks the target's
own interpreter, in the sandbox, whether each old name is the new one (the same object) or a
deprecation wrapper that only warns and calls it (``unittest``'s ``_deprecate``). The verdict
then says that this, not a test run, is its evidence.
"""

from __future__ import annotations

import io
import json
import tokenize
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from fleet.verify._patch import FilePatch, Trees, read
from fleet.verify.execution import run
from sandbox import Sandbox

__all__ = ["Proof", "alias_rename_proof", "renames"]

# The classes whose aliases the proof can check (receivers by how test code reaches them).
_OWNERS = {"unittest": "unittest.TestCase"}

_CHECK = r'''
import importlib, json, sys, warnings
mod, cls = sys.argv[1].rsplit(".", 1)
owner = getattr(importlib.import_module(mod), cls)
out = {}
for pair in sys.argv[2:]:
    old, new = pair.split(":")
    a, b = owner.__dict__.get(old), getattr(owner, new, None)
    if a is None or b is None:
        out[pair] = "missing"
    elif a is b:
        out[pair] = "same object"
    else:
        cells = [c.cell_contents for c in (getattr(a, "__closure__", None) or ())]
        warns = "warn" in getattr(getattr(a, "__code__", None), "co_names", ())
        out[pair] = ("deprecation wrapper" if warns and any(c is b for c in cells)
                     else "different")
print(json.dumps({"python": sys.version.split()[0], "checked": out}))
'''


@dataclass(frozen=True)
class Proof:
    """``pairs``: ``old -> new`` attribute renames; ``how``: what the interpreter showed."""

    owner: str
    pairs: tuple[tuple[str, str], ...]
    python: str
    how: dict[str, str]

    def text(self) -> str:
        shown = ", ".join(f"{o} -> {n} ({self.how[f'{o}:{n}']})" for o, n in self.pairs)
        return (f"alias-rename proof, no test run: every change renames an alias of "
                f"{self.owner} to the object it aliases, shown in Python {self.python}: {shown}")


def _tokens(text: str) -> list[tuple[int, str]] | None:
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING}
    try:
        return [(t.type, t.string) for t in tokenize.generate_tokens(io.StringIO(text).readline)
                if t.type not in skip]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None


def renames(before: str, after: str) -> list[tuple[str, str]] | None:
    """The ``.old`` -> ``.new`` attribute renames that are the only difference between two
    sources' token streams, or ``None`` when anything else differs."""
    old, new = _tokens(before), _tokens(after)
    if old is None or new is None or len(old) != len(new):
        return None
    pairs: list[tuple[str, str]] = []
    for i, (a, b) in enumerate(zip(old, new, strict=True)):
        if a == b:
            continue
        if a[0] != tokenize.NAME or b[0] != tokenize.NAME or i == 0 or old[i - 1][1] != ".":
            return None
        pairs.append((a[1], b[1]))
    return pairs


def alias_rename_proof(trees: Trees, files: Sequence[FilePatch], sandbox: Sandbox | None,
                       pythons: Iterable[str]) -> Proof | None:
    """The proof for the patch, or ``None`` (some change is not an alias rename, the names are
    not ``unittest.TestCase`` aliases, or no given interpreter shows them to be the same)."""
    if sandbox is None or not files:
        return None
    pairs: set[tuple[str, str]] = set()
    for fp in files:
        if fp.binary or not fp.old_path or not fp.new_path or fp.old_path != fp.new_path:
            return None
        before, after = read(trees.base, fp.old_path), read(trees.patched, fp.new_path)
        if before is None or after is None or "unittest" not in before:
            return None
        found = renames(before, after)
        if not found:
            return None
        pairs |= set(found)
    owner = _OWNERS["unittest"]
    ordered = tuple(sorted(pairs))
    for python in pythons:
        result = run(sandbox, trees.base, [python, "-c", _CHECK, owner,
                                           *(f"{o}:{n}" for o, n in ordered)], 60, python)
        try:
            shown = json.loads(result.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            continue
        how = shown.get("checked", {})
        if all(how.get(f"{o}:{n}") in ("same object", "deprecation wrapper") for o, n in ordered):
            return Proof(owner, ordered, str(shown.get("python", "")), how)
    return None
