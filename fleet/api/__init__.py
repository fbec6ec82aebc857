"""The HTTP coordinator (ASGI, served by uvicorn): ``/v1/leases/*`` and ``/v1/jobs/*`` with scoped
bearer tokens."""
