"""Every bot config shipped in deploy/ loads with clarigate's own loader, with no secrets and no unknown keys.

The loader ignores keys it does not know, so a misspelt key in an example would silently do
nothing for the operator who copies it: these tests catch that.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from clarigate.gateway.boundary import registry
from clarigate.gateway.runtime.config import ENV_NAMES, GatewayConfig, load_config
from tests.deploy.k8s_objects import DEPLOY, K8S, env_file_keys

BOT_CONFIGS = [
    DEPLOY / "bot.example.yaml",
    K8S / "bot" / "bot.yaml",
    *sorted((K8S / "many-bots").glob("*/bot.yaml")),
]


@pytest.fixture(autouse=True)
def no_operator_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The loader reads the environment first: start each test from an empty one."""
    for name in [*ENV_NAMES, *(n for n in os.environ if n.startswith("CLARIGATE_"))]:
        monkeypatch.delenv(name, raising=False)


def unknown_keys(data: dict[str, Any], model: type[BaseModel], where: str = "") -> list[str]:
    """Keys of ``data`` that ``model`` has no field for, as dotted paths."""
    unknown = []
    platforms = registry.installed() if model is GatewayConfig else {}
    for key, value in data.items():
        field = model.model_fields.get(key)
        if key in platforms:  # a platform's section: its own settings model says what it holds
            unknown += unknown_keys(value or {}, platforms[key].settings_model, f"{where}{key}.")
        elif field is None or key == "platforms":
            unknown.append(f"{where}{key}")
        elif (
            isinstance(value, dict)
            and isinstance(field.annotation, type)
            and issubclass(field.annotation, BaseModel)
        ):
            unknown += unknown_keys(value, field.annotation, f"{where}{key}.")
    return unknown


@pytest.mark.parametrize("path", BOT_CONFIGS, ids=lambda p: str(p.relative_to(DEPLOY)))
def test_bot_config_loads_without_warnings_or_unknown_keys(path: Path) -> None:
    config = load_config(path)
    assert config.warnings == [], "secrets belong in the environment, not the config file"
    assert unknown_keys(yaml.safe_load(path.read_text()), GatewayConfig) == []
    # No platform credentials in the file, so nothing is switched on by the file alone.
    assert config.enabled_platforms() == []


def test_many_bots_have_different_prefixes() -> None:
    ids = [load_config(path).bot_id for path in BOT_CONFIGS if path.parent.parent.name == "many-bots"]
    assert len(ids) == 3 and len(set(ids)) == 3


def test_blank_values_in_env_example_switch_nothing_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """An operator who fills in only one platform gets only that one."""
    values = env_file_keys(DEPLOY / ".env.example")
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123456:ABC")
    config = load_config(DEPLOY / "bot.example.yaml")
    assert config.enabled_platforms() == ["telegram"]


def test_env_example_leaves_the_bot_yaml_settings_in_force(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The operator sets bot_id and the model in bot.yaml; the untouched .env must not override them."""
    for name, value in env_file_keys(DEPLOY / ".env.example").items():
        monkeypatch.setenv(name, value)
    data = yaml.safe_load((DEPLOY / "bot.example.yaml").read_text())
    data["bot_id"] = "acme-support"
    data["agent"]["model"] = "openai:gpt-4.1-mini"
    data["answer_policy"] = "anyone"
    bot_yaml = tmp_path / "bot.yaml"
    bot_yaml.write_text(yaml.safe_dump(data))
    config = load_config(bot_yaml)
    assert (config.bot_id, config.agent.model, config.answer_policy) == (
        "acme-support",
        "openai:gpt-4.1-mini",
        "anyone",
    )


def setting_paths(model: type[BaseModel], where: str = "") -> list[str]:
    """Every setting of ``model`` as a dotted path (sections walked into)."""
    paths = []
    if model is GatewayConfig:  # each built-in platform's section is its own settings model
        for name, platform in registry.built_in().items():
            paths += setting_paths(platform.settings_model, f"{where}{name}.")
    for name, field in model.model_fields.items():
        if model is GatewayConfig and name == "platforms":  # filled from the sections above
            continue
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            paths += setting_paths(field.annotation, f"{where}{name}.")
        else:
            paths.append(f"{where}{name}")
    return paths


def test_the_example_shows_every_setting() -> None:
    """A setting the example does not show is one an operator cannot find: add it there."""
    from clarigate.gateway.runtime.config import SECRET_FIELDS

    data = yaml.safe_load((DEPLOY / "bot.example.yaml").read_text())
    secrets = {f"{section}.{name}" for section, names in SECRET_FIELDS.items() for name in names}

    def shown(path: str) -> bool:
        node: Any = data
        for part in path.split("."):
            if not isinstance(node, dict) or part not in node:
                return False
            node = node[part]
        return True

    missing = [p for p in setting_paths(GatewayConfig) if p not in secrets and not shown(p)]
    assert missing == []


def shown_values(config: GatewayConfig) -> dict[str, Any]:
    """Every value of a loaded config, by dotted path (each platform's section under its name)."""
    sections = {"": config.model_dump(exclude={"platforms"})} | {
        name: section.model_dump() for name, section in config.platforms.items()
    }
    flat: dict[str, Any] = {}

    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict) and node:
            for key, value in node.items():
                walk(value, f"{where}.{key}" if where else str(key))
        else:
            flat[where] = node

    for name, values in sections.items():
        walk(values, name)
    return flat


def test_the_example_holds_the_defaults(tmp_path: Path) -> None:
    """The image runs the example as it is (deploy/Dockerfile): it must be the bot ``make serve``
    runs with no file. Suggestions other than the defaults are comments, said to be so."""
    example = shown_values(load_config(DEPLOY / "bot.example.yaml"))
    default = shown_values(load_config(write_yaml(tmp_path, {})))
    assert {path: value for path, value in example.items() if default.get(path) != value} == {}


def test_the_example_with_only_a_graph_of_ones_own_starts(tmp_path: Path) -> None:
    """Copy the example, name your graph: no setting of the built-in agent's stops the start."""
    from clarigate.gateway.runtime.config import startup_problems

    data = yaml.safe_load((DEPLOY / "bot.example.yaml").read_text())
    data["agent"]["graph"] = "my_agents.support:graph"
    assert startup_problems(load_config(write_yaml(tmp_path, data))) == []


def write_yaml(folder: Path, data: dict[str, Any]) -> Path:
    path = folder / "bot.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path
