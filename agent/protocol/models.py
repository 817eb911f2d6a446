"""Request and answer models of the clarification protocol (DeerFlow's ``human_input`` artifact).

A request carries the version DeerFlow's own middleware gives it: 1 for ``free_text`` and
``choice_with_other``, 2 for ``form`` (DeerFlow's parser refuses any other pairing).

Pure pydantic: no LangChain, no platform, no Redis. Imported by the agent, the
gateway and every adapter.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

ClarificationType = Literal[
    "missing_info",
    "ambiguous_requirement",
    "approach_choice",
    "risk_confirmation",
    "suggestion",
]
InputMode = Literal["free_text", "choice_with_other", "form"]
FieldType = Literal["text", "textarea", "number", "select", "multi_select", "checkbox", "date"]
Locale = Literal["en", "zh"]
#: Why a question was closed without an answer (``response_kind == "declined"``): the person
#: cancelled it, wrote a new message instead of answering, restarted the conversation (``/new``),
#: the agent asked a newer question on the same thread (``replaced``: one open question each), or
#: an answer to an earlier question ran first and ended the run this one held (``crossed``: an
#: approval or a graph's interrupt asked of another member while that answer waited its turn).
DeclineReason = Literal["cancelled", "superseded", "restarted", "replaced", "crossed"]

#: Limits beyond which a request degrades.
MAX_FIELDS = 16
MAX_OPTIONS = 24
MAX_STRING = 200
MAX_SERIALIZED_BYTES = 16 * 1024
#: The longest text a field's ``default`` may hold (Slack's input limit; longer ones are dropped).
MAX_DEFAULT_CHARS = 3000

#: Field names a JavaScript client cannot key its form values by (``Object.prototype``'s
#: members): DeerFlow's parser refuses a form using one, so normalization renames them.
RESERVED_FIELD_NAMES = frozenset(
    {
        "__proto__",
        "constructor",
        "prototype",
        "toString",
        "toLocaleString",
        "valueOf",
        "hasOwnProperty",
        "isPrototypeOf",
        "propertyIsEnumerable",
        "__defineGetter__",
        "__defineSetter__",
        "__lookupGetter__",
        "__lookupSetter__",
    }
)

#: A field's default, typed like an answer value: checkbox bool, number int/float, date ISO
#: string, select the option's value, multi_select a list of option values, text a string.
DefaultValue = bool | int | float | str | list[str]

#: The version of answers, and of ``form`` requests (DeerFlow's ``version: 2``).
PROTOCOL_VERSION: Literal[2] = 2
SOURCE = "ask_clarification"


class Option(BaseModel):
    """One choice: ``id`` is stable (``option-N`` or ``{field}-option-N``)."""

    model_config = ConfigDict(frozen=True)

    id: str
    label: str
    value: str


class FormField(BaseModel):
    """One form field as the renderers see it (already normalized)."""

    model_config = ConfigDict(frozen=True)

    name: str
    label: str
    type: FieldType = "text"
    required: bool = False
    placeholder: str | None = None
    options: list[Option] = Field(default_factory=list)
    #: The field's current value, shown filled in; a field left blank takes it.
    default: DefaultValue | None = None
    #: True when ``default`` is what the person gave (a form asked again) and nothing of the
    #: asker's comes back in its place when they empty it: emptying it takes effect. None otherwise.
    clearable: bool | None = None
    #: A typed interrupt's bounds of the value (its schema's ``minimum``, ``maximum``,
    #: ``exclusiveMinimum``, ``exclusiveMaximum``, ``minLength``, ``maxLength``; ``multipleOf`` 1 for
    #: an ``integer`` property: a whole number): the agent checks the answer against them; a form
    #: asked a field at a time checks each value as it is typed (``clarigate.agent.protocol.bounds``).
    #: None when there are none.
    bounds: dict[str, int | float] | None = None


class HumanInputRequest(BaseModel):
    """The structured request carried in ``ToolMessage.artifact["human_input"]``."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["human_input_request"] = "human_input_request"
    source: str = SOURCE
    request_id: str
    tool_call_id: str
    clarification_type: ClarificationType = "missing_info"
    question: str
    context: str | None = None
    input_mode: InputMode = "free_text"
    options: list[Option] = Field(default_factory=list)
    fields: list[FormField] = Field(default_factory=list)
    locale: Locale = "en"

    @computed_field  # type: ignore[prop-decorator]
    @property
    def version(self) -> Literal[1, 2]:
        """2 for a form, 1 otherwise, as DeerFlow's middleware sends them: its parser takes
        ``version: 2`` with ``input_mode: "form"`` only (follows the mode through every copy)."""
        return PROTOCOL_VERSION if self.input_mode == "form" else 1

    def to_artifact(self) -> dict[str, Any]:
        """The JSON-ready dict stored in the ToolMessage artifact (no null keys), version first."""
        data = self.model_dump(mode="json", exclude_none=True)
        return {"version": data.pop("version"), **data}

    def option_by_id(self, option_id: str) -> Option | None:
        """The top-level option with this id, if any."""
        return next((o for o in self.options if o.id == option_id), None)

    def field_by_name(self, name: str) -> FormField | None:
        """The form field with this name, if any."""
        return next((f for f in self.fields if f.name == name), None)


class AnsweredBy(BaseModel):
    """Who answered, as the platform knows them."""

    model_config = ConfigDict(frozen=True)

    platform: str
    user_id: str
    display_name: str | None = None


class HumanInputResponse(BaseModel):
    """The structured answer carried in ``HumanMessage.additional_kwargs["human_input_response"]``."""

    model_config = ConfigDict(frozen=True)

    version: Literal[2] = PROTOCOL_VERSION
    kind: Literal["human_input_response"] = "human_input_response"
    source: str = SOURCE
    request_id: str
    # "declined": the person dismissed the question (Cancel, /cancel); ``value`` says so in words
    response_kind: Literal["option", "text", "form", "declined"]
    option_id: str | None = None
    value: str
    values: dict[str, Any] | None = None
    answered_by: AnsweredBy | None = None
    reason: DeclineReason | None = None  # declined answers only: why the question was closed

    def to_payload(self) -> dict[str, Any]:
        """The JSON-ready dict stored in ``additional_kwargs`` (no null keys)."""
        return self.model_dump(mode="json", exclude_none=True)
