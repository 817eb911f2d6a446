"""Kubernetes manifests for the deploy tests: load documents, render kustomizations, follow references."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
K8S = DEPLOY / "k8s"

Doc = dict[str, Any]


def load_docs(path: Path) -> list[Doc]:
    """Every non-empty YAML document of one file."""
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]


def raw_manifests() -> dict[Path, list[Doc]]:
    """Every file under deploy/k8s holding Kubernetes objects (kustomizations and bot configs excluded)."""
    found: dict[Path, list[Doc]] = {}
    for path in sorted(K8S.rglob("*.yaml")):
        docs = [d for d in load_docs(path) if "apiVersion" in d and d.get("kind") != "Kustomization"]
        if docs:
            found[path] = docs
    return found


def kubectl() -> str | None:
    """The kubectl binary (it carries kustomize), from PATH or next to this interpreter."""
    beside = Path(sys.executable).with_name("kubectl")  # pip's scripts dir, when the venv is not activated
    return str(beside) if beside.exists() else shutil.which("kubectl")


def render(tree: Path, directory: str) -> list[Doc]:
    """``kubectl kustomize`` one directory of a copy of deploy/k8s (see ``copy_with_example_env``)."""
    result = subprocess.run(
        [kubectl() or "kubectl", "kustomize", str(tree / directory)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def copy_with_example_env(destination: Path) -> Path:
    """Copy deploy/k8s to ``destination``; fill each ``*.env`` from its ``*.env.example``."""
    tree = destination / "k8s"
    shutil.copytree(K8S, tree)
    for example in tree.rglob("*.env.example"):
        example.with_name(example.name.removesuffix(".example")).write_text(example.read_text())
    return tree


def of_kind(docs: list[Doc], kind: str) -> list[Doc]:
    """The documents of one kind."""
    return [d for d in docs if d["kind"] == kind]


def named(docs: list[Doc], kind: str, name: str) -> Doc:
    """The one document of ``kind`` called ``name`` (fails the test when absent)."""
    matches = [d for d in of_kind(docs, kind) if d["metadata"]["name"] == name]
    assert len(matches) == 1, f"expected one {kind} named {name}, found {len(matches)}"
    return matches[0]


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    """True when a matchLabels-style selector picks an object with ``labels``."""
    return all(labels.get(key) == value for key, value in selector.items())


def pod_spec(workload: Doc) -> Doc:
    """The pod spec of a Deployment or StatefulSet."""
    return workload["spec"]["template"]["spec"]


def container_port(workload: Doc, port: int | str) -> int:
    """Resolve a probe's or Service's port (number or name) against the workload's containers."""
    if isinstance(port, int):
        return port
    for container in pod_spec(workload)["containers"]:
        for declared in container.get("ports", []):
            if declared.get("name") == port:
                return int(declared["containerPort"])
    raise AssertionError(f"port {port!r} is not declared by {workload['metadata']['name']}")


def env_value(container: Doc, name: str) -> Any:
    """The literal value of one environment variable of a container (None when absent or not literal)."""
    for entry in container.get("env", []):
        if entry["name"] == name:
            return entry.get("value")
    return None


def secret_refs(container: Doc) -> list[tuple[str, str, bool]]:
    """(secret name, key, optional) for each environment variable taken from a Secret."""
    refs = []
    for entry in container.get("env", []):
        ref = entry.get("valueFrom", {}).get("secretKeyRef")
        if ref:
            refs.append((ref["name"], ref["key"], bool(ref.get("optional", False))))
    return refs


def secret_keys(secret: Doc) -> set[str]:
    """The keys a Secret holds (``data`` and ``stringData``)."""
    return set(secret.get("data") or {}) | set(secret.get("stringData") or {})


def env_file_keys(path: Path) -> dict[str, str]:
    """KEY=value lines of an env file (comments and blank lines skipped)."""
    pairs = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            pairs[key.strip()] = value.strip()
    return pairs
