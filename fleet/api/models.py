"""Request and response bodies of the coordinator API (they define its OpenAPI schema)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

__all__ = [
    "MAX_FILES",
    "MAX_NAME",
    "MAX_PATH",
    "MAX_TASK",
    "CountResponse",
    "ErrorDetail",
    "JobDispatchBody",
    "JobDispatchResponse",
    "JobStatus",
    "KillSwitchBody",
    "KillSwitchState",
    "LeaseAcquireBody",
    "LeaseAcquireResponse",
    "LeaseInfo",
    "LeaseList",
    "LeaseReleaseBody",
    "LeaseRenewBody",
    "Text",
    "Ttl",
    "error_responses",
]

MAX_PATH = 4096
MAX_NAME = 1024
MAX_TASK = 65536
MAX_FILES = 10000
# Names and ids: no control characters (PostgreSQL text cannot hold NUL, and a newline in a
# holder name would forge lines in the ledger's text output).
_NO_CONTROL = r"^[^\x00-\x1f\x7f]*$"
_NO_NUL = r"^[^\x00]*$"


def _unicode(value: str) -> str:
    """Valid Unicode only: a lone surrogate (JSON ``"\\ud800"``) can be neither stored nor
    echoed back."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"not valid Unicode (lone surrogate at {exc.start})") from None
    return value


# Every string of a request body: valid Unicode. Every number: finite (NaN, ±Infinity and
# 1e400, which JSON parsing makes infinite, are refused) and in its range.
Text = Annotated[str, AfterValidator(_unicode)]
Ttl = Annotated[float, Field(gt=0, le=86400, allow_inf_nan=False)]


class LeaseAcquireBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file_path: Text = Field(
        min_length=1, max_length=MAX_PATH, description="Repository-relative path, no '..'"
    )
    symbol: Text | None = Field(
        default=None,
        max_length=MAX_NAME,
        pattern=_NO_CONTROL,
        description="Qualified name inside the file (Foo.bar); absent or empty = whole file",
    )
    mode: Literal["read", "write"] = "write"
    ttl_s: Ttl = 60.0
    holder: Text | None = Field(
        default=None,
        max_length=MAX_NAME,
        pattern=_NO_CONTROL,
        description="Agent name under this token",
    )
    unit: Text | None = Field(default=None, max_length=MAX_NAME, pattern=_NO_CONTROL)


class LeaseAcquireResponse(BaseModel):
    acquired: bool
    lease_id: str | None = None
    token: int | None = Field(default=None, description="Fencing token")
    expires_at: float | None = None
    holder: str | None = Field(default=None, description="Our holder, or who blocks us")
    symbol: str
    reason: str | None = None


class LeaseReleaseBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    lease_id: Text | None = Field(
        default=None,
        pattern=r"^[0-9]{1,18}$",
        description="A lease id as returned by acquire; absent = every lease of the holder",
    )
    holder: Text | None = Field(default=None, max_length=MAX_NAME, pattern=_NO_CONTROL)


class LeaseRenewBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ttl_s: Ttl = 60.0
    holder: Text | None = Field(default=None, max_length=MAX_NAME, pattern=_NO_CONTROL)


class CountResponse(BaseModel):
    count: int


class LeaseInfo(BaseModel):
    lease_id: str
    symbol: str
    mode: str
    holder: str
    token: int
    expires_at: float


class LeaseList(BaseModel):
    leases: list[LeaseInfo]


class JobDispatchBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task: Text = Field(
        min_length=1, max_length=MAX_TASK, pattern=_NO_NUL, description="What the agent should do"
    )
    target_files: list[Annotated[Text, Field(min_length=1, max_length=MAX_PATH)]] = Field(
        min_length=1, max_length=MAX_FILES
    )
    sandbox: Text = Field(default="auto", max_length=MAX_NAME, pattern=_NO_CONTROL)
    model: Text = Field(default="codemod", max_length=MAX_NAME, pattern=_NO_CONTROL)


class JobDispatchResponse(BaseModel):
    job_id: str


class JobStatus(BaseModel):
    job_id: str
    status: str
    attempts: int
    task: str
    target_files: list[str]
    sandbox: str
    model: str
    run_id: str | None = None
    result: dict[str, Any] | None = None
    error: str | None = None


class KillSwitchBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    engaged: bool
    reason: Text = Field(default="", max_length=MAX_TASK, pattern=_NO_NUL)


class KillSwitchState(BaseModel):
    engaged: bool
    reason: str = ""


class ErrorDetail(BaseModel):
    """Every error except 422 (whose ``detail`` is pydantic's list naming each bad field)."""

    detail: str


def error_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` for the error codes a route can answer, besides 401/403/503."""
    text = {
        400: "file_path or target_files absolute, with '..', or outside the repository",
        401: "no or invalid bearer token",
        403: "the token lacks the route's scope",
        404: "no such job",
        409: "the kill switch is engaged",
        413: "request body too large",
        415: "request body is not application/json",
        503: "the store is unavailable",
    }
    return {c: {"model": ErrorDetail, "description": text[c]} for c in (401, 403, *codes, 503)}
