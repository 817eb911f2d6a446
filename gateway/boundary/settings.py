"""What every platform's settings model is: access rules, credentials, identity and token shapes.

Each adapter package declares a ``PlatformSettings`` subclass (``adapters/<platform>/settings.py``)
and names it as its ``PlatformAdapter.settings_model``. The core reads a platform's section
generically from it: the YAML section named after the platform, ``CLARIGATE_<NAME>__<FIELD>``
variables, and the model's own well-known names (``env_prefix`` + a field of ``env_fields``, e.g.
``SLACK_BOT_TOKEN``). Fields typed ``SecretStr`` are secrets: from the environment only, never
from the YAML file, and masked in every log line.

The declarations live on the settings model, not on the adapter class, so that the core can
read settings, tell whether a platform is on, record its identity and redact its tokens without
importing the platform's SDK (Feishu's alone takes seconds to import).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, ClassVar, Literal
from urllib.parse import urlsplit

from pydantic import (
    BeforeValidator,
    Field,
    SecretStr,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic_settings import BaseSettings, NoDecode, PydanticBaseSettingsSource, SettingsConfigDict

#: A token shape the log redactor masks wherever it appears: (needle, regular expression,
#: replacement). The pattern runs only on lines whose lower-cased text holds the needle (a literal
#: every match contains; None: every line), so a shape costs almost nothing on other lines.
TokenShape = tuple[str | None, str, str]

_BOOL = TypeAdapter(bool)


def _streaming_word(value: Any) -> Any:
    """``streaming: off`` as YAML reads it (the boolean false; ``on``: true), and the same words
    from the environment (``CLARIGATE_STREAMING=false``): YAML 1.1 turns the bare words into
    booleans, so a boolean word (pydantic's: true/false, yes/no, on/off, 1/0) means on or off."""
    if isinstance(value, str) and value.strip().lower() not in ("auto", "off"):
        try:
            value = _BOOL.validate_python(value.strip())
        except ValidationError:
            return value  # refused as not auto or off
    if value is True:
        return "auto"
    if value is False:
        return "off"
    return value


#: ``auto`` (``on``, YAML's ``true``) or ``off`` (YAML's ``false``): whether runs are shown live.
Streaming = Annotated[Literal["auto", "off"], BeforeValidator(_streaming_word)]


class PlatformSettings(BaseSettings):
    """One platform's section: who may talk to the bot (empty lists: everyone) and its credentials.

    Subclasses add their fields and may override the class-level declarations below. Built from
    the values the core collected (YAML under the environment); an instance made directly reads
    no environment (``SlackSettings(bot_token=...)`` in a test is exactly what it says).
    """

    model_config = SettingsConfigDict(extra="forbid", env_prefix="")

    #: Fields also read from ``<env_prefix><FIELD>`` (the operators' contract names, e.g.
    #: ``SLACK_BOT_TOKEN``); every field is read from ``CLARIGATE_<NAME>__<FIELD>`` all the same.
    env_fields: ClassVar[tuple[str, ...]] = ()
    #: The fields that make up the credentials (None: every secret field), for "half set" messages.
    credential_fields: ClassVar[tuple[str, ...] | None] = None
    #: What a person sets to turn the platform on, for messages ("SLACK_BOT_TOKEN and …").
    credential_hint: ClassVar[str] = ""
    #: Token shapes of this platform the log redactor masks even when not configured.
    token_shapes: ClassVar[tuple[TokenShape, ...]] = ()
    #: The platform SDK's loggers, which print URLs, headers or bodies below WARNING: held at
    #: WARNING. Those in ``own_handler_loggers`` install a handler of their own (printing past
    #: the redactor): it is removed, so their lines go through ours.
    sdk_loggers: ClassVar[tuple[str, ...]] = ()
    own_handler_loggers: ClassVar[tuple[str, ...]] = ()

    enabled: bool | None = None  # None: enabled when credentials are present
    # streamed replies and live progress on this platform (None: the bot's ``streaming``)
    streaming: Streaming | None = None
    allowed_users: Annotated[list[str], NoDecode] = Field(default_factory=list)
    allowed_chats: Annotated[list[str], NoDecode] = Field(default_factory=list)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Only the values given: the core collects YAML and environment for every platform alike."""
        return (init_settings,)

    @field_validator("*", mode="before")
    @classmethod
    def _pasted_credential(cls, value: Any, info: ValidationInfo) -> Any:
        """A credential with a newline or a space at an end (a Kubernetes Secret made from a file,
        a paste) is the credential: kept, the SDK put it in a URL (Telegram: "unreachable") or an
        HMAC key (Slack: every event refused as forged). Blank is unset, as an empty variable is."""
        fields = {*cls.secret_fields(), *(cls.credential_fields or ())}
        if info.field_name in fields and isinstance(value, str | SecretStr):
            text = (value.get_secret_value() if isinstance(value, SecretStr) else value).strip()
            return text or None
        return value

    @field_validator("allowed_users", "allowed_chats", mode="before")
    @classmethod
    def _id_list(cls, value: Any) -> Any:
        """A JSON list, a comma-separated list (``U1,U2`` from the environment) or one id; numbers
        (Telegram ids written unquoted in YAML) become strings."""
        if isinstance(value, str):
            text = value.strip()
            if not text.startswith("["):
                return [p.strip() for p in text.split(",") if p.strip()]
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ValueError(
                    f"starts with '[' but is not a JSON list ({exc.msg} at character {exc.pos}): write "
                    'a JSON list such as ["U1", "U2"], or the ids separated by commas (U1,U2)'
                ) from None
        if isinstance(value, list):
            return [str(item).strip() if isinstance(item, int | str) else item for item in value]
        return value

    @classmethod
    def secret_fields(cls) -> tuple[str, ...]:
        """The fields typed ``SecretStr`` (or ``SecretStr | None``): secrets."""
        return tuple(
            name
            for name, info in cls.model_fields.items()
            if info.annotation is SecretStr or SecretStr in getattr(info.annotation, "__args__", ())
        )

    @classmethod
    def env_prefix(cls) -> str:
        """The prefix of this platform's well-known environment names (``SLACK_``), or ``""``."""
        return str(cls.model_config.get("env_prefix") or "")

    def has_credentials(self) -> bool:
        """True when the section has what the platform needs to connect (default: every secret)."""
        return all(getattr(self, name) for name in self.secret_fields())

    def credentials_set(self) -> list[str]:
        """The credential fields that are set (part of them set and the platform off: a mistake)."""
        fields = self.credential_fields if self.credential_fields is not None else self.secret_fields()
        return [field for field in fields if getattr(self, field, None)]

    def startup_problems(self) -> list[str]:
        """What stops ``serve`` when this platform is on besides missing credentials (none here)."""
        return []

    async def identity(self) -> str | None:
        """Who this bot is on the platform (``bot 42``), for the one-bot-one-identity lock; None
        when it cannot be told without a call this platform does not offer."""
        return None

    def secret_values(self) -> list[str]:
        """The values of the secrets that are set, for the log redactor."""
        return [
            secret.get_secret_value()
            for name in self.secret_fields()
            if isinstance(secret := getattr(self, name, None), SecretStr)
        ]


def with_default_path(url: str, path: str) -> str:
    """``url`` with ``path`` added when it names only a host (``TELEGRAM_API_URL=http://fake:8081``)."""
    parts = urlsplit(url)
    return url.rstrip("/") + path if parts.netloc and parts.path in ("", "/") else url
