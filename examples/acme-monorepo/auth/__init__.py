"""Authentication and authorization: passwords, sessions, signed tokens, role policies, and
``UserAuth`` (who is acting, and as what, in which tenant)."""

from auth.user_auth import UserAuth

__all__ = ["UserAuth"]
