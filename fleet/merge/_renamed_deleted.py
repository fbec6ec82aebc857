"""A definition one side deleted while the other renamed and changed it: a modify/delete, which
stays a conflict, not a deletion beside an addition (hypothesis ``23f5e9186045``,
``tests/conjecture/test_test_data.py``: ours deleted ``test_can_write_empty_string`` with the
API it tested; theirs renamed it ``test_can_write_empty_bytes`` and rewrote its seven lines
for the new API; the clean merge kept theirs' test, the humans deleted it).

A rename that changed nothing else keeps its base identity in the members' merge
(``_order.match_renames``), so its deletion on the other side conflicts there; one that also
changed the body does not. Here, on the whole result: a ``def`` or ``class`` of base (in the
module or a class) that neither side nor the result has under its name, where one side has one
new definition of the same kind in the same class (or module), also in the result, whose name
has as many words (three or more, split at ``_``) all equal but the last, with as many
statements in its body, and the other side has no new definition of such a name (that side
deleted it; two renames are ``_order.renamed_two_ways``'s).
"""

from __future__ import annotations

import ast

__all__ = ["renamed_where_deleted"]

_Def = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _defs(body: list[ast.stmt], prefix: str = "") -> dict[str, _Def]:
    out: dict[str, _Def] = {}
    for stmt in body:
        if isinstance(stmt, _Def):
            out[prefix + stmt.name] = stmt
        if isinstance(stmt, ast.ClassDef):
            out.update(_defs(stmt.body, f"{prefix}{stmt.name}."))
    return out


def _renamed(old: str, new: str) -> bool:
    """``new`` is ``old`` with its last word changed, in the same class, three words or more."""
    (scope_old, _, name_old), (scope_new, _, name_new) = old.rpartition("."), new.rpartition(".")
    words_old, words_new = name_old.split("_"), name_new.split("_")
    return (
        scope_old == scope_new
        and len(words_old) == len(words_new) >= 3
        and words_old[:-1] == words_new[:-1]
        and words_old[-1] != words_new[-1]
    )


def renamed_where_deleted(trees: list[ast.Module]) -> str | None:
    """``trees``: base, ours, theirs, result (see the module docstring)."""
    base, ours, theirs, merged = (_defs(tree.body) for tree in trees)
    for name, node in base.items():
        if name in ours or name in theirs or name in merged:
            continue
        for side, other in ((ours, theirs), (theirs, ours)):
            renamed = [
                new
                for new, new_node in side.items()
                if new not in base and new not in other and new in merged
                and type(new_node) is type(node) and len(new_node.body) == len(node.body)
                and _renamed(name, new)
            ]
            if len(renamed) == 1 and not any(
                new not in base and _renamed(name, new) for new in other
            ):
                return (
                    f"{name} deleted on one side, renamed {renamed[0]} and changed on the "
                    "other"
                )
    return None
