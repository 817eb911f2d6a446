"""Telegram's settings: the ``telegram:`` section, ``TELEGRAM_*`` and ``CLARIGATE_TELEGRAM__*``."""

from __future__ import annotations

import re
from typing import ClassVar
from urllib.parse import urlsplit

from pydantic import SecretStr, ValidationInfo, field_validator, model_validator
from pydantic_settings import SettingsConfigDict

from clarigate.gateway.boundary.settings import PlatformSettings, TokenShape, with_default_path
from clarigate.gateway.runtime.invalid import set_by

#: Telegram's own Bot API host: it calls a webhook over HTTPS on these ports only (``setWebhook``);
#: a local Bot API server (another ``TELEGRAM_API_URL``) may call any URL.
OFFICIAL_API_HOST = "api.telegram.org"
WEBHOOK_PORTS = (443, 80, 88, 8443)
#: What ``setWebhook`` takes as ``secret_token``.
SECRET_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,256}")
#: Telegram's ids: users' are positive numbers, chats' negative for groups and channels (``-100…``).
_IDS = {"allowed_users": ("user", re.compile(r"[0-9]+")), "allowed_chats": ("chat", re.compile(r"-?[0-9]+"))}


class TelegramSettings(PlatformSettings):
    """Telegram bot credentials (``TELEGRAM_*``)."""

    model_config = SettingsConfigDict(env_prefix="TELEGRAM_")
    env_fields: ClassVar[tuple[str, ...]] = ("bot_token", "webhook_secret", "webhook_url", "api_url")
    #: the webhook's URL counts: set without the bot token, it is a platform half set up
    credential_fields: ClassVar[tuple[str, ...] | None] = ("bot_token", "webhook_secret", "webhook_url")
    credential_hint: ClassVar[str] = "TELEGRAM_BOT_TOKEN"
    token_shapes: ClassVar[tuple[TokenShape, ...]] = (
        # the bot token is in the URL path: https://api.telegram.org/bot<id>:<secret>/getMe
        ("/bot", r"(/bot)\d+:[A-Za-z0-9_-]+", r"\1***"),
        (None, r"\b\d{6,}:[A-Za-z0-9_-]{30,}\b", "***"),
    )

    sdk_loggers: ClassVar[tuple[str, ...]] = ("telegram",)  # the bot token is in its URLs

    bot_token: SecretStr | None = None
    webhook_secret: SecretStr | None = None
    webhook_url: str | None = None  # polling when unset
    api_url: str = "https://api.telegram.org/bot"

    @field_validator("api_url")
    @classmethod
    def _api_base(cls, url: str) -> str:
        """``http://host`` means ``http://host/bot`` (the SDK appends the token right after it)."""
        return with_default_path(url.rstrip("/"), "/bot")

    @field_validator("webhook_secret")
    @classmethod
    def _secret_token(cls, secret: SecretStr | None) -> SecretStr | None:
        """What Telegram takes as ``secret_token`` (refused here, not by ``setWebhook`` at start)."""
        if secret is not None and not SECRET_TOKEN.fullmatch(secret.get_secret_value()):
            raise ValueError(
                "TELEGRAM_WEBHOOK_SECRET must be 1-256 characters of A-Z, a-z, 0-9, _ and - "
                "(Telegram's secret_token; e.g. openssl rand -hex 32)"
            )
        return secret

    @field_validator("allowed_users", "allowed_chats")
    @classmethod
    def _numeric_ids(cls, ids: list[str], info: ValidationInfo) -> list[str]:
        """Telegram's ids are numbers: a name or a username would never match, and refuse everyone."""
        kind, shape = _IDS[str(info.field_name)]
        wrong = [str(number) for number, value in enumerate(ids, 1) if not shape.fullmatch(value)]
        if wrong:  # by position: the value is not quoted
            env = f"CLARIGATE_TELEGRAM__{str(info.field_name).upper()}"
            which = f"entry {wrong[0]} is not" if len(wrong) == 1 else f"entries {', '.join(wrong)} are not"
            raise ValueError(
                f"Telegram {kind} ids are numbers ({'-100… for groups, ' if kind == 'chat' else ''}"
                f"e.g. {env}=123456789,987654321): {which}"
            )
        return ids

    @model_validator(mode="after")
    def _webhook_url(self) -> TelegramSettings:
        """A webhook URL Telegram's servers would refuse to call (``setWebhook``), refused here."""
        problem = webhook_url_problem(self.webhook_url, self.api_url)
        if problem is not None:  # the variable named only when one set it (not the YAML file)
            path = ("telegram", "webhook_url")
            variable = set_by(path, {"TELEGRAM_WEBHOOK_URL": path})
            raise ValueError(f"telegram.webhook_url{f' ({variable})' if variable else ''} {problem}")
        return self

    def has_credentials(self) -> bool:
        """The bot token (the webhook secret goes with a webhook only)."""
        return self.bot_token is not None

    def startup_problems(self) -> list[str]:
        """A webhook without its secret: anyone could post updates. The URL may come from the YAML
        file or the environment (both named); the secret from the environment only."""
        if self.webhook_url and not self.webhook_secret:
            return [
                "telegram.webhook_url (TELEGRAM_WEBHOOK_URL) is set without TELEGRAM_WEBHOOK_SECRET "
                "(required; secrets come from the environment)"
            ]
        return []

    async def identity(self) -> str | None:
        """The bot id: the number before the token's colon, so no call is needed."""
        if self.bot_token is None:
            return None
        return f"bot {self.bot_token.get_secret_value().split(':', 1)[0]}"


def webhook_url_problem(url: str | None, api_url: str) -> str | None:
    """What is wrong with webhook ``url`` for the Bot API at ``api_url`` (Telegram's own: HTTPS on
    ports 443, 80, 88 or 8443; a local Bot API server: any http(s) URL), or None. The URL itself is
    not quoted (its path may be a secret of its own)."""
    if not url:
        return None
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "is not a URL: use https://<host>/telegram/webhook"
    if parts.scheme not in ("https", "http") or not parts.hostname:
        return "is not a URL: use https://<host>/telegram/webhook"
    if urlsplit(api_url).hostname != OFFICIAL_API_HOST:
        return None
    if parts.scheme != "https":
        return "must be an https:// URL: Telegram calls webhooks over HTTPS only"
    if port is not None and port not in WEBHOOK_PORTS:
        return f"has port {port}: Telegram calls webhooks on ports 443, 80, 88 and 8443 only"
    return None
