"""Configuration: one YAML file per bot, every value overridable by the environment.

Platform settings are plain models so adapters can be built from them in tests.
The loader (YAML + environment, secrets from the environment only) builds
``GatewayConfig``.
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

import yaml
from pydantic import BaseModel, Field, PrivateAttr, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, PydanticBaseSettingsSource, SettingsConfigDict

from clarigate.agent.settings import AgentOptions, AgentSettings


class PlatformAccess(BaseModel):
    """Who may talk to the bot on one platform (empty lists: everyone)."""

    enabled: bool | None = None  # None: enabled when credentials are present
    # streamed replies and live progress on this platform (None: the bot's ``streaming``)
    streaming: Literal["auto", "off"] | None = None
    allowed_users: Annotated[list[str], NoDecode] = Field(default_factory=list)
    allowed_chats: Annotated[list[str], NoDecode] = Field(default_factory=list)

    @field_validator("allowed_users", "allowed_chats", mode="before")
    @classmethod
    def _id_list(cls, value: Any) -> Any:
        """A JSON list, a comma-separated list (``U1,U2`` from the environment) or one id; numbers
        (Telegram ids written unquoted in YAML) become strings."""
        if isinstance(value, str):
            text = value.strip()
            value = json.loads(text) if text.startswith("[") else [p for p in text.split(",") if p.strip()]
        if isinstance(value, list):
            return [str(item).strip() if isinstance(item, int | str) else item for item in value]
        return value


class SlackSettings(PlatformAccess):
    """Slack app credentials (``SLACK_*``)."""

    bot_token: SecretStr | None = None
    signing_secret: SecretStr | None = None
    app_token: SecretStr | None = None  # Socket Mode when set
    api_url: str = "https://slack.com/api/"

    @field_validator("api_url")
    @classmethod
    def _api_base(cls, url: str) -> str:
        """``http://host`` means ``http://host/api/``; the slash matters (the SDK joins method names)."""
        return _with_default_path(url, "/api").rstrip("/") + "/"


class FeishuSettings(PlatformAccess):
    """Feishu / Lark app credentials (``FEISHU_*``)."""

    app_id: str | None = None
    app_secret: SecretStr | None = None
    verification_token: SecretStr | None = None
    encrypt_key: SecretStr | None = None
    domain: str = "https://open.feishu.cn"  # https://open.larksuite.com for Lark
    mode: Literal["webhook", "long_connection"] = "webhook"


class TelegramSettings(PlatformAccess):
    """Telegram bot credentials (``TELEGRAM_*``)."""

    bot_token: SecretStr | None = None
    webhook_secret: SecretStr | None = None
    webhook_url: str | None = None  # polling when unset
    api_url: str = "https://api.telegram.org/bot"

    @field_validator("api_url")
    @classmethod
    def _api_base(cls, url: str) -> str:
        """``http://host`` means ``http://host/bot`` (the SDK appends the token right after it)."""
        return _with_default_path(url.rstrip("/"), "/bot")


def _with_default_path(url: str, path: str) -> str:
    """``url`` with ``path`` added when it names only a host (``TELEGRAM_API_URL=http://fake:8081``)."""
    parts = urlsplit(url)
    return url.rstrip("/") + path if parts.netloc and parts.path in ("", "/") else url


# --- the bot's whole configuration -------------------------------------------------------------

PLATFORMS = ("slack", "feishu", "telegram")

#: Well-known environment names (the operators' contract) -> (section or None, field).
ENV_NAMES: dict[str, tuple[str | None, str]] = {
    "CLARIGATE_BOT_ID": (None, "bot_id"),
    "REDIS_URL": (None, "redis_url"),
    "LLM_MODEL": ("agent", "model"),
    "CHECKPOINTER_URL": ("agent", "checkpointer_url"),
    "ALLOW_CLARIFICATION": ("agent", "allow_clarification"),
    "DISABLE_CLARIFICATION": ("agent", "disable_clarification"),
    "LANGGRAPH_URL": ("agent", "server_url"),
    "SLACK_BOT_TOKEN": ("slack", "bot_token"),
    "SLACK_SIGNING_SECRET": ("slack", "signing_secret"),
    "SLACK_APP_TOKEN": ("slack", "app_token"),
    "SLACK_API_URL": ("slack", "api_url"),
    "FEISHU_APP_ID": ("feishu", "app_id"),
    "FEISHU_APP_SECRET": ("feishu", "app_secret"),
    "FEISHU_VERIFICATION_TOKEN": ("feishu", "verification_token"),
    "FEISHU_ENCRYPT_KEY": ("feishu", "encrypt_key"),
    "FEISHU_DOMAIN": ("feishu", "domain"),
    "FEISHU_MODE": ("feishu", "mode"),
    "TELEGRAM_BOT_TOKEN": ("telegram", "bot_token"),
    "TELEGRAM_WEBHOOK_SECRET": ("telegram", "webhook_secret"),
    "TELEGRAM_WEBHOOK_URL": ("telegram", "webhook_url"),
    "TELEGRAM_API_URL": ("telegram", "api_url"),
}

#: Values that only ever come from the environment (never from the YAML file, never logged).
SECRET_FIELDS: dict[str, tuple[str, ...]] = {
    "slack": ("bot_token", "signing_secret", "app_token"),
    "feishu": ("app_secret", "verification_token", "encrypt_key"),
    "telegram": ("bot_token", "webhook_secret"),
}


#: The environment names that make each platform's credentials.
CREDENTIAL_NAMES = {
    "slack": "SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET (HTTP) or SLACK_APP_TOKEN (Socket Mode)",
    "feishu": "FEISHU_APP_ID and FEISHU_APP_SECRET",
    "telegram": "TELEGRAM_BOT_TOKEN",
}

#: Environment variables whose values are secrets wherever they come from (provider API keys, …).
SECRET_ENV_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD", "_ENCRYPT_KEY", "_APP_SECRET")


class _WellKnownEnv(PydanticBaseSettingsSource):
    """Reads the operators' contract names (``REDIS_URL``, ``SLACK_BOT_TOKEN``, …)."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        """Unused: values are collected in ``__call__``."""
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        """The nested dict of every well-known variable that is set."""
        data: dict[str, Any] = {}
        for name, (section, field) in ENV_NAMES.items():
            value = os.environ.get(name)
            if value is None or value == "":
                continue
            target = data.setdefault(section, {}) if section else data
            target[field] = value
        return data


class GatewayConfig(BaseSettings):
    """One bot: its prefix, its store, its agent and its platforms.

    Priority: well-known environment names, then ``CLARIGATE_<NAME>`` (nested with
    ``__``, e.g. ``CLARIGATE_SLACK__ALLOWED_USERS='["U1"]'``), then the YAML file.
    """

    model_config = SettingsConfigDict(env_prefix="CLARIGATE_", env_nested_delimiter="__", extra="ignore")

    # the prefix of every Redis key: no spaces, no ':' (``a`` must not see ``a:b``'s keys in ``a:*``)
    bot_id: str = Field("clarigate", pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    redis_url: str | None = None
    answer_policy: Literal["starter", "anyone"] = "starter"
    pending_ttl_seconds: int = Field(7 * 24 * 3600, ge=0)
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
    streaming: Literal["auto", "off"] = "auto"
    max_body_bytes: int = Field(1024 * 1024, gt=0)
    log_format: Literal["text", "json"] = "text"
    log_level: Literal["debug", "info", "warning", "error"] = "info"  # --log-level overrides
    # how long ``serve`` waits for an unreachable Redis / PostgreSQL at start (0: try once)
    startup_wait_seconds: float = Field(60.0, ge=0)
    metrics_port: int | None = Field(None, ge=1, le=65535)  # /metrics on its own port when set
    # at start, create the checkpointer's PostgreSQL database when it does not exist (needs CREATEDB)
    create_database: bool = False
    data_dir: str = ".clarigate"
    #: More platforms: import paths ``module:Class`` of ``PlatformAdapter``s built as ``Class(gateway)``.
    extra_adapters: list[str] = Field(default_factory=list)
    agent: AgentOptions = Field(default_factory=AgentOptions)  # the agent section (clarigate.agent.settings)
    slack: SlackSettings = Field(default_factory=SlackSettings)
    feishu: FeishuSettings = Field(default_factory=FeishuSettings)
    telegram: TelegramSettings = Field(default_factory=TelegramSettings)

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
        return (_WellKnownEnv(settings_cls), env_settings, init_settings)

    @property
    def warnings(self) -> list[str]:
        """Problems found while loading (secrets written in the YAML file, …)."""
        return list(self._warnings)

    def platform(self, name: str) -> PlatformAccess | None:
        """The settings section of ``name``, or None for a platform without one (tests)."""
        section = getattr(self, name, None) if name in PLATFORMS else None
        return section if isinstance(section, PlatformAccess) else None

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
        return bool(section.enabled) or has_credentials(section)

    def enabled_platforms(self) -> list[str]:
        """The platforms this bot serves."""
        return [name for name in PLATFORMS if self.platform_enabled(name)]

    def secret_values(self) -> list[str]:
        """Every secret this bot holds (platform credentials, store and database passwords, provider
        keys from the environment), for the log redactor; never printed."""
        values = [
            secret.get_secret_value()
            for name, fields in SECRET_FIELDS.items()
            for field in fields
            if isinstance(secret := getattr(getattr(self, name), field, None), SecretStr)
        ]
        for url in (self.redis_url, self.agent.checkpointer_url):
            password = urlsplit(url).password if url and "://" in url else None
            if password:
                values.append(password)
        values.extend(
            value for name, value in os.environ.items() if value and name.endswith(SECRET_ENV_SUFFIXES)
        )
        return values

    def agent_settings(self) -> AgentSettings:
        """What the agent harness needs: the agent section, with the bot's data folder."""
        return AgentSettings(**dict(self.agent), data_dir=self.data_dir)


def has_credentials(section: PlatformAccess) -> bool:
    """True when a platform section has what it needs to connect."""
    if isinstance(section, SlackSettings):
        receiver = section.signing_secret is not None or section.app_token is not None
        return section.bot_token is not None and receiver
    if isinstance(section, FeishuSettings):
        return bool(section.app_id) and section.app_secret is not None
    if isinstance(section, TelegramSettings):
        return section.bot_token is not None
    return False


def load_config(path: str | Path | None = None) -> GatewayConfig:
    """Load the bot's YAML (``path`` or ``CLARIGATE_CONFIG``) under the environment.

    Secrets found in the YAML are ignored (with a warning): they come from the environment only.
    Raises ``ValueError`` with a readable message when the file or a value is wrong, when the file
    names a setting that does not exist or a ``CLARIGATE_*`` variable names no setting (a typo in
    ``allowed_users`` must not open the bot to everyone).
    """
    path = path or os.environ.get("CLARIGATE_CONFIG") or None
    data: dict[str, Any] = {}
    warnings: list[str] = []
    if path:
        try:
            loaded = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise ValueError(f"cannot read config file {path}: {exc.strerror or exc}") from exc
        except yaml.YAMLError as exc:
            raise ValueError(f"config file {path} is not valid YAML: {exc}") from exc
        if loaded is not None and not isinstance(loaded, dict):
            raise ValueError(f"config file {path} must be a mapping of settings, not {type(loaded).__name__}")
        data = loaded or {}
        warnings = _drop_yaml_secrets(data)
    unknown = _unknown_keys(data) + _unknown_env()
    if unknown:
        raise ValueError("; ".join(unknown))
    try:
        config = GatewayConfig(**data)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise ValueError(f"invalid configuration: {exc}") from exc
    config._warnings = warnings
    return config


def _unknown_keys(data: dict[str, Any]) -> list[str]:
    """One line per setting the file names that does not exist, with the nearest valid name."""
    problems = []
    fields = GatewayConfig.model_fields
    for key, value in data.items():
        if key not in fields:
            problems.append(f"{key!r} in the config file is not a setting{_did_you_mean(key, fields)}")
            continue
        section = fields[key].annotation
        if isinstance(value, dict) and isinstance(section, type) and issubclass(section, BaseModel):
            known = section.model_fields
            problems.extend(
                f"'{key}.{name}' in the config file is not a setting{_did_you_mean(name, known)}"
                for name in value
                if name not in known
            )
    return problems


def _did_you_mean(name: str, candidates: Any) -> str:
    """`` (did you mean `allowed_users`?)`` for the nearest candidate, or nothing when none is near."""
    names = {str(c).lower(): str(c) for c in candidates}
    near = difflib.get_close_matches(str(name).lower(), list(names), n=1, cutoff=0.6)
    return f" (did you mean `{names[near[0]]}`?)" if near else ""


#: ``CLARIGATE_*`` variables that are not settings but are read all the same.
OTHER_CLARIGATE_ENV = ("CLARIGATE_CONFIG",)


def clarigate_env_names() -> list[str]:
    """Every ``CLARIGATE_*`` name the gateway reads: settings (nested with ``__``) and the others."""
    names = [*OTHER_CLARIGATE_ENV, *(n for n in ENV_NAMES if n.startswith("CLARIGATE_"))]
    for key, info in GatewayConfig.model_fields.items():
        names.append(f"CLARIGATE_{key.upper()}")
        section = info.annotation
        if isinstance(section, type) and issubclass(section, BaseModel):
            names.extend(f"CLARIGATE_{key.upper()}__{field.upper()}" for field in section.model_fields)
    return names


def _unknown_env() -> list[str]:
    """One line per ``CLARIGATE_*`` environment variable that names no setting."""
    known = clarigate_env_names()
    return [
        f"environment variable {name} is not a setting{_did_you_mean(name.upper(), known)}"
        for name in sorted(os.environ)
        if name.upper().startswith("CLARIGATE_") and name.upper() not in known
    ]


def partial_credentials(name: str, section: PlatformAccess) -> list[str]:
    """The environment names of the credentials that are set for ``name`` (a platform)."""
    fields = [*SECRET_FIELDS.get(name, ()), *(("app_id",) if name == "feishu" else ())]
    return [f"{name.upper()}_{f.upper()}" for f in fields if getattr(section, f, None)]


def startup_problems(config: GatewayConfig) -> list[str]:
    """What stops ``serve`` before it connects: a platform with part of its credentials, a
    Telegram webhook without its secret (anyone could post updates)."""
    problems = []
    for name in PLATFORMS:
        section = config.platform(name)
        if section is None or section.enabled is False:
            continue
        present = partial_credentials(name, section)
        if not has_credentials(section) and (present or section.enabled):
            which = " and ".join(present) + " is set but" if present else "enabled, but"
            problems.append(f"{name}: {which} the platform needs {CREDENTIAL_NAMES[name]}")
    telegram = config.telegram
    if config.platform_enabled("telegram") and telegram.webhook_url and not telegram.webhook_secret:
        problems.append("telegram: TELEGRAM_WEBHOOK_URL is set without TELEGRAM_WEBHOOK_SECRET (required)")
    if config.role in ("web", "worker") and not config.redis_url:
        problems.append(
            f"role {config.role!r} shares its work with other processes through Redis: set REDIS_URL "
            "(or role 'all' for one process on the embedded store)"
        )
    return problems


def _drop_yaml_secrets(data: dict[str, Any]) -> list[str]:
    """Remove secret values from YAML data; one warning per secret found."""
    warnings = []
    for section, fields in SECRET_FIELDS.items():
        values = data.get(section)
        if not isinstance(values, dict):
            continue
        for field in fields:
            if values.pop(field, None) is not None:
                env = next(n for n, target in ENV_NAMES.items() if target == (section, field))
                warnings.append(f"{section}.{field} in the config file is ignored: secrets come from {env}")
    return warnings
