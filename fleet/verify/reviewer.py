"""The reviewer gate: three lenses (correctness, security, runs), each a separate judgement
that must be convinced; unsure means reject.

``ClaudeReviewer`` asks a ``Model`` once per lens with an adversarial prompt and accepts only
an explicit ``{"verdict": "accept", "reason": ...}``. ``OfflineReviewer`` applies fixed rules to
the diff so the gate works without a model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fleet.protocols import Model, Reviewer  # Reviewer: re-exported, its old home
from fleet.types import Verdict, VerdictStatus
from fleet.verify._patch import FilePatch
from fleet.verify.gates import is_test_path

__all__ = [
    "LENSES",
    "SYSTEM",
    "ClaudeReviewer",
    "OfflineReviewer",
    "ReviewInput",
    "Reviewer",
    "gate_review",
    "parse_answer",
]

LENSES = ("correctness", "security", "runs")


@dataclass(frozen=True)
class ReviewInput:
    patch: str
    files: Sequence[FilePatch]
    write_set: Sequence[str] = ()
    campaign: str = ""
    evidence: Sequence[Verdict] = ()


_OFFLINE_RULES: dict[str, list[tuple[re.Pattern[str], str, bool]]] = {
    # (pattern on an added line, what it means, applies to test files too)
    "correctness": [
        (re.compile(r"^\s*except\s*:"), "a bare `except:` swallows every error", True),
        (re.compile(r"^\s*except\s+(Base)?Exception\b[^:]*:\s*(pass)?\s*$"),
         "a broad `except Exception` hides failures", False),
        (re.compile(r"^(<<<<<<<|=======|>>>>>>>)( |$)"), "a merge conflict marker", True),
        (re.compile(r"\b(breakpoint\(\)|pdb\.set_trace\(\))"), "a debugger call", True),
        (re.compile(r"#\s*(TODO|FIXME|XXX|HACK)\b"), "an unfinished-work marker", False),
        (re.compile(r"^\s*print\("), "a debug print in library code", False),
    ],
    "security": [
        (re.compile(r"\b(socket\.socket|urllib\.request\.urlopen|requests\.(get|post))\("),
         "new network access", False),
        (re.compile(r"""open\(\s*['"]/(etc|root|home|proc)/"""), "a path outside the repo", True),
        (re.compile(r"\bos\.environ\[.(ANTHROPIC|AWS|GITHUB)_"), "reads a credential", True),
    ],
    "runs": [
        (re.compile(r"\bimport\s+(ipdb|pudb)\b"), "a debugger import", True),
        (re.compile(r"\btime\.sleep\(\s*[1-9]\d*"), "a multi-second sleep", True),
        (re.compile(r"\bsys\.exit\("), "exits the interpreter", False),
    ],
}


@dataclass
class OfflineReviewer:
    """Fixed rules over the lines a patch adds; accepts only when no rule fires."""

    name: str = "offline"

    def review(self, item: ReviewInput) -> list[Verdict]:
        verdicts = []
        for lens in LENSES:
            found = []
            for fp in item.files:
                test = is_test_path(fp.path)
                for line, text in sorted(fp.added_text.items()):
                    for pattern, meaning, in_tests in _OFFLINE_RULES[lens]:
                        if (in_tests or not test) and pattern.search(text):
                            found.append(f"{fp.path}:{line}: {meaning}: {text.strip()}")
            if lens == "runs" and not any(fp.added or fp.removed for fp in item.files):
                found.append("the patch changes no line")
            if found:
                verdicts.append(Verdict(f"review:{lens}", "reject", "; ".join(found)))
            else:
                verdicts.append(Verdict(f"review:{lens}", "accept", f"offline {lens} rules pass"))
        return verdicts


SYSTEM = """You are an adversarial code reviewer guarding a codebase against patches written by
autonomous agents. Assume the patch is wrong until the diff itself convinces you otherwise.
Review ONLY through the lens named in the request. If you are unsure, reject.
Answer with one JSON object and nothing else:
{"verdict": "accept" | "reject", "reason": "<one paragraph naming file and line>"}"""

_LENS_BRIEF = {
    "correctness": "Does the change do exactly what the campaign asks, keep all other "
    "behaviour, and handle edge cases (None, empty, time zones, ordering, errors)?",
    "security": "Does the change add any way to run code, reach the network, leak or hard-code "
    "a secret, weaken a check, or trust untrusted input?",
    "runs": "Will this code import and run: names defined, imports present, signatures and "
    "call sites consistent, no leftover debugging?",
}


@dataclass
class ClaudeReviewer:
    """One model call per lens; an answer that is not an explicit, reasoned accept rejects."""

    model: Model
    max_tokens: int = 1024
    name: str = "claude"
    calls: list[dict[str, Any]] = field(default_factory=list)

    def review(self, item: ReviewInput) -> list[Verdict]:
        gates = "\n".join(f"- {v.gate}: {v.status}: {v.evidence[:300]}" for v in item.evidence)
        verdicts = []
        for lens in LENSES:
            prompt = (
                f"Lens: {lens}. {_LENS_BRIEF[lens]}\n\nCampaign: {item.campaign or '(none)'}\n"
                f"Write set: {', '.join(item.write_set) or '(none)'}\n"
                f"Other gates so far:\n{gates or '(none)'}\n\nThe patch:\n```diff\n"
                f"{item.patch}\n```"
            )
            try:
                response = self.model.complete(
                    SYSTEM, [{"role": "user", "content": prompt}], [], self.max_tokens
                )
            except Exception as exc:  # any model fault: the reviewer could not judge
                verdicts.append(Verdict(f"review:{lens}", "unknown", f"model failed: {exc}"))
                continue
            text = "".join(
                b.get("text", "") for b in response.get("content", []) if b.get("type") == "text"
            )
            self.calls.append({"lens": lens, "answer": text})
            verdicts.append(parse_answer(lens, text))
        return verdicts


def parse_answer(lens: str, text: str) -> Verdict:
    """Accept only ``{"verdict": "accept", "reason": <non-empty>}``; anything else rejects."""
    gate = f"review:{lens}"
    for match in reversed(list(re.finditer(r"\{.*?\}", text, re.S))):
        try:
            answer = json.loads(match.group(0))
        except json.JSONDecodeError:
            continue
        verdict = str(answer.get("verdict", "")).lower()
        reason = str(answer.get("reason", "")).strip()
        if verdict == "accept" and reason:
            return Verdict(gate, "accept", reason)
        return Verdict(gate, "reject", reason or f"the reviewer answered {verdict!r} without "
                       "a reason")
    return Verdict(gate, "reject", f"no verdict in the reviewer's answer (unsure): {text[:300]}")


def gate_review(reviewer: Reviewer, item: ReviewInput) -> Verdict:
    """The reviewer gate: accepts only when every lens accepts."""
    lenses = reviewer.review(item)
    failed = [v for v in lenses if not v.passed]
    details = {v.gate: {"status": v.status, "evidence": v.evidence} for v in lenses}
    if failed:
        status: VerdictStatus = (
            "reject" if any(v.status == "reject" for v in failed) else "unknown"
        )
        return Verdict("review", status,
                       "; ".join(f"{v.gate}: {v.evidence}" for v in failed), details)
    return Verdict("review", "accept", f"{reviewer.name} reviewer: all lenses accept", details)
