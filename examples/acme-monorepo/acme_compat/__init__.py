"""Compatibility shims that let Acme's code run on the libraries installed in production."""
