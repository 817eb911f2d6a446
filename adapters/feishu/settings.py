"""Feishu / Lark settings: the ``feishu:`` section, ``FEISHU_*`` and ``CLARIGATE_FEISHU__*``."""

from __future__ import annotations

from typing import ClassVar, Literal
from urllib.parse import urlsplit

from pydantic import SecretStr
from pydantic_settings import SettingsConfigDict

from clarigate.gateway.boundary.settings import PlatformSettings


class FeishuSettings(PlatformSettings):
    """Feishu / Lark app credentials (``FEISHU_*``)."""

    model_config = SettingsConfigDict(env_prefix="FEISHU_")
    env_fields: ClassVar[tuple[str, ...]] = (
        "app_id",
        "app_secret",
        "verification_token",
        "encrypt_key",
        "domain",
        "mode",
    )
    credential_fields: ClassVar[tuple[str, ...] | None] = (
        "app_secret",
        "verification_token",
        "encrypt_key",
        "app_id",
    )
    #: the app's credentials, and what the default webhook mode checks requests by (startup_problems)
    credential_hint: ClassVar[str] = (
        "FEISHU_APP_ID and FEISHU_APP_SECRET, plus FEISHU_ENCRYPT_KEY or FEISHU_VERIFICATION_TOKEN "
        "in webhook mode (FEISHU_MODE=long_connection needs neither)"
    )
    # lark-oapi prints to stdout through a handler of its own, from import time
    sdk_loggers: ClassVar[tuple[str, ...]] = ("Lark",)
    own_handler_loggers: ClassVar[tuple[str, ...]] = ("Lark",)

    app_id: str | None = None
    app_secret: SecretStr | None = None
    verification_token: SecretStr | None = None
    encrypt_key: SecretStr | None = None
    domain: str = "https://open.feishu.cn"  # https://open.larksuite.com for Lark
    mode: Literal["webhook", "long_connection"] = "webhook"

    def has_credentials(self) -> bool:
        """The app id and its secret (the verification token and encrypt key are optional)."""
        return bool(self.app_id) and self.app_secret is not None

    def people_language(self) -> str | None:
        """The language of the people on ``domain``, as a hint: a Feishu message carries none, so
        the core's own words (help, status) follow it when a message's words give no sign of one.
        Feishu (open.feishu.cn, China) ``zh``, Lark (open.larksuite.com) ``en``; None (English)
        elsewhere (a private deployment, a test server). The contact API's user has no locale."""
        host = (urlsplit(self.domain).hostname or "").lower()
        if host == "feishu.cn" or host.endswith(".feishu.cn"):
            return "zh"
        if host == "larksuite.com" or host.endswith(".larksuite.com"):
            return "en"
        return None

    def startup_problems(self) -> list[str]:
        """A webhook with nothing to check requests by: anyone could post events as any user.
        The encrypt key (signature) or the verification token (Feishu's plain mode) will do; the
        long connection exposes no webhook."""
        if self.mode == "webhook" and not self.encrypt_key and not self.verification_token:
            return [
                "webhook mode (feishu.mode, FEISHU_MODE) without FEISHU_ENCRYPT_KEY or "
                "FEISHU_VERIFICATION_TOKEN: POST /feishu/events cannot tell Feishu's requests from "
                "anyone's; set FEISHU_ENCRYPT_KEY (and FEISHU_VERIFICATION_TOKEN), "
                "or FEISHU_MODE=long_connection"
            ]
        return []

    async def identity(self) -> str | None:
        """The app id: configured, so no call is needed."""
        return f"app {self.app_id}" if self.app_id else None
