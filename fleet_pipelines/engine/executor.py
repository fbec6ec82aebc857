"""The executor of the jobs whose steps may run on other machines (``fix_<c>_job``,
``integrate_<c>_job``): Dagster's in-process executor, or dagster-celery's, chosen by the run's
config (``execution: {config: {in_process: {}}}`` or ``{celery: {...}}``; the submitting engine
writes it, ``fleet_pipelines.engine._config.execution_config``). The run config names the
executor that runs it, so a re-execution from the UI runs where the original run did.

On celery, a step that reads neither the worker's mirror nor its graph (``verified_patches``:
the ledger's verdicts, then one materialization per verified unit) runs as the same celery task
*applied locally* in the run worker (``Task.apply``: the task's own code, its events returned
the same way) instead of a second task on the broker: the celery worker that ran the batch is
free as soon as the batch ends, and the step does not wait for a worker, its preparation or the
broker."""

from __future__ import annotations

from typing import Any, cast

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


def _local_or_submitted(app: Any, plan_context: Any, step: Any, queue: str, priority: int,
                        known_state: Any) -> Any:
    """dagster-celery's step submission, but a mirrorless step's task is applied in this
    process (an ``EagerResult``: ``ready()``, ``get()`` re-raising the step's failure)."""
    from dagster_celery.tasks import create_task

    from assets._dagster_private import ExecuteStepArgs, pack_value, submit_celery_task
    from fleet_pipelines.engine._prepare import needs_mirror

    if needs_mirror([step.key]):
        return submit_celery_task(app, plan_context, step, queue, priority, known_state)
    args = ExecuteStepArgs(
        job_origin=plan_context.reconstructable_job.get_python_origin(),
        run_id=plan_context.dagster_run.run_id, step_keys_to_execute=[step.key],
        instance_ref=plan_context.instance.get_ref(),
        retry_mode=plan_context.executor.retries.for_inner_plan(), known_state=known_state,
        print_serialized_events=True)
    return create_task(app).si(
        execute_step_args_packed=pack_value(args),
        executable_dict=plan_context.reconstructable_job.to_dict()).apply()


def _fleet_celery(executor: Any) -> Executor:
    """``executor`` (dagster-celery's) with :func:`_local_or_submitted` as its submission."""
    from dagster_celery.core_execution_loop import core_celery_execution_loop
    from dagster_celery.executor import CeleryExecutor

    class FleetCeleryExecutor(CeleryExecutor):
        def execute(self, plan_context: Any, execution_plan: Any) -> Any:
            return core_celery_execution_loop(plan_context, execution_plan,
                                              step_execution_fn=_local_or_submitted)

    executor.__class__ = FleetCeleryExecutor
    return cast(Executor, executor)


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
    made = chosen.executor_creation_fn(inner)  # type: ignore[misc]
    return _fleet_celery(made) if kind == "celery" else made
