"""Configuration: one YAML file per bot, every value overridable by the environment.

The loader (YAML + environment, secrets from the environment only) builds ``GatewayConfig``.
Each platform's section is its own settings model (``PlatformAdapter.settings_model``), read
alike for every platform the registry knows (``clarigate.gateway.runtime.sections``). The names
read from the environment, and what is set there that names no setting (Kubernetes' service
links), are ``clarigate.gateway.runtime.environment``'s.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, PrivateAttr, field_validator, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from clarigate.agent import placement
from clarigate.agent.mcp_settings import filled_in, urls_of
from clarigate.agent.settings import AgentOptions, AgentSettings
from clarigate.gateway.boundary import registry
from clarigate.gateway.boundary.settings import PlatformSettings, Streaming
from clarigate.gateway.runtime import sections
from clarigate.gateway.runtime.environment import (
    ENV_NAMES,
    OTHER_CLARIGATE_ENV,
    SECRET_ENV_SUFFIXES,
    SECRET_FIELDS,  # noqa: F401 (read from here too, like ENV_NAMES)
    WellKnownEnv,
    did_you_mean,
    unknown_env,
)
from clarigate.gateway.runtime.invalid import describe_invalid
from clarigate.gateway.runtime.logs import LogFormat, LogLevel
from clarigate.gateway.runtime.redaction import url_secrets
from clarigate.gateway.runtime.routes import Route, route_problems
from clarigate.gateway.runtime.yaml_file import ConfigError, read_yaml


class FilesOut(BaseModel):
    """Files the agent sends (``files_out``): the largest one sent, and where a file the agent
    names by URL may be fetched from (the gateway fetches it, with this cap while downloading)."""

    # bytes; a file is kept in the store (base64) from the run until it is delivered
    max_bytes: int = Field(default=20 * 1024 * 1024, ge=0)
    # fetch URLs whose host is a private, loopback or link-local address (an internal file server)
    allow_private_urls: bool = False
    fetch_timeout_seconds: float = Field(default=30.0, gt=0)


# --- the bot's whole configuration -------------------------------------------------------------


class GatewayConfig(BaseSettings):
    """One bot: its prefix, its store, its agent and its platforms.

    Priority: well-known environment names, then ``CLARIGATE_<NAME>`` (nested with
    ``__``, e.g. ``CLARIGATE_AGENT__TOOLS='["pkg.mod:tool"]'``), then the YAML file. Each
    platform's section (``config.platform(name)``, or ``config.<name>``) is read the same way.
    """

    model_config = SettingsConfigDict(env_prefix="CLARIGATE_", env_nested_delimiter="__", extra="ignore")

    # the prefix of every Redis key: no spaces, no ':' (``a`` must not see ``a:b``'s keys in ``a:*``)
    bot_id: str = Field("clarigate", pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    redis_url: str | None = None
    answer_policy: Literal["starter", "anyone"] = "starter"
    pending_ttl_seconds: int = Field(7 * 24 * 3600, ge=0)
    # 👍/👎 under each final answer of the agent; votes on an answer are kept this long
    feedback: bool = True
    feedback_ttl_seconds: int = Field(30 * 24 * 3600, gt=0)
    thread_ttl_seconds: int = Field(90 * 24 * 3600, gt=0)
    seen_ttl_seconds: int = Field(24 * 3600, gt=0)
    # agent runs in flight at once per replica: a run mostly waits on the model, so throughput is
    # about workers ÷ model latency (256 runs of 2 s: ~128 messages/s, about what one core carries
    # at ~7 ms of CPU per message); memory stays bounded, as at most workers × 16 jobs are held and
    # each run keeps only its own state (~80 KB). Runs have a process of their own (role auto):
    # more of them in flight no longer delay acks
    workers: int = Field(256, ge=1)
    # what ``serve`` runs: "web" the HTTP side (webhooks: verify, dedupe, enqueue, ack; receivers;
    # health; metrics), "worker" the agent runs and their deliveries, "all" both in one process;
    # "auto": with Redis, a web process and a worker process it starts and stops (runs never take
    # the CPU an ack waits for), else "all" (the embedded store lives in one process)
    role: Literal["auto", "all", "web", "worker"] = "auto"
    # with role auto and Redis: how many worker processes the web process starts ("auto": one per
    # core the replica may use, CPU limit included, at most 4); ``workers`` is shared out among
    # them. Runs are CPU-bound once thousands are in flight: one process uses one core
    worker_processes: Annotated[int, Field(ge=1, le=64)] | Literal["auto"] = "auto"
    # 0 would let every replica claim every running job at once
    stale_claim_seconds: float = Field(30.0, gt=0)
    shutdown_grace_seconds: float = Field(20.0, ge=0)
    run_timeout_seconds: float = Field(600.0, gt=0)  # a longer run is stopped and the chat told so
    # how long a reply is retried through transient platform failures (429, 5xx, network),
    # counted from when the run recorded it, before it is abandoned (counted and logged)
    delivery_budget_seconds: float = Field(1800.0, ge=0)
    # checkpoints of an agent thread left by /new, or unused since its chat mapping expired, are
    # deleted after this long
    thread_retention_seconds: int = Field(7 * 24 * 3600, ge=0)
    # how often a replica trims acknowledged jobs, removes dead consumers and deletes old threads
    upkeep_interval_seconds: float = Field(60.0, gt=0)
    # a request body not received whole within this time gets 408 (a trickled or half-sent body)
    body_timeout_seconds: float = Field(10.0, gt=0)
    # a run still going after this long shows "working…" (0: every run shows it at once)
    progress_after_seconds: float = Field(1.0, ge=0)
    # "auto": replies are streamed as the model writes them and tool steps shown, natively where the
    # platform can (Slack's chat stream, Telegram drafts, Feishu streaming cards), else by edits of
    # one message; "off": the whole reply at once, after "working…" (each platform may override)
    streaming: Streaming = "auto"  # YAML's bare ``off`` / ``on`` (booleans to YAML) read as meant
    max_body_bytes: int = Field(1024 * 1024, gt=0)
    log_format: LogFormat = "text"
    log_level: LogLevel = "info"  # --log-level overrides (either in any case: INFO, info)
    # how long ``serve`` waits for an unreachable Redis / PostgreSQL at start (0: try once)
    startup_wait_seconds: float = Field(60.0, ge=0)
    metrics_port: int | None = Field(None, ge=1, le=65535)  # /metrics on its own port when set
    # at start, create the checkpointer's PostgreSQL database when it does not exist (needs CREATEDB)
    create_database: bool = False
    data_dir: str = ".clarigate"
    #: More platforms for this bot: import paths ``module:Class`` of ``PlatformAdapter`` subclasses,
    #: registered like an installed platform (their own section, environment and allow-lists).
    extra_adapters: list[str] = Field(default_factory=list)
    files_out: FilesOut = Field(default_factory=FilesOut)  # files the agent sends
    agent: AgentOptions = Field(default_factory=AgentOptions)  # the agent section (clarigate.agent.settings)
    # conversations another agent answers: by platform, chat or chat type, the first match wins;
    # the others get ``agent`` (``clarigate.gateway.runtime.routes``)
    routes: list[Route] = Field(default_factory=list)
    # every platform's section by name, filled from the keys named after the platforms (not a
    # setting of its own: neither a YAML key nor an environment name)
    platforms: dict[str, PlatformSettings] = Field(default_factory=dict, exclude=True)

    _warnings: list[str] = PrivateAttr(default_factory=list)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Environment over YAML (passed as init values)."""
        return (WellKnownEnv(settings_cls), env_settings, init_settings)

    @field_validator("routes")
    @classmethod
    def _route_names(cls, routes: list[Route]) -> list[Route]:
        names = [route.name for route in routes]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"route name {twice[0]!r} is given to more than one route")
        return routes

    @model_validator(mode="after")
    def _route_agents(self) -> GatewayConfig:
        """Each route's agent settings are valid values on top of ``agent`` (checked at load)."""
        for route in self.routes:
            try:
                route.options(self.agent)
            except ValueError as exc:
                raise ValueError(f"routes.{route.name}.agent: {describe_invalid(exc)}") from None
        return self

    @model_validator(mode="before")
    @classmethod
    def _platform_sections(cls, data: Any) -> Any:
        """Each registered platform's section, from the key named after it, under the environment."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        known = registry.platforms(sections.extra_paths({"extra_adapters": data.get("extra_adapters")}))
        clash = sorted(set(known) & set(cls.model_fields))
        if clash:
            raise ValueError(f"platform name {clash[0]!r} is a setting of the bot; a platform needs another")
        data["platforms"] = sections.read_sections(known, {name: data.pop(name, None) for name in known})
        return data

    def __getattr__(self, name: str) -> Any:
        """A platform's section as an attribute (``config.telegram``), for readers that know it."""
        platforms = self.__dict__.get("platforms")
        if platforms is not None and name in platforms:
            return platforms[name]
        return super().__getattr__(name)  # type: ignore[misc]

    @property
    def warnings(self) -> list[str]:
        """Problems found while loading (secrets written in the YAML file, …)."""
        return list(self._warnings)

    def platform(self, name: str) -> PlatformSettings | None:
        """The settings section of ``name``, or None for a platform the registry does not know
        (an adapter a test registers by hand)."""
        return self.platforms.get(name)

    def known_platforms(self) -> dict[str, registry.Platform]:
        """Every platform this bot could serve: built-in, installed and ``extra_adapters``."""
        return registry.platforms(self.extra_adapters)

    def streams_on(self, name: str) -> bool:
        """Whether runs are shown live on platform ``name`` (its own ``streaming``, else the bot's)."""
        section = self.platform(name)
        chosen = section.streaming if section is not None and section.streaming is not None else None
        return (chosen or self.streaming) == "auto"

    def platform_enabled(self, name: str) -> bool:
        """Enabled explicitly, or (``enabled`` unset) when its credentials are present."""
        section = self.platform(name)
        if section is None or section.enabled is False:
            return False
        return bool(section.enabled) or section.has_credentials()

    def enabled_platforms(self) -> list[str]:
        """The platforms this bot serves."""
        return [name for name in self.platforms if self.platform_enabled(name)]

    def secret_values(self) -> list[str]:
        """Every secret this bot holds (platform credentials, URLs' passwords, provider keys, what
        ``${NAME}`` stands for in each agent's MCP servers), for the log redactor; never printed."""
        values = [secret for section in self.platforms.values() for secret in section.secret_values()]
        values.extend(url_secrets(self.redis_url))  # the password, ?sentinel_password=…, ?sslpassword=…
        for agent in (self.agent, *(route.options(self.agent) for route in self.routes)):
            for url in (agent.checkpointer_url, agent.server_url, *urls_of(agent.mcp_servers)):
                values.extend(url_secrets(url))
            values.extend(filled_in(agent.mcp_servers))  # in env, headers, url: what the server gets
        values.extend(
            value for name, value in os.environ.items() if value and name.endswith(SECRET_ENV_SUFFIXES)
        )
        return values

    def agent_settings(self, options: AgentOptions | None = None) -> AgentSettings:
        """What the agent harness needs: the agent section (or a route's agent settings), with
        the bot's data folder."""
        return AgentSettings(**dict(options or self.agent), data_dir=self.data_dir)


def load_config(path: str | Path | None = None) -> GatewayConfig:
    """Load the bot's YAML (``path`` or ``CLARIGATE_CONFIG``) under the environment.

    Secrets found in the YAML are ignored (with a warning): they come from the environment only.
    Raises ``ConfigError`` (a ``ValueError``) with a readable message when the file or a value is
    wrong, when the file names a setting that does not exist or a ``CLARIGATE_*`` variable names no
    setting (a typo in ``allowed_users`` must not open the bot to everyone).
    """
    path = path or os.environ.get("CLARIGATE_CONFIG") or None
    data = read_yaml(path) if path else {}
    # the file's log_format, read from the mapping as written: the rest may not validate (a file
    # that does not even parse cannot say, ``read_yaml``'s error carries none: text then)
    asked = data.get("log_format")
    try:
        return _validated(data)
    except ValueError as exc:
        raise ConfigError(str(exc), asked.strip().lower() if isinstance(asked, str) else None) from exc


def _validated(data: dict[str, Any]) -> GatewayConfig:
    """``GatewayConfig`` from the YAML's mapping under the environment."""
    try:
        known = registry.platforms(sections.extra_paths(data))
    except ValueError as exc:  # a platform that cannot be loaded: the bot does not start
        raise ValueError(f"platforms: {exc}") from exc
    warnings = sections.drop_yaml_secrets(known, data)
    unknown = _unknown_keys(data, known) + unknown_env(clarigate_env_names(known))
    if unknown:
        raise ValueError("; ".join(unknown))
    try:
        config = GatewayConfig(**data)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise ValueError(f"invalid configuration: {describe_invalid(exc)}") from exc
    config._warnings = warnings
    return config


def _unknown_keys(data: dict[str, Any], known: dict[str, registry.Platform]) -> list[str]:
    """One line per setting the file names that does not exist, with the nearest valid name."""
    problems = []
    fields = {name: info for name, info in GatewayConfig.model_fields.items() if name != "platforms"}
    for key, value in data.items():
        if key in known:
            continue
        if key not in fields:
            problems.append(_not_a_setting(key, value, fields, known))
            continue
        section = fields[key].annotation
        if isinstance(value, dict) and isinstance(section, type) and issubclass(section, BaseModel):
            problems.extend(_not_settings(key, value, section.model_fields))
    for name, keys in sections.section_keys_unknown(known, data).items():
        problems.extend(_not_settings(name, keys, known[name].settings_model.model_fields))
    return problems


def _not_a_setting(key: str, value: Any, fields: dict[str, Any], known: dict[str, registry.Platform]) -> str:
    """An unknown top-level key, with the nearest name; a section (a mapping) also lists the
    sections there are (a misspelt ``slak:`` would otherwise leave Slack's settings unread)."""
    said = f"{key!r} in the config file is not a setting"
    if value is not None and not isinstance(value, dict):
        return said + did_you_mean(key, [*fields, *known])
    models = [name for name, info in fields.items() if _is_model(info.annotation)]
    near = did_you_mean(key, [*known, *models]) or did_you_mean(key, fields)
    platforms, others = ", ".join(sorted(known)), ", ".join(sorted(models))
    return f"{said}{near}; the known sections are {platforms} (platforms) and {others}"


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _not_settings(section: str, keys: Any, known: Any) -> list[str]:
    return [
        f"'{section}.{name}' in the config file is not a setting{did_you_mean(name, known)}"
        for name in keys
        if name not in known
    ]


def clarigate_env_names(known: dict[str, registry.Platform] | None = None) -> list[str]:
    """Every ``CLARIGATE_*`` name the gateway reads: settings (nested with ``__``), each platform's
    section (``known``, by default the installed platforms) and the others."""
    names = [*OTHER_CLARIGATE_ENV, *(n for n in ENV_NAMES if n.startswith("CLARIGATE_"))]
    for key, info in GatewayConfig.model_fields.items():
        if key == "platforms":
            continue
        names.append(f"CLARIGATE_{key.upper()}")
        section = info.annotation
        if isinstance(section, type) and issubclass(section, BaseModel):
            names.extend(f"CLARIGATE_{key.upper()}__{field.upper()}" for field in section.model_fields)
    return names + sections.section_env_names(registry.installed() if known is None else known)


def startup_problems(config: GatewayConfig) -> list[str]:
    """What stops ``serve`` before it connects: a platform with part of its credentials, what a
    platform's own settings refuse (a Telegram webhook without its secret: anyone could post), or
    an agent setting that cannot apply where the agent runs (``clarigate.agent.placement``)."""
    problems = []
    for name, platform in config.known_platforms().items():
        section = config.platform(name)
        if section is None:
            continue
        problem = sections.credential_problem(platform, section)
        if problem:
            problems.append(problem)
        if config.platform_enabled(name):
            problems.extend(f"{name}: {line}" for line in section.startup_problems())
    # an agent setting that does not apply where the agent runs (a server's graph: known at start)
    problems.extend(placement.problems(config.agent, placement.place_of(config.agent)))
    problems.extend(route_problems(config.agent, config.routes))  # each route's agent alike
    if config.role in ("web", "worker") and not config.redis_url:
        problems.append(
            f"role {config.role!r} shares its work with other processes through Redis: set REDIS_URL "
            "(or role 'all' for one process on the embedded store)"
        )
    return problems


#: How to try the agent in the terminal, for "no platform is enabled" messages: after ``make …``
#: alone, ``clarigate`` is in the virtual environment, not on the PATH.
TRY_CHAT = "`make chat` (or `clarigate chat` in the virtual environment)"


def credential_hints(config: GatewayConfig) -> str:
    """What turns each platform on, for "no platform is enabled" messages."""
    return "; or ".join(p.credential_hint() for p in config.known_platforms().values())
