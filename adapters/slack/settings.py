"""Slack's settings: the ``slack:`` section, ``SLACK_*`` and ``CLARIGATE_SLACK__*`` variables."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator
from pydantic_settings import SettingsConfigDict

from clarigate.gateway.boundary.settings import PlatformSettings, TokenShape, with_default_path

#: Slack shows four suggested prompts at most (``assistant.threads.setSuggestedPrompts``).
MAX_SUGGESTED_PROMPTS = 4

#: Words in one language (``Ask me``) or by language (``{en: Ask me, zh: 问我}``).
Localised = str | dict[str, str]


def in_locale(words: Localised, locale: str) -> str:
    """``words`` in ``locale``: the line itself, that language's, else English's, else the first."""
    if isinstance(words, str):
        return words
    return words.get(locale) or words.get("en") or next(iter(words.values()), "")


class SuggestedPrompt(BaseModel):
    """One of ``slack.suggested_prompts``: the button's ``title`` and the ``message`` it sends."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    title: Localised
    message: Localised


class SlackSettings(PlatformSettings):
    """Slack app credentials (``SLACK_*``)."""

    model_config = SettingsConfigDict(env_prefix="SLACK_")
    env_fields: ClassVar[tuple[str, ...]] = ("bot_token", "signing_secret", "app_token", "api_url")
    #: the bot token always, and one way to receive: said so that the app token alone never reads as enough
    credential_hint: ClassVar[str] = (
        "SLACK_BOT_TOKEN plus either SLACK_SIGNING_SECRET (HTTP) or SLACK_APP_TOKEN (Socket Mode)"
    )
    token_shapes: ClassVar[tuple[TokenShape, ...]] = (
        ("xox", r"\bxox[a-z]-[A-Za-z0-9-]+", "***"),  # bot and user tokens
        ("xapp-", r"\bxapp-[A-Za-z0-9-]+", "***"),  # app-level (Socket Mode) tokens
        # a command's or a click's response_url posts into its channel: as is, form-encoded, in JSON
        ("hooks.slack.com", r"(hooks\.slack\.com(?:/|%2F|\\/)\w+(?:/|%2F|\\/))[^\s&'\"?)]+", r"\1***"),
    )

    #: The Web API client's own logger is named too: slack_sdk builds its DEBUG lines (each
    #: request's and response's headers and body) whenever that logger's own ``level`` is unset,
    #: before logging drops them, which cost every call CPU.
    sdk_loggers: ClassVar[tuple[str, ...]] = ("slack_sdk", "slack_bolt", "slack_sdk.web.async_base_client")

    bot_token: SecretStr | None = None
    signing_secret: SecretStr | None = None
    app_token: SecretStr | None = None  # Socket Mode when set
    api_url: str = "https://slack.com/api/"
    # Slack's agent messaging experience (the manifest's ``features.agent_view``): each DM
    # conversation is a thread with a loading status, a title and suggested prompts
    agent_view: bool = False
    suggested_prompts: list[SuggestedPrompt] = Field(default_factory=list, max_length=MAX_SUGGESTED_PROMPTS)

    @field_validator("api_url")
    @classmethod
    def _api_base(cls, url: str) -> str:
        """``http://host`` means ``http://host/api/``; the slash matters (the SDK joins method names)."""
        return with_default_path(url, "/api").rstrip("/") + "/"

    def has_credentials(self) -> bool:
        """The bot token, and a way to receive: the signing secret (HTTP) or the app token."""
        receiver = self.signing_secret is not None or self.app_token is not None
        return self.bot_token is not None and receiver

    async def identity(self) -> str | None:
        """The workspace and bot user, from ``auth.test``."""
        if self.bot_token is None:
            return None
        from slack_sdk.web.async_client import AsyncWebClient

        client = AsyncWebClient(token=self.bot_token.get_secret_value(), base_url=self.api_url)
        reply = await client.auth_test()
        if not reply.get("ok"):
            raise RuntimeError(str(reply.get("error")))
        return f"team {reply.get('team_id')} bot user {reply.get('user_id')}"
