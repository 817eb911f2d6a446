"""Parrot: the smallest complete clarigate platform, shipped as a distribution of its own.

A person's message is JSON posted to ``POST /parrot/events`` with the header
``X-Parrot-Token`` (the platform's shared secret); every reply the core sends is appended as one
JSON line to the file ``outbox``. Configured only by the ``parrot:`` YAML section and
``CLARIGATE_PARROT__<FIELD>`` variables; on when ``CLARIGATE_PARROT__TOKEN`` is set.
"""

from __future__ import annotations

import hmac
import json
from pathlib import Path
from typing import ClassVar

from pydantic import SecretStr
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from clarigate import (
    Conversation,
    GatewayPort,
    InboundMessage,
    MessageRef,
    Outbound,
    PlatformAdapter,
    PlatformSettings,
    Sender,
    TokenShape,
)


class ParrotSettings(PlatformSettings):
    """The ``parrot:`` section (``allowed_users``, ``allowed_chats``, … come with the base)."""

    #: Parrot's tokens start with ``prr-``: masked in every log line, configured or not.
    token_shapes: ClassVar[tuple[TokenShape, ...]] = (("prr-", r"\bprr-[A-Za-z0-9]+", "***"),)

    token: SecretStr | None = None  # the shared secret of the webhook: a secret, so environment only
    outbox: str = "parrot-outbox.jsonl"  # where replies go, one JSON line each

    async def identity(self) -> str | None:
        """Parrot has one bot per token: its first characters name it."""
        return f"token {self.token.get_secret_value()[:8]}" if self.token else None


class ParrotAdapter(PlatformAdapter):
    """Receives JSON on a webhook, writes replies to a file."""

    platform: ClassVar[str] = "parrot"
    settings_model = ParrotSettings

    def __init__(self, settings: ParrotSettings, gateway: GatewayPort) -> None:
        self.settings = settings
        self.gateway = gateway

    def routes(self) -> list[BaseRoute]:
        """The webhook."""
        return [Route("/parrot/events", self._events, methods=["POST"])]

    async def _events(self, request: Request) -> Response:
        token = self.settings.token.get_secret_value() if self.settings.token else ""
        if not hmac.compare_digest(request.headers.get("x-parrot-token", ""), token):
            return JSONResponse({"error": "bad token"}, status_code=401)
        event = await request.json()
        if event.get("text") == "crash":  # a bug in a handler, as the tests need one
            raise RuntimeError("parrot's handler broke")
        chat = str(event.get("chat", "c1"))
        message = InboundMessage(
            conversation=Conversation(platform=self.platform, chat_id=chat, is_direct=True),
            sender=Sender(user_id=str(event["user"])),
            text=str(event["text"]),
            event_id=str(event["id"]),
        )
        outcome = await self.gateway.accept(message)
        return JSONResponse({"outcome": outcome.value})

    async def send(self, conversation: Conversation, item: Outbound) -> MessageRef | None:
        """Append the item to the outbox file."""
        line = {
            "chat": conversation.chat_id,
            "kind": type(item).__name__,
            "text": getattr(item, "text", None),
        }
        with Path(self.settings.outbox).open("a", encoding="utf-8") as out:  # noqa: ASYNC230 (a test platform)
            out.write(json.dumps(line) + "\n")
        return None
