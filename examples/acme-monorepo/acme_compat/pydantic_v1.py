"""The Pydantic v1 API, whichever Pydantic is installed.

Acme's models were written for Pydantic 1.x (``@validator``, ``@root_validator``, ``.dict()``,
``.json()``, ``parse_obj`` and ``class Config``). Pydantic 2 still ships that API unchanged as
``pydantic.v1``; on an environment that still has Pydantic 1 the top-level package is used.
Migrating the models to the Pydantic 2 API is tracked as a campaign (see PLANTED.md).
"""

try:
    from pydantic.v1 import (
        BaseModel,
        Field,
        ValidationError,
        root_validator,
        validator,
    )
except ImportError:  # Pydantic 1.x
    from pydantic import (  # type: ignore[no-redef]
        BaseModel,
        Field,
        ValidationError,
        root_validator,
        validator,
    )

__all__ = ["BaseModel", "Field", "ValidationError", "root_validator", "validator"]
