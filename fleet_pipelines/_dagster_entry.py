"""Dagster's own commands as fleet starts them (the daemon: engine/_daemon.py; the code server:
engine/_code_server.py), their start-up imports made without the cyclic garbage collector and
then frozen (fleet_pipelines/_startup.py), as the console scripts would run them otherwise::

    python -m fleet_pipelines._dagster_entry dagster-daemon run -w WORKSPACE
    python -m fleet_pipelines._dagster_entry dagster code-server start -m MODULE ...

The code server's proxy starts the process that loads the code (``dagster api grpc``, again
after each reload) with ``python -m dagster``, as does a daemon on a ``python_module`` workspace;
here they start it through this module too
(``python -m fleet_pipelines._dagster_entry dagster api grpc ...``), which also imports the
location's module (``-m``) inside :func:`heavy_imports`, before the server imports it again
(then a no-op). A module that fails to import is left to the server, which reports the error as
Dagster does.

The command line keeps the script's name and arguments (``dagster-daemon run``,
``code-server start``, ``api grpc``): fleet finds its daemon and code server by them."""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from pathlib import Path
from typing import Any

from fleet_pipelines._startup import heavy_imports, own_process

__all__ = ["ENTRIES", "grpc_entry_point", "main", "route_grpc_children"]

# script -> its click command (module, name, the keywords its console script passes), and what
# it imports as it starts (the daemon: its controller, the instance's storage and run launcher
# classes, the workspace; the code server: its proxy)
ENTRIES: dict[str, tuple[str, str, dict[str, Any], tuple[str, ...]]] = {
    "dagster-daemon": ("dagster._daemon.cli", "cli", {"obj": {}}, (
        "dagster._daemon.controller", "dagster._core.workspace.context",
        "fleet_pipelines.storage", "fleet_pipelines.engine.run_launcher")),
    "dagster": ("dagster._cli", "cli", {"auto_envvar_prefix": "DAGSTER_CLI"},  # its ENV_PREFIX
                ("dagster._grpc.proxy_server",)),
}


def grpc_entry_point(executable_path: str) -> list[str]:
    """What Dagster's ``get_python_environment_entry_point`` returns (``[python, "-m",
    "dagster"]``), through this module: the code server's children start as its own do."""
    return [executable_path, "-m", "fleet_pipelines._dagster_entry", "dagster"]


def route_grpc_children() -> None:
    """The gRPC servers this process starts for a ``python_module`` code location (a code
    server's proxy; a daemon or a workspace on ``workspace.yaml``) start through this module:
    Dagster builds their command from ``get_python_environment_entry_point``, as imported by
    ``dagster._grpc.server`` (``assets._dagster_private.route_grpc_servers``;
    tests/engine/test_code_server_entry.py pins it)."""
    from assets._dagster_private import route_grpc_servers

    route_grpc_servers(grpc_entry_point)


def _user_module(rest: list[str]) -> str | None:
    """The code location's module of ``dagster api grpc ... -m MODULE`` (or
    ``--module-name``)."""
    for i, arg in enumerate(rest[:-1]):
        if arg in ("-m", "--module-name"):
            return rest[i + 1]
    return None


def _secrets_may_be_injected(rest: list[str]) -> bool:
    """Whether the server may set environment variables before it loads the code
    (``--inject-env-vars-from-instance`` with an instance that has a ``secrets`` loader): then
    the module is not imported ahead, since it reads the environment as it is imported. The
    instance is the ``--instance-ref`` given, else ``$DAGSTER_HOME/dagster.yaml``; one that
    cannot be read counts as having one."""
    if "--inject-env-vars-from-instance" not in rest:
        return False
    try:
        if "--instance-ref" in rest:
            from dagster import deserialize_value

            ref = deserialize_value(rest[rest.index("--instance-ref") + 1])
            return getattr(ref, "secrets_loader_data", True) is not None
        import yaml

        home = os.environ.get("DAGSTER_HOME")
        if not home:
            return False  # no instance: nothing to inject from
        path = Path(home) / "dagster.yaml"
        loaded = yaml.safe_load(path.read_text()) if path.exists() else {}
        return bool((loaded or {}).get("secrets"))
    except Exception:  # unsure: the server imports it after its injection
        return True


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in ENTRIES:
        print(f"usage: python -m fleet_pipelines._dagster_entry {{{'|'.join(ENTRIES)}}} ARGS...",
              file=sys.stderr)
        return 2
    script, *rest = args
    module_name, name, keywords, modules = ENTRIES[script]
    own_process()
    grpc = script == "dagster" and rest[:2] == ["api", "grpc"]
    with heavy_imports():
        command = getattr(importlib.import_module(module_name), name)
        for module in modules:
            importlib.import_module(module)
        route_grpc_children()
        user = _user_module(rest) if grpc and not _secrets_may_be_injected(rest) else None
        if user is not None:
            with contextlib.suppress(Exception):  # the server imports it again, reports it
                importlib.import_module(user)
    return int(command(args=rest, prog_name=script, **keywords) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
