"""The fake Slack's messages (part of ``FakeSlack``): the ``chat.*`` methods, the chat stream's
included (``fake_stream.py``), refused with ``channel_not_found`` in a channel the bot is not in
(``outside``) and with ``invalid_blocks`` for blocks Block Kit would not accept; the messages as
people see them (posts with their edits and stream appends, deleted ones gone); and slash
commands' ``response_url``, which takes five posts, as Slack's hooks do.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from aiohttp import web

from .fake_slack_people import TEAM_ID
from .fake_stream import BOT_ID, STREAM_METHODS, StreamMethods, block_problems

if TYPE_CHECKING:
    from .fake_slack import ApiCall


class ChatMethods(StreamMethods):
    """``FakeSlack``'s messages (its fields: ``calls``, ``outside``, ``responses``, ``responded``,
    ``port``, ``_response_uses``, ``_last_ts``, and the stream's)."""

    calls: list[ApiCall]
    outside: set[str]
    responses: list[dict[str, Any]]
    responded: dict[str, list[str]]
    port: int
    _response_uses: dict[str, int]
    _last_ts: float

    def posted(self, index: int = -1) -> dict[str, Any]:
        """A message the bot posted: its ``chat.postMessage`` params plus the ``ts`` it got."""
        calls = [c for c in self.calls if c.method == "chat.postMessage" and c.answer.get("ok")]
        return {**calls[index].params, "ts": calls[index].answer["ts"]}

    def edits(self, ts: str | None = None) -> list[dict[str, Any]]:
        """Params of the successful ``chat.update`` calls (of message ``ts``), oldest first."""
        updates = [c.params for c in self.calls if c.method == "chat.update" and c.answer.get("ok")]
        return [p for p in updates if ts is None or p.get("ts") == ts]

    def shown(self) -> list[dict[str, Any]]:
        """The bot's messages as people see them now: posts with their edits, deleted ones gone."""
        return list(self._messages()[0].values())

    def last_shown(self) -> dict[str, Any]:
        """The message the bot posted or edited last, as people see it now."""
        messages, last = self._messages()
        return messages[last]

    def streamed(self) -> list[ApiCall]:
        """The calls of the chat stream methods, failed ones included, oldest first."""
        return [c for c in self.calls if c.method in STREAM_METHODS]

    def _messages(self) -> tuple[dict[str, dict[str, Any]], str]:
        """Each message as people see it: ``text`` (and ``blocks``); a streamed one also has
        ``streaming`` (still taking text) and ``tasks`` (its task cards by id)."""
        messages: dict[str, dict[str, Any]] = {}
        last = ""
        for call in self.calls:
            posted = call.method in ("chat.postMessage", "chat.startStream")
            ts = call.answer.get("ts") if posted else call.params.get("ts")
            if not call.answer.get("ok") or ts is None:
                continue
            if call.method == "chat.postMessage":
                messages[ts], last = {**call.params, "ts": ts}, ts
            elif call.method == "chat.startStream":
                message = {k: v for k, v in call.params.items() if k != "chunks"}
                messages[ts], last = {**message, "ts": ts, "text": "", "streaming": True, "tasks": {}}, ts
                self._stream_into(messages[ts], call.params)
            elif call.method in ("chat.appendStream", "chat.stopStream") and ts in messages:
                self._stream_into(messages[ts], call.params)
                if call.params.get("blocks"):
                    messages[ts]["blocks"] = call.params["blocks"]  # the stream's closing blocks
                messages[ts]["streaming"] = call.method == "chat.appendStream"
                last = ts
            elif call.method == "chat.update" and ts in messages:
                changed = ("text", "blocks", "metadata")
                messages[ts].update({k: call.params[k] for k in changed if k in call.params})
                messages[ts].pop("tasks", None)  # the message's content is replaced whole
                last = ts
            elif call.method == "chat.delete":
                messages.pop(ts, None)
        return messages, last

    @staticmethod
    def _stream_into(message: dict[str, Any], params: dict[str, Any]) -> None:
        message["text"] = message.get("text", "") + str(params.get("markdown_text") or "")
        for chunk in params.get("chunks") or []:
            if chunk.get("type") == "markdown_text":
                message["text"] += chunk["text"]
            elif chunk.get("type") == "task_update":
                message.setdefault("tasks", {})[chunk["id"]] = chunk

    def _new_ts(self) -> str:
        """A message ts as Slack makes them: the time it was posted, unique in the channel."""
        self._last_ts = max(time.time(), self._last_ts + 0.000001)
        return f"{self._last_ts:.6f}"

    def response_url(self, command: str) -> str:
        """A slash command's ``response_url``, served here as Slack's hooks answer it."""
        return f"http://127.0.0.1:{self.port}/commands/{TEAM_ID}/{command}/x"

    async def _response_url(self, request: web.Request) -> web.Response:
        """A POST to a response_url: ``ok``; after five uses 404 ``used_url``, as Slack's hooks do."""
        path = request.match_info["path"]
        self._response_uses[path] = self._response_uses.get(path, 0) + 1
        if self._response_uses[path] > 5:
            return web.Response(status=404, text="used_url")
        self.responses.append(await request.json())
        self.responded.setdefault(path, []).append(str(self.responses[-1].get("text")))
        return web.Response(text="ok")

    def _answer_chat(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Any ``chat.*`` method, as Slack answers it."""
        if str(params.get("channel")) in self.outside:
            return {"ok": False, "error": "channel_not_found"}  # as Slack answers for others' DMs
        if method in ("chat.postMessage", "chat.update") and "blocks" in params:
            problems = block_problems(params["blocks"])
            if problems:
                return {
                    "ok": False,
                    "error": "invalid_blocks",
                    "errors": problems,
                    "response_metadata": {"messages": [f"[ERROR] {p}" for p in problems]},
                }
        if method in STREAM_METHODS:
            return self._answer_stream(method, params)
        if method == "chat.delete":
            self.streams.pop(str(params.get("ts")), None)  # a deleted stream takes nothing more
        if method == "chat.postMessage":
            ts = self._new_ts()
            message = {"type": "message", "text": params.get("text"), "ts": ts, "bot_id": BOT_ID}
            if params.get("blocks"):
                message["blocks"] = params["blocks"]
            return {"ok": True, "channel": params.get("channel"), "ts": ts, "message": message}
        if method == "chat.update":
            return {
                "ok": True,
                "channel": params.get("channel"),
                "ts": params.get("ts"),
                "text": params.get("text"),
            }
        if method == "chat.postEphemeral":
            return {"ok": True, "message_ts": self._new_ts()}
        return {"ok": True}
