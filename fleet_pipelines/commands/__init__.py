"""Sub-commands of ``fleet``, one module per area, each with ``register(app)``."""

__all__: list[str] = []  # the package exports nothing: use its modules
