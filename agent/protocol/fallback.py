"""The plain-text rendering of a request and the text of an answer."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .catalog import icon, joined, labelled, ui_text
from .graphemes import shorten
from .models import FormField, HumanInputRequest, HumanInputResponse, Locale


def render_text_fallback(request: HumanInputRequest) -> str:
    """The text fallback every client can show."""
    mark = icon(request.clarification_type)
    if request.context:
        lines = [f"{mark} {request.context}", "", request.question]
    else:
        lines = [f"{mark} {request.question}"]
    locale = request.locale
    if request.input_mode == "form" and request.fields:
        lines.append("")
        lines += [f"  {n}. {_field_line(field, locale)}" for n, field in enumerate(request.fields, start=1)]
        lines += ["", ui_text("reply_form", locale)]
    elif request.input_mode == "choice_with_other" and request.options:
        lines.append("")
        lines += [f"  {n}. {option.label}" for n, option in enumerate(request.options, start=1)]
        lines += ["", ui_text("reply_choice", locale)]
    else:
        lines += ["", ui_text("type_answer", locale)]
    return "\n".join(lines)


def shown_as_text(request: HumanInputRequest, fallback_text: str) -> str:
    """``fallback_text`` for a platform that cannot show ``request`` natively (too many options or
    fields for its widgets), opened by a line saying so."""
    return f"{ui_text('shown_as_text', request.locale)}\n\n{fallback_text}"


def _field_line(field: FormField, locale: Locale) -> str:
    """``Label (required) — options: a / b (multiple allowed) (current: a)`` and the like for one
    field; a field with a current value keeps it unless a reply names the field."""
    line = field.label + (ui_text("field_required", locale) if field.required else "")
    if field.type in ("select", "multi_select") and field.options:
        line += ui_text("field_options", locale, choices=" / ".join(o.label for o in field.options))
        if field.type == "multi_select":
            line += ui_text("field_multiple", locale)
    elif field.type == "checkbox":
        line += ui_text("field_yes_no", locale)
    elif field.type == "number":
        line += ui_text("field_number", locale)
    elif field.type == "date":
        line += ui_text("field_date", locale)
    if field.default is not None:
        line += ui_text("field_current", locale, value=current_text(field, locale))
    return line


def current_text(field: FormField, locale: Locale, limit: int = 200) -> str:
    """A field's default as a person reads it (yes/no, option labels), cut to ``limit`` (never
    inside a character as shown: ``graphemes``)."""
    text = _shown_value(field, field.default, locale)
    return shorten(text, limit)


def answer_message_text(
    request: HumanInputRequest, response: HumanInputResponse, locale: Locale | None = None
) -> str:
    """The HumanMessage text: ``For your clarification "…", my answer is: …``, in the question's
    language, or in ``locale``: the person's, when they spoke another (``/取消`` of an English
    question).

    A form's answer adds its typed values as JSON keyed by field name, so a number stays a
    number, a multi-select a list and a checkbox a bool, whatever the values contain (a
    ``;`` or ``,`` inside one is not ambiguous there). A declined question says so (the model goes
    on without it, or asks again only if it truly cannot).
    """
    locale = locale or request.locale
    if response.response_kind == "declined":
        return ui_text("declined_text", locale, question=request.question)
    text = ui_text(
        "answer_text", locale, question=request.question, answer=summarize_answer(request, response)
    )
    if response.response_kind == "form" and response.values is not None:
        values = json.dumps(response.values, ensure_ascii=False, sort_keys=False)
        text += "\n" + ui_text("answer_values", locale, values=values)
    return text


def summarize_answer(request: HumanInputRequest, response: HumanInputResponse) -> str:
    """A short human summary of the answer ("Vue", or "Label: value; …" for forms)."""
    if response.response_kind == "form" and response.values is not None:
        return form_summary(request, response.values)
    return response.value


def closed_line(request: HumanInputRequest, response: HumanInputResponse, who: str) -> str:
    """The line a question's message shows once closed, for everyone.

    ``✅ Answered by {who}: {answer}``; for a declined answer, by its reason: ``✖ Cancelled by
    {who}``, ``✖ Closed: {who} sent a new message instead``, ``✖ Closed: {who} started a new
    conversation``. Adapters that show ``who`` their own way (a mention) call this with it.
    """
    if response.response_kind == "declined":
        return ui_text(f"closed_{response.reason or 'cancelled'}", request.locale, who=who)
    return ui_text("answered_by", request.locale, who=who, answer=summarize_answer(request, response))


def form_summary(request: HumanInputRequest, values: Mapping[str, Any]) -> str:
    """``Label: value; …`` for the filled fields, in the request's field order and locale."""
    locale = request.locale
    parts = [
        labelled(field.label, _shown_value(field, values[field.name], locale), locale)
        for field in request.fields
        if field.name in values
    ]
    return joined(parts, locale, "item_sep") if parts else ui_text("answer_empty", locale)


def _shown_value(field: FormField, value: Any, locale: Locale) -> str:
    """A typed value as a person reads it: yes/no, option labels, lists joined with ", " (``，``)."""
    if isinstance(value, bool):
        return ui_text("answer_yes" if value else "answer_no", locale)
    if isinstance(value, (list, tuple)):
        return joined((_shown_value(field, item, locale) for item in value), locale)
    label_of = {option.value: option.label for option in field.options}
    return label_of.get(value, str(value)) if isinstance(value, str) else str(value)
