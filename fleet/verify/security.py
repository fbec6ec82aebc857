"""The security lens: dangerous constructs found in each touched Python file before and after
the patch; any that the patch adds rejects, with its file, line and rule named.

Compared as multisets of ``(rule, normalized line)`` so that moving existing code does not
count as new, while a second copy of a dangerous call does.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from fleet import pyast
from fleet.types import Verdict
from fleet.verify._patch import FilePatch, Trees, read
from fleet.verify.gates import is_test_path

__all__ = ["Hit", "gate_security", "scan"]

_SECRET_NAME = re.compile(r"(passw(or)?d|secret|token|api_?key|private_?key|credentials?)", re.I)
_SECRET_VALUE = re.compile(
    r"^(sk-[A-Za-z0-9_-]{16,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abpr]-[A-Za-z0-9-]{10,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----)"
)
_SAFE_LOADERS = {"SafeLoader", "CSafeLoader", "BaseLoader"}
_PICKLE = {"pickle", "cPickle", "dill", "marshal", "shelve", "jsonpickle"}
_COMMENT_RULES = (
    (re.compile(r"#\s*nosec\b"), "disabled-check", "`# nosec` silences the security scanner"),
    (re.compile(r"#\s*noqa:\s*S\d"), "disabled-check", "`# noqa: S...` silences a security rule"),
)


@dataclass(frozen=True)
class Hit:
    rule: str
    line: int
    snippet: str
    message: str


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else node.attr
    return ""


def _is_false(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is False


def scan(source: str) -> list[Hit]:
    """Every dangerous construct of ``source`` (empty when it does not parse)."""
    try:
        tree = pyast.parse(source)
    except SyntaxError:
        return []
    lines = source.splitlines()
    hits: list[Hit] = []
    yaml_loads = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "yaml"
        for alias in node.names
        if alias.name == "load"
    }

    def hit(node: ast.AST, rule: str, message: str) -> None:
        line = getattr(node, "lineno", 0)
        text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        hits.append(Hit(rule, line, text, message))

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            short = name.rsplit(".", 1)[-1]
            kw = {k.arg: k.value for k in node.keywords if k.arg}
            if name in {"eval", "exec", "builtins.eval", "builtins.exec"}:
                hit(node, "eval-exec", f"{name}() runs arbitrary code")
            shell = kw.get("shell")
            if isinstance(shell, ast.Constant) and shell.value is True:
                hit(node, "shell-true", f"{name}(..., shell=True) runs through a shell")
            if name in {"os.system", "os.popen", "commands.getoutput"}:
                hit(node, "shell-true", f"{name}() runs through a shell")
            if name.endswith("yaml.load") or name in yaml_loads:
                loader = kw.get("Loader") or (node.args[1] if len(node.args) > 1 else None)
                if loader is None or _dotted(loader).rsplit(".", 1)[-1] not in _SAFE_LOADERS:
                    hit(node, "yaml-load", "yaml.load without a safe loader")
            if name.endswith(("yaml.unsafe_load", "yaml.full_load")):
                hit(node, "yaml-load", f"{name}() constructs arbitrary objects")
            if _is_false(kw.get("verify")) or _is_false(kw.get("verify_ssl")):
                hit(node, "verify-false", f"{name}(..., verify=False) disables TLS checks")
            root = name.split(".", 1)[0]
            if root in _PICKLE and short in {"load", "loads", "open", "decode", "Unpickler"}:
                hit(node, "pickle", f"{name}() deserializes untrusted input")
            if name in {"ssl._create_unverified_context", "urllib3.disable_warnings"}:
                hit(node, "disabled-check", f"{name}() disables certificate checks")
            if name == "tempfile.mktemp":
                hit(node, "disabled-check", "tempfile.mktemp() is racy")
            if short == "chmod" and any(
                isinstance(a, ast.Constant) and isinstance(a.value, int) and a.value & 0o002
                for a in node.args
            ):
                hit(node, "disabled-check", "world-writable chmod")
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = node.value
            for target in targets:
                tname = _dotted(target)
                if tname.endswith("check_hostname") and _is_false(value):
                    hit(node, "disabled-check", "check_hostname = False")
                if tname.endswith("verify") and _is_false(value):
                    hit(node, "verify-false", f"{tname} = False disables TLS checks")
                if (
                    _SECRET_NAME.search(tname.rsplit(".", 1)[-1])
                    and isinstance(value, ast.Constant)
                    and isinstance(value.value, str)
                    and len(value.value) >= 8
                    and " " not in value.value
                ):
                    hit(node, "hardcoded-secret", f"{tname} is assigned a literal secret")
        elif isinstance(node, ast.Attribute) and _dotted(node) in {"ssl.CERT_NONE"}:
            hit(node, "disabled-check", "ssl.CERT_NONE disables certificate checks")
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if (
                    isinstance(key, ast.Constant)
                    and key.value in {"verify_signature", "verify_exp", "verify"}
                    and _is_false(value)
                ):
                    hit(node, "disabled-check", f"{key.value!r}: False disables a check")
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and _SECRET_VALUE.match(node.value)
        ):
            hit(node, "hardcoded-secret", "a literal credential")
    for number, text in enumerate(lines, 1):
        for pattern, rule, message in _COMMENT_RULES:
            if pattern.search(text):
                hits.append(Hit(rule, number, text.strip(), message))
    return hits


def gate_security(trees: Trees, files: Iterable[FilePatch]) -> Verdict:
    """Reject when the patch adds a dangerous construct (each named with its line)."""
    new_hits: list[str] = []
    for fp in files:
        if not fp.path.endswith(".py") or fp.new_path is None:
            continue
        before = scan(read(trees.base, fp.old_path) or "")
        after = scan(read(trees.patched, fp.new_path) or "")
        seen = Counter((h.rule, h.snippet) for h in before)
        in_tests = is_test_path(fp.new_path)
        for h in after:
            if in_tests and h.rule == "hardcoded-secret":
                continue  # test fixtures carry fake keys by design
            key = (h.rule, h.snippet)
            if seen[key] > 0:
                seen[key] -= 1
                continue
            new_hits.append(f"{fp.new_path}:{h.line} [{h.rule}] {h.message}: {h.snippet}")
    if new_hits:
        return Verdict("security", "reject", "; ".join(new_hits), {"new": new_hits})
    return Verdict("security", "accept", "no new dangerous constructs")
