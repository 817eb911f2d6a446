"""Drive the real gateway through the Telegram adapter: updates in, Bot API calls out."""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from clarigate.adapters.telegram import TelegramAdapter
from clarigate.adapters.telegram.settings import TelegramSettings
from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.web.server import build_app
from tests.conftest import test_config as gateway_config

from .fake_bot_api import BOT_USER, FakeBotApi

SECRET = "hook-secret_1"
ALICE = {"id": 111, "is_bot": False, "first_name": "Alice", "username": "alice"}
BOB = {"id": 222, "is_bot": False, "first_name": "Bob"}
GROUP = {"id": -100500, "type": "supergroup", "title": "Team"}

_update_ids = itertools.count(int(time.time() * 1000) % 10**9)
_message_ids = itertools.count(1)


def private_chat(user: dict[str, Any]) -> dict[str, Any]:
    """The private chat between ``user`` and the bot."""
    return {"id": user["id"], "type": "private", "first_name": user["first_name"]}


def message_update(
    text: str,
    user: dict[str, Any] = ALICE,
    chat: dict[str, Any] | None = None,
    update_id: int | None = None,
    reply_to: dict[str, Any] | None = None,
    thread_id: int | None = None,
    entities: list[dict[str, Any]] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """An update carrying a text message (private chat unless ``chat`` is given); ``fields`` are
    more Bot API ``Message`` fields (``sender_chat``, ``photo``, ``caption``…; ``text=None`` drops it)."""
    message: dict[str, Any] = {
        "message_id": next(_message_ids),
        "date": int(time.time()),
        "chat": chat or private_chat(user),
        "from": user,
        "text": text,
    }
    if reply_to is not None:
        message["reply_to_message"] = reply_to
    if thread_id is not None:
        message["message_thread_id"] = thread_id
        message["is_topic_message"] = True
    if entities:
        message["entities"] = entities
    message.update(fields)
    if message.get("text") is None:
        message.pop("text", None)
    return {"update_id": update_id if update_id is not None else next(_update_ids), "message": message}


def mention_update(
    text: str, user: dict[str, Any] = ALICE, chat: dict[str, Any] = GROUP, **kw: Any
) -> dict[str, Any]:
    """A group message that @-mentions the bot at its start."""
    handle = f"@{BOT_USER['username']}"
    body = f"{handle} {text}"
    entities = [{"type": "mention", "offset": 0, "length": len(handle)}]
    return message_update(body, user, chat, entities=entities, **kw)


def command_update(command: str, user: dict[str, Any] = ALICE, **kw: Any) -> dict[str, Any]:
    """A message starting with a bot command (``/new``, ``/start payload``, ``/ask@clari_bot …``)."""
    length = len(command.split(maxsplit=1)[0])
    return message_update(
        command, user, entities=[{"type": "bot_command", "offset": 0, "length": length}], **kw
    )


def callback_update(
    data: str,
    message_id: int,
    user: dict[str, Any] = ALICE,
    chat: dict[str, Any] | None = None,
    thread_id: int | None = None,
) -> dict[str, Any]:
    """A button tap on the bot's message ``message_id`` (in topic ``thread_id`` of a forum or of a
    private chat in threaded mode, where the message says so as Telegram shows it)."""
    n = next(_update_ids)
    topic = {"message_thread_id": thread_id, "is_topic_message": True} if thread_id is not None else {}
    return {
        "update_id": n,
        "callback_query": {
            "id": f"cb{n}",
            "from": user,
            "chat_instance": "ci-1",
            "data": data,
            "message": {
                "message_id": message_id,
                "date": int(time.time()),
                "chat": chat or private_chat(user),
                "from": BOT_USER,
                "text": "…",
                **topic,
            },
        },
    }


def bot_message(message_id: int, chat: dict[str, Any]) -> dict[str, Any]:
    """A message from the bot, as it appears in ``reply_to_message``."""
    return {"message_id": message_id, "date": int(time.time()), "chat": chat, "from": BOT_USER, "text": "…"}


@dataclass
class TelegramBench:
    """One gateway with the Telegram adapter, its fake Bot API and an HTTP client for the webhook."""

    gateway: Gateway
    adapter: TelegramAdapter
    api: FakeBotApi
    runner: ScriptedRunner
    client: httpx.AsyncClient
    seen: int = field(default=0)

    async def post(self, update: dict[str, Any] | bytes, secret: str | None = SECRET) -> httpx.Response:
        """Deliver an update to the webhook as Telegram would."""
        headers = {"X-Telegram-Bot-Api-Secret-Token": secret} if secret is not None else {}
        if isinstance(update, bytes):
            return await self.client.post("/telegram/webhook", content=update, headers=headers)
        return await self.client.post("/telegram/webhook", json=update, headers=headers)

    async def deliver(self, update: dict[str, Any]) -> None:
        """Post an update, expect 200, and let the gateway finish what it started."""
        response = await self.post(update)
        assert response.status_code == 200, response.text
        await self.gateway.drain()

    def new_calls(self) -> list[Any]:
        """Bot API calls made since the last time this was asked."""
        calls = self.api.calls[self.seen :]
        self.seen = len(self.api.calls)
        return calls

    def record(self) -> tuple[list[Any], list[Any]]:
        """From now on, what the core receives: (accepted messages, submitted answers)."""
        messages: list[Any] = []
        answers: list[Any] = []
        accept, submit = self.gateway.accept, self.gateway.submit_answer

        async def recording_accept(message: Any) -> Any:
            messages.append(message)
            return await accept(message)

        async def recording_submit(answer: Any) -> Any:
            answers.append(answer)
            return await submit(answer)

        self.gateway.accept = recording_accept  # type: ignore[method-assign]
        self.gateway.submit_answer = recording_submit  # type: ignore[method-assign]
        return messages, answers

    async def settle(self) -> None:
        """Let the adapter's background retries (edits after a flood wait) finish."""
        await self.adapter.after_ack.settle()
        await self.gateway.drain()

    async def close(self) -> None:
        """Stop the gateway (and adapter) and the client."""
        await self.client.aclose()
        await self.gateway.stop(grace=0)


def telegram_settings(api: FakeBotApi, webhook: bool = True, **extra: Any) -> TelegramSettings:
    """Settings pointing at the fake API (webhook mode unless ``webhook`` is False)."""
    values: dict[str, Any] = {"bot_token": api.token, "api_url": api.base_url}
    if webhook:
        values.update(webhook_url="https://bot.example.com/telegram/webhook", webhook_secret=SECRET)
    values.update(extra)
    return TelegramSettings(**values)


async def open_bench(api: FakeBotApi, store: Any, runner: ScriptedRunner, **config: Any) -> TelegramBench:
    """A started gateway on ``store`` with the Telegram adapter in webhook mode."""
    gateway = Gateway(gateway_config(**config), store, runner)
    adapter = TelegramAdapter(telegram_settings(api), gateway)
    gateway.register(adapter)
    await gateway.start()
    app = build_app(gateway)  # the server as in production: its guard answers what the route raises
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gateway")
    return TelegramBench(gateway, adapter, api, runner, client)
