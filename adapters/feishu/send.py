"""Feishu's message operations on the open API client: post, reply, update, recall, who am I,
names, files, and CardKit's streaming cards (through the SDK's typed ``client.cardkit.v1``
calls on the same pool).

Messages carry a ``uuid`` so a retry after a lost response does not post twice (Feishu
dedupes on it for an hour). A CardKit operation carries a strictly growing ``sequence``
(``CardSequences``); one refused as not growing is made once more after a jump. The calls
themselves, their token and classification are in ``open_api.py`` (their pool in ``lark_sdk.py``).
The SDK's request types are imported in the worker thread making the call (``open_api``: lark-oapi
loads after the start).
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import requests

from clarigate.agent.bounded import BoundedDict
from clarigate.gateway.boundary.errors import AttachmentTooLarge
from clarigate.gateway.runtime.logs import log_platform_call
from clarigate.gateway.runtime.metrics import PLATFORM_API_ERRORS

from .names import ScopeMissing
from .open_api import (
    SCOPE_MISSING_CODE,
    TOKEN_REJECTED_CODES,
    FeishuApiError,
    OpenApiClient,
    parse_answer,
)
from .render import card_json

if TYPE_CHECKING:
    import lark_oapi as lark

log = logging.getLogger(__name__)

#: CardKit: the card's operations did not carry a strictly growing ``sequence``.
SEQUENCE_CONFLICT_CODE = 300317
#: CardKit: text streams only while ``streaming_mode`` is on: closed (300309), timed out (200850).
STREAMING_CLOSED_CODES = {300309, 200850}
#: Recalling a message that is already gone: recalled (230011), unknown (230001).
MESSAGE_GONE_CODES = {230011, 230001}
#: CardKit sequences are positive int32s.
INT32_MAX = 2**31 - 1
#: How far a card's sequence jumps after Feishu refused one as not growing (another replica's clock
#: ahead of ours): milliseconds.
SEQUENCE_JUMP = 60_000


def entity_content(card_id: str) -> str:
    """The ``content`` of an interactive message showing the card entity ``card_id``."""
    return json.dumps({"type": "card", "data": {"card_id": card_id}})


class CardSequences:
    """The ``sequence`` of each card entity's next operation: strictly growing, as CardKit demands.

    Derived from the time: milliseconds since the card was made (an entity lives 14 days,
    int32 milliseconds 24), so another replica continuing a card after a hand-over picks a
    larger one with nothing but the card's creation time; in this process also larger than the
    last one given. A refusal as not growing (clocks apart) makes the card's sequence jump.
    """

    def __init__(self, limit: int = 2000) -> None:
        self._last: BoundedDict[str, int] = BoundedDict(limit, refresh=True)
        self._lock = threading.Lock()  # taken in the worker threads that make the calls

    def next(self, card_id: str, created_ms: int) -> int:
        """The sequence for the next operation on ``card_id`` (made at ``created_ms``, epoch ms)."""
        derived = int(time.time() * 1000) - created_ms + 1
        with self._lock:
            sequence = min(max(self._last.get(card_id, 0) + 1, derived, 1), INT32_MAX)
            self._last[card_id] = sequence
        return sequence

    def jump(self, card_id: str) -> None:
        """After a sequence refused as not growing: the next one is ``SEQUENCE_JUMP`` further."""
        with self._lock:
            self._last[card_id] = min(self._last.get(card_id, 0) + SEQUENCE_JUMP, INT32_MAX - 1)


class FeishuSender(OpenApiClient):
    """The open API calls the adapter makes: messages (post, reply, update, recall), who am I,
    files, and CardKit's streaming cards. One keep-alive connection pool for all of them."""

    def __init__(
        self,
        client: lark.Client | Callable[[], lark.Client],
        session: requests.Session | None = None,
    ) -> None:
        super().__init__(client, session)
        self.sequences = CardSequences()
        self.resource_scope_told = False  # "grant im:resource" is logged once

    async def post_message(
        self, chat_id: str, content: str, key: str | None = None, msg_type: str = "interactive"
    ) -> str:
        """Post an interactive message (a card's JSON, or ``entity_content``; ``msg_type`` "text":
        ``{"text": …}``); returns its id.

        ``key`` is Feishu's ``uuid``: one message per key within an hour, so a send repeated
        (after a crash, from another replica) is not shown twice. A fresh one when not given.
        """
        body = {
            "receive_id": chat_id,
            "msg_type": msg_type,
            "content": content,
            "uuid": key or str(uuid.uuid4()),
        }
        data = await self.call(
            "POST",
            "/open-apis/im/v1/messages",
            body,
            queries=[("receive_id_type", "chat_id")],
        )
        return str(data.get("message_id") or "")

    async def reply_message(
        self,
        message_id: str,
        content: str,
        in_thread: bool,
        key: str | None = None,
        msg_type: str = "interactive",
    ) -> str:
        """Reply with a message (``content``, ``msg_type`` as in ``post_message``); returns its id."""
        body = {
            "msg_type": msg_type,
            "content": content,
            "reply_in_thread": in_thread,
            "uuid": key or str(uuid.uuid4()),
        }
        data = await self.call("POST", f"/open-apis/im/v1/messages/{message_id}/reply", body)
        return str(data.get("message_id") or "")

    async def update_card(self, message_id: str, card: dict[str, Any]) -> None:
        """Replace the card of a message the bot sent."""
        body = {"content": card_json(card)}
        await self.call("PATCH", f"/open-apis/im/v1/messages/{message_id}", body)

    async def delete_message(self, message_id: str) -> None:
        """Recall a message the bot sent; one already gone counts as recalled."""
        try:
            await self.call("DELETE", f"/open-apis/im/v1/messages/{quote(message_id, safe='')}", None)
        except FeishuApiError as exc:
            if exc.feishu_code not in MESSAGE_GONE_CODES:
                raise

    # --- CardKit: card entities, streamed text ---------------------------------------------------

    async def create_card_entity(self, card: dict[str, Any]) -> str:
        """Make a card entity from card JSON 2.0 (``POST /cardkit/v1/cards``); returns its card_id."""
        content = card_json(card)

        def send() -> Any:
            from lark_oapi.api.cardkit.v1.model import CreateCardRequest, CreateCardRequestBody

            body = CreateCardRequestBody.builder().type("card_json").data(content).build()
            return self.client.cardkit.v1.card.create(CreateCardRequest.builder().request_body(body).build())

        data = await self._call("POST /open-apis/cardkit/v1/cards", send)
        card_id = str(data.get("card_id") or "")
        if not card_id:
            raise FeishuApiError(
                "POST /open-apis/cardkit/v1/cards: no card_id in the answer", permanent=False
            )
        return card_id

    async def stream_text(self, card_id: str, created_ms: int, element_id: str, content: str) -> None:
        """Set a text element's whole content; Feishu types out what was added to the old text."""

        def send(sequence: int) -> Any:
            from lark_oapi.api.cardkit.v1.model import (
                ContentCardElementRequest,
                ContentCardElementRequestBody,
            )

            body = ContentCardElementRequestBody.builder().content(content).sequence(sequence).build()
            request = (
                ContentCardElementRequest.builder()
                .card_id(card_id)
                .element_id(element_id)
                .request_body(body)
                .build()
            )
            return self.client.cardkit.v1.card_element.content(request)

        label = f"PUT /open-apis/cardkit/v1/cards/{card_id}/elements/{element_id}/content"
        await self._in_sequence(label, card_id, created_ms, send)

    async def card_settings(self, card_id: str, created_ms: int, config: dict[str, Any]) -> None:
        """Change a card entity's ``config`` (e.g. ``{"streaming_mode": False}``)."""

        def send(sequence: int) -> Any:
            from lark_oapi.api.cardkit.v1.model import SettingsCardRequest, SettingsCardRequestBody

            settings = json.dumps({"config": config})
            body = SettingsCardRequestBody.builder().settings(settings).sequence(sequence).build()
            request = SettingsCardRequest.builder().card_id(card_id).request_body(body).build()
            return self.client.cardkit.v1.card.settings(request)

        label = f"PATCH /open-apis/cardkit/v1/cards/{card_id}/settings"
        await self._in_sequence(label, card_id, created_ms, send)

    async def append_elements(
        self, card_id: str, created_ms: int, elements: list[dict[str, Any]], once: str | None = None
    ) -> None:
        """Add ``elements`` at the foot of a card entity (``POST /cardkit/v1/cards/:card_id/elements``,
        type ``append``); ``once``: its ``uuid``, so a repeated call adds them once."""

        def send(sequence: int) -> Any:
            from lark_oapi.api.cardkit.v1.model import CreateCardElementRequest, CreateCardElementRequestBody

            builder = CreateCardElementRequestBody.builder().type("append").elements(json.dumps(elements))
            if once:
                builder = builder.uuid(once)
            body = builder.sequence(sequence).build()
            request = CreateCardElementRequest.builder().card_id(card_id).request_body(body).build()
            return self.client.cardkit.v1.card_element.create(request)

        label = f"POST /open-apis/cardkit/v1/cards/{card_id}/elements"
        await self._in_sequence(label, card_id, created_ms, send)

    async def update_card_entity(self, card_id: str, created_ms: int, card: dict[str, Any]) -> None:
        """Replace a card entity's whole card (``PUT /cardkit/v1/cards/:card_id``)."""
        content = card_json(card)

        def send(sequence: int) -> Any:
            from lark_oapi.api.cardkit.v1.model import Card as CardData
            from lark_oapi.api.cardkit.v1.model import UpdateCardRequest, UpdateCardRequestBody

            data = CardData.builder().type("card_json").data(content).build()
            body = UpdateCardRequestBody.builder().card(data).sequence(sequence).build()
            request = UpdateCardRequest.builder().card_id(card_id).request_body(body).build()
            return self.client.cardkit.v1.card.update(request)

        label = f"PUT /open-apis/cardkit/v1/cards/{card_id}"
        await self._in_sequence(label, card_id, created_ms, send)

    async def close_entity(self, extra: dict[str, str], card: dict[str, Any]) -> None:
        """Best effort: the streaming mode of a card entity (``extra``: its ``card_id`` and
        ``created_ms``) off and ``card`` in its place, since an entity whose send failed may be
        shown all the same (taken, its answer lost); a failure is logged."""
        card_id, created_ms = extra["card_id"], int(extra["created_ms"])
        try:
            await self.card_settings(card_id, created_ms, {"streaming_mode": False})
            await self.update_card_entity(card_id, created_ms, card)
        except FeishuApiError as exc:
            log.warning("feishu: could not close the streaming card not sent: %s", exc.code or exc)

    async def _in_sequence(
        self,
        label: str,
        card_id: str,
        created_ms: int,
        send: Callable[[int], Any],
    ) -> None:
        """A CardKit call on one card: a new sequence each attempt, one jump after a refused one."""
        for jumped in (False, True):
            try:
                await self._call(label, lambda: send(self.sequences.next(card_id, created_ms)))
                return
            except FeishuApiError as exc:
                if exc.feishu_code != SEQUENCE_CONFLICT_CODE or jumped:
                    raise
                self.sequences.jump(card_id)

    async def bot_open_id(self) -> str | None:
        """The bot's own open_id (to tell mentions of the bot from others), None if unknown."""
        raw = await self.call(
            "GET", "/open-apis/bot/v3/info", None, whole=True, quiet=True
        )  # the caller says it
        bot = raw.get("bot")
        return str(bot["open_id"]) if isinstance(bot, dict) and bot.get("open_id") else None

    async def chat_mode(self, chat_id: str) -> str | None:
        """A chat's ``chat_mode`` ("group", "topic", "p2p": ``GET /im/v1/chats/:chat_id``); None
        when Feishu will not say (the bot not in it, no ``im:chat`` scope, …)."""
        try:
            data = await self.call("GET", f"/open-apis/im/v1/chats/{quote(chat_id, safe='')}", None)
        except FeishuApiError:
            return None
        mode = data.get("chat_mode")
        return mode if isinstance(mode, str) and mode else None

    async def user_name(self, open_id: str) -> str | None:
        """A person's name (scope ``contact:user.base:readonly``); None when Feishu will not say.

        Raises ``ScopeMissing`` when the app lacks the scope, so callers stop asking.
        """
        try:
            data = await self.call(
                "GET",
                f"/open-apis/contact/v3/users/{quote(open_id, safe='')}",
                None,
                queries=[("user_id_type", "open_id")],
            )
        except FeishuApiError as exc:
            if exc.feishu_code == SCOPE_MISSING_CODE:
                raise ScopeMissing(str(exc)) from exc
            return None  # outside the app's contact range, left the company, …
        user = data.get("user")
        name = str(user.get("name") or "").strip() if isinstance(user, dict) else ""
        return name or None

    async def fetch_resource(self, message_id: str, resource: str, key: str, max_bytes: int) -> bytes | None:
        """A file or image of a message (``GET …/messages/{id}/resources/{key}``), at most ``max_bytes``.

        None when Feishu will not give it (stickers, files in merged forwards, more than
        100 MB); ``AttachmentTooLarge`` when it is bigger than ``max_bytes``: the body is
        streamed and dropped past the cap, never held whole.
        """
        return await asyncio.to_thread(self._pooled, self._download, message_id, resource, key, max_bytes)

    def _download(self, message_id: str, resource: str, key: str, max_bytes: int) -> bytes | None:
        from lark_oapi.core.token.manager import TokenManager

        config = self.client._config
        uri = f"/open-apis/im/v1/messages/{quote(message_id, safe='')}/resources/{quote(key, safe='')}"
        for attempt in range(2):  # once more with a fresh tenant token if Feishu no longer takes ours
            token = TokenManager.get_self_tenant_token(config)
            try:
                with self.session.get(
                    config.domain + uri,
                    params={"type": resource},
                    headers={"Authorization": f"Bearer {token}"},
                    stream=True,
                    timeout=config.timeout,
                ) as response:
                    if response.status_code == 200:
                        body = _capped(response, max_bytes)
                        log_platform_call("feishu", f"GET {uri}", "ok")
                        return body
                    answer = parse_answer(response.content)
            except requests.RequestException as exc:
                PLATFORM_API_ERRORS.labels("feishu", "network").inc()
                log.warning("feishu GET %s failed: %s", uri, exc)
                return None
            code = answer.get("code")
            if code in TOKEN_REJECTED_CODES and attempt == 0:
                self.forget_token()
                continue
            self._refused(uri, response.status_code, answer)
            return None
        return None

    def _refused(self, uri: str, status: int, answer: dict[str, Any]) -> None:
        """Count and log a download Feishu refused; once, the scope to grant when it is missing."""
        code = answer.get("code")
        PLATFORM_API_ERRORS.labels("feishu", "server_error" if status >= 500 else "client_error").inc()
        log_platform_call("feishu", f"GET {uri}", f"refused: HTTP {status} code {code}")
        log.warning("feishu GET %s refused: HTTP %s code %s msg %r", uri, status, code, answer.get("msg"))
        if code == SCOPE_MISSING_CODE and not self.resource_scope_told:
            self.resource_scope_told = True
            log.warning("feishu: grant im:resource to let the agent see the photos and files people send")


def _capped(response: requests.Response, max_bytes: int) -> bytes:
    """The body of ``response``; ``AttachmentTooLarge`` as soon as it is known to be over ``max_bytes``."""
    declared = response.headers.get("Content-Length")
    size = int(declared) if declared is not None and declared.isdigit() else None
    body = bytearray()
    if size is None or size <= max_bytes:
        for chunk in response.iter_content(64 * 1024):
            body.extend(chunk)
            if len(body) > max_bytes:
                break
        else:
            return bytes(body)
    log_platform_call("feishu", f"GET {response.url}", "over the size cap")
    raise AttachmentTooLarge(size)
