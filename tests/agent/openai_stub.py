"""A local OpenAI-compatible chat completions server that plays scripted replies and, like
the real API, refuses (400) a history in which a tool call has no result or a result
answers no call, or a message other than the user's carries an image (a tool message takes
text parts only). Usage is reported on every reply, as the real API does."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

MODEL = "gpt-4.1-mini"


@dataclass
class Call:
    """One tool call of a scripted reply; ``raw`` arguments are sent as they are (broken JSON too)."""

    name: str
    args: dict[str, Any] | None = None
    raw: str | None = None
    id: str = ""

    def to_openai(self, index: int) -> dict[str, Any]:
        arguments = self.raw if self.raw is not None else json.dumps(self.args or {})
        return {
            "id": self.id or f"call_{index}_{self.name}",
            "type": "function",
            "function": {"name": self.name, "arguments": arguments},
        }


@dataclass
class Stop:
    """A scripted text reply that ends with ``finish_reason`` (``length``, ``content_filter``)."""

    finish_reason: str
    content: str | None = None


@dataclass
class Body:
    """A scripted reply sent as it is, with status 200 (a provider's answer the SDK takes)."""

    payload: dict[str, Any]


@dataclass
class Stub:
    """What the server plays (one reply per request, then ``done``) and what it received."""

    replies: list[str | Stop | Body | list[Call]] = field(default_factory=list)
    done: str = "Done."
    received: list[dict[str, Any]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    url: str = ""
    #: A status and JSON body answered to every request instead (the API's error shape), if set.
    failing: tuple[int, dict[str, Any]] | None = None


def _part_problems(index: int, message: dict[str, Any]) -> list[str]:
    """The API's rule on content parts: images come from the user only (its own words), and a
    tool message's parts are text (``ChatCompletionRequestToolMessageContentPart``)."""
    parts = message.get("content")
    if message["role"] == "user" or not isinstance(parts, list):
        return []
    kinds = {p.get("type") if isinstance(p, dict) else type(p).__name__ for p in parts}
    if "image_url" in kinds:
        return [
            f"Invalid 'messages[{index}]'. Image URLs are only allowed for messages with role 'user', "
            f"but this message with role '{message['role']}' contains an image URL."
        ]
    if message["role"] == "tool" and kinds - {"text"}:
        found = ", ".join(sorted(map(str, kinds)))
        return [f"Invalid 'messages[{index}]': a tool message takes text parts only, not {found}"]
    return []


#: The API's own words for a history whose tool calls and results do not pair up.
_UNANSWERED = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
    "'tool_call_id'. The following tool_call_ids did not have response messages: "
)
_ANSWERS_NO_CALL = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
    "with 'tool_calls'."
)


def history_problems(messages: list[dict[str, Any]]) -> list[str]:
    """Why the real API would refuse ``messages`` (empty when it accepts them)."""
    problems = [p for index, message in enumerate(messages) for p in _part_problems(index, message)]
    open_calls: list[str] | None = None
    for index, message in enumerate(messages):
        if message["role"] == "tool":
            if open_calls is None or message.get("tool_call_id") not in open_calls:
                problems.append(f"message {index}: {_ANSWERS_NO_CALL}")
            else:
                open_calls.remove(message["tool_call_id"])
            continue
        if open_calls:
            problems.append(f"message {index}: {_UNANSWERED}{', '.join(open_calls)}")
        open_calls = (
            [c["id"] for c in message.get("tool_calls") or []] if message["role"] == "assistant" else None
        )
    if open_calls:
        problems.append(f"the end: {_UNANSWERED}{', '.join(open_calls)}")
    return problems


def _completion(message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": 0,
        "model": MODEL,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }


def _handler(stub: Stub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            stub.received.append(body)
            if stub.failing is not None:
                self._send(*stub.failing)
                return
            problems = history_problems(body.get("messages", []))
            if problems:
                stub.refused.extend(problems)
                said = {
                    "message": "; ".join(problems),
                    "type": "invalid_request_error",
                    "param": None,
                    "code": None,
                }
                error = {"error": said}
                self._send(400, error)
                return
            reply = stub.replies.pop(0) if stub.replies else stub.done
            if isinstance(reply, Body):
                self._send(200, reply.payload)
            elif isinstance(reply, Stop):
                message = {"role": "assistant", "content": reply.content}
                self._send(200, _completion(message, reply.finish_reason))
            elif isinstance(reply, str):
                self._send(200, _completion({"role": "assistant", "content": reply}, "stop"))
            else:
                calls = [c.to_openai(i) for i, c in enumerate(reply)]
                self._send(
                    200,
                    _completion({"role": "assistant", "content": None, "tool_calls": calls}, "tool_calls"),
                )

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


def serve(stub: Stub) -> tuple[ThreadingHTTPServer, threading.Thread]:
    """Serve ``stub`` on a free loopback port (``stub.url``) from a daemon thread."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(stub))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    stub.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    return server, thread


@contextmanager
def serving(stub: Stub, monkeypatch: pytest.MonkeyPatch) -> Iterator[Stub]:
    """Serve ``stub`` on a free loopback port and point the OpenAI client at it."""
    server, thread = serve(stub)
    monkeypatch.setenv("OPENAI_BASE_URL", stub.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    try:
        yield stub
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
