"""Who is talking, and where: what every run carries about its sender and its conversation.

The gateway gives each run one ``Speaker`` mapping under the key ``clarigate`` (``WHO_KEY``),
both in the run's ``configurable`` and in its runtime context (``Runtime.context``, for graphs
that declare a context schema), in process and on a LangGraph server alike::

    {
        "bot_id": "helpdesk",
        "agent": "support",            # the route that chose this agent ("default" without one)
        "sender": {
            "user_id": "U012AB3CD",    # the platform's id of the person
            "display_name": "Ada",     # None where the platform does not give one
            "locale": "en-US",         # their interface language, None where not known; "zh"
                                       # after a /取消: the language of the command they typed
            "may_answer": True,        # may answer the question the thread has open
        },
        "conversation": {
            "platform": "slack",
            "workspace": "T0001",      # None where the platform has none
            "chat_id": "C0123",
            "thread": "1700000000.0001",  # the platform thread or topic, None for a whole chat
            "chat_type": "channel",    # "private" | "group" | "channel", None when not known
            "answer_policy": "starter",  # who may answer questions: the starter or anyone
        },
    }

A graph's context schema takes it as one field: ``clarigate: Speaker | None = None`` in a
dataclass or a pydantic model, ``clarigate: Speaker`` in a TypedDict. A class schema (dataclass,
pydantic) gets only the fields it declares, so one that does not name ``clarigate`` still runs
(and reads it from ``config["configurable"]["clarigate"]``). Everything here is plain data, from
the platform: a display name is the person's own text (untrusted).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Literal

from typing_extensions import TypedDict

#: The key of the speaker in a run's ``configurable`` and context.
WHO_KEY = "clarigate"

ChatType = Literal["private", "group", "channel"]


class SpeakerSender(TypedDict):
    """The person whose message (or answer) this run is for."""

    user_id: str
    display_name: str | None
    locale: str | None
    may_answer: bool


class SpeakerConversation(TypedDict):
    """Where the person wrote."""

    platform: str
    workspace: str | None
    chat_id: str
    thread: str | None
    chat_type: ChatType | None
    answer_policy: str


class Speaker(TypedDict):
    """Who is talking, where, to which bot (the documented shape above)."""

    bot_id: str
    agent: str
    sender: SpeakerSender
    conversation: SpeakerConversation


def speaker_of(config: Mapping[str, Any] | None) -> Speaker | None:
    """The speaker a run's config carries (``configurable["clarigate"]``), None when it has none."""
    found = ((config or {}).get("configurable") or {}).get(WHO_KEY)
    return found if isinstance(found, Mapping) else None  # type: ignore[return-value]


def with_speaker(speaker: Speaker | None) -> dict[str, Any]:
    """``{"clarigate": speaker}`` for a run's ``configurable`` (nothing without a speaker)."""
    return {WHO_KEY: speaker} if speaker else {}


def graph_context(graph: Any, config: Mapping[str, Any]) -> dict[str, Any] | None:
    """The context of an in-process run of ``graph``: the speaker its config carries, under
    ``clarigate``, as the graph's context schema takes it (``context_for``)."""
    speaker = speaker_of(config)
    if speaker is None:
        return None
    return context_for(getattr(graph, "context_schema", None), {WHO_KEY: speaker})


def context_for(schema: Any, values: Mapping[str, Any]) -> dict[str, Any] | None:
    """The run context to give a graph whose context schema is ``schema``: ``values`` whole for
    no schema or a TypedDict (a dict passes as it is); for a dataclass or a pydantic model, which
    LangGraph builds from the dict (``Schema(**context)``, failing on a key it does not declare),
    only the keys it declares, and nothing when it needs a field none of them gives."""
    if not values:
        return None
    fields = _class_fields(schema)
    if fields is None:
        return dict(values)
    declared, required = fields
    kept = {k: v for k, v in values.items() if k in declared}
    if not kept or not required <= set(kept):
        return None
    return kept


def _class_fields(schema: Any) -> tuple[set[str], set[str]] | None:
    """(declared, required) field names of a dataclass or pydantic model; None for anything else."""
    if isinstance(schema, type) and dataclasses.is_dataclass(schema):
        fields = dataclasses.fields(schema)
        required = {
            f.name
            for f in fields
            if f.init and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING  # type: ignore[misc]
        }
        return {f.name for f in fields if f.init}, required
    model_fields = getattr(schema, "model_fields", None)
    if isinstance(schema, type) and isinstance(model_fields, Mapping):
        return set(model_fields), {n for n, f in model_fields.items() if f.is_required()}
    return None
