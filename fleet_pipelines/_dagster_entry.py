"""Dagster's own commands as fleet starts them (the daemon: engine/_daemon.py; the code server:
engine/_code_server.py), their start-up imports made without the cyclic garbage collector and
then frozen (fleet_pipelines/_startup.py), as the console scripts would run them otherwise::

    python -m fleet_pipelines._dagster_entry dagster-daemon run -w WORKSPACE
    python -m fleet_pipelines._dagster_entry dagster code-server start -m MODULE ...

The command line keeps the script's name and arguments (``dagster-daemon run``,
``code-server start``): fleet finds its daemon and code server by them."""

from __future__ import annotations

import importlib
import sys
from typing import Any

from fleet_pipelines._startup import heavy_imports, own_process

__all__ = ["ENTRIES", "main"]

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


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in ENTRIES:
        print(f"usage: python -m fleet_pipelines._dagster_entry {{{'|'.join(ENTRIES)}}} ARGS...",
              file=sys.stderr)
        return 2
    script, *rest = args
    module_name, name, keywords, modules = ENTRIES[script]
    own_process()
    with heavy_imports():
        command = getattr(importlib.import_module(module_name), name)
        for module in modules:
            importlib.import_module(module)
    return int(command(args=rest, prog_name=script, **keywords) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
