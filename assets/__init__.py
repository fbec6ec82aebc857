"""Dagster assets and asset checks of fleet-pipelines. Thin: each asset body calls one ``fleet``
function and returns ``MaterializeResult(metadata=...)``. Composed only in
:mod:`fleet_pipelines.definitions`."""
