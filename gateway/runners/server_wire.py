"""What a LangGraph server's wire carries, as the server runner reads and writes it: thread
messages as LangChain messages, streamed parts as run events, a human message's content."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from clarigate.agent.events import RunEvent
from clarigate.agent.harness import ImageInput
from clarigate.agent.run_events import progress_line, step_events, text_delta


def messages_of(values: Any) -> list[Any]:
    """The LangChain messages in a thread state's ``values`` (the server sends them as dicts)."""
    from langchain_core.messages import convert_to_messages

    raw = values.get("messages", []) if isinstance(values, Mapping) else []
    return list(convert_to_messages([_message_dict(m) for m in raw if isinstance(m, Mapping)]))


def _message_dict(message: Mapping[str, Any]) -> dict[str, Any]:
    """Only the fields a message class takes (the server adds ``invalid_tool_calls`` and the like
    to every AI message; kept as they are, they would land in ``additional_kwargs``)."""
    keep = {"type", "content", "id", "name", "additional_kwargs", "tool_calls", "tool_call_id", "artifact"}
    return {k: v for k, v in message.items() if k in keep and v is not None}


def events_of(kind: str, data: Any) -> list[RunEvent]:
    """The run events in one part of a server's stream (``messages`` parts: text; ``updates``:
    steps; ``custom``: the graph's progress lines)."""
    if kind.startswith("messages") and isinstance(data, list | tuple) and data:
        metadata = data[1] if len(data) > 1 and isinstance(data[1], Mapping) else None
        delta = text_delta(data[0], metadata)
        return [delta] if delta is not None else []
    if kind.startswith("updates") and isinstance(data, Mapping):
        return list(step_events(data))
    if kind.startswith("custom"):
        line = progress_line(data)
        return [line] if line is not None else []
    return []


def human_content(text: str, images: Sequence[ImageInput]) -> Any:
    """The human message's content: the text, and the images as data-URL image blocks."""
    if not images:
        return text
    import base64

    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for image in images:
        data = base64.b64encode(image.data).decode("ascii")
        blocks.append({"type": "image_url", "image_url": {"url": f"data:{image.mime_type};base64,{data}"}})
    return blocks


def status_of(exc: BaseException) -> int | None:
    """The HTTP status of an SDK error (None for anything else)."""
    response = getattr(exc, "response", None)
    return getattr(response, "status_code", None)


def unavailable(exc: BaseException) -> bool:
    """True for failures that mean "try again later": network, timeout, 5xx, 429."""
    if isinstance(exc, httpx.TransportError | asyncio.TimeoutError):
        return True
    status = status_of(exc)
    return status is not None and (status >= 500 or status == 429)
