"""Password logins with lockout after repeated failures, and server-side sessions."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field

from auth import passwords
from common import clock, ids
from common.errors import AuthenticationFailed, ValidationFailed

SESSION_TTL = datetime.timedelta(hours=12)
LOCKOUT = datetime.timedelta(minutes=15)


@dataclass
class Account:
    user_id: str
    email: str
    password_hash: str
    failed_logins: int = 0
    locked_until: datetime.datetime | None = None


@dataclass
class Session:
    session_id: str
    user_id: str
    created_at: datetime.datetime
    expires_at: datetime.datetime
    data: dict = field(default_factory=dict)

    def is_valid(self, now: datetime.datetime) -> bool:
        return now < self.expires_at


class AccountStore:
    """Accounts by email, with login, lockout and sessions."""

    def __init__(self, max_failed_logins: int = 5) -> None:
        self.max_failed_logins = max_failed_logins
        self.accounts: dict[str, Account] = {}
        self.sessions: dict[str, Session] = {}

    def register(self, email: str, password: str) -> Account:
        email = email.strip().lower()
        if email in self.accounts:
            raise ValidationFailed("email already registered", email=email)
        problems = passwords.validate_strength(password)
        if problems:
            raise ValidationFailed("weak password: needs " + ", ".join(problems))
        account = Account(ids.new_id("user"), email, passwords.hash_password(password))
        self.accounts[email] = account
        return account

    def login(self, email: str, password: str) -> Session:
        account = self.accounts.get(email.strip().lower())
        now = clock.utc_now()
        if account is None:
            raise AuthenticationFailed("unknown email or wrong password")
        if account.locked_until is not None and now < account.locked_until:
            raise AuthenticationFailed("account locked", until=account.locked_until.isoformat())
        if not passwords.verify_password(password, account.password_hash):
            account.failed_logins += 1
            if account.failed_logins >= self.max_failed_logins:
                account.locked_until = now + LOCKOUT
                account.failed_logins = 0
            raise AuthenticationFailed("unknown email or wrong password")
        account.failed_logins = 0
        account.locked_until = None
        session = Session(ids.new_id("session"), account.user_id, now, now + SESSION_TTL)
        self.sessions[session.session_id] = session
        return session

    def resolve(self, session_id: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None or not session.is_valid(clock.utc_now()):
            self.sessions.pop(session_id, None)
            raise AuthenticationFailed("session expired or unknown")
        return session

    def logout(self, session_id: str) -> None:
        self.sessions.pop(session_id, None)
