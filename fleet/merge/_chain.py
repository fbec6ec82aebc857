"""A whole-result check: a linear chain of subclasses that both sides extended from its last link.

Medusa ``07347403f0c1`` and ``9ef26842d67f`` (``medusa/databases/main_db.py``, 32nd set): the
file's schema migrations are one chain of classes, each subclassing the one before
(``class AddShowLists(MoveSceneExceptions)``), each testing the version the one before sets; the
runner walks ``__subclasses__()``. Each side appended its own migration to the chain's last class,
both testing ``version >= (44, 16)``; the merge kept the two as siblings, so the second never ran
on an existing database. The humans made one the other's subclass and renumbered it: an order
and a number only they can choose. The file conflicts.

A *chain's last link* is a class of base (defined once in the module, also inside a module-level
``if``/``try``) that no class of base subclasses, whose base is a class of the file, and so on up
to the first link, each link the one subclass of the one above it: at least two links, none
branching anywhere above. A base class with several subclasses, or one with none yet (``class
Plugin:`` to which each side adds an implementation), is no chain, and neither is a chain with a
fork above (Medusa ``f9f7d007a491``, ``medusa/databases/cache_db.py``: two migrations already
siblings in base, and the humans kept both sides' new ones as siblings too): siblings are what
such a file has."""

from __future__ import annotations

import ast
from collections import Counter

from fleet.merge._abstract import base_name, defined_once

__all__ = ["chain_forked"]


def _parents(tree: ast.Module) -> dict[str, list[str]]:
    """Each class defined once -> the names of its bases (``Base`` or ``Base[T]``)."""
    return {name: [b for b in map(base_name, node.bases) if b]
            for name, node in defined_once(tree).items()}


def _last_links(base: dict[str, list[str]]) -> set[str]:
    children = Counter(parent for parents in base.values() for parent in parents)

    def linear(name: str, seen: tuple[str, ...]) -> bool:
        """Up from ``name``: each class of the file one subclass of it, none branching."""
        parents = base.get(name, [])
        local = [parent for parent in parents if parent in base]
        if not local or name in seen:
            return not local
        return len(local) == 1 and children[local[0]] == 1 and linear(local[0], (*seen, name))

    return {
        name for name, parents in base.items()
        if not children[name] and len(parents) == 1 and parents[0] in base
        and linear(name, ())
    }


def chain_forked(trees: list[ast.Module]) -> str | None:
    """Why the result (``trees[3]``) cannot be trusted, when both sides added a class
    subclassing one chain's last link of base (``trees[0]``) and the result keeps both."""
    base, ours, theirs, merged = (_parents(tree) for tree in trees)
    links = _last_links(base)
    if not links:
        return None

    def added(side: dict[str, list[str]]) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for name, parents in side.items():
            if name not in base:
                for parent in set(parents) & links:
                    out.setdefault(parent, set()).add(name)
        return out

    by_ours, by_theirs = added(ours), added(theirs)
    for link in sorted(set(by_ours) & set(by_theirs)):
        kept = {name for name in by_ours[link] ^ by_theirs[link] if link in merged.get(name, ())}
        if kept & by_ours[link] and kept & by_theirs[link]:
            return (f"both sides extended the chain of classes ending at {link} "
                    f"({sorted(by_ours[link])[0]} and {sorted(by_theirs[link])[0]})")
    return None
