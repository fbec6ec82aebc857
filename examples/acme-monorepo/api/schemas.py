"""Request and response bodies (Pydantic v1 API, see ``acme_compat.pydantic_v1``)."""

from __future__ import annotations

from typing import Optional

from acme_compat.pydantic_v1 import BaseModel, Field, root_validator, validator
from common.money import MINOR_UNITS


class ChargeRequest(BaseModel):
    amount_cents: int = Field(..., gt=0)
    currency: str = "USD"
    description: str = ""
    idempotency_key: Optional[str] = None

    @validator("currency")
    def currency_supported(cls, value: str) -> str:
        value = value.upper()
        if value not in MINOR_UNITS:
            raise ValueError(f"unsupported currency {value}")
        return value

    class Config:
        extra = "forbid"
        anystr_strip_whitespace = True


class ChargeResponse(BaseModel):
    charge_id: str
    status: str
    amount_cents: int
    currency: str

    class Config:
        orm_mode = True


class CreateTenantRequest(BaseModel):
    name: str
    plan: str = "starter"
    owner_email: str

    @validator("owner_email")
    def email_shape(cls, value: str) -> str:
        if "@" not in value or value.startswith("@") or value.endswith("@"):
            raise ValueError("not an email address")
        return value.lower()

    class Config:
        extra = "forbid"


class InviteRequest(BaseModel):
    user_id: str
    role: str = "member"
    seat: bool = False

    @root_validator
    def owners_never_get_seats(cls, values: dict) -> dict:
        if values.get("role") == "owner" and values.get("seat"):
            raise ValueError("owners are not assigned paid seats")
        return values


class RefundRequest(BaseModel):
    charge_id: str
    amount_cents: Optional[int] = Field(None, gt=0)
    reason: str = ""
