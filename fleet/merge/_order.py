"""Which member goes where: renames matched to their base symbol, and the merged order of a run
of commutative members that both sides changed (used by ``_members.merge_members``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher

import libcst as cst

from fleet.merge._pykeys import Key, code, rule_for
from fleet.merge.profile import LanguageProfile

__all__ = [
    "Maps",
    "blank_once",
    "comment_once",
    "fields_both_added",
    "match_renames",
    "ordered_fields",
    "renamed_two_ways",
    "resolve_order",
]

Maps = list[dict[Key, cst.BaseStatement]]


def match_renames(
    versions: list[list[tuple[Key, cst.BaseStatement]]],
) -> list[list[tuple[Key, cst.BaseStatement]]]:
    """A function or class that one side renamed, and changed in nothing else, keeps its base
    identity on that side, so the other side's edits of it still meet it. Not when the new name
    also exists on the other side, or when two base symbols fit."""
    base_items = dict(versions[0])
    result = [versions[0]]
    for side, other in ((1, 2), (2, 1)):
        items = versions[side]
        side_keys = {key for key, _ in items}
        other_keys = {key for key, _ in versions[other]}
        gone = [key for key in base_items if key not in side_keys and key[0] in ("def", "class")]
        renames: dict[Key, Key] = {}
        for key, node in items:
            if key in base_items or key in other_keys or key[0] not in ("def", "class"):
                continue
            assert isinstance(node, cst.FunctionDef | cst.ClassDef)
            fits = []
            for old in gone:
                old_node = base_items[old]
                assert isinstance(old_node, cst.FunctionDef | cst.ClassDef)
                if old[0] == key[0] and code(node.with_changes(name=old_node.name)) == code(
                    old_node
                ):
                    fits.append(old)
            if len(fits) == 1 and fits[0] not in renames.values():
                renames[key] = fits[0]
        result.append([(renames.get(key, key), node) for key, node in items])
    return result


def resolve_order(
    profile: LanguageProfile,
    base: list[Key],
    ours: list[Key],
    theirs: list[Key],
    maps: Maps,
) -> list[Key] | None:
    """The merged order of a conflicting run of commutative symbols, or None if unsure: the
    skeleton is the side that reordered (at most one may), the other side's additions go after
    their predecessor there, or last when they have none; additions of both sides at one place
    come ours first, then theirs."""
    base_map, ours_map, theirs_map = maps
    for key in (*base, *ours, *theirs):
        node = base_map.get(key) or ours_map.get(key) or theirs_map.get(key)
        rule = rule_for(profile, node) if node is not None and key[0] != "anon" else None
        if rule is None or not rule.commutative:
            return None
    common_ours = [key for key in ours if key in set(theirs)]
    common_theirs = [key for key in theirs if key in set(ours)]
    skeleton, other, skeleton_map = ours, theirs, ours_map
    if common_ours != common_theirs:
        common_base = [key for key in base if key in set(common_ours)]
        if common_ours == common_base:
            skeleton, other, skeleton_map = theirs, ours, theirs_map
        elif common_theirs != common_base:
            return None
    result = list(skeleton)
    other_map = theirs_map if skeleton is ours else ours_map

    def added(key: Key) -> bool:  # a skeleton-side addition, absent from base and the other side
        return key not in base_map and key not in other_map

    def place(index: int) -> int:
        """Where an addition of the other side goes at ``index``: after the skeleton's own
        additions there if the skeleton is ours, before them if it is theirs."""
        if skeleton is ours:
            while index < len(result) and added(result[index]):
                index += 1
        else:
            while index > 0 and added(result[index - 1]):
                index -= 1
        return index

    position: int | None = None
    front: list[Key] = []
    for key in other:
        if key in result:
            if front:
                index = place(result.index(key))
                result[index:index] = front
                front = []
            position = result.index(key) + 1
        elif key not in skeleton_map and key not in base_map:  # added by the other side
            if position is None:
                front.append(key)
            else:
                position = place(position)
                result.insert(position, key)
                position += 1
    merged = result + front if skeleton is ours else front + result
    return _future_first(_imports_first(merged, base_map, ours_map, theirs_map))


def _future_first(keys: list[Key]) -> list[Key]:
    """``from __future__`` imports before everything else of the run: Python refuses them
    anywhere else (dask ``68253caf1a8c``, ``dask/base.py``: ours added ``import dataclasses``
    above ``import datetime``, theirs ``from __future__ import annotations`` there; the merge put
    ours' first, a module that does not compile)."""
    future = [key for key in keys if key[0] == "from" and key[1].split(" ")[0] == "__future__"]
    return future + [key for key in keys if key not in future] if future else keys


_IMPORTS = frozenset({"import", "from"})


def _imports_first(
    keys: list[Key],
    base_map: dict[Key, cst.BaseStatement],
    ours_map: dict[Key, cst.BaseStatement],
    theirs_map: dict[Key, cst.BaseStatement],
) -> list[Key]:
    """Where both sides' additions meet at one place, their imports before their other
    statements (each group in the merged order): one side's new import would otherwise land
    below the other side's new functions, out of the import block (numba ``021503f68949``:
    theirs' ``from numba.np.numpy_support import from_dtype`` below ours' eight new kernels).
    A run that one side added alone keeps its own order."""
    out: list[Key] = []
    run: list[Key] = []
    for key in [*keys, None]:
        if key is not None and key not in base_map:
            run.append(key)
            continue
        both = any(k in ours_map for k in run) and any(k in theirs_map for k in run)
        if both and any(k[0] in _IMPORTS for k in run):
            run = [k for k in run if k[0] in _IMPORTS] + [k for k in run if k[0] not in _IMPORTS]
        if both:
            run = _assignments_first(run, ours_map)
        out += run
        run = []
        if key is not None:
            out.append(key)
    return out


def _assignments_first(run: list[Key], ours_map: dict[Key, cst.BaseStatement]) -> list[Key]:
    """Both sides' additions at one place, each side's in its own order, the side whose rest is
    only assignments before the other side's functions and classes where they meet
    (pytest-django ``58e3062a96f6``: theirs' ``INVALID_TEMPLATE_VARS_ENV = ...`` added after
    ``CONFIGURATION_ENV`` landed below ours' new constant and functions). An assignment its own
    side follows with a function or class stays with them (napari ``6b0e3496b1fc``: ``A =
    TypeVar('A')`` above the class that uses it)."""

    def tiers(keys: list[Key]) -> dict[Key, int]:  # the heaviest kind from each key on
        out: dict[Key, int] = {}
        heaviest = 0
        for key in reversed(keys):
            kind = 0 if key[0] in _IMPORTS else 1 if key[0] == "assign" else 2
            heaviest = max(heaviest, kind)
            out[key] = heaviest
        return out

    ours = [k for k in run if k in ours_map]
    theirs = [k for k in run if k not in ours_map]
    tier = {**tiers(ours), **tiers(theirs)}
    order = {k: i for i, k in enumerate(run)}
    out: list[Key] = []
    while ours and theirs:
        first, second = (ours, theirs) if order[ours[0]] < order[theirs[0]] else (theirs, ours)
        out.append((second if tier[second[0]] < tier[first[0]] else first).pop(0))
    return out + ours + theirs


# What makes the order of a class's attributes meaning: an enum (``auto()`` values, iteration
# order), a dataclass, attrs class, NamedTuple, TypedDict or model (fields, constructor
# arguments), read from the class's bases and decorators.
_ORDERED_CLASS = re.compile(
    r"\b(\w*Enum|\w*Flag|NamedTuple|TypedDict|BaseModel|Struct|dataclass|define|frozen|attr\.s"
    r"|attrs|mutable)\b"
)


def ordered_fields(header: str) -> bool:
    """Whether a class header (decorators, name, bases) makes its attributes' order meaning."""
    return _ORDERED_CLASS.search(header) is not None


def fields_both_added(
    base: list[Key], ours: list[Key], theirs: list[Key], maps: Maps, ordered: bool
) -> bool:
    """Both sides added class attributes in one run they both changed, and their order is
    meaning: the class is ``ordered`` (see :func:`ordered_fields`) or an added attribute is
    annotated (a field). Where both sides' additions meet no order is known (black's
    ``Preview(Enum)``: both sides appended members, the humans put theirs first, or placed ours
    where theirs had removed its neighbours), so the run conflicts."""
    before = set(base)
    annotated = False

    def adds(part: list[Key], mapping: dict[Key, cst.BaseStatement]) -> bool:
        nonlocal annotated
        added = [key for key in part if key[0] == "assign" and key not in before]
        for key in added:
            node = mapping[key]
            annotated |= isinstance(node, cst.SimpleStatementLine) and isinstance(
                node.body[0], cst.AnnAssign
            )
        return bool(added)

    both = adds(ours, maps[1]) & adds(theirs, maps[2])
    return both and (ordered or annotated)


def _shape(node: cst.BaseStatement) -> tuple[str, ...]:
    """A definition's parameter names (a ``def``) or base expressions (a ``class``)."""
    if isinstance(node, cst.FunctionDef):
        params = node.params
        every = [*params.posonly_params, *params.params, *params.kwonly_params]
        star = [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
        return tuple(p.name.value for p in [*every, *star])
    if isinstance(node, cst.ClassDef):
        return tuple(code(base.value) for base in node.bases)
    return ()


def _resembles(old: cst.BaseStatement, new: cst.BaseStatement) -> bool:
    """``new`` (under another name) looks like ``old``: the same parameters or bases, or at
    least half of its lines the same."""
    if _shape(old) == _shape(new):
        return True
    lines = [code(node).splitlines()[1:] for node in (old, new)]
    return SequenceMatcher(None, lines[0], lines[1], autojunk=False).ratio() >= 0.5


_TOKEN = re.compile(r"\w+|\S")


def _assigned(node: cst.BaseStatement) -> list[str] | None:
    """The tokens of a one-target assignment's value, None for anything else."""
    if not isinstance(node, cst.SimpleStatementLine) or len(node.body) != 1:
        return None
    inner = node.body[0]
    if not isinstance(inner, cst.Assign | cst.AnnAssign) or inner.value is None:
        return None
    return _TOKEN.findall(code(inner.value))


def _value_resembles(old: cst.BaseStatement, new: cst.BaseStatement) -> bool:
    """``new`` assigns (under another name) a value like ``old``'s: at least 4 tokens, at
    least two thirds of them the same."""
    values = _assigned(old), _assigned(new)
    if values[0] is None or values[1] is None or min(len(values[0]), len(values[1])) < 4:
        return False
    return SequenceMatcher(None, values[0], values[1], autojunk=False).ratio() >= 2 / 3


def renamed_two_ways(base: list[Key], ours: list[Key], theirs: list[Key], maps: Maps) -> bool:
    """A ``def`` or ``class`` both sides removed, each adding one of its kind under a name of
    its own that resembles it (``_resembles``): one symbol renamed two ways, whose two copies
    would both be kept (networkx ``d24c7432824a``: ``S1_graph`` made
    ``soft_random_S1_H2_geometric_graph`` on one side and ``S1_model`` on the other, each
    with its own edits). The same for an assignment whose value each side's new one resembles
    (cython ``54e01092b1ae``: ``child_atts = PatternNode.child_attrs + [...]`` made
    ``initial_child_attrs = PatternNode.initial_child_attrs + [...]`` on one side, the typo
    fixed to ``child_attrs`` on the other; both kept broke the class)."""
    base_map, ours_map, theirs_map = maps
    for key in base:
        if key[0] not in ("def", "class", "assign") or key in ours_map or key in theirs_map:
            continue
        old = base_map[key]
        like = _value_resembles if key[0] == "assign" else _resembles
        sides = ((ours, ours_map, theirs_map), (theirs, theirs_map, ours_map))
        if all(
            any(
                k[0] == key[0] and k not in base_map and k not in other and like(old, mapping[k])
                for k in part
            )
            for part, mapping, other in sides
        ):
            return True
    return False


def _comments(node: cst.CSTNode) -> tuple[str, ...]:
    lines = getattr(node, "leading_lines", ())
    return tuple(line.comment.value for line in lines if line.comment is not None)


def comment_once(
    node: cst.BaseStatement,
    side: int,
    moved: dict[tuple[str, ...], int],
    base: dict[Key, cst.BaseStatement],
) -> cst.BaseStatement:
    """A member one side (``side``: 1 ours, 2 theirs) inserted, without the comment lines above
    it that a member the other side inserted at the same place already carries, when base has
    them above one of its members: both sides inserted below a section comment, which each
    side's parse hands to its own insertion (Pillow ``31a8da48eeb1``: ``# Implementation
    wrapper`` above both new classes). Kept once, above the first; a comment of the member's
    own below them stays. ``moved``: the comment lines of this place's insertions so far."""
    comments = _comments(node)
    if not comments:
        return node
    block = next(
        (seen for seen, by in moved.items() if by != side and comments[: len(seen)] == seen), None
    )
    if block is None or not any(_comments(member) == block for member in base.values()):
        moved.setdefault(comments, side)
        return node
    lines = list(getattr(node, "leading_lines", ()))
    marked = [i for i, line in enumerate(lines) if line.comment is not None][: len(block)]
    above, below = lines[: marked[0]], lines[marked[-1] + 1 :]
    if above:
        while below and below[0].comment is None:
            below.pop(0)
    return node.with_changes(leading_lines=above + below)


def blank_once(
    node: cst.BaseStatement,
    side: int,
    moved: dict[tuple[str, ...], int],
    maps: Sequence[dict[Key, cst.BaseStatement]],
) -> cst.BaseStatement:
    """A member one side (1 ours, 2 theirs) inserted, without the blank lines above it when a
    member the other side inserted at the same place already carries as many, taken from a
    member of base (the one after the place) that both sides now have without them: both
    sides inserted at the head of a group after its blank line, which each side's parse hands
    to its own insertion
    (cloud-custodian ``589b63c0f1f4``: an import added by each side above ``from gcp_common
    import ...``; merged, a blank line stood between the two). Kept once, above the first."""
    lines = getattr(node, "leading_lines", ())
    if not lines or any(line.comment is not None for line in lines):
        return node
    mark = ("", str(len(lines)))  # no comment's text is empty
    if moved.setdefault(mark, side) == side:
        return node
    base, ours, theirs = maps
    if any(
        len(getattr(base[key], "leading_lines", ())) == len(lines)
        and not getattr(ours[key], "leading_lines", ())
        and not getattr(theirs[key], "leading_lines", ())
        for key in base
        if key in ours and key in theirs
    ):
        return node.with_changes(leading_lines=[])
    return node

