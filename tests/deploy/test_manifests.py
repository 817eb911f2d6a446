"""Kubernetes manifests: valid for a pinned Kubernetes version, wired together as an operator relies on.

Schema validation is offline (kubernetes-validate). The kustomizations (generated ConfigMaps and
Secrets, the many-bots overlays) are rendered with ``kubectl kustomize`` where kubectl is installed.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from clarigate.gateway.runtime.config import ENV_NAMES, SECRET_FIELDS
from tests.deploy.k8s_objects import (
    DEPLOY,
    K8S,
    Doc,
    container_port,
    copy_with_example_env,
    env_file_keys,
    env_value,
    kubectl,
    load_docs,
    named,
    of_kind,
    pod_spec,
    raw_manifests,
    render,
    secret_keys,
    secret_refs,
    selects,
)

kubernetes_validate = pytest.importorskip(
    "kubernetes_validate.utils", reason="kubernetes-validate is not installed"
)

#: The oldest Kubernetes release the manifests promise to work on.
KUBERNETES_VERSION = "1.31.0"
needs_kubectl = pytest.mark.skipif(
    kubectl() is None, reason="kubectl (it renders kustomizations) is not installed"
)


def image_uid() -> int:
    """The numeric user the image runs as (USER in deploy/Dockerfile)."""
    return image_ids()[0]


def image_ids() -> tuple[int, int]:
    """The numeric user and group the image runs as (``USER uid:gid`` in deploy/Dockerfile)."""
    match = re.search(r"^USER\s+(\d+):(\d+)", (DEPLOY / "Dockerfile").read_text(), re.MULTILINE)
    assert match, "the Dockerfile sets no numeric USER uid:gid"
    return int(match.group(1)), int(match.group(2))


def check_writable_paths(workload: Doc, container: Doc) -> None:
    """With a read-only root filesystem, the data directory and /tmp are volumes the image's user
    can write. The data directory (the messages kept on disk during a Redis outage) is each
    replica's own claim, which outlives the pod; /tmp is scratch."""
    spec = pod_spec(workload)
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    uid, gid = image_ids()
    assert (spec["securityContext"]["runAsGroup"], spec["securityContext"]["fsGroup"]) == (gid, gid)
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    data_dir = env_value(container, "CLARIGATE_DATA_DIR")
    for path in (data_dir, "/tmp"):
        assert path in mounts and not mounts[path].get("readOnly"), f"{path} is not a writable volume"
    pod_volumes = {v["name"]: v for v in spec["volumes"]}
    assert "emptyDir" in pod_volumes[mounts["/tmp"]["name"]]
    data = mounts[data_dir]["name"]
    assert data not in pod_volumes, f"{data_dir} is a pod volume, lost with the pod: {pod_volumes[data]}"
    claims = {c["metadata"]["name"]: c["spec"] for c in workload["spec"].get("volumeClaimTemplates", [])}
    assert data in claims, f"{data_dir} is not mounted from a volumeClaimTemplate"
    assert claims[data]["accessModes"] == ["ReadWriteOnce"]
    assert claims[data]["resources"]["requests"]["storage"]


def check_stateful_set(docs: list[Doc], workload: Doc) -> None:
    """A replica's claim stays when it is scaled away (its kept messages wait for its ordinal to
    come back); replicas start together and roll one at a time; the governing Service is the bot's."""
    spec = workload["spec"]
    assert spec["persistentVolumeClaimRetentionPolicy"] == {"whenScaled": "Retain", "whenDeleted": "Retain"}
    assert spec["podManagementPolicy"] == "Parallel"
    assert spec["updateStrategy"]["type"] == "RollingUpdate"
    assert "replicas" not in spec, "the HorizontalPodAutoscaler owns the replica count"
    governing = named(docs, "Service", spec["serviceName"])
    assert selects(governing["spec"]["selector"], spec["template"]["metadata"]["labels"])


def check_gateway(
    docs: list[Doc], name: str, config_maps: dict[str, dict[str, str]], secrets: dict[str, set[str]]
) -> None:
    """Everything one bot's StatefulSet needs is present and points where it should."""
    assert not of_kind(docs, "Deployment"), "the gateway is a StatefulSet (each replica's own data volume)"
    gateway = named(docs, "StatefulSet", name)
    spec = pod_spec(gateway)
    container = next(c for c in spec["containers"] if c["name"] == "clarigate")
    pod_labels = gateway["spec"]["template"]["metadata"]["labels"]
    match_labels = gateway["spec"]["selector"]["matchLabels"]
    assert selects(match_labels, pod_labels)

    port = int(env_value(container, "PORT"))
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        assert container_port(gateway, container[probe]["httpGet"]["port"]) == port

    for kind in ("requests", "limits"):
        assert {"cpu", "memory"} <= set(container["resources"][kind]), f"{kind} must set cpu and memory"

    assert spec["securityContext"]["runAsNonRoot"] is True
    assert spec["securityContext"]["runAsUser"] == image_uid()
    check_writable_paths(gateway, container)
    check_stateful_set(docs, gateway)

    # The bot config: mounted where CLARIGATE_CONFIG points, from a ConfigMap that holds that file.
    config_path = env_value(container, "CLARIGATE_CONFIG")
    mount = next(m for m in container["volumeMounts"] if m["mountPath"] == posixpath.dirname(config_path))
    volume = next(v for v in spec["volumes"] if v["name"] == mount["name"])
    config_map = config_maps[volume["configMap"]["name"]]
    bot = yaml.safe_load(config_map[posixpath.basename(config_path)])

    # SIGTERM's graceful shutdown must fit before the kubelet's SIGKILL.
    pre_stop = container.get("lifecycle", {}).get("preStop", {}).get("sleep", {}).get("seconds", 0)
    assert spec["terminationGracePeriodSeconds"] > bot.get("shutdown_grace_seconds", 20) + pre_stop

    for secret, key, optional in secret_refs(container):
        assert secret in secrets, f"{name} reads Secret {secret}, which is not defined"
        assert optional or key in secrets[secret], f"required key {key} missing from Secret {secret}"

    # Service, PDB and HPA each pick exactly this bot's pods and no one else's.
    other_pods = [
        d["spec"]["template"]["metadata"]["labels"] for d in of_kind(docs, "StatefulSet") if d is not gateway
    ]
    services = [s for s in of_kind(docs, "Service") if selects(s["spec"]["selector"], pod_labels)]
    assert len(services) == 1
    assert container_port(gateway, services[0]["spec"]["ports"][0]["targetPort"]) == port
    pdbs = [
        p
        for p in of_kind(docs, "PodDisruptionBudget")
        if selects(p["spec"]["selector"]["matchLabels"], pod_labels)
    ]
    assert len(pdbs) == 1
    for chooser in (services[0]["spec"]["selector"], pdbs[0]["spec"]["selector"]["matchLabels"]):
        assert not any(selects(chooser, labels) for labels in other_pods), (
            "a selector reaches another bot's pods"
        )

    hpas = [
        h for h in of_kind(docs, "HorizontalPodAutoscaler") if h["spec"]["scaleTargetRef"]["name"] == name
    ]
    assert len(hpas) == 1
    assert hpas[0]["spec"]["scaleTargetRef"]["kind"] == "StatefulSet"
    assert hpas[0]["spec"]["scaleTargetRef"]["apiVersion"] == "apps/v1"
    # With fewer replicas than minAvailable + 1, the PDB would block every node drain.
    assert hpas[0]["spec"]["minReplicas"] > pdbs[0]["spec"]["minAvailable"]


def rendered_config_maps(docs: list[Doc]) -> dict[str, dict[str, str]]:
    """ConfigMap name -> data, from rendered documents."""
    return {d["metadata"]["name"]: d.get("data", {}) for d in of_kind(docs, "ConfigMap")}


def rendered_secrets(docs: list[Doc]) -> dict[str, set[str]]:
    """Secret name -> keys, from rendered documents."""
    return {d["metadata"]["name"]: secret_keys(d) for d in of_kind(docs, "Secret")}


@pytest.mark.parametrize("path", sorted(raw_manifests()), ids=lambda p: str(p.relative_to(K8S)))
def test_every_manifest_validates_against_the_kubernetes_schema(path: Path) -> None:
    for doc in raw_manifests()[path]:
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


def pod_specs(doc: Doc) -> list[Doc]:
    """The pod specs a workload object makes (a Pod's own, a template's, a CronJob's job's)."""
    if doc["kind"] == "Pod":
        return [doc["spec"]]
    spec = doc.get("spec") or {}
    if "jobTemplate" in spec:
        return pod_specs({"kind": "Job", "spec": spec["jobTemplate"]["spec"]})
    return [spec["template"]["spec"]] if "template" in spec else []


def test_no_pod_gets_service_link_variables() -> None:
    """Kubernetes sets <SERVICE>_PORT, <SERVICE>_SERVICE_HOST, … for every Service of the
    namespace unless the pod says not to: the clarigate Services' (CLARIGATE_PORT, …) are no
    setting of the gateway, and a Service named clarigate-metrics would set one
    (CLARIGATE_METRICS_PORT=tcp://…). Pods find Services by DNS."""
    specs = {
        f"{path.relative_to(K8S)}: {doc['kind']} {doc['metadata']['name']}": spec
        for path, docs in raw_manifests().items()
        for doc in docs
        for spec in pod_specs(doc)
    }
    assert len(specs) >= 3, "the gateway, Redis and PostgreSQL"
    assert [where for where, spec in specs.items() if spec.get("enableServiceLinks") is not False] == []


def test_one_bot_manifests_fit_together() -> None:
    base = K8S / "bot"
    kustomization: dict[str, Any] = yaml.safe_load((base / "kustomization.yaml").read_text())
    docs = [doc for resource in kustomization["resources"] for doc in load_docs(base / resource)]
    config_maps = {
        gen["name"]: {Path(f).name: (base / f).read_text() for f in gen["files"]}
        for gen in kustomization["configMapGenerator"]
    }
    template = load_docs(base / "secret.example.yaml")[0]
    assert "secret.example.yaml" not in kustomization["resources"], (
        "apply -k must never overwrite real secrets"
    )
    check_gateway(docs, "clarigate", config_maps, {template["metadata"]["name"]: secret_keys(template)})


def test_secret_template_lists_every_secret_the_gateway_reads() -> None:
    template = secret_keys(load_docs(K8S / "bot" / "secret.example.yaml")[0])
    secret_env = {
        env
        for env, target in ENV_NAMES.items()
        if target[0] in SECRET_FIELDS and target[1] in SECRET_FIELDS[target[0]]
    }
    container = pod_spec(load_docs(K8S / "bot" / "statefulset.yaml")[0])["containers"][0]
    referenced = {key for _, key, _ in secret_refs(container)}
    assert secret_env <= referenced, f"the StatefulSet does not pass {sorted(secret_env - referenced)}"
    assert referenced <= template, f"the template lacks {sorted(referenced - template)}"


@needs_kubectl
def test_one_bot_kustomization_renders_valid_and_consistent(tmp_path: Path) -> None:
    docs = render(copy_with_example_env(tmp_path), "bot")
    for doc in docs:
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
    template = load_docs(K8S / "bot" / "secret.example.yaml")[0]
    secrets = {template["metadata"]["name"]: secret_keys(template)}
    check_gateway(docs, "clarigate", rendered_config_maps(docs), secrets)


@needs_kubectl
def test_many_bots_share_the_stores_and_nothing_else(tmp_path: Path) -> None:
    tree = copy_with_example_env(tmp_path)
    docs = render(tree, "many-bots")
    for doc in docs:
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
    config_maps, secrets = rendered_config_maps(docs), rendered_secrets(docs)
    deployments = {d["metadata"]["name"] for d in of_kind(docs, "StatefulSet")} - {"redis", "postgres"}
    assert deployments == {"clarigate-alpha", "clarigate-beta", "clarigate-gamma"}

    bot_ids, databases, redis_urls = set(), set(), set()
    for name in sorted(deployments):
        check_gateway(docs, name, config_maps, secrets)
        bot = name.removeprefix("clarigate-")
        container = pod_spec(named(docs, "StatefulSet", name))["containers"][0]
        # Each bot reads its own Secret and config (the suffix kustomize gave them), not the other's.
        assert {s for s, _, _ in secret_refs(container)} == {
            next(s for s in secrets if s.startswith(f"clarigate-secrets-{bot}-"))
        }
        config = yaml.safe_load((tree / "many-bots" / bot / "bot.yaml").read_text())
        bot_ids.add(config["bot_id"])
        assert config["create_database"] is True, "each bot creates its own database: nothing shared changes"
        env = env_file_keys(tree / "many-bots" / bot / "secrets.env.example")
        redis_urls.add(env["REDIS_URL"])
        databases.add(env["CHECKPOINTER_URL"].rsplit("/", 1)[1])

    assert len(bot_ids) == 3, "bots on one Redis need different bot_id prefixes"
    assert len(redis_urls) == 1, "the example shares one Redis"
    assert len(databases) == 3, "each bot keeps its checkpoints in its own database"

    # the shared stores are exactly the one-bot stores: adding a bot touches none of them
    stores = render(tree, "stores")
    for kind, name in (("StatefulSet", "redis"), ("StatefulSet", "postgres"), ("Service", "postgres")):
        assert named(docs, kind, name) == named(stores, kind, name)
    assert {n: v for n, v in config_maps.items() if n.startswith("postgres-init")} == {
        n: v for n, v in rendered_config_maps(stores).items() if n.startswith("postgres-init")
    }

    for store in ("redis", "postgres"):
        container = pod_spec(named(docs, "StatefulSet", store))["containers"][0]
        for secret, key, _ in secret_refs(container):
            assert key in secrets[secret]
        assert (
            named(docs, "Service", store)["spec"]["selector"]
            == named(docs, "StatefulSet", store)["spec"]["selector"]["matchLabels"]
        )


@needs_kubectl
def test_a_bot_directory_applies_alone(tmp_path: Path) -> None:
    """A new bot is one new directory: it renders (and applies) on its own, beside the others."""
    tree = copy_with_example_env(tmp_path)
    docs = render(tree, "many-bots/gamma")
    for doc in docs:
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
    gateways = {d["metadata"]["name"] for d in of_kind(docs, "StatefulSet")}
    assert gateways == {"clarigate-gamma"}, "the stores are applied once, not with each bot"


def test_example_secrets_open_the_example_stores() -> None:
    """An operator who keeps the example passwords for a trial gets a bot that can log in."""
    stores = env_file_keys(K8S / "stores" / "stores.env.example")
    redis_doc, postgres_doc = (
        next(d for d in load_docs(K8S / "stores" / f"{s}.yaml") if d["kind"] == "StatefulSet")
        for s in ("redis", "postgres")
    )
    postgres_env = {e["name"]: e.get("value") for e in pod_spec(postgres_doc)["containers"][0]["env"]}
    created = {postgres_env["POSTGRES_DB"]} | {  # the bots that create their own database at start
        f"clarigate_{path.parent.name}"
        for path in (K8S / "many-bots").glob("*/bot.yaml")
        if yaml.safe_load(path.read_text()).get("create_database")
    }
    template = load_docs(K8S / "bot" / "secret.example.yaml")[0]["stringData"]
    examples = {"bot": template} | {
        path.parent.name: env_file_keys(path)
        for path in sorted((K8S / "many-bots").glob("*/secrets.env.example"))
    }
    for bot, env in examples.items():
        redis_url, pg_url = urlsplit(env["REDIS_URL"]), urlsplit(env["CHECKPOINTER_URL"])
        assert (redis_url.hostname, redis_url.port) == (redis_doc["spec"]["serviceName"], 6379), bot
        assert redis_url.password == stores["REDIS_PASSWORD"], f"{bot}: REDIS_URL has another password"
        assert pg_url.hostname == postgres_doc["spec"]["serviceName"], bot
        assert (pg_url.username, pg_url.password) == (
            postgres_env["POSTGRES_USER"],
            stores["POSTGRES_PASSWORD"],
        )
        assert pg_url.path.lstrip("/") in created, f"{bot}: no example creates database {pg_url.path}"
