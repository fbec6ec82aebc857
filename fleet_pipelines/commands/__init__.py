"""Sub-commands of ``fleet``, one module per area, each with ``register(app)``."""
