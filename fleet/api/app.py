"""The coordinator ASGI app: leases and jobs over HTTP for agents that are not Python processes
of ours.

Contract: every ``/v1`` route needs ``Authorization: Bearer <token>`` (401 without a valid one,
403 when the token lacks the route's scope: ``leases``, ``jobs`` or ``admin``); a malformed body is
422 and names the field (every number must be finite and in range, every string valid
Unicode); a ``file_path`` that is absolute, contains ``..``, resolves outside the repository or
cannot be resolved (a symlink loop) is 400, and a lease is on the canonical key
(:mod:`fleet.store.keys`: symlinks inside the repository followed, Python names NFKC, one
spelling), so no alias of a symbol is a second key; a store fault is 503.
``POST /v1/jobs/dispatch`` records the job in the task queue (kind ``job``) and then calls the
pluggable ``launcher(job_id, body)``; its return value (a run id, or None) is recorded with the
job. The default launcher does nothing: queue only. A launcher that runs the job records
``job.started`` / ``job.finished`` (status, error, result) in the ledger; ``GET /v1/jobs/{id}``
reads them (``running`` between the two).
``/docs``, ``/redoc`` and ``/openapi.json`` need no token; their assets are served locally.
"""

# No "from __future__ import annotations": FastAPI resolves the route annotations at runtime,
# and the scoped dependencies are local aliases.
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from fleet.api._docs import add_docs
from fleet.api._guard import MAX_BODY_BYTES, RequestGuard
from fleet.api.models import (
    CountResponse,
    JobDispatchBody,
    JobDispatchResponse,
    JobStatus,
    KillSwitchBody,
    KillSwitchState,
    LeaseAcquireBody,
    LeaseAcquireResponse,
    LeaseInfo,
    LeaseList,
    LeaseReleaseBody,
    LeaseRenewBody,
    error_responses,
)
from fleet.errors import StoreError
from fleet.store import LeaseKeyError, Store, TokenInfo, canonical_symbol, resolve_path
from fleet.types import JOB_DISPATCHED, JOB_FINISHED, JOB_STARTED, Acquired, LeaseRequest

__all__ = ["JOB_KIND", "Launcher", "create_app"]

JOB_KIND = "job"
Launcher = Callable[[str, JobDispatchBody], str | None]
_bearer = HTTPBearer(auto_error=False)


def _repo_path(repo_root: Path, file_path: str, field: str = "file_path") -> str:
    """The real repository-relative path (symlinks inside the repository followed), or HTTP 400
    naming ``field``."""
    try:
        return resolve_path(repo_root, file_path)
    except LeaseKeyError as exc:
        raise HTTPException(400, f"{field}: {exc}") from None


def _lease_key(repo_root: Path, file_path: str, symbol: str | None) -> str:
    """The canonical lease key of ``symbol`` in ``file_path`` (:mod:`fleet.store.keys`): the
    symbol may repeat the file (``a.py::Foo``, or a link to it) but not name another one."""
    path = _repo_path(repo_root, file_path)
    qualified = symbol or ""
    head, sep, rest = qualified.partition("::")
    if sep and ("/" in head or "." in head):
        named = _repo_path(repo_root, head, "symbol")
        if named != path:
            raise HTTPException(400, f"symbol names another file than file_path: {symbol!r}")
        qualified = rest
    if not qualified:
        return path
    try:
        return canonical_symbol(f"{path}::{qualified}")
    except LeaseKeyError as exc:
        raise HTTPException(400, str(exc)) from None


def _printable(errors: Sequence[Any]) -> list[dict[str, Any]]:
    """Pydantic's errors without the offending input values, which may be what JSON cannot
    carry (NaN, a lone surrogate): the location and the message name the field."""
    return [
        {"type": e.get("type"), "loc": list(e.get("loc", ())), "msg": str(e.get("msg", ""))}
        for e in errors
    ]


def create_app(
    store: Store,
    repo_root: str | Path,
    *,
    launcher: Launcher | None = None,
    max_body: int = MAX_BODY_BYTES,
) -> FastAPI:
    """The API over ``store`` for the repository at ``repo_root``; request bodies over
    ``max_body`` bytes are refused with 413."""
    root = Path(repo_root)
    app = FastAPI(
        title="fleet coordinator",
        version="1",
        description="Symbol leases and job dispatch for a fleet of coding agents.",
        docs_url=None,
        redoc_url=None,
    )
    add_docs(app)  # /docs and /redoc with local assets, no token
    app.add_middleware(RequestGuard, max_body=max_body)
    app.state.store = store
    app.state.launcher = launcher

    @app.exception_handler(RequestValidationError)
    def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": _printable(exc.errors())}, status_code=422)

    @app.exception_handler(LeaseKeyError)
    def bad_key(request: Request, exc: LeaseKeyError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=400)

    @app.exception_handler(StoreError)
    def store_fault(request: Request, exc: StoreError) -> JSONResponse:
        return JSONResponse({"detail": f"store unavailable: {exc}"}, status_code=503)

    def authorized(scope: str) -> Callable[..., TokenInfo]:
        def check(
            credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
        ) -> TokenInfo:
            info = store.tokens.verify(credentials.credentials) if credentials else None
            if info is None:
                raise HTTPException(
                    401, "a valid bearer token is required", {"WWW-Authenticate": "Bearer"}
                )
            if not info.allows(scope):
                raise HTTPException(403, f"this token lacks the {scope!r} scope")
            return info

        return check

    Leases = Annotated[TokenInfo, Depends(authorized("leases"))]
    Jobs = Annotated[TokenInfo, Depends(authorized("jobs"))]
    Admin = Annotated[TokenInfo, Depends(authorized("admin"))]

    def holder_of(info: TokenInfo, name: str | None) -> str:
        return f"{info.token_id}:{name or info.name}"

    @app.post(
        "/v1/leases/acquire",
        response_model=LeaseAcquireResponse,
        responses=error_responses(400, 413, 415),
    )
    def acquire(body: LeaseAcquireBody, info: Leases) -> LeaseAcquireResponse:
        symbol = _lease_key(root, body.file_path, body.symbol)
        holder = holder_of(info, body.holder)
        result = store.leases.try_acquire(
            holder, body.unit or holder, [LeaseRequest(symbol, body.mode)], body.ttl_s
        )
        if isinstance(result, Acquired):
            grant = result.grants[0]
            return LeaseAcquireResponse(
                acquired=True,
                lease_id=grant.lease_id,
                token=grant.token,
                expires_at=grant.expires_at,
                holder=holder,
                symbol=symbol,
            )
        blocker = result.blocking[0][1] if result.blocking else None
        return LeaseAcquireResponse(
            acquired=False, holder=blocker, symbol=symbol, reason=result.reason
        )

    @app.post(
        "/v1/leases/release", response_model=CountResponse, responses=error_responses(413, 415)
    )
    def release(body: LeaseReleaseBody, info: Leases) -> CountResponse:
        # An id that is unknown, expired, already released or another holder's releases
        # nothing: count 0, so that a retried release is harmless.
        ids = None if body.lease_id is None else [body.lease_id]
        return CountResponse(count=store.leases.release(holder_of(info, body.holder), ids))

    @app.post("/v1/leases/renew", response_model=CountResponse, responses=error_responses(413, 415))
    def renew(body: LeaseRenewBody, info: Leases) -> CountResponse:
        return CountResponse(count=store.leases.renew(holder_of(info, body.holder), body.ttl_s))

    @app.get("/v1/leases", response_model=LeaseList, responses=error_responses(400))
    def list_leases(info: Leases, file_path: Annotated[str | None, Query()] = None) -> LeaseList:
        within = None if file_path is None else _repo_path(root, file_path)
        return LeaseList(
            leases=[
                LeaseInfo(
                    lease_id=g.lease_id,
                    symbol=g.symbol,
                    mode=g.mode,
                    holder=g.holder,
                    token=g.token,
                    expires_at=g.expires_at,
                )
                for g in store.leases.held(within)
            ]
        )

    @app.post(
        "/v1/jobs/dispatch",
        response_model=JobDispatchResponse,
        responses=error_responses(400, 409, 413, 415),
    )
    def dispatch(body: JobDispatchBody, info: Jobs) -> JobDispatchResponse:
        files = [_repo_path(root, f, "target_files") for f in body.target_files]
        if store.controls.engaged():
            raise HTTPException(409, "the kill switch is engaged: no new jobs")
        payload = {**body.model_dump(), "target_files": files, "requested_by": info.name}
        job_id = store.queue.enqueue(JOB_KIND, uuid.uuid4().hex, payload)
        run_id = launcher(job_id, body) if launcher is not None else None
        store.ledger.append(
            JOB_DISPATCHED,
            {"job_id": job_id, "run_id": run_id, **payload},
            unit=job_id,
            actor=info.name,
        )
        return JobDispatchResponse(job_id=job_id)

    @app.get("/v1/jobs/{job_id}", response_model=JobStatus, responses=error_responses(404))
    def job_status(job_id: str, info: Jobs) -> JobStatus:
        record = store.queue.get(job_id)
        if record is None or record.kind != JOB_KIND:
            raise HTTPException(404, f"no job {job_id!r}")
        run_ids = [
            e.payload.get("run_id") for e in store.ledger.events(kind=JOB_DISPATCHED, unit=job_id)
        ]
        finished = store.ledger.events(kind=JOB_FINISHED, unit=job_id)
        outcome = finished[-1].payload if finished else {}
        started = not finished and store.ledger.events(kind=JOB_STARTED, unit=job_id)
        p = record.payload
        return JobStatus(
            job_id=record.task_id,
            status=str(outcome.get("status") or ("running" if started else record.status)),
            attempts=record.attempts,
            task=str(p.get("task", "")),
            target_files=list(p.get("target_files", [])),
            sandbox=str(p.get("sandbox", "auto")),
            model=str(p.get("model", "")),
            run_id=run_ids[0] if run_ids else None,
            result=record.result or outcome.get("result"),
            error=outcome.get("error") or record.error,
        )

    @app.get("/v1/admin/kill-switch", response_model=KillSwitchState, responses=error_responses())
    def kill_state(info: Admin) -> KillSwitchState:
        state = store.controls.kill_state()
        return KillSwitchState(engaged=state.engaged, reason=state.reason)

    @app.post(
        "/v1/admin/kill-switch",
        response_model=KillSwitchState,
        responses=error_responses(413, 415),
    )
    def set_kill(body: KillSwitchBody, info: Admin) -> KillSwitchState:
        if body.engaged:
            store.controls.engage(body.reason or f"engaged by {info.name}")
        else:
            store.controls.release()
        # The same event kinds as `fleet stop` / `fleet stop --off`.
        if body.engaged:
            kind, payload = (
                "kill_switch.engaged",
                {"reason": body.reason or f"engaged by {info.name}"},
            )
        else:
            kind, payload = "kill_switch.released", {}
        store.ledger.append(kind, payload, actor=info.name)
        return kill_state(info)

    return app
