"""A tool's images and files reach the model where its provider takes them.

An MCP tool can return an image (or a file) beside its text. OpenAI's Chat Completions API
takes text only in a tool message and refuses the whole request otherwise ("Image URLs are
only allowed for messages with role 'user'…"), on that turn and on every later one, since
the thread keeps the result: that would break the thread for good. For such providers the
model is sent the tool message's text with a short note, and the images and files in a
user message right after that step's results (where they are valid), so the model still
sees them; a part no message can carry to it (a link to a file, such as MCP's ``ResourceLink``)
stays in the tool message as text, its link. Bytes of no stated type (an embedded MCP blob
without ``mimeType``, which no model reads and LangChain makes no block of) reach every model as
that text too, naming the resource's URI (``untyped_blobs_as_text``). Anthropic takes images in
a tool result, and the in-process models have no provider: their results are sent as they are.
The thread itself is left as it is; every model call is shaped the same way
(``history.AnswerUnfinishedCallsMiddleware``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage, HumanMessage, ToolMessage

from clarigate.agent.models.conversation import thread_locale
from clarigate.agent.protocol import catalog
from clarigate.agent.protocol.models import Locale

if TYPE_CHECKING:
    from langchain_mcp_adapters.interceptors import MCPToolCallRequest

#: What bytes of no stated type are (RFC 2046: "arbitrary binary data").
UNTYPED = "application/octet-stream"


def keeps_tool_parts(model: BaseChatModel) -> bool:
    """True for a model whose tool results may carry images and files as they are."""
    from clarigate.agent.models.local import LocalChatModel

    if isinstance(model, LocalChatModel):
        return True
    return model._llm_type.startswith("anthropic")  # ChatAnthropic: "anthropic-chat"


def _is_text(part: Any) -> bool:
    return isinstance(part, str) or (isinstance(part, dict) and part.get("type") == "text")


def _sendable(part: Any) -> bool:
    """Whether a user message can carry ``part`` (in OpenAI's Chat Completions' shapes, which
    langchain-openai checks): an image, or a file or sound as data or an id; a link only to the web
    (a file link the model would have to fetch, such as MCP's ``ResourceLink``, is refused on every
    later turn: "OpenAI Chat Completions does not support file URLs.")."""
    from langchain_core.messages import is_data_content_block
    from langchain_core.messages.block_translators.openai import convert_to_openai_data_block

    if not isinstance(part, dict) or not is_data_content_block(part):
        return True  # already in the provider's own shape
    if "url" in part and not str(part["url"]).startswith(("https://", "http://")):
        return False
    try:
        convert_to_openai_data_block(part)
    except (ValueError, KeyError):
        return False
    return True


def _as_text(part: Any, locale: Locale) -> dict[str, str]:
    """What stands in for a part the model cannot be sent: its link (or its kind), and its type."""
    what = str(part.get("url") or part.get("type", "?"))
    if mime_type := part.get("mime_type"):
        what += f" ({mime_type})"
    return {"type": "text", "text": catalog.text("tool_part_not_shown", locale, what=what)}


def _moved_parts(message: AnyMessage) -> list[Any]:
    """The parts of a tool message a text-only tool message cannot carry."""
    if not isinstance(message, ToolMessage) or isinstance(message.content, str):
        return []
    return [part for part in message.content if not _is_text(part)]


def _text_only(message: ToolMessage, locale: Locale) -> tuple[ToolMessage, list[Any]]:
    """``message`` with its text, a part no message can carry as text, and a note if others moved;
    the parts moved."""
    kept = [part if _sendable(part) or _is_text(part) else _as_text(part, locale) for part in message.content]
    moved = [part for part in message.content if not _is_text(part) and _sendable(part)]
    note = [{"type": "text", "text": catalog.text("tool_parts_moved", locale)}] if moved else []
    return message.model_copy(update={"content": [p for p in kept if _is_text(p)] + note}), moved


def _following(parts: list[Any], locale: Locale) -> HumanMessage:
    header = {"type": "text", "text": catalog.text("tool_parts_follow", locale)}
    return HumanMessage(content=[header, *parts])


def with_tool_parts_after_results(messages: Sequence[AnyMessage]) -> list[AnyMessage]:
    """``messages`` with the images and files of tool results moved to a user message.

    Each tool message keeps its text and a note; what it returned besides text follows,
    labelled with the tool's name, in one user message after the step's run of results.
    """
    if not any(_moved_parts(m) for m in messages):  # the common case: nothing to move
        return list(messages)
    locale = thread_locale(messages)
    shaped: list[AnyMessage] = []
    waiting: list[Any] = []  # the parts moved out of the current run of results
    for message in messages:
        if _moved_parts(message) and isinstance(message, ToolMessage):
            message, moved = _text_only(message, locale)
            if moved:
                waiting += [{"type": "text", "text": f"{message.name or message.tool_call_id}:"}, *moved]
        elif waiting and not isinstance(message, ToolMessage):
            shaped.append(_following(waiting, locale))
            waiting = []
        shaped.append(message)
    if waiting:
        shaped.append(_following(waiting, locale))
    return shaped


async def untyped_blobs_as_text(
    request: MCPToolCallRequest, handler: Callable[[MCPToolCallRequest], Awaitable[Any]]
) -> Any:
    """A langchain-mcp-adapters tool interceptor: an embedded blob without ``mimeType`` in a tool's
    result becomes the note a part the model cannot be sent becomes, naming its URI (LangChain
    refuses base64 data of no type: "mime_type is required when using base64 data")."""
    from mcp.types import BlobResourceContents, CallToolResult, EmbeddedResource, TextContent

    result = await handler(request)
    if not isinstance(result, CallToolResult):
        return result
    state = getattr(request.runtime, "state", None)
    locale = thread_locale(state.get("messages", []) if isinstance(state, dict) else [])

    def shown(part: Any) -> Any:
        resource = part.resource if isinstance(part, EmbeddedResource) else None
        if not isinstance(resource, BlobResourceContents) or resource.mimeType:
            return part
        note = _as_text({"url": str(resource.uri), "mime_type": UNTYPED}, locale)
        return TextContent(type="text", text=note["text"])

    return result.model_copy(update={"content": [shown(part) for part in result.content]})
