"""Password hashing with PBKDF2-HMAC-SHA256 and a per-password salt."""

from __future__ import annotations

import hashlib
import hmac
import secrets

ALGORITHM = "pbkdf2_sha256"
ITERATIONS = 2_000  # kept low for the test suite; production reads auth.pbkdf2_iterations
MIN_LENGTH = 10


def validate_strength(password: str) -> list[str]:
    """Reasons ``password`` is too weak; empty when it is acceptable."""
    problems = []
    if len(password) < MIN_LENGTH:
        problems.append(f"at least {MIN_LENGTH} characters")
    if password.lower() == password or password.upper() == password:
        problems.append("mixed case")
    if not any(ch.isdigit() for ch in password):
        problems.append("a digit")
    return problems


def hash_password(password: str, *, iterations: int = ITERATIONS) -> str:
    salt = secrets.token_hex(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt.encode(), iterations)
    return f"{ALGORITHM}${iterations}${salt}${digest.hex()}"


def verify_password(password: str, encoded: str) -> bool:
    """Constant-time check of ``password`` against an encoded hash."""
    try:
        algorithm, iterations, salt, expected = encoded.split("$")
    except ValueError:
        return False
    if algorithm != ALGORITHM:
        return False
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt.encode(), int(iterations))
    return hmac.compare_digest(digest.hex(), expected)


def needs_rehash(encoded: str, iterations: int = ITERATIONS) -> bool:
    parts = encoded.split("$")
    return len(parts) != 4 or parts[0] != ALGORITHM or int(parts[1]) < iterations
