"""Which files hold tests: a single-module project's root ``tests.py`` (itsdangerous 0.24 keeps
its 89 tests there) and a Django app's ``tests.py`` are test modules; ``test.py`` inside a
package is library code (``werkzeug/test.py``)."""

from __future__ import annotations

from pathlib import Path

from fleet.graph import index, is_test_file
from tests.unit.graph.graph_helpers import put


def test_tests_py_and_root_test_py_are_test_modules(tmp_path: Path) -> None:
    put(tmp_path, "signer.py", "def sign(x):\n    return x\n")
    put(tmp_path, "tests.py", """\
        import pytest
        from signer import sign

        @pytest.fixture
        def key():
            return 1

        def test_sign(key):
            assert sign(key)

        class TestSigner:
            def test_again(self):
                assert sign(2)
        """)
    put(tmp_path, "app/tests.py", "from signer import sign\n\ndef test_app():\n    sign(3)\n")
    put(tmp_path, "web/test.py", "from signer import sign\n\ndef test_client():\n    sign(4)\n")
    graph = index(tmp_path)
    assert graph.tests_reaching(["signer.py::sign"]) == [
        "app/tests.py::test_app", "tests.py::TestSigner.test_again", "tests.py::test_sign"]
    sign_test = next(r for r in graph.references
                     if r.src == "tests.py::test_sign" and r.name == "key")
    assert sign_test.target == "tests.py::key"  # the fixture parameter resolves
    assert is_test_file("test.py") and is_test_file("app/tests.py")
    assert not is_test_file("web/test.py") and not is_test_file("tests_helpers.py")
