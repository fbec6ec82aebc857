"""The HTTP coordinator (ASGI, served by uvicorn): ``/v1/leases/*`` and ``/v1/jobs/*`` with scoped
bearer tokens. ``create_app(store, repo_root, launcher=...)`` builds the app; ``serve`` runs it in
the foreground; ``serve_in_thread`` on a free port."""

from fleet.api.app import JOB_KIND, Launcher, create_app
from fleet.api.models import JobDispatchBody
from fleet.api.server import RunningServer, serve, serve_in_thread

__all__ = [
    "JOB_KIND",
    "JobDispatchBody",
    "Launcher",
    "RunningServer",
    "create_app",
    "serve",
    "serve_in_thread",
]
