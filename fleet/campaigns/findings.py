"""Finding fingerprints and the new / known / fixed / suppressed lifecycle across runs.

``fingerprint(rule, symbol, node, occurrence)`` = sha256 of the rule, the enclosing symbol id and
the *normalized syntax* of the matched tree-sitter node, from its token stream: leaf tokens
without comments, whitespace or backslash line continuations; redundant parentheses dropped;
string literals by value (quote style, triple quotes and string-prefix case do not count,
f-strings included); number literals lower-cased; implicitly concatenated strings joined; a
trailing comma before a closing bracket dropped (what formatters do when they join strings or
explode a call). So moving code, reformatting it (``ruff format``, ``black``: tested on real
repositories) or editing elsewhere in the file keeps the fingerprint, and any real edit of the
matched code changes it. ``occurrence`` tells apart identical matches inside one symbol
(counted in source order).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import tree_sitter as ts

from fleet import pyast
from fleet.types import Finding, IssueRef

if TYPE_CHECKING:
    from fleet.protocols import Forge
    from fleet.store import SqlFindings

__all__ = [
    "FindingStatus",
    "Lifecycle",
    "classify",
    "file_new_findings",
    "fingerprint",
    "normalized_syntax",
    "sync_findings",
]

FindingStatus = Literal["new", "known", "fixed", "suppressed"]
_CLOSERS = {")", "]", "}"}


def normalized_syntax(node: ts.Node) -> str:
    """The node's tokens, space-separated, with formatting and comments normalized away."""
    tokens: list[str] = []
    _tokens(node, tokens)
    out: list[str] = []
    for token in tokens:
        if token in _CLOSERS and out and out[-1] == ",":
            out.pop()
        out.append(token)
    return " ".join(out)


def _tokens(node: ts.Node, out: list[str]) -> None:
    if node.type in ("comment", "line_continuation"):
        return
    if node.type == "parenthesized_expression" and node.named_child_count == 1 and (
            node.named_children[0].type not in ("yield", "comment")):
        # `(a)` is `a`: formatters add and drop redundant parentheses around long expressions
        _tokens(node.named_children[0], out)
        return
    if node.type == "concatenated_string":  # "a" "b" and "ab" are one value (formatters join)
        parts = [_string_value((c.text or b"").decode("utf-8", "replace"))
                 for c in node.children if c.type == "string"]
        out.append(_joined(parts))
        return
    if node.type == "string" and node.text is not None:
        out.append(_string_value(node.text.decode("utf-8", "replace")))
        return
    if node.child_count == 0:
        text = (node.text or b"").decode("utf-8", "replace")
        if node.type in ("integer", "float"):
            text = text.lower().replace("_", "")
        if text.strip():
            out.append(text)
        return
    for child in node.children:
        _tokens(child, out)


def _joined(parts: list[str]) -> str:
    try:
        values = [pyast.literal_eval(p) for p in parts]
    except (ValueError, SyntaxError):
        return " ".join(parts)
    if all(isinstance(v, str) for v in values) or all(isinstance(v, bytes) for v in values):
        return repr(values[0][:0].join(values))
    return " ".join(parts)


def _string_value(text: str) -> str:
    try:
        return repr(pyast.literal_eval(text))
    except (ValueError, SyntaxError):  # f-strings, or a fragment: keep it, sans quote style
        quote = min((i for i in (text.find("'"), text.find('"')) if i >= 0), default=0)
        prefix = text[:quote].lower().replace("u", "")  # F"" is f"", U"" is ""
        body = text[quote:]
        for triple in ('"""', "'''"):
            if body.startswith(triple) and body.endswith(triple) and len(body) >= 6:
                body = '"' + body[3:-3] + '"'
        return "".join(sorted(prefix)) + body.replace("'", '"')


def fingerprint(rule: str, symbol: str, syntax: str, occurrence: int = 0) -> str:
    digest = hashlib.sha256(f"{rule}\0{symbol}\0{syntax}\0{occurrence}".encode()).hexdigest()
    return digest[:24]


# -- lifecycle ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Lifecycle:
    """One run's findings sorted into the four states (fingerprints)."""

    new: tuple[str, ...]
    known: tuple[str, ...]
    fixed: tuple[str, ...]
    suppressed: tuple[str, ...]

    def status(self, fp: str) -> FindingStatus | None:
        for name in ("new", "known", "fixed", "suppressed"):
            if fp in getattr(self, name):
                return name
        return None

    def counts(self) -> dict[str, int]:
        return {k: len(getattr(self, k)) for k in ("new", "known", "fixed", "suppressed")}


def classify(
    current: Iterable[Finding], previous_open: Iterable[str], suppressed: Iterable[str] = ()
) -> Lifecycle:
    """Sort this run's findings against the open fingerprints of the last run: seen before ->
    known, not before -> new, gone -> fixed; a suppressed fingerprint stays suppressed."""
    now = {f.fingerprint for f in current}
    before, muted = set(previous_open), set(suppressed)
    return Lifecycle(
        new=tuple(sorted(now - before - muted)),
        known=tuple(sorted((now & before) - muted)),
        fixed=tuple(sorted(before - now - muted)),
        suppressed=tuple(sorted(now & muted)),
    )


def sync_findings(store: SqlFindings | None, campaign: str, findings: list[Finding]) -> Lifecycle:
    """Classify one full sweep of ``campaign`` against the store's findings table and record it
    (seen findings upserted, open ones no longer seen marked fixed). Without a store (``None``)
    every finding is new."""
    if store is None:
        return classify(findings, ())
    before = store.list(campaign)
    open_before = [r.finding.fingerprint for r in before if r.status in ("new", "known")]
    muted = [r.finding.fingerprint for r in before if r.status == "suppressed"]
    lifecycle = classify(findings, open_before, muted)
    store.upsert_many(findings)
    store.mark_fixed(campaign, [f.fingerprint for f in findings])
    return lifecycle


def file_new_findings(
    forge: Forge, findings: Iterable[Finding], store: SqlFindings | None = None
) -> list[IssueRef]:
    """File each finding as an issue through ``forge``, exactly once: a finding whose store record
    already names an issue is not filed again, and the forge's ``file_issue`` is itself
    idempotent per fingerprint (however many agents or sweeps find it again)."""
    refs = []
    for finding in findings:
        record = store.get(finding.fingerprint) if store is not None else None
        if record is not None and record.issue_ref:
            continue
        title = f"[{finding.campaign}] {finding.message} in {finding.symbol}"
        body = (
            f"{finding.path}:{finding.line}:{finding.col + 1}\n\n```\n{finding.snippet}\n```\n\n"
            f"rule `{finding.rule}`, fingerprint `{finding.fingerprint}`"
        )
        ref = forge.file_issue(finding, title, body)
        if store is not None:
            store.set_issue(finding.fingerprint, f"{ref.forge}#{ref.number}")
        refs.append(ref)
    return refs
