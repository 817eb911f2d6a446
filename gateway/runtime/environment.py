"""The environment the configuration reads: the bot's well-known names, the ``CLARIGATE_*`` names
of its settings, and what is set beside them that names no setting and is no typo either (the
service links Kubernetes puts in every pod).

``clarigate.gateway.runtime.config`` builds the bot's configuration from these.
"""

from __future__ import annotations

import difflib
import ipaddress
import os
import re
from collections.abc import Callable, Collection
from typing import Any
from urllib.parse import urlsplit

from pydantic_settings import PydanticBaseSettingsSource

from clarigate.gateway.boundary import registry

#: Well-known environment names of the bot itself -> (section or None, field).
CORE_ENV_NAMES: dict[str, tuple[str | None, str]] = {
    "CLARIGATE_BOT_ID": (None, "bot_id"),
    "REDIS_URL": (None, "redis_url"),
    "LLM_MODEL": ("agent", "model"),
    "CHECKPOINTER_URL": ("agent", "checkpointer_url"),
    "ALLOW_CLARIFICATION": ("agent", "allow_clarification"),
    "DISABLE_CLARIFICATION": ("agent", "disable_clarification"),
    "LANGGRAPH_URL": ("agent", "server_url"),
    "AGENT_IDEMPOTENT_TOOLS": ("agent", "idempotent_tools"),
}

#: The well-known environment names (the operators' contract): the bot's, then each built-in
#: platform's (``<env_prefix><FIELD>`` of its settings model) -> (section or None, field). An
#: installed platform's are read the same way (``sections.read_sections``).
ENV_NAMES: dict[str, tuple[str | None, str]] = {
    **CORE_ENV_NAMES,
    **{env: (p.name, f) for p in registry.built_in().values() for env, f in p.well_known_env().items()},
}

#: Each built-in platform's secret fields: from the environment only, never logged.
SECRET_FIELDS: dict[str, tuple[str, ...]] = {
    p.name: p.settings_model.secret_fields() for p in registry.built_in().values()
}

#: Environment variables whose values are secrets wherever they come from (provider API keys, …).
SECRET_ENV_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD", "_ENCRYPT_KEY", "_APP_SECRET")

#: ``CLARIGATE_*`` variables that are not settings but are read all the same.
OTHER_CLARIGATE_ENV = ("CLARIGATE_CONFIG",)


class WellKnownEnv(PydanticBaseSettingsSource):
    """Reads the bot's own contract names (``REDIS_URL``, ``LLM_MODEL``, …); each platform's are
    read with its section (``sections.read_sections``)."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        """Unused: values are collected in ``__call__``."""
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        """The nested dict of every well-known variable that is set."""
        data: dict[str, Any] = {}
        for name, (section, field) in CORE_ENV_NAMES.items():
            value = os.environ.get(name)
            if value is None or value == "":
                continue
            target = data.setdefault(section, {}) if section else data
            target[field] = value
        return data


def did_you_mean(name: str, candidates: Any) -> str:
    """`` (did you mean `allowed_users`?)`` for the nearest candidate, or nothing when none is near."""
    names = {str(c).lower(): str(c) for c in candidates}
    near = difflib.get_close_matches(str(name).lower(), list(names), n=1, cutoff=0.6)
    return f" (did you mean `{names[near[0]]}`?)" if near else ""


def unknown_env(names: Collection[str]) -> list[str]:
    """One line per ``CLARIGATE_*`` environment variable that is not one of ``names`` (and not a
    Kubernetes service link: a Service called ``clarigate`` or ``clarigate-…`` in the namespace)."""
    return [
        f"environment variable {name} is not a setting{did_you_mean(name.upper(), names)}"
        for name, value in sorted(os.environ.items())
        if name.upper().startswith("CLARIGATE_")
        and name.upper() not in names
        and not is_service_link(name, value)
    ]


# --- Kubernetes service links --------------------------------------------------------------------
# For each Service of the pod's namespace (unless the pod spec sets enableServiceLinks: false) the
# kubelet sets, with <NAME> the Service's name upper-cased, "-" as "_" (the Docker links' shape):
#   <NAME>_SERVICE_HOST=10.0.0.11  <NAME>_SERVICE_PORT=80  <NAME>_SERVICE_PORT_<PORT NAME>=80
#   <NAME>_PORT=tcp://10.0.0.11:80  <NAME>_PORT_80_TCP=tcp://10.0.0.11:80
#   <NAME>_PORT_80_TCP_PROTO=tcp  <NAME>_PORT_80_TCP_PORT=80  <NAME>_PORT_80_TCP_ADDR=10.0.0.11


_PROTOCOLS = ("tcp", "udp", "sctp")


def _is_host(value: str) -> bool:
    """An IP address (a ClusterIP, IPv4 or IPv6) or a host name."""
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?", value) is not None
    return True


def _is_port(value: str) -> bool:
    return value.isdigit() and 0 < int(value) < 65536


def _is_link(value: str) -> bool:
    """``tcp://10.0.0.11:80`` (udp, sctp; ``tcp://[fd00::1]:80``)."""
    try:
        url = urlsplit(value)
        port = url.port
    except ValueError:
        return False
    return url.scheme in _PROTOCOLS and _is_host(url.hostname or "") and port is not None and not url.path


_SERVICE = r"[A-Z][A-Z0-9_]*"
_PORT = rf"{_SERVICE}_PORT_[0-9]+_(?:TCP|UDP|SCTP)"
_SERVICE_LINKS: tuple[tuple[re.Pattern[str], Callable[[str], bool]], ...] = (
    (re.compile(rf"{_SERVICE}_SERVICE_HOST"), _is_host),
    (re.compile(rf"{_SERVICE}_SERVICE_PORT(?:_[A-Z0-9_]+)?"), _is_port),
    (re.compile(rf"{_SERVICE}_PORT|{_PORT}"), _is_link),
    (re.compile(rf"{_PORT}_PROTO"), lambda value: value in _PROTOCOLS),
    (re.compile(rf"{_PORT}_PORT"), _is_port),
    (re.compile(rf"{_PORT}_ADDR"), _is_host),
)


def is_service_link(name: str, value: str) -> bool:
    """Whether ``name=value`` is one of the variables Kubernetes sets for a Service."""
    return any(pattern.fullmatch(name) and valid(value) for pattern, valid in _SERVICE_LINKS)
