"""Each platform's section of the configuration, read alike for every platform in the registry.

A section comes from the YAML key named after the platform, under ``CLARIGATE_<NAME>__<FIELD>``
variables, under the platform's well-known names (``SLACK_BOT_TOKEN``: its settings model's
``env_prefix`` and ``env_fields``). Secrets (``SecretStr`` fields) come from the environment
only. A section that cannot be read is an error: the bot does not start with that platform
open to anyone.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from pydantic_settings import EnvSettingsSource

from clarigate.gateway.boundary.registry import Platform
from clarigate.gateway.boundary.settings import PlatformSettings
from clarigate.gateway.runtime.invalid import describe_invalid


def read_sections(platforms: Mapping[str, Platform], given: Mapping[str, Any]) -> dict[str, PlatformSettings]:
    """Every platform's settings: ``given`` (YAML or arguments: a mapping or a settings object)
    under the environment. Raises ``ValueError`` naming the platform when one cannot be read."""
    sections = {}
    for name, platform in platforms.items():
        value = given.get(name)
        model = platform.settings_model
        if isinstance(value, model):
            sections[name] = value  # built by the caller (tests, benchmarks): taken as it is
            continue
        if value is not None and not isinstance(value, Mapping):
            raise ValueError(f"{name}: the section must be a mapping of settings, not {type(value).__name__}")
        try:  # pydantic's ValidationError is a ValueError, and so is pydantic-settings' SettingsError
            data = {**(value or {}), **_clarigate_env(platform), **_well_known_env(platform)}
            sections[name] = model(**data)
        except ValueError as exc:
            names = {env: (name, field) for env, field in platform.well_known_env().items()}
            said = describe_invalid(exc, (name,), names, model)
            raise ValueError(f"{name} ({platform.origin}): {said}") from exc
    return sections


def _clarigate_env(platform: Platform) -> dict[str, Any]:
    """``CLARIGATE_<NAME>__<FIELD>`` values, decoded as pydantic-settings decodes them (JSON for
    lists and mappings unless the field says ``NoDecode``)."""
    source = EnvSettingsSource(
        platform.settings_model, env_prefix=f"CLARIGATE_{platform.name}__", case_sensitive=False
    )
    return {k: v for k, v in source().items() if v is not None}


def _well_known_env(platform: Platform) -> dict[str, str]:
    """The platform's contract names that are set and not empty (``SLACK_BOT_TOKEN``)."""
    found = {}
    for env, field in platform.well_known_env().items():
        value = os.environ.get(env)
        if value:
            found[field] = value
    return found


def section_keys_unknown(platforms: Mapping[str, Platform], data: Mapping[str, Any]) -> dict[str, list[str]]:
    """For each platform section in ``data``: the keys its settings model does not have."""
    found = {}
    for name, values in data.items():
        if name in platforms and isinstance(values, Mapping):
            known = platforms[name].settings_model.model_fields
            found[name] = [key for key in values if key not in known]
    return found


def section_env_names(platforms: Mapping[str, Platform]) -> list[str]:
    """Every ``CLARIGATE_<NAME>__<FIELD>`` name of every platform."""
    return [
        f"CLARIGATE_{name}__{field}".upper()
        for name, platform in platforms.items()
        for field in platform.settings_model.model_fields
    ]


def drop_yaml_secrets(platforms: Mapping[str, Platform], data: dict[str, Any]) -> list[str]:
    """Remove secret values from the YAML file's platform sections; one warning per secret found."""
    warnings = []
    for name, platform in platforms.items():
        values = data.get(name)
        if not isinstance(values, dict):
            continue
        for field in platform.settings_model.secret_fields():
            if values.pop(field, None) is not None:
                where = platform.env_name(field)
                warnings.append(f"{name}.{field} in the config file is ignored: secrets come from {where}")
    return warnings


def credential_problem(platform: Platform, section: PlatformSettings) -> str | None:
    """What is wrong when part of the credentials is set (or the platform is enabled) without all."""
    if section.enabled is False or section.has_credentials():
        return None
    secrets = platform.settings_model.secret_fields()  # from the environment only; the rest may
    # come from the YAML file too: named both ways ("feishu.app_id (FEISHU_APP_ID)")
    present = [
        platform.env_name(field)
        if field in secrets
        else f"{platform.name}.{field} ({platform.env_name(field)})"
        for field in section.credentials_set()
    ]
    if not present and not section.enabled:
        return None
    which = " and ".join(present) + " is set but" if present else "enabled, but"
    return f"{platform.name}: {which} the platform needs {platform.credential_hint()}"


def extra_paths(data: Mapping[str, Any]) -> list[str]:
    """The ``extra_adapters`` named by the environment (over the YAML file) or ``data``."""
    raw = os.environ.get("CLARIGATE_EXTRA_ADAPTERS")
    value: Any = json.loads(raw) if raw and raw.strip().startswith("[") else raw or data.get("extra_adapters")
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    return [str(path) for path in value or ()]
