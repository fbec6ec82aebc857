"""A target that declares Python 2.7 beside Python 3. Outside check (ruff-up on isodate 0.6.1,
whose classifiers name 2.7 and 3.6-3.10; datetime-utcnow on WebOb 1.8.7, ``python_requires
>=2.7,!=3.0.*,...``): the verdicts said "the target supports Python 3.6+" and "still run on
3.3+", as if 2.7 were not declared, while nothing judged the patches under 2.7 (``class
Duration(object)`` became ``class Duration:``, an old-style class there). The gates still judge
Python 3 only; they now say that 2.7 is declared and not judged."""

from __future__ import annotations

from pathlib import Path

from fleet.verify import GateOptions, run_gates
from fleet.verify.pythons import plan
from fleet.verify.target import supported_pythons
from tests.conftest import commit_files

from .conftest import edit_diff

ISODATE_CLASSIFIERS = (
    "from setuptools import setup\n"
    "setup(name='isodate', package_dir={'': 'src'},\n"
    "      classifiers=['Programming Language :: Python :: 2',\n"
    "                   'Programming Language :: Python :: 2.7',\n"
    "                   'Programming Language :: Python :: 3',\n"
    "                   'Programming Language :: Python :: 3.6',\n"
    "                   'Programming Language :: Python :: 3.7'])\n")
LIB = "class Duration(object):\n    pass\n"


def test_python_2_declared_by_a_specifier_classifiers_or_tox_is_said(tmp_path: Path) -> None:
    (tmp_path / "setup.py").write_text(ISODATE_CLASSIFIERS)
    got = supported_pythons(tmp_path)
    assert got.versions == ((3, 6), (3, 7)) and got.floor == (3, 6) and got.python2
    assert got.describe().startswith("the target supports Python 2.7 and 3.6+ (setup.py "
                                      "classifiers 2.7, 3.6, 3.7)")
    (tmp_path / "setup.py").write_text(
        "setup(python_requires='>=2.7,!=3.0.*,!=3.1.*,!=3.2.*')\n")
    got = supported_pythons(tmp_path)
    assert got.floor == (3, 3) and got.python2
    (tmp_path / "setup.py").write_text("setup(python_requires='>=3.6')\n")
    assert not supported_pythons(tmp_path).python2
    (tmp_path / "setup.py").unlink()
    (tmp_path / "tox.ini").write_text("[tox]\nenvlist = py27,py36,py38\n")
    got = supported_pythons(tmp_path)
    assert got.versions == ((3, 6), (3, 8)) and got.python2
    (tmp_path / "tox.ini").write_text("[tox]\nenvlist = py27\n")  # Python 2 alone: none of 3
    assert supported_pythons(tmp_path).versions == () and not supported_pythons(tmp_path).python2


def test_the_verdicts_say_python_2_is_not_judged(git_repo: Path, tmp_path: Path) -> None:
    repo = commit_files(git_repo, {"setup.py": ISODATE_CLASSIFIERS,
                                   "src/isodate/__init__.py": LIB}, "init")
    patch = edit_diff(repo, "src/isodate/__init__.py", LIB.replace("(object)", ""))
    verdicts = run_gates(repo, patch, ["src/isodate/__init__.py::Duration"],
                         options=GateOptions(fail_fast=False, skip=frozenset({"review"})))
    compat = next(v for v in verdicts if v.gate == "compat")
    assert compat.status == "accept", compat
    assert compat.evidence.endswith("Python 2.7, also declared, is not judged: the gates hold a "
                                    "patch to Python 3 only"), compat.evidence
    assert compat.details["python2_not_judged"] is True
    note = plan(repo, "/nonexistent/python3.11", "all", roots=()).note
    assert note.startswith("pythons (the target supports Python 2.7 and 3.6+"), note
    assert note.endswith("Python 2.7, also declared, is not judged: the gates hold a patch to "
                         "Python 3 only"), note
