"""Build and check answers: option clicks, free text, typed form values, typed replies."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .catalog import ui_text
from .coerce import clean, fold, fold_capitals
from .fallback import form_summary
from .field_values import BLANK, find_option, type_field_value
from .models import AnsweredBy, DeclineReason, FormField, HumanInputRequest, HumanInputResponse, Option
from .risk import APPROVAL_SOURCE, approval_option


@dataclass(frozen=True)
class FormCheck:
    """The outcome of checking raw form values against the request's fields."""

    values: dict[str, Any] = field(default_factory=dict)  # typed values of valid fields
    errors: dict[str, str] = field(default_factory=dict)  # field name -> message (request locale)

    @property
    def ok(self) -> bool:
        """True when every required field is present and every value is valid."""
        return not self.errors


@dataclass(frozen=True)
class TypedReply:
    """The outcome of matching a typed message against a pending request."""

    response: HumanInputResponse | None = None
    problems: list[str] = field(default_factory=list)  # what is missing or invalid, in the request's locale
    #: a refused form reply's valid ``name: value`` texts (with those ``kept`` from earlier messages),
    #: field name -> text, for the caller to keep and give back as ``kept`` with the person's next reply
    kept: dict[str, str] = field(default_factory=dict)


def answer_with_option(
    request: HumanInputRequest, option_id: str, by: AnsweredBy | None
) -> HumanInputResponse:
    """The answer for a click on option ``option_id``; ``ValueError`` if it is not an option."""
    option = request.option_by_id(option_id)
    if option is None:
        raise ValueError(f"{option_id!r} is not an option of {request.request_id}")
    return HumanInputResponse(
        source=request.source,
        request_id=request.request_id,
        response_kind="option",
        option_id=option.id,
        value=option.label,
        answered_by=by,
    )


def answer_with_text(request: HumanInputRequest, text: str, by: AnsweredBy | None) -> HumanInputResponse:
    """A free-text answer."""
    return HumanInputResponse(
        source=request.source,
        request_id=request.request_id,
        response_kind="text",
        value=clean(text),
        answered_by=by,
    )


def answer_declined(
    request: HumanInputRequest, by: AnsweredBy | None, reason: DeclineReason = "cancelled"
) -> HumanInputResponse:
    """The answer that closes ``request`` unanswered: the person cancelled it (a Cancel button,
    ``/cancel``), wrote a new message instead, or restarted the conversation.

    ``value`` says so in the request's language; the text the agent reads is built by
    ``answer_message_text``.
    """
    return HumanInputResponse(
        source=request.source,
        request_id=request.request_id,
        response_kind="declined",
        value=ui_text("declined_value", request.locale),
        answered_by=by,
        reason=reason,
    )


def looks_like_answer(request: HumanInputRequest, text: str) -> bool:
    """True when a typed message is plausibly meant as the answer to ``request``.

    The rule (README, "Talking to the bot"): a free-text question takes any text; a question
    with options takes an option's number or label; a form takes ``name: value`` lines naming
    its fields (a one-field form also its bare value, when it fits the field). Anything else
    is a new message: it closes the question as superseded and runs as a request, so a new
    request is never silently taken as an answer.
    """
    message = clean(text) if isinstance(text, str) else ""
    if request.input_mode == "form" and request.fields:
        if _form_lines(request, message):
            return True
        if _takes_bare_value(request) and message:
            _, error = type_field_value(request.fields[0], message, request.locale)
            return error is None
        return False
    if request.input_mode == "choice_with_other" and request.options:
        return _option_named(request, message) is not None
    return True


def check_form_values(request: HumanInputRequest, raw: Mapping[str, Any]) -> FormCheck:
    """Type raw values (strings, lists, bools) by field and enforce required fields.

    A given ``False`` or ``0`` is an answer, so a required checkbox left unticked passes. A
    field left out of ``raw`` (left as shown, or not named in typed lines) takes its ``default``
    (the value it showed), so a required field with a default counts as given. A field given
    blank (the person emptied it: ``""``, ``None``, ``[]``) has no value, whatever it showed: a
    required one is refused, and an optional one with a default is ``None`` in the values, so
    that it stays empty when they are checked again (the answer leaves it out).
    """
    raw = raw if isinstance(raw, Mapping) else {}
    values: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for form_field in request.fields:
        given = _raw_value(raw, form_field.name)
        if given is _LEFT_OUT and form_field.default is not None:
            values[form_field.name] = form_field.default
            continue
        value, error = type_field_value(form_field, None if given is _LEFT_OUT else given, request.locale)
        if error is not None:
            errors[form_field.name] = error
        elif value is not BLANK:
            values[form_field.name] = value
        elif form_field.required:
            errors[form_field.name] = ui_text("err_required", request.locale)
        elif form_field.default is not None:
            values[form_field.name] = None  # emptied: not its default
    return FormCheck(values=values, errors=errors)


#: A field ``raw`` does not name (unlike one it names with a blank value).
_LEFT_OUT: Any = object()


def _raw_value(raw: Mapping[str, Any], name: str) -> Any:
    """The raw value for field ``name`` (``_LEFT_OUT`` when there is none); keys are matched
    case-insensitively as a courtesy."""
    if name in raw:
        return raw[name]
    key = name.casefold()
    return next((value for k, value in raw.items() if isinstance(k, str) and k.casefold() == key), _LEFT_OUT)


def answer_with_form(
    request: HumanInputRequest, values: Mapping[str, Any], by: AnsweredBy | None
) -> HumanInputResponse:
    """The answer for checked (typed) form values; ``ValueError`` if they do not pass the check.

    The values are checked again (checking typed values changes nothing), so an answer
    with a missing required field or a wrong type can never be built. A field the person emptied
    (``None`` in checked values) is left out of the answer.
    """
    check = check_form_values(request, values)
    if not check.ok:
        raise ValueError(f"form values for {request.request_id} are not valid: {check.errors}")
    given = {name: value for name, value in check.values.items() if value is not None}  # emptied: out
    return HumanInputResponse(
        source=request.source,
        request_id=request.request_id,
        response_kind="form",
        value=form_summary(request, given),
        values=given,
        answered_by=by,
    )


def parse_typed_reply(
    request: HumanInputRequest, text: str, by: AnsweredBy | None, kept: Mapping[str, Any] | None = None
) -> TypedReply:
    """Match a typed message against the request.

    For a form, ``kept`` holds what the same person gave in earlier replies that were refused
    (``TypedReply.kept``): the message's lines are read on top of it (a field given again takes
    the new value), so a form can be filled over several messages.
    """
    message = clean(text) if isinstance(text, str) else ""
    try:
        if request.input_mode == "form" and request.fields:
            return _form_reply(request, message, by, _known_fields(request, kept))
        if not message:
            return TypedReply(problems=[ui_text("type_answer", request.locale)])
        if request.input_mode == "choice_with_other" and request.options:
            option = _option_named(request, message)
            if option is not None:
                return TypedReply(response=answer_with_option(request, option.id, by))
        return TypedReply(response=answer_with_text(request, message, by))
    except Exception:  # a reply must never break the gateway; ask again instead
        return TypedReply(
            problems=[ui_text("reply_form" if request.fields else "type_answer", request.locale)]
        )


def _option_named(request: HumanInputRequest, message: str) -> Option | None:
    """The option ``message`` names (``find_option``), or the approval's option it names in
    another language (``approval_option``: "批准" picks an English approval's Approve)."""
    return find_option(request.options, message) or approval_option(request, message)


def _form_reply(
    request: HumanInputRequest, message: str, by: AnsweredBy | None, kept: dict[str, str]
) -> TypedReply:
    raw = _form_lines(request, message)
    if not raw and _takes_bare_value(request) and message:
        raw = {request.fields[0].name: message}  # a one-field form takes the bare value
    if not raw and not kept:
        required = [f for f in request.fields if f.required]
        problems = [_problem(request, f, ui_text("err_required", request.locale)) for f in required]
        return TypedReply(problems=problems or [ui_text("reply_form", request.locale)])
    merged = {**kept, **raw}  # a field given again takes the new value
    check = check_form_values(request, merged)
    if not check.ok:
        return TypedReply(
            problems=[
                _problem(request, f, check.errors[f.name]) for f in request.fields if f.name in check.errors
            ],
            kept={name: text for name, text in merged.items() if name not in check.errors},
        )
    return TypedReply(response=answer_with_form(request, check.values, by))


def _takes_bare_value(request: HumanInputRequest) -> bool:
    """Whether a message that names no field is the form's one value: for a question's form of one
    field, not for an approval's Edit form, whose field shows the call's argument: a message
    written in the chat ("ok", a new question) is no new argument for a tool that then runs
    with it; the argument changes through the form or a ``name: value`` line only."""
    return len(request.fields) == 1 and request.source != APPROVAL_SOURCE


def _known_fields(request: HumanInputRequest, kept: Mapping[str, Any] | None) -> dict[str, str]:
    """The texts of ``kept`` that name one of the request's fields (anything else is dropped)."""
    if not isinstance(kept, Mapping):
        return {}
    return {f.name: kept[f.name] for f in request.fields if isinstance(kept.get(f.name), str)}


def _problem(request: HumanInputRequest, form_field: FormField, error: str) -> str:
    separator = "：" if request.locale == "zh" else ": "
    return f"{form_field.label}{separator}{error}"


_COLON = re.compile("[:：]")
_LIST_MARK = re.compile(r"^(?:[-*•]|\d+[.)、])\s*")
_FIELD_NOTE = re.compile(r"\s*\((?:required|optional|必填|选填)\)$")


def _form_lines(request: HumanInputRequest, message: str) -> dict[str, str]:
    """``{field name: text}`` from ``name: value`` lines; other lines continue the previous value."""
    found: dict[str, list[str]] = {}
    current: str | None = None
    for line in message.splitlines():
        named = named_line(request, line)
        if named is not None:
            current = named[0].name
            found[current] = [named[1].strip()]
        elif current is not None and line.strip():
            found[current].append(line.strip())
    return {name: "\n".join(lines).strip() for name, lines in found.items()}


def named_line(request: HumanInputRequest, line: str) -> tuple[FormField, str] | None:
    """(field, value) when the line starts with a field's name or label and a colon (``name:
    demo``, ``Project name: demo``, ``项目名称：演示``); None for any other line."""
    # Try each colon in turn: a label may hold one itself ("Time (HH:MM): 10:30").
    for colon in _COLON.finditer(line):
        form_field = _field_for_key(request, line[: colon.start()])
        if form_field is not None:
            return form_field, line[colon.end() :]
    return None


def _field_for_key(request: HumanInputRequest, key: str) -> FormField | None:
    """The field a typed key names: its name first (exactly, then loosely), then its label; then
    loosely again as capitals, so Turkish capitals name it too."""
    exact = fold(key).strip("`*")
    for form_field in request.fields:
        if exact == fold(form_field.name):
            return form_field
    for folded in (fold, fold_capitals):  # then as capitals: "SICAKLIK" for "sıcaklık"
        loose = _loose_key(key, folded)
        if not loose:
            return None
        for form_field in request.fields:
            if loose == _loose_key(form_field.name, folded):
                return form_field
        for form_field in request.fields:
            if loose == _loose_key(form_field.label, folded):
                return form_field
    return None


def _loose_key(text: str, folded: Callable[[str], str] = fold) -> str:
    """A key people can type: no list marks, "(required)" notes, underscores or dashes."""
    key = folded(unicodedata.normalize("NFKC", text)).strip("`* ")
    key = _FIELD_NOTE.sub("", _LIST_MARK.sub("", key))
    return " ".join(key.replace("_", " ").replace("-", " ").split())
