"""Configuration: one YAML file per bot, every value overridable by the environment.

Platform settings are plain models so adapters can be built from them in tests.
The loader (YAML + environment, secrets from the environment only) builds
``GatewayConfig``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, SecretStr


class PlatformAccess(BaseModel):
    """Who may talk to the bot on one platform (empty lists: everyone)."""

    enabled: bool | None = None  # None: enabled when credentials are present
    allowed_users: list[str] = Field(default_factory=list)
    allowed_chats: list[str] = Field(default_factory=list)


class SlackSettings(PlatformAccess):
    """Slack app credentials (``SLACK_*``)."""

    bot_token: SecretStr | None = None
    signing_secret: SecretStr | None = None
    app_token: SecretStr | None = None  # Socket Mode when set
    api_url: str = "https://slack.com/api/"


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
