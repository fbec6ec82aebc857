"""The Pythons a target supports, read from its own metadata: ``requires-python``
(pyproject ``[project]``), ``python_requires`` (``setup.py``, ``setup.cfg``), the
``Programming Language :: Python :: 3.X`` classifiers, and the ``pyXY`` environments of
``tox.ini`` / ``noxfile.py``. A codemod picks the spelling that works on the oldest of them
(``timezone.utc`` below 3.11); the ``compat`` gate refuses a patch that needs a newer Python than
that floor; the impacted tests run on every one of them present on the machine."""

from __future__ import annotations

import ast
import configparser
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from fleet import pyast

__all__ = [
    "KNOWN", "TargetPythons", "Version", "interpreters", "supported_pythons", "test_pythons",
    "version_text",
]

Version = tuple[int, int]
#: The CPython 3 minors a target may declare (what a specifier is evaluated over).
KNOWN: tuple[Version, ...] = tuple((3, minor) for minor in range(0, 15))
_CLASSIFIER = re.compile(r"Programming Language :: Python :: ([23])\.(\d+)\b")
_ENV = re.compile(r"\bpy([23])(\d{1,2})\b")
_NOX = re.compile(r"python\s*=\s*\[?([^\]\n)]*)")


def version_text(version: Version) -> str:
    return f"{version[0]}.{version[1]}"


@dataclass(frozen=True)
class TargetPythons:
    """``versions``: the supported minors, oldest first (empty: the target declares none);
    ``sources``: where each statement was read (``setup.py python_requires>=3.6``)."""

    versions: tuple[Version, ...] = ()
    sources: tuple[str, ...] = ()
    #: the target also declares Python 2 (``python_requires>=2.7``, a ``Python :: 2.7``
    #: classifier, a ``py27`` environment): the gates judge Python 3 only, and say so
    python2: bool = False

    @property
    def floor(self) -> Version | None:
        return self.versions[0] if self.versions else None

    def describe(self) -> str:
        if not self.versions:
            return "the target declares no supported Python"
        also = "2.7 and " if self.python2 else ""
        return (f"the target supports Python {also}{version_text(self.versions[0])}+ "
                f"({'; '.join(self.sources)})")

    def python2_note(self) -> str:
        """One line on the declared Python 2 support nothing here judges, or ``""``."""
        return ("Python 2.7, also declared, is not judged: the gates hold a patch to Python 3 "
                "only") if self.python2 else ""


def supported_pythons(root: Path) -> TargetPythons:
    """What ``root`` declares. The specifier (``requires-python`` / ``python_requires``) decides
    when present; classifiers and tox/nox environments narrow nothing, they only fill in when it
    is absent (many old projects state only classifiers)."""
    sources: list[str] = []
    spec = _specifier(root, sources)
    if spec is not None:
        versions = [v for v in KNOWN if spec.contains(f"{version_text(v)}.0")
                    or spec.contains(f"{version_text(v)}.99")]
        python2 = spec.contains("2.7.0") or spec.contains("2.7.18")
    else:
        listed = _listed(root, sources)
        versions = sorted(v for v in listed if v in KNOWN)
        python2 = any(v[0] == 2 for v in listed)
    return TargetPythons(tuple(versions), tuple(sources), python2 and bool(versions))


def _specifier(root: Path, sources: list[str]) -> SpecifierSet | None:
    found: list[tuple[str, str]] = []
    pyproject = _text(root / "pyproject.toml")
    if pyproject:
        try:
            data = tomllib.loads(pyproject)
        except tomllib.TOMLDecodeError:
            data = {}
        value = data.get("project", {}).get("requires-python")
        if isinstance(value, str):
            found.append(("pyproject.toml requires-python", value))
        poetry = data.get("tool", {}).get("poetry", {}).get("dependencies", {}).get("python")
        if isinstance(poetry, str):
            found.append(("pyproject.toml [tool.poetry] python", _poetry(poetry)))
    cfg = _text(root / "setup.cfg")
    if cfg:
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(cfg)
            value = parser.get("options", "python_requires", fallback=None)
        except configparser.Error:
            value = None
        if value:
            found.append(("setup.cfg python_requires", value.strip()))
    setup = _text(root / "setup.py")
    if setup:
        value = _setup_kwarg(setup, "python_requires")
        if value:
            found.append(("setup.py python_requires", value))
    for where, text in found:
        try:
            spec = SpecifierSet(text.replace(" ", ""))
        except InvalidSpecifier:
            continue
        sources.append(f"{where}{text}")
        return spec
    return None


def _poetry(text: str) -> str:
    """Poetry's ``^3.8`` / ``~3.8`` as a PEP 440 specifier (``>=3.8``)."""
    return re.sub(r"[\^~](\d+\.\d+)", r">=\1", text)


def _setup_kwarg(source: str, name: str) -> str | None:
    """The literal value of ``setup(..., name="...")``, found by parsing, never executing."""
    try:
        tree = pyast.parse(source)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if (isinstance(node, ast.keyword) and node.arg == name
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            return node.value.value
    return None


def _listed(root: Path, sources: list[str]) -> set[Version]:
    """Minors named by classifiers (setup.py, setup.cfg, pyproject) and tox/nox environments
    (Python 2's among them: the caller tells them apart)."""
    out: set[Version] = set()
    for name in ("setup.py", "setup.cfg", "pyproject.toml"):
        got = {(int(a), int(b)) for a, b in _CLASSIFIER.findall(_text(root / name))}
        if got:
            sources.append(f"{name} classifiers {', '.join(version_text(v) for v in sorted(got))}")
            out |= got
    tox = _text(root / "tox.ini")
    got = {(int(a), int(b)) for a, b in _ENV.findall(tox)}
    if got:
        sources.append(f"tox.ini envs {', '.join(version_text(v) for v in sorted(got))}")
        out |= got
    nox = _text(root / "noxfile.py")
    got = {(int(a), int(b)) for value in _NOX.findall(nox)
           for a, b in re.findall(r"[\"']([23])\.(\d+)[\"']", value)}
    if got:
        sources.append(f"noxfile.py pythons {', '.join(version_text(v) for v in sorted(got))}")
        out |= got
    return {v for v in out if v in KNOWN or v == (2, 7)}


def _text(path: Path) -> str:
    try:
        return path.read_text(errors="replace") if path.is_file() else ""
    except OSError:
        return ""


_ROOTS = (Path("/root/.pyenv/versions"), Path("/usr/local/bin"), Path("/usr/bin"))


def interpreters(target: TargetPythons,
                 roots: tuple[Path, ...] = _ROOTS) -> dict[Version, str]:
    """Per supported minor, one interpreter present on this machine (a pyenv version, or
    ``python3.X`` on the usual paths): the tests run on each."""
    out: dict[Version, str] = {}
    for version in target.versions:
        text = version_text(version)
        for root in roots:
            if root.name == "versions" and root.is_dir():
                found = sorted((p for p in root.glob(f"{text}.*/bin/python{text}")
                                if re.fullmatch(rf"{re.escape(text)}\.\d+", p.parent.parent.name)),
                               key=lambda p: int(p.parent.parent.name.rsplit(".", 1)[1]))
                if found:
                    out[version] = str(found[-1])
                    break
            elif (root / f"python{text}").is_file():
                out[version] = str(root / f"python{text}")
                break
    return out


def test_pythons(root: Path) -> tuple[str, ...]:
    """The interpreters the target's tests run on: the target interpreter
    (:func:`fleet.verify.execution.target_python`) first, then those
    :func:`fleet.verify.pythons.plan` adds under ``$FLEET_TEST_PYTHONS`` (default: the oldest
    supported Python present, in a venv made with the target's test requirements)."""
    from fleet.verify.execution import target_python
    from fleet.verify.pythons import plan

    return plan(root, target_python()).pythons
