"""The fake Slack's ``assistant.threads.*`` methods, answered as Slack documents them.

``setStatus`` (``channel_id``, ``thread_ts``, ``status`` required; ten ``loading_messages`` at
most; an empty status clears it), ``setSuggestedPrompts`` (``channel_id`` and one to four
``prompts`` of ``title`` and ``message``; in an agent app a call naming ``thread_ts`` answers ok
and sets nothing, as Slack's reference warns) and ``setTitle`` (``channel_id``, ``thread_ts``,
``title``). Missing arguments answer ``invalid_arguments``, a ts that is not one
``invalid_thread_ts``, prompts and titles outside a DM ``channel_not_found``.

A status is shown until it is cleared, until the app posts a message in its thread (a
``chat.postMessage`` or ``chat.startStream`` there), or until ``status_timeout`` passes without
one: Slack's "two minute timeout applies, which will cause the status to be removed if no message
has been sent" (tests make it short rather than wait).
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import Any

ASSISTANT_METHODS = {
    "assistant.threads.setStatus",
    "assistant.threads.setSuggestedPrompts",
    "assistant.threads.setTitle",
}
MAX_LOADING_MESSAGES = 10
MAX_PROMPTS = 4
STATUS_TIMEOUT = 120.0  # seconds: Slack's two minute timeout
POSTING_METHODS = {"chat.postMessage", "chat.startStream"}  # the app sends a message
_TS = re.compile(r"^\d+\.\d+$")
REQUIRED = {
    "assistant.threads.setStatus": ("channel_id", "thread_ts", "status"),
    "assistant.threads.setSuggestedPrompts": ("channel_id", "prompts"),
    "assistant.threads.setTitle": ("channel_id", "thread_ts", "title"),
}


def invalid(*messages: str) -> dict[str, Any]:
    """Slack's ``invalid_arguments`` answer."""
    return {"ok": False, "error": "invalid_arguments", "response_metadata": {"messages": list(messages)}}


@dataclass
class AgentThreads:
    """What the agent container shows: each thread's status and title, each DM's prompts."""

    agent_app: bool = True  # the app declares agent_view (False: the legacy assistant_view)
    statuses: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # shown now
    status_calls: list[tuple[str, str, str]] = field(default_factory=list)  # (channel, thread, status)
    prompts: dict[str, dict[str, Any]] = field(default_factory=dict)  # DM channel -> title, prompts
    titles: dict[tuple[str, str], str] = field(default_factory=dict)
    status_timeout: float = STATUS_TIMEOUT  # a status not renewed is removed after this
    expired: list[tuple[str, str]] = field(default_factory=list)  # statuses Slack's timeout removed
    _timers: dict[tuple[str, str], asyncio.TimerHandle] = field(default_factory=dict)

    def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Answer one ``assistant.threads.*`` call."""
        missing = [name for name in REQUIRED[method] if params.get(name) in (None, "") and name != "status"]
        if method == "assistant.threads.setStatus" and not isinstance(params.get("status"), str):
            missing.append("status")
        if missing:
            return invalid(*(f"[ERROR] missing required field: {name}" for name in missing))
        channel, thread = str(params["channel_id"]), params.get("thread_ts")
        if thread is not None and not _TS.match(str(thread)):
            return {"ok": False, "error": "invalid_thread_ts"}
        if method == "assistant.threads.setStatus":
            return self._status(channel, str(thread), params)
        if not channel.startswith("D"):
            return {"ok": False, "error": "channel_not_found"}
        if method == "assistant.threads.setTitle":
            self.titles[(channel, str(thread))] = str(params["title"])
            return {"ok": True}
        return self._prompts(channel, thread, params)

    def _status(self, channel: str, thread: str, params: dict[str, Any]) -> dict[str, Any]:
        loading = params.get("loading_messages")
        if loading is not None:
            if not isinstance(loading, list) or not all(isinstance(m, str) and m for m in loading):
                return invalid("[ERROR] loading_messages must be an array of strings")
            if len(loading) > MAX_LOADING_MESSAGES:
                return invalid(f"[ERROR] no more than {MAX_LOADING_MESSAGES} items allowed")
        status = str(params["status"])
        self.status_calls.append((channel, thread, status))
        key = (channel, thread)
        self._drop(key)
        if status:
            self.statuses[key] = {"status": status, "loading_messages": loading or []}
            loop = asyncio.get_running_loop()
            self._timers[key] = loop.call_later(self.status_timeout, self._expire, key)
        return {"ok": True}

    def message_sent(self, method: str, params: dict[str, Any]) -> None:
        """A successful Web API call: a message the app sends in a thread removes its status."""
        thread = params.get("thread_ts")
        if method in POSTING_METHODS and thread:
            self._drop((str(params.get("channel")), str(thread)))

    def _drop(self, key: tuple[str, str]) -> None:
        self.statuses.pop(key, None)
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()

    def _expire(self, key: tuple[str, str]) -> None:
        self._timers.pop(key, None)
        if self.statuses.pop(key, None) is not None:
            self.expired.append(key)

    def _prompts(self, channel: str, thread: Any, params: dict[str, Any]) -> dict[str, Any]:
        prompts = params["prompts"]
        if not isinstance(prompts, list) or not 1 <= len(prompts) <= MAX_PROMPTS:
            return invalid(f"[ERROR] prompts must hold 1 to {MAX_PROMPTS} items")
        for prompt in prompts:
            if not isinstance(prompt, dict) or not all(
                isinstance(prompt.get(key), str) and prompt[key] for key in ("title", "message")
            ):
                return invalid("[ERROR] each prompt needs a title and a message")
        if thread is not None and self.agent_app:
            return {"ok": True}  # Slack's documented silent failure: nothing is shown
        self.prompts[channel] = {"title": params.get("title"), "prompts": prompts}
        return {"ok": True}
