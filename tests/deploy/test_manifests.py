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


def check_writable_paths(spec: Doc, container: Doc) -> None:
    """With a read-only root filesystem, the data directory (SQLite by default) and /tmp are volumes
    the image's user can write."""
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    uid, gid = image_ids()
    assert (spec["securityContext"]["runAsGroup"], spec["securityContext"]["fsGroup"]) == (gid, gid)
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    for path in (env_value(container, "CLARIGATE_DATA_DIR"), "/tmp"):
        assert path in mounts and not mounts[path].get("readOnly"), f"{path} is not a writable volume"
        volume = next(v for v in spec["volumes"] if v["name"] == mounts[path]["name"])
        assert "emptyDir" in volume or "persistentVolumeClaim" in volume, f"{path}: {volume}"


def check_gateway(
    docs: list[Doc], name: str, config_maps: dict[str, dict[str, str]], secrets: dict[str, set[str]]
) -> None:
    """Everything one bot's Deployment needs is present and points where it should."""
    deployment = named(docs, "Deployment", name)
    spec = pod_spec(deployment)
    container = next(c for c in spec["containers"] if c["name"] == "clarigate")
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    match_labels = deployment["spec"]["selector"]["matchLabels"]
    assert selects(match_labels, pod_labels)

    port = int(env_value(container, "PORT"))
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        assert container_port(deployment, container[probe]["httpGet"]["port"]) == port

    for kind in ("requests", "limits"):
        assert {"cpu", "memory"} <= set(container["resources"][kind]), f"{kind} must set cpu and memory"

    assert spec["securityContext"]["runAsNonRoot"] is True
    assert spec["securityContext"]["runAsUser"] == image_uid()
    check_writable_paths(spec, container)

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
        d["spec"]["template"]["metadata"]["labels"]
        for d in of_kind(docs, "Deployment")
        if d is not deployment
    ]
    services = [s for s in of_kind(docs, "Service") if selects(s["spec"]["selector"], pod_labels)]
    assert len(services) == 1
    assert container_port(deployment, services[0]["spec"]["ports"][0]["targetPort"]) == port
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
    assert hpas[0]["spec"]["scaleTargetRef"]["kind"] == "Deployment"
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
    container = pod_spec(load_docs(K8S / "bot" / "deployment.yaml")[0])["containers"][0]
    referenced = {key for _, key, _ in secret_refs(container)}
    assert secret_env <= referenced, f"the Deployment does not pass {sorted(secret_env - referenced)}"
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
    deployments = {d["metadata"]["name"] for d in of_kind(docs, "Deployment")}
    assert deployments == {"clarigate-alpha", "clarigate-beta", "clarigate-gamma"}

    bot_ids, databases, redis_urls = set(), set(), set()
    for name in sorted(deployments):
        check_gateway(docs, name, config_maps, secrets)
        bot = name.removeprefix("clarigate-")
        container = pod_spec(named(docs, "Deployment", name))["containers"][0]
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
    assert {d["metadata"]["name"] for d in of_kind(docs, "Deployment")} == {"clarigate-gamma"}
    assert not of_kind(docs, "StatefulSet"), "the stores are applied once, not with each bot"


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
