"""Canonical lease keys: every spelling of one piece of code becomes one key, or an error.

A lease key is ``path`` (a whole file) or ``path::Qualified.name``. Aliases that would let two
holders write one symbol under two keys:

- the path: ``./a.py``, ``pkg//a.py``, a file or directory symlink inside the repository
  (``alias.py -> billing/legacy.py``) all become the real repository-relative path
  (:func:`resolve_path`, when the store knows the repository); a link that leaves it, a loop, an
  absolute path or ``..`` above the root is refused;
- the name: in a Python file each name is NFKC-normalised, as Python binds identifiers
  (``café`` NFC and NFD, ``ﬁx`` and ``fix`` are one name); other languages bind names as
  written, so their names are kept (the graph does the same: ``fleet.graph._extract``);
- the spelling: ``a.py::Foo::bar`` and ``a.py::Foo.bar`` are one symbol (``.`` is the one
  separator inside a file), an empty name (``a.py::``, ``Foo..bar``) is refused.

Every string must be valid Unicode without control characters (a lone surrogate cannot be
stored or encoded; a newline would forge ledger lines).
"""

from __future__ import annotations

import os
import stat
import unicodedata
from pathlib import Path, PurePosixPath

from fleet.errors import FleetError

__all__ = ["LeaseKeyError", "canonical_name", "canonical_symbol", "check_text", "resolve_path"]

PYTHON_SUFFIXES = (".py", ".pyi")
MAX_LINK_HOPS = 40  # Linux's own limit (ELOOP)


class LeaseKeyError(FleetError, ValueError):
    """A lease key (path or symbol) that has no canonical form; the message names it."""


def check_text(value: str, what: str) -> str:
    """``value`` when it is valid Unicode (no lone surrogates) without control characters."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise LeaseKeyError(f"{what} is not valid Unicode: {value!r}") from None
    if not value.isprintable():
        for char in value:
            if unicodedata.category(char) == "Cc":
                raise LeaseKeyError(
                    f"{what} contains the control character U+{ord(char):04X}: {value!r}"
                )
    return value


def _is_python(path: str) -> bool:
    return path.endswith(PYTHON_SUFFIXES)


def canonical_name(path: str, qualified: str) -> str:
    """The one spelling of ``qualified`` (a name inside ``path``): ``::`` read as ``.``, NFKC
    in Python files; empty names refused."""
    check_text(qualified, "symbol")
    parts = qualified.replace("::", ".").split(".")
    if any(not part for part in parts):
        raise LeaseKeyError(f"symbol has an empty name: {qualified!r}")
    if _is_python(path) and not qualified.isascii():
        parts = [unicodedata.normalize("NFKC", part) for part in parts]
    for part in parts:
        if part != part.strip():
            raise LeaseKeyError(f"symbol name has surrounding spaces: {part!r}")
    return ".".join(parts)


def _lexical(path: str) -> str:
    check_text(path, "path")
    if "\\" in path:
        raise LeaseKeyError(f"path must use '/': {path!r}")
    pure = PurePosixPath(path)
    if pure.is_absolute():
        raise LeaseKeyError(f"path must be relative to the repository: {path!r}")
    if ".." in pure.parts:
        raise LeaseKeyError(f"path must not contain '..': {path!r}")
    if not pure.parts or pure.parts == (".",):
        raise LeaseKeyError(f"path must name a file in the repository: {path!r}")
    return pure.as_posix()


def canonical_symbol(symbol: str, root: str | Path | None = None) -> str:
    """The canonical key of ``symbol`` (``path`` or ``path::name``); with ``root`` the path is
    resolved through symlinks inside that repository (:func:`resolve_path`)."""
    check_text(symbol, "lease symbol")
    path, sep, qualified = symbol.partition("::")
    path = _lexical(path) if root is None else resolve_path(root, path)
    if not sep:
        return path
    return f"{path}::{canonical_name(path, qualified)}"


def _spelling(directory: str, part: str) -> str:
    """The key of a path component that does not exist as written: the existing entry it is
    another Unicode spelling of (NFC and NFD of one name: ``café.py`` asked as ``cafe\u0301.py``),
    else its NFC form, so that two spellings of one name are one key."""
    if part.isascii():
        return part
    wanted = unicodedata.normalize("NFC", part)
    try:
        names = os.listdir(directory)
    except OSError:
        return wanted
    return next((n for n in names if unicodedata.normalize("NFC", n) == wanted), wanted)


def resolve_path(root: str | Path, path: str) -> str:
    """The real path of ``path`` relative to the repository at ``root``: each symlink is
    followed (at most 40 hops) and must stay inside the repository; a component that does not
    exist is the existing entry it is a Unicode spelling of, else its NFC form. Raises
    :class:`LeaseKeyError` naming ``path``."""
    rel = _lexical(path)
    real_root = os.path.realpath(root)
    pending = list(PurePosixPath(rel).parts)
    done: list[str] = []
    hops = 0
    while pending:
        part = pending.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            if not done:
                raise LeaseKeyError(f"path resolves outside the repository: {path!r}")
            done.pop()
            continue
        here = os.path.join(real_root, *done, part)
        try:
            mode = os.lstat(here).st_mode
        except (FileNotFoundError, NotADirectoryError):
            done.append(_spelling(os.path.join(real_root, *done), part))
            continue
        except OSError as exc:
            raise LeaseKeyError(f"path cannot be resolved ({exc.strerror}): {path!r}") from None
        if not stat.S_ISLNK(mode):
            done.append(part)
            continue
        hops += 1
        if hops > MAX_LINK_HOPS:
            raise LeaseKeyError(f"path is a symlink loop: {path!r}")
        try:
            target = os.readlink(here)
        except OSError as exc:
            raise LeaseKeyError(f"path cannot be resolved ({exc.strerror}): {path!r}") from None
        if os.path.isabs(target):
            inside = os.path.realpath(os.path.dirname(target))
            if inside != real_root and not inside.startswith(real_root + os.sep):
                raise LeaseKeyError(f"path is a symlink leaving the repository: {path!r}")
            target = os.path.relpath(os.path.join(inside, os.path.basename(target)), real_root)
            done = []
        pending[:0] = list(PurePosixPath(target).parts)
    if not done:
        raise LeaseKeyError(f"path must name a file in the repository: {path!r}")
    return "/".join(done)
