"""The deployment files describe the deployment the tests run: deploy/docker-compose.yaml,
deploy/k8s-values.yaml and deploy/k8s-workers.yaml name the same instance file, worker and
daemon commands, image and environment variables as tests/distributed/_cluster.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.distributed._cluster import DEPLOY, deployment_env

ENV = set(deployment_env(Path("/d"), "dbname=d", "dbname=f", Path("/h"), "git://x/t.git",
                         "yaml-safe-load", "redis://r:6379/0", 3600, workspace=Path("/w")))
WORKER = ["python", "-m", "fleet_pipelines.engine.worker"]


def load(name: str) -> Any:
    return yaml.safe_load((DEPLOY / name).read_text())


def test_compose_runs_the_test_deployment() -> None:
    compose = load("docker-compose.yaml")
    services = compose["services"]
    assert {"postgres", "redis", "daemon", "webserver", "worker"} <= set(services)
    for name in ("daemon", "webserver", "coordinator", "worker"):
        service = services[name]
        assert set(service["environment"]) == ENV, name
        assert service["image"] == "fleet-pipelines:0.1.0"
        assert service["build"]["dockerfile"] == "deploy/Dockerfile"
    assert services["worker"]["command"] == WORKER
    assert services["daemon"]["command"][:2] == ["dagster-daemon", "run"]
    # one code server (`code`), which the daemon, the webserver and every sweep load the code
    # location from, as _cluster.py's CodeServerProcess: none starts a code server of its own
    code = services["code"]
    assert set(code["environment"]) == ENV
    assert code["command"][:3] == ["dagster", "code-server", "start"]
    assert code["command"][3:7] == ["-m", "fleet_pipelines.definitions", "--location-name",
                                    "fleet_pipelines.definitions"]
    assert "--inject-env-vars-from-instance" in code["command"]
    workspace = services["daemon"]["environment"]["FLEET_WORKSPACE"]
    assert workspace == "/app/deploy/workspace.yaml"
    for name in ("daemon", "webserver"):
        command = services[name]["command"]
        assert command[command.index("-w") + 1] == workspace, name
    (entry,) = load("workspace.yaml")["load_from"]
    port = code["command"][code["command"].index("-p") + 1]
    assert entry["grpc_server"] == {"host": "code", "port": int(port),
                                    "location_name": "fleet_pipelines.definitions"}
    for name in ("daemon", "webserver", "coordinator"):
        assert services[name]["depends_on"]["code"] == {"condition": "service_healthy"}, name
    assert "volumes" not in services["worker"]  # no state shared between workers
    env = services["worker"]["environment"]
    assert env["FLEET_EXECUTOR"] == "celery" and env["FLEET_CELERY_BROKER"].startswith("redis://")
    assert "--appendonly" in services["redis"]["command"]  # a restart keeps the queue
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert "cp deploy/dagster.yaml /opt/dagster/dagster.yaml" in dockerfile
    assert env["DAGSTER_HOME"] == "/opt/dagster"


def test_kubernetes_files_name_the_same_configuration() -> None:
    values = load("k8s-values.yaml")
    (code,) = values["dagster-user-deployments"]["deployments"]
    names = {e["name"] for e in code["env"]}
    secret = {"FLEET_STORE_URL", "DAGSTER_POSTGRES_URL"}  # from the fleet-store secret
    # DAGSTER_HOME is the chart's own, and so is the workspace: this user deployment is the
    # code server, and the chart writes the daemon's and the webserver's workspace naming it
    chart = {"DAGSTER_HOME", "FLEET_WORKSPACE"}
    assert names | secret | chart == ENV
    launcher = values["runLauncher"]["config"]["k8sRunLauncher"]
    assert {v.split("=", 1)[0] for v in launcher["envVars"]} == {
        "FLEET_EXECUTOR", "FLEET_CELERY_BROKER", "FLEET_CELERY_VISIBILITY_S"}
    queue = values["dagsterDaemon"]["runCoordinator"]["config"]["queuedRunCoordinator"]
    instance = load("dagster.yaml")
    runs = instance["concurrency"]["runs"]
    assert queue["maxConcurrentRuns"] == runs["max_concurrent_runs"]
    assert queue["tagConcurrencyLimits"][0]["key"] == runs["tag_concurrency_limits"][0]["key"]
    daemon = values["dagsterDaemon"]
    monitoring, retries = instance["run_monitoring"], instance["run_retries"]
    assert daemon["runMonitoring"] == {
        "enabled": monitoring["enabled"],
        "startTimeoutSeconds": monitoring["start_timeout_seconds"],
        "pollIntervalSeconds": monitoring["poll_interval_seconds"],
        "maxResumeRunAttempts": monitoring["max_resume_run_attempts"]}
    assert daemon["runRetries"] == {
        "enabled": retries["enabled"], "maxRetries": retries["max_retries"],
        "retryOnAssetOrOpFailure": retries["retry_on_asset_or_op_failure"]}
    docs = list(yaml.safe_load_all((DEPLOY / "k8s-workers.yaml").read_text()))
    (worker,) = [d for d in docs if d["kind"] == "Deployment"
                 and d["metadata"]["name"] == "fleet-worker"]
    (container,) = worker["spec"]["template"]["spec"]["containers"]
    assert container["command"] == WORKER
    assert container["image"] == f"{code['image']['repository']}:{code['image']['tag']}"
    assert {e["name"] for e in container["env"]} | secret | {"FLEET_WORKSPACE"} == ENV
    by_name = {e["name"]: e["value"] for e in container["env"]}
    assert all(by_name[e["name"]] == e["value"] for e in code["env"]
               if e["name"] != "FLEET_HOME")
    assert [m["mountPath"] for m in container["volumeMounts"]] == ["/fleet"]
    assert worker["spec"]["template"]["spec"]["volumes"][0]["emptyDir"] == {}
