"""`fleet verify` takes the write set from the ledger when no --write is given."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet.store import open_store
from fleet_pipelines.cli import main

from .conftest import LIB, MakePatch

pytestmark = pytest.mark.sandbox


def test_write_set_from_the_unit_in_the_ledger(
    lib_repo: Path, make_patch: MakePatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    patch = make_patch({"lib.py": LIB.replace("sum(values)", "sum(list(values))")})
    patch_file = tmp_path / "unit.patch"
    patch_file.write_text(patch)
    url = f"sqlite:///{tmp_path / 'fleet.db'}"
    store = open_store(url)
    store.ledger.append("unit.planned", {"key": "k1", "write_set": ["lib.py::total"]},
                        unit="k1", campaign="c")
    store.ledger.append("unit.finished", {"unit": "k1", "patch": patch}, unit="k1", campaign="c")
    store.ledger.append("unit.planned", {"key": "k2", "write_set": ["lib.py::Account"]},
                        unit="k2", campaign="c")
    store.close()
    common = [str(lib_repo), str(patch_file), "--sandbox", "bwrap", "--store", url]
    assert main(["verify", *common]) == 0
    captured = capsys.readouterr()
    assert "write set of unit k1 (from the ledger)" in captured.err
    assert "ACCEPT   lease_scope: touches only leased symbols: lib.py::total" in captured.out
    assert main(["verify", *common, "--unit", "k2"]) == 1
    assert "REJECT   lease_scope" in capsys.readouterr().out
