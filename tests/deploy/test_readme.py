"""deploy/README.md, read as an operator would: every variable it names is one clarigate or the
deploy files really read, and every setting of the operators' contract is documented."""

from __future__ import annotations

import re

import pytest
import yaml

from clarigate.gateway.runtime.config import ENV_NAMES, clarigate_env_names
from tests.deploy.k8s_objects import DEPLOY, K8S, load_docs

README = (DEPLOY / "README.md").read_text(encoding="utf-8")
#: The files that define the variables the README may name (compose, images, examples, manifests).
DEPLOY_FILES = "\n".join(
    path.read_text(encoding="utf-8")
    for path in sorted(DEPLOY.rglob("*"))
    if path.is_file() and path.name != "README.md" and path.suffix in {".yaml", ".example", ""}
)


def names_in_readme() -> set[str]:
    """Every UPPER_SNAKE_CASE word of the README (environment variables and build arguments)."""
    return set(re.findall(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b", README))


def is_config_path(name: str) -> bool:
    """True when ``CLARIGATE_<KEY>`` (nested with ``__``) names a setting: one of the bot's, or a
    field of a platform's section (what the loader itself accepts)."""
    return name in clarigate_env_names() and name != "CLARIGATE_CONFIG"


def test_every_well_known_variable_is_documented() -> None:
    missing = sorted(set(ENV_NAMES) - names_in_readme())
    assert not missing, f"deploy/README.md does not mention {missing}"


def test_every_variable_the_readme_names_is_read_by_something() -> None:
    unknown = []
    for name in sorted(names_in_readme()):
        if name in ENV_NAMES or name == "CLARIGATE_CONFIG":
            continue
        if name.startswith("CLARIGATE_") and is_config_path(name):
            continue
        if re.search(rf"\b{name}\b", DEPLOY_FILES):  # compose, Dockerfile, .env / stores examples, manifests
            continue
        unknown.append(name)
    assert not unknown, f"deploy/README.md names variables nothing reads: {unknown}"


def test_the_checks_tell_a_real_name_from_a_made_up_one() -> None:
    assert is_config_path("CLARIGATE_SLACK__ALLOWED_USERS") and is_config_path("CLARIGATE_DATA_DIR")
    assert not is_config_path("CLARIGATE_SLACK__ALLOWED_USER") and not is_config_path("CLARIGATE_PORT")
    assert re.search(r"\bHOST_PORT\b", DEPLOY_FILES) and not re.search(r"\bREDIS_HOST\b", DEPLOY_FILES)


def test_the_example_ingress_is_valid_and_publishes_only_the_webhooks() -> None:
    validate = pytest.importorskip("kubernetes_validate.utils", reason="kubernetes-validate is not installed")
    blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", README, re.DOTALL)]
    (ingress,) = [b for b in blocks if isinstance(b, dict) and b.get("kind") == "Ingress"]
    validate.validate(ingress, "1.31.0", strict=True)
    service = load_docs(K8S / "bot" / "service.yaml")[0]
    # The adapters' webhook routes (read from their sources: importing lark-oapi takes seconds).
    sources = " ".join(p.read_text() for p in (DEPLOY.parent / "adapters").rglob("*.py"))
    webhooks = {"/slack/events", "/feishu/events", "/telegram/webhook"}
    assert all(f'"{path}"' in sources for path in webhooks)
    published = set()
    for rule in ingress["spec"]["rules"]:
        for path in rule["http"]["paths"]:
            backend = path["backend"]["service"]
            assert backend["name"] == service["metadata"]["name"]
            assert backend["port"]["name"] in {p["name"] for p in service["spec"]["ports"]}
            assert path["pathType"] == "Exact", "a prefix would publish /metrics and the probes too"
            published.add(path["path"])
    assert published == webhooks
