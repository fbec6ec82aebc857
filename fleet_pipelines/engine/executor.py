"""The executor of the jobs whose steps may run on other machines (``fix_<c>_job``,
``integrate_<c>_job``): Dagster's in-process executor, or dagster-celery's, chosen by the run's
config (``execution: {config: {in_process: {}}}`` or ``{celery: {...}}``; the submitting engine
writes it, ``fleet_pipelines.engine._config.execution_config``). The run config names the
executor that runs it, so a re-execution from the UI runs where the original run did."""

from __future__ import annotations

from typing import Any

from dagster import (
    Executor,
    ExecutorDefinition,
    Field,
    InitExecutorContext,
    Selector,
    executor,
    in_process_executor,
    multiple_process_executor_requirements,
)

__all__ = ["fleet_executor"]


def _celery() -> ExecutorDefinition:
    from dagster_celery import celery_executor

    return celery_executor


def _schema() -> Selector:
    from dagster_celery.executor import CELERY_CONFIG

    return Selector({"in_process": in_process_executor.config_schema.as_field(),
                     "celery": Field(CELERY_CONFIG)})


@executor(name="fleet", config_schema=_schema(),
          requirements=multiple_process_executor_requirements())
def fleet_executor(init_context: InitExecutorContext) -> Executor:
    """``in_process`` (the steps one after the other in the run worker) or ``celery`` (each
    step a task on the broker, run by whichever celery worker takes it)."""
    chosen_config: dict[str, Any] = dict(init_context.executor_config)
    ((kind, config),) = chosen_config.items()
    chosen = _celery() if kind == "celery" else in_process_executor
    inner: Any = InitExecutorContext(job=init_context.job, executor_def=chosen,
                                     executor_config=dict(config or {}),
                                     instance=init_context.instance)
    return chosen.executor_creation_fn(inner)  # type: ignore[misc]
