"""Request handlers, one module per resource; each exposes ``register(app)``."""
