"""The Dagster code location of fleet-pipelines and the ``fleet`` command line.

``definitions.py`` is the only composition root (resources, jobs, schedules, sensors);
``cli.py`` is the ``fleet`` console script, which imports dagster only in the commands that run
the pipeline."""

__all__: list[str] = []  # the package exports nothing: use its modules
