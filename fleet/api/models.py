"""Request and response bodies of the coordinator API (they define its OpenAPI schema)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class LeaseAcquireBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file_path: str = Field(min_length=1, description="Repository-relative path, no '..'")
    symbol: str | None = Field(
        default=None, description="Qualified name inside the file (Foo.bar); absent = whole file"
    )
    mode: Literal["read", "write"] = "write"
    ttl_s: float = Field(default=60.0, gt=0, le=86400)
    holder: str | None = Field(default=None, description="Agent name under this token")
    unit: str | None = None


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

    lease_id: str | None = Field(default=None, description="Absent = every lease of the holder")
    holder: str | None = None


class LeaseRenewBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ttl_s: float = Field(default=60.0, gt=0, le=86400)
    holder: str | None = None


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

    task: str = Field(min_length=1, description="What the agent should do")
    target_files: list[str] = Field(min_length=1)
    sandbox: str = "auto"
    model: str = "codemod"


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
    reason: str = ""


class KillSwitchState(BaseModel):
    engaged: bool
    reason: str = ""
