"""Serving the coordinator with uvicorn: in the foreground (``fleet serve``) or in a thread on a
free port (tests, embedding)."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import uvicorn
from fastapi import FastAPI

from fleet.api.app import Launcher, create_app
from fleet.errors import FleetError
from fleet.store import open_store

__all__ = ["RunningServer", "serve", "serve_in_thread"]


def _config(app: FastAPI, host: str, port: int) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        lifespan="off",
        ws="none",
        access_log=False,
    )


def serve(
    store_url: str,
    repo_root: str | Path,
    *,
    host: str = "127.0.0.1",
    port: int = 8787,
    launcher: Launcher | None = None,
    repository: str = "",
) -> None:
    """Run the coordinator in the foreground until interrupted. ``repository``: the store key of
    the repository served (``fleet.home.store_key``): its leases and ledger are that
    repository's, the same as its sweeps' (``fleet.store.repo_scope``)."""
    from fleet.store.repo_scope import scoped_store

    with open_store(store_url) as store:
        app = create_app(scoped_store(store, repository), repo_root, launcher=launcher)
        uvicorn.Server(_config(app, host, port)).run()


@dataclass
class RunningServer:
    url: str
    server: uvicorn.Server
    thread: threading.Thread

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def serve_in_thread(app: FastAPI, host: str = "127.0.0.1") -> RunningServer:
    """Serve ``app`` on a free port of ``host`` in a daemon thread; returns once it accepts."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(_config(app, host, port))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise FleetError(f"the coordinator did not start on {host}:{port}")
        time.sleep(0.01)
    return RunningServer(f"http://{host}:{port}", server, thread)
