"""A small Bot API server on 127.0.0.1 for tests: records calls, answers like Telegram.

Point PTB at it with ``base_url=f"{server.url}/bot"`` (PTB appends the token).
Calls are form-encoded; ``reply_markup`` arrives as a JSON string and is decoded
here so tests can read keyboards. Every call is recorded with the time it arrived
(``Call.at``, monotonic seconds) so tests can assert the spacing of live updates.
``fail_next`` scripts 429 / 500 / 400 answers; ``fail_always`` makes a method fail
until ``recover``.

It is strict the way Telegram is (the descriptions are Telegram's own): HTML that does
not parse, empty text (also empty once its tags are parsed out: ``<blockquote></blockquote>``)
or over-long text, callback data over 64 bytes, a keyboard of more than 100 buttons, an edit to
a message that does not exist (deleted: ``delete``) or to exactly what it shows, a deletion of a
message that is gone, a callback query answered twice or too late, a chat that blocked or
removed the bot (403), a group upgraded to a supergroup (400 with ``migrate_to_chat_id``), an
unknown ``file_id``, a draft (``sendMessageDraft``) outside a private chat, a message or file
sent to a channel's direct messages chat (``direct_messages``, Bot API 9.2) naming none of its
topics (``direct_messages_topic_id`` is "required if the message is sent to a direct messages
chat"; the refusal's wording is ours, Telegram's own is not documented).

Ephemeral messages (Bot API 10.2): with ``ephemeral`` on, ``sendMessage`` with
``receiver_user_id`` shows the message to that member only (``ephemeral_notes``) and answers it
with an ``ephemeral_message_id``; ``deleteEphemeralMessage`` of one that does not exist is a 400.
With it off (the default: the Bot API 10.0 PTB speaks), the ephemeral methods are unknown (404
"Not Found", as Telegram answers any unknown method) and ``receiver_user_id`` is ignored, as
Telegram ignores parameters it does not know: the message is posted for everyone.

Drafts are kept as Telegram's apps show them: a draft is replaced by the next one with
its ``draft_id``, dropped when the bot's next message in that chat (and topic) arrives,
and gone ``DRAFT_TTL`` seconds after its last update (``visible_drafts``).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

from aiohttp import web

from .fake_bot_files import FILE_METHODS, SentFile, send_file

BOT_USER = {"id": 4242, "is_bot": True, "first_name": "Clari", "username": "clari_bot"}

NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup are "
    "exactly the same as a current content and reply markup of the message"
)
QUERY_TOO_OLD = "Bad Request: query is too old and response timeout expired or query ID is invalid"
# sendMessageDraft's chat_id is "the target private chat"; a group or channel is refused with
# the MTProto error Telegram passes on for it
DRAFT_PEER_INVALID = "Bad Request: TEXTDRAFT_PEER_INVALID"
#: a send to a direct messages chat without ``direct_messages_topic_id`` (wording ours: see above)
DM_TOPIC_MISSING = "Bad Request: direct messages topic must be specified"
#: Bot API 10.2's methods for ephemeral messages (unknown to an older server).
EPHEMERAL_METHODS = {
    "deleteEphemeralMessage", "editEphemeralMessageText", "editEphemeralMessageCaption",
    "editEphemeralMessageMedia", "editEphemeralMessageReplyMarkup",
}  # fmt: skip
DRAFT_TTL = 30.0  # "the streamed draft is ephemeral and acts as a temporary 30-second preview"
# The tags Telegram's HTML parse mode accepts (https://core.telegram.org/bots/api#html-style).
HTML_TAGS = {
    "b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "span", "tg-spoiler", "a", "tg-emoji",
    "code", "pre", "blockquote",
}  # fmt: skip


class ApiError(Exception):
    """An error answer: HTTP status, Telegram's description, optional ``parameters``."""

    def __init__(self, status: int, description: str, parameters: dict[str, Any] | None = None) -> None:
        super().__init__(description)
        self.status = status
        self.description = description
        self.parameters = parameters


class _HtmlCheck(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.problem: str | None = None
        self.shown: list[str] = []  # the text the message shows, its entities parsed out

    def handle_data(self, data: str) -> None:
        self.shown.append(data)

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag not in HTML_TAGS:
            self.problem = self.problem or f'unsupported start tag "{tag}"'
        self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.open or self.open[-1] != tag:
            self.problem = self.problem or f'can\'t find end tag corresponding to start tag "{tag}"'
        else:
            self.open.pop()


def check_html(text: str) -> str:
    """Raise Telegram's "can't parse entities" for HTML it would refuse; else the text it shows."""
    parser = _HtmlCheck()
    parser.feed(text)
    parser.close()
    if parser.open and not parser.problem:
        parser.problem = f'can\'t find end tag corresponding to start tag "{parser.open[-1]}"'
    if parser.problem:
        raise ApiError(400, f"Bad Request: can't parse entities: {parser.problem}")
    return "".join(parser.shown)


@dataclass
class Call:
    """One Bot API call the server received."""

    method: str
    params: dict[str, Any]
    result: Any = None  # what the server answered (the sent message, for sendMessage)
    at: float = field(default_factory=time.monotonic)  # when it arrived

    @property
    def markup(self) -> dict[str, Any] | None:
        """The decoded ``reply_markup``, if any."""
        raw = self.params.get("reply_markup")
        return json.loads(raw) if raw else None

    @property
    def buttons(self) -> list[list[dict[str, Any]]]:
        """The inline keyboard rows (empty when there is none)."""
        return (self.markup or {}).get("inline_keyboard", [])


@dataclass
class FakeBotApi:
    """The server's state: calls, queued updates for ``getUpdates``, scripted failures."""

    token: str = "123456:TEST-token"
    calls: list[Call] = field(default_factory=list)
    updates: list[dict[str, Any]] = field(default_factory=list)
    failures: dict[str, list[tuple[int, dict[str, Any]]]] = field(default_factory=dict)
    url: str = ""
    # what each chat shows: (chat_id, message_id) -> (text, raw reply_markup)
    messages: dict[tuple[int, int], tuple[str, str]] = field(default_factory=dict)
    answered_queries: set[str] = field(default_factory=set)
    expired_queries: set[str] = field(default_factory=set)
    blocked: dict[int, str] = field(default_factory=dict)  # chat id -> the 403 description
    migrated: dict[int, int] = field(default_factory=dict)  # old group id -> supergroup id
    files: dict[str, bytes] = field(default_factory=dict)  # file_id -> content
    # drafts shown: (chat_id, message_thread_id or 0, draft_id) -> (text, monotonic time of the update)
    drafts: dict[tuple[int, int, int], tuple[str, float]] = field(default_factory=dict)
    failing: dict[str, tuple[int, dict[str, Any]]] = field(default_factory=dict)  # see fail_always
    sent_files: list[SentFile] = field(default_factory=list)  # photos and documents (fake_bot_files)
    ephemeral: bool = False  # a Bot API 10.2 server (see the module's docstring)
    # ephemeral messages shown: (chat_id, receiver user id) -> {ephemeral_message_id: text}
    ephemeral_notes: dict[tuple[int, int], dict[int, str]] = field(default_factory=dict)
    direct_messages: set[int] = field(default_factory=set)  # channels' direct messages chats
    _ids: itertools.count = field(default_factory=lambda: itertools.count(1000))
    _numbering: dict[int, itertools.count] = field(default_factory=dict)  # see ``numbered_from``
    _runner: web.AppRunner | None = None
    _new_update: asyncio.Event = field(default_factory=asyncio.Event)

    def block(self, chat_id: int, description: str = "Forbidden: bot was blocked by the user") -> None:
        """Every later call for ``chat_id`` answers 403 (blocked by the user, kicked from a group)."""
        self.blocked[chat_id] = description

    def migrate(self, old_chat_id: int, new_chat_id: int) -> None:
        """The group ``old_chat_id`` was upgraded: calls for it answer 400 with ``migrate_to_chat_id``."""
        self.migrated[old_chat_id] = new_chat_id

    def numbered_from(self, chat_id: int, first: int) -> None:
        """The bot's next message in ``chat_id`` is numbered ``first``, and its later ones count on
        from there: a supergroup numbers its own messages (a basic group shares the bot's sequence)."""
        self._numbering[chat_id] = itertools.count(first)

    def next_id(self, chat_id: int) -> int:
        """The number of the next message posted in ``chat_id``."""
        return next(self._numbering.get(chat_id, self._ids))

    def delete(self, chat_id: int, message_id: int) -> None:
        """Someone deleted a message: editing it answers "message to edit not found"."""
        self.messages.pop((chat_id, message_id), None)

    def visible_to(self, chat_id: int, user_id: int) -> list[str]:
        """The texts ``user_id`` sees in ``chat_id``: every message, and their own ephemeral ones."""
        shown = [text for (chat, _), (text, _) in sorted(self.messages.items()) if chat == chat_id]
        return shown + list(self.ephemeral_notes.get((chat_id, user_id), {}).values())

    def add_file(self, file_id: str, content: bytes) -> None:
        """A file ``getFile`` can serve."""
        self.files[file_id] = content

    async def start(self) -> None:
        """Listen on a free loopback port."""
        app = web.Application()
        app.router.add_post("/bot{token}/{method}", self._handle)
        app.router.add_get("/file/bot{token}/{path:.+}", self._download)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        """Close the server."""
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def base_url(self) -> str:
        """What to give PTB as ``base_url`` / ``TELEGRAM_API_URL``."""
        return f"{self.url}/bot"

    def fail_next(
        self, method: str, status: int, times: int = 1, retry_after: int = 1, description: str = ""
    ) -> None:
        """Answer the next ``times`` calls of ``method`` with an error like Telegram's."""
        body: dict[str, Any] = {
            "ok": False,
            "error_code": status,
            "description": description or f"error {status}",
        }
        if status == 429:
            body["parameters"] = {"retry_after": retry_after}
            body["description"] = f"Too Many Requests: retry after {retry_after}"
        self.failures.setdefault(method, []).extend([(status, body)] * times)

    def drop_next(self, method: str, times: int = 1) -> None:
        """Close the connection of the next ``times`` calls of ``method`` without an answer (a
        reset on the way: the call may or may not have been taken)."""
        self.failures.setdefault(method, []).extend([(0, {})] * times)

    def fail_always(self, method: str, status: int, retry_after: int = 1, description: str = "") -> None:
        """Answer every call of ``method`` with this error until ``recover(method)``."""
        self.fail_next(method, status, 1, retry_after, description)
        self.failing[method] = self.failures[method].pop()

    def recover(self, method: str) -> None:
        """``method`` answers normally again."""
        self.failing.pop(method, None)

    def visible_drafts(self, chat_id: int) -> list[str]:
        """The drafts the person sees in ``chat_id`` now (not replaced by a message, not expired)."""
        now = time.monotonic()
        return [
            text
            for (chat, _, _), (text, at) in self.drafts.items()
            if chat == chat_id and now - at < DRAFT_TTL
        ]

    def shown(self, chat_id: int, message_id: int) -> str | None:
        """The text message ``message_id`` shows now (None once it was deleted)."""
        found = self.messages.get((chat_id, message_id))
        return found[0] if found is not None else None

    def queue_update(self, update: dict[str, Any]) -> None:
        """Serve ``update`` to the next ``getUpdates``."""
        self.updates.append(update)
        self._new_update.set()

    def of(self, method: str) -> list[Call]:
        """Calls of one method, oldest first."""
        return [c for c in self.calls if c.method == method]

    async def _handle(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        if request.match_info["token"] != self.token:
            return web.json_response(
                {"ok": False, "error_code": 401, "description": "Unauthorized"}, status=401
            )
        form = await request.post()
        params: dict[str, Any] = {k: v for k, v in form.items()}
        self.calls.append(Call(method, params))
        scripted = self.failures.get(method)
        if scripted:
            status, body = scripted.pop(0)
            if status == 0 and request.transport is not None:  # ``drop_next``: no answer at all
                request.transport.close()
            return web.json_response(body, status=status or 200)
        if method in self.failing:
            status, body = self.failing[method]
            return web.json_response(body, status=status)
        if method == "getUpdates":
            return await self._get_updates(params)
        if method in EPHEMERAL_METHODS and not self.ephemeral:
            return web.json_response({"ok": False, "error_code": 404, "description": "Not Found"}, status=404)
        try:
            result = self.calls[-1].result = self._result(method, params)
        except ApiError as exc:
            body = {"ok": False, "error_code": exc.status, "description": exc.description}
            if exc.parameters:
                body["parameters"] = exc.parameters
            return web.json_response(body, status=exc.status)
        return web.json_response({"ok": True, "result": result})

    async def _download(self, request: web.Request) -> web.Response:
        if request.match_info["token"] != self.token:
            return web.Response(status=401)
        content = self.files.get(request.match_info["path"].removeprefix("files/"))
        return web.Response(body=content) if content is not None else web.Response(status=404)

    def _check_chat(self, params: dict[str, Any]) -> int:
        chat_id = int(params["chat_id"])
        if chat_id in self.migrated:
            raise ApiError(
                400,
                "Bad Request: group chat was upgraded to a supergroup chat",
                {"migrate_to_chat_id": self.migrated[chat_id]},
            )
        if chat_id in self.blocked:
            raise ApiError(403, self.blocked[chat_id])
        return chat_id

    def check_send(self, params: dict[str, Any]) -> int:
        """``_check_chat`` for a message or file sent: one to a direct messages chat names its topic."""
        chat_id = self._check_chat(params)
        if chat_id in self.direct_messages and not params.get("direct_messages_topic_id"):
            raise ApiError(400, DM_TOPIC_MISSING)
        return chat_id

    @staticmethod
    def _check_text(params: dict[str, Any], may_be_empty: bool = False) -> str:
        text = str(params.get("text", ""))
        shown = check_html(text) if params.get("parse_mode") == "HTML" else text
        if not shown.strip() and not may_be_empty:  # empty once its entities are parsed out
            raise ApiError(400, "Bad Request: message text is empty")
        if len(text) > 4096:  # Telegram counts the text after entity parsing; close enough here
            raise ApiError(400, "Bad Request: message is too long")
        FakeBotApi._check_markup(params)
        return text

    @staticmethod
    def _check_markup(params: dict[str, Any]) -> None:
        """An inline keyboard as Telegram takes it: at most 100 buttons, callback data of 1-64 bytes."""
        rows = json.loads(params.get("reply_markup") or "{}").get("inline_keyboard", [])
        if sum(len(row) for row in rows) > 100:
            raise ApiError(400, "Bad Request: reply markup is too long")
        for row in rows:
            for button in row:
                data = button.get("callback_data")
                if data is not None and not 1 <= len(data.encode()) <= 64:
                    raise ApiError(400, "Bad Request: BUTTON_DATA_INVALID")

    def _result(self, method: str, params: dict[str, Any]) -> Any:
        if method == "getMe":
            return BOT_USER
        if method == "sendMessage" and self.ephemeral and params.get("receiver_user_id"):
            return self._ephemeral(params)
        if method == "deleteEphemeralMessage":
            chat_id, receiver = self._check_chat(params), int(params["receiver_user_id"])
            notes = self.ephemeral_notes.get((chat_id, receiver), {})
            if notes.pop(int(params["ephemeral_message_id"]), None) is None:
                raise ApiError(400, "Bad Request: message to delete not found")
            return True
        if method == "editMessageReplyMarkup":
            chat_id = self._check_chat(params)
            self._check_markup(params)
            key = (chat_id, int(params["message_id"]))
            if key not in self.messages:
                raise ApiError(400, "Bad Request: message to edit not found")
            text, markup = self.messages[key]
            if markup == (params.get("reply_markup") or ""):
                raise ApiError(400, NOT_MODIFIED)
            self.messages[key] = (text, params.get("reply_markup") or "")
            return self._message(chat_id, key[1], text, params)
        if method == "sendMessage":
            chat_id = self.check_send(params)
            text = self._check_text(params)
            message_id = self.next_id(chat_id)
            self.messages[(chat_id, message_id)] = (text, params.get("reply_markup") or "")
            # the person's app drops the drafts of this chat and topic when the bot's message arrives
            thread = int(params.get("message_thread_id", 0) or 0)
            for key in [k for k in self.drafts if k[:2] == (chat_id, thread)]:
                del self.drafts[key]
            return self._message(chat_id, message_id, text, params)
        if method == "sendMessageDraft":
            return self._draft(params)
        if method in FILE_METHODS:
            return send_file(self, method, params)
        if method == "deleteMessage":
            chat_id = self._check_chat(params)
            if self.messages.pop((chat_id, int(params["message_id"])), None) is None:
                raise ApiError(400, "Bad Request: message to delete not found")
            return True
        if method == "editMessageText":
            chat_id = self._check_chat(params)
            text = self._check_text(params)
            key = (chat_id, int(params["message_id"]))
            if key not in self.messages:
                raise ApiError(400, "Bad Request: message to edit not found")
            shown = (text, params.get("reply_markup") or "")
            if self.messages[key] == shown:
                raise ApiError(400, NOT_MODIFIED)
            self.messages[key] = shown
            return self._message(chat_id, key[1], text, params)
        if method == "answerCallbackQuery":
            query = str(params["callback_query_id"])
            if query in self.answered_queries or query in self.expired_queries:
                raise ApiError(400, QUERY_TOO_OLD)
            if len(str(params.get("text", ""))) > 200:
                raise ApiError(400, "Bad Request: MESSAGE_TOO_LONG")
            self.answered_queries.add(query)
            return True
        if method == "sendChatAction":
            self._check_chat(params)
            return True
        if method == "setMyCommands":
            for command in json.loads(params["commands"]):
                name, description = command.get("command", ""), command.get("description", "")
                if not (1 <= len(name) <= 32 and name.isascii() and name.replace("_", "").isalnum()):
                    raise ApiError(400, "Bad Request: BOT_COMMAND_INVALID")
                if name.lower() != name or not 1 <= len(description) <= 256:
                    raise ApiError(400, "Bad Request: BOT_COMMAND_INVALID")
            return True
        if method == "getFile":
            file_id = str(params["file_id"])
            if file_id not in self.files:
                raise ApiError(400, "Bad Request: invalid file_id")
            return {
                "file_id": file_id,
                "file_unique_id": f"u-{file_id}",
                "file_size": len(self.files[file_id]),
                "file_path": f"files/{file_id}",
            }
        return True

    def _draft(self, params: dict[str, Any]) -> bool:
        """``sendMessageDraft``: a private chat only, a non-zero ``draft_id``, 0-4096 characters
        (an empty text shows Telegram's "Thinking…" placeholder)."""
        chat_id = self._check_chat(params)
        if chat_id < 0:  # groups, supergroups and channels have negative ids
            raise ApiError(400, DRAFT_PEER_INVALID)
        draft_id = int(params.get("draft_id", 0) or 0)
        if draft_id == 0:
            raise ApiError(400, "Bad Request: draft_id must be non-zero")  # the docs' rule; wording ours
        text = self._check_text(params, may_be_empty=True)
        thread = int(params.get("message_thread_id", 0) or 0)
        self.drafts[(chat_id, thread, draft_id)] = (text, time.monotonic())
        return True

    def _ephemeral(self, params: dict[str, Any]) -> dict[str, Any]:
        """``sendMessage`` to one member (Bot API 10.2): kept apart from what the chat shows."""
        chat_id, receiver = self._check_chat(params), int(params["receiver_user_id"])
        text = self._check_text(params)
        ephemeral_id = next(self._ids)
        self.ephemeral_notes.setdefault((chat_id, receiver), {})[ephemeral_id] = text
        message = self._message(chat_id, 0, text, params)
        del message["message_id"]
        message.update(ephemeral_message_id=ephemeral_id, receiver_user={"id": receiver, "is_bot": False})
        return message

    @staticmethod
    def _message(chat_id: int, message_id: int, text: str, params: dict[str, Any]) -> dict[str, Any]:
        kind = "private" if chat_id > 0 else "supergroup" if str(chat_id).startswith("-100") else "group"
        message: dict[str, Any] = {
            "message_id": message_id,
            "date": int(time.time()),
            "chat": {"id": chat_id, "type": kind},
            "from": BOT_USER,
            "text": text,
        }
        if "message_thread_id" in params:  # a forum's topic, or a private chat's (threaded mode)
            message["message_thread_id"] = int(params["message_thread_id"])
            message["is_topic_message"] = True
        if "direct_messages_topic_id" in params:  # a topic of a channel's direct messages chat
            message["direct_messages_topic"] = {"topic_id": int(params["direct_messages_topic_id"])}
        return message

    async def _get_updates(self, params: dict[str, Any]) -> web.Response:
        offset = int(params.get("offset", 0) or 0)
        timeout = float(params.get("timeout", 0) or 0)
        deadline = time.monotonic() + min(timeout, 2.0)
        while True:
            ready = [u for u in self.updates if u["update_id"] >= offset]
            # Like Telegram: asking with an offset confirms (drops) every earlier update.
            self.updates = ready
            if ready or time.monotonic() >= deadline:
                return web.json_response({"ok": True, "result": ready[:100]})
            self._new_update.clear()
            try:
                await asyncio.wait_for(
                    self._new_update.wait(), timeout=max(0.01, deadline - time.monotonic())
                )
            except TimeoutError:
                pass
