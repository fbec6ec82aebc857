"""The code server fleet starts (``dagster code-server start`` through
``fleet_pipelines._dagster_entry``) starts the process that loads the code through the same entry
(``... _dagster_entry dagster api grpc``): its start-up imports, the definitions' among them, made
without the cyclic collector and frozen. It loads and serves the location as before."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from fleet_pipelines.engine import WORKSPACE, CodeServerProcess
from tests._procs import children


def test_the_code_servers_child_starts_through_the_entry_and_serves(tmp_path: Path) -> None:
    from dagster._grpc.client import DagsterGrpcClient
    from dagster._grpc.types import ListRepositoriesResponse
    from dagster._serdes import deserialize_value

    home = tmp_path / "dagster"
    home.mkdir()
    code = CodeServerProcess(home, WORKSPACE, {})
    pid = code.start()
    try:
        client = DagsterGrpcClient(socket=str(code._socket()), host="localhost")
        listed = client.list_repositories()  # (answered once the child has loaded the code)
        argvs = [argv for _, argv in children(pid)]
        grpc = [a for a in argvs if a[1:6] == ["-m", "fleet_pipelines._dagster_entry", "dagster",
                                               "api", "grpc"]]
        assert len(grpc) == 1, argvs
        assert "fleet_pipelines.definitions" in grpc[0]
        response = deserialize_value(listed)
        assert isinstance(response, ListRepositoriesResponse), response  # not a load error
        assert response.repository_symbols, response
    finally:
        code.stop()


def test_the_entry_names_the_user_module_of_a_grpc_command() -> None:
    from fleet_pipelines._dagster_entry import _user_module, grpc_entry_point

    assert _user_module(["api", "grpc", "--socket", "s", "-m", "pkg.defs", "-d", "."]) == \
        "pkg.defs"
    assert _user_module(["api", "grpc", "--module-name", "pkg.defs"]) == "pkg.defs"
    assert _user_module(["api", "grpc", "--socket", "s"]) is None
    assert grpc_entry_point("/venv/bin/python") == [
        "/venv/bin/python", "-m", "fleet_pipelines._dagster_entry", "dagster"]
    assert gc.isenabled()


def test_a_workspace_opened_by_fleet_routes_its_servers_through_the_entry(tmp_path: Path) -> None:
    """``open_workspace`` (and each entry) points the name Dagster's ``open_server_process``
    builds a server's command from at :func:`grpc_entry_point`: a Dagster upgrade that moves
    it fails here."""
    import dagster._grpc.server as server
    from dagster import DagsterInstance

    from fleet_pipelines._dagster_entry import grpc_entry_point
    from fleet_pipelines.engine._submit import open_workspace

    (tmp_path / "home").mkdir()
    with DagsterInstance.local_temp(str(tmp_path / "home")) as instance:
        workspace = tmp_path / "workspace.yaml"
        workspace.write_text("load_from: []\n")
        with open_workspace(instance, workspace):
            assert server.get_python_environment_entry_point is grpc_entry_point
    assert "get_python_environment_entry_point(executable_path or sys.executable)" in \
        Path(server.__file__).read_text()


def test_the_module_is_not_imported_ahead_where_secrets_may_be_injected(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``secrets`` loader sets environment variables just before the server loads the code,
    and the definitions read the environment as they are imported: then no import ahead."""
    from dagster._core.instance.ref import InstanceRef
    from dagster._serdes import serialize_value

    from fleet_pipelines._dagster_entry import _secrets_may_be_injected

    grpc = ["api", "grpc", "-m", "pkg.defs"]
    assert not _secrets_may_be_injected(grpc)  # no injection asked
    inject = [*grpc, "--inject-env-vars-from-instance"]
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    assert not _secrets_may_be_injected(inject)  # no dagster.yaml: the default, no loader
    (home / "dagster.yaml").write_text("telemetry:\\n  enabled: false\\n")
    assert not _secrets_may_be_injected(inject)
    (home / "dagster.yaml").write_text("secrets:\\n  custom:\\n    module: m\\n    class: C\\n")
    assert _secrets_may_be_injected(inject)
    (home / "dagster.yaml").write_text("secrets: [unclosed\\n")
    assert _secrets_may_be_injected(inject)  # unreadable: unsure, so not ahead
    (tmp_path / "other").mkdir()
    ref = InstanceRef.from_dir(str(tmp_path / "other"))
    assert not _secrets_may_be_injected([*inject, "--instance-ref", serialize_value(ref)])
