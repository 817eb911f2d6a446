"""A photo or file sent with the answer to an interrupt, on a LangGraph server: as in process
(``clarigate.agent.answer_attachments``), the resume's ``update`` carries it as a human message to
a graph that can be given it (the channels of its state schema, the thread's messages); else the
person is told (the note travels in the resuming run's metadata, so a joined run tells it too).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from clarigate.agent.answer_attachments import Carried, carried_to
from clarigate.agent.harness import ImageInput, TurnOutput
from clarigate.agent.protocol.models import Locale
from clarigate.gateway.runners.server_settings import graph_schemas
from clarigate.gateway.runners.server_wire import human_content, messages_of

#: The turn's metadata (never sent to the server): the answer came with photos or files.
ATTACHED_KEY = "clarigate_attached"
#: Run metadata: what the person is told when the answer's photos and files could not go with it.
NOTE_KEY = "clarigate_attachment_note"


def _human(text: str, images: Sequence[ImageInput]) -> dict[str, Any]:
    """The answer's message as a new message's is sent to the server (``human_content``)."""
    return {"type": "human", "id": str(uuid.uuid4()), "content": human_content(text, images)}


async def carried_on_server(
    client: Any,
    assistant_id: str,
    state: Mapping[str, Any],
    sent: tuple[str, Sequence[ImageInput]] | None,
    locale: Locale,
) -> Carried:
    """How the answer's photos and files (``sent``, None when it came with none) go with its
    resume on the assistant's graph, its thread's ``state`` as the server has it."""
    if sent is None:
        return Carried()
    schema = (await graph_schemas(client, assistant_id)).get("state_schema")
    channels = (schema.get("properties") if isinstance(schema, Mapping) else None) or {}
    return carried_to(list(channels), messages_of(state.get("values")), sent, _human, locale)


def noted(output: TurnOutput, meta: Mapping[str, Any] | None) -> TurnOutput:
    """``output`` with the note of its run's metadata first (``NOTE_KEY``), when there is one."""
    note = (meta or {}).get(NOTE_KEY)
    return Carried(note=note if isinstance(note, str) else None).told(output)
