"""A typed interrupt (``interrupt(value, response_schema=…)``) asked as a form, answered in the
schema's types, and asked again when the answer does not fit.

The schema is read as form fields (``clarigate.agent.schema_forms``): every renderer shows the form
natively (a Slack modal, a Feishu card form, the Telegram wizard, ``name: value`` lines in text).
The answer's typed form values become the resume value with the schema's own keys and types
(``clarigate.agent.schema_values``): an integer an ``int``, a number a ``float``, a date an ISO
string, an enum the enum's value, an array of enums a list. An answer that breaks the schema
(a bound, a length, a whole number) is never resumed: the form is asked again with the fields as
the person filled them and what was wrong. The same happens when the graph itself rejects the
answer (``is_invalid_resume`` in process, a run ending in a validation error on a server), except
a declined one (Cancel, ``/cancel``): the question stays closed, as every dismissed question.
A declined answer (a Cancel, a new message instead) resumes the interrupt only when the schema
takes its payload (``schema_takes``: checked as an answer to the form is) and can say it was
declined (``carries_decline``: it names ``response_kind`` or ``reason``, or takes other keys, as
a hand-written JSON Schema dict with no ``title`` does unless it says not);
else the question is closed without resuming it (``Dismissed``), and a new message runs over it.

A schema a form cannot ask (nested objects, arrays of free values, unions, more fields or
choices than a form holds) is asked as text, with a line saying so and an example of the JSON
expected (``clarigate.agent.schema_examples``: nested models in their shape, a choice's values
listed); the reply is parsed as JSON, a bare value taken for a schema of one field. Asked again,
the first problem keeps its room before the example, which shortens.

The graph's question and context (the schema's description when it gives none) longer than a
request holds are shown in full right above it (``typed_asked``, ``clarigate.agent.shown_above``),
as an untyped interrupt's are, again each time the form is asked again; the form keeps its
fields, and the lines of ours (what was wrong, how to answer as text) stay in its context: what was
wrong gives way first, its problems past the room counted (``Problems``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from clarigate.agent.interrupt_kinds import INTERRUPT, AskAgain, Asked, Dismissed, as_kind
from clarigate.agent.protocol import HumanInputRequest, HumanInputResponse, catalog, detect_locale
from clarigate.agent.protocol.bounds import bounds_of
from clarigate.agent.protocol.coerce import cut, scalar_text
from clarigate.agent.protocol.models import MAX_STRING, Locale
from clarigate.agent.protocol.normalize import normalize_with_omissions
from clarigate.agent.schema_examples import bare_value, example
from clarigate.agent.schema_forms import NotAForm, SchemaForm, schema_form
from clarigate.agent.schema_values import field_spec, fits, form_values, schema_values
from clarigate.agent.shown_above import fit_question

#: What a pydantic ``ValidationError`` says per problem: the location line, then the message.
VALIDATION_HEAD = re.compile(r"^\d+ validation errors? for ")
_VALIDATION_TYPE = re.compile(r"\s*\[type=.*$")
#: The room what was wrong keeps before an example of the JSON expected (``_fitted``) shortens.
_REASON = MAX_STRING * 2 // 5


def _question(value: Any, locale: Locale) -> dict[str, Any]:
    """The question and context the interrupt's value gives; a value with no text (``None``,
    ``""``) asks that the agent waits for a reply."""
    if isinstance(value, Mapping) and isinstance(value.get("question"), str):
        args = {k: value[k] for k in ("question", "context", "clarification_type") if k in value}
    elif isinstance(value, str) or value in (None, {}, []):
        args = {"question": value or ""}
    else:
        args = {"question": scalar_text(value) or json.dumps(value, ensure_ascii=False, default=str)}
    if not args["question"].strip():
        args["question"] = catalog.text("interrupt_without_text", locale)
    return args


def _joined(*parts: str | None) -> str | None:
    return "\n".join(p for p in parts if p) or None


@dataclass(frozen=True)
class Problems:
    """What was wrong with an answer, one entry per problem (``Label: message``), as the form asked
    again says it: joined, in the words of the catalog's ``key`` when given ("The answer was not
    accepted: …"), within the room its context leaves them (``within``)."""

    entries: tuple[str, ...]
    locale: Locale
    key: str | None = None

    def within(self, room: int) -> str:
        """As many entries as fit in ``room`` characters, the rest counted ("…and 3 more"); when not
        even one fits whole, the first one cut to what is left; nothing when there is no room."""
        total = len(self.entries)
        for shown in range(total, 0, -1):
            text = self._said(self.entries[:shown], total - shown)
            if len(text) <= room:
                return text
        spare = room - len(self._said(("",), total - 1)) if total else 0
        if spare > 1:
            return self._said((cut(self.entries[0], spare),), total - 1)
        return cut(self._said(self.entries, 0), room) if room > 1 else ""

    def _said(self, entries: tuple[str, ...], more: int) -> str:
        counted = [catalog.text("typed_more", self.locale, count=more)] if more else []
        joined = catalog.text("item_sep", self.locale).join([*entries, *counted])
        return catalog.text(self.key, self.locale, problems=joined) if self.key else joined


def _fitted(
    args: Mapping[str, Any],
    context: str | None,
    problem: str | Problems | None,
    note: str | Callable[[int], str] | None,
    above: bool,
) -> tuple[dict[str, Any], str | None]:
    """``args`` with the graph's question and ``context`` fitted in what a request holds
    (``shown_above.fit_question``) beside the lines of ours (``problem`` first, ``note`` last),
    and what does not fit, in full, to show right above the question (None when it all fits).
    The problems give way first: they are cut to the room the context and the note leave them (a
    note saying how to answer, a line saying the question is shown in full above, always stay);
    a note given as a function of its room (an example that shortens) gives way to the first
    problem, so what was wrong is always said."""
    full = note(MAX_STRING) if callable(note) else note
    said = problem.within(MAX_STRING) if isinstance(problem, Problems) else problem
    room = MAX_STRING - sum(len(line) + 1 for line in (said, full) if line)
    question, context, in_full = fit_question(args["question"], context or "", above, room)
    if callable(note) and problem:
        first = problem.within(_REASON) if isinstance(problem, Problems) else cut(problem, _REASON)
        full = note(MAX_STRING - sum(len(line) + 1 for line in (first, context) if line))
    left = MAX_STRING - sum(len(line) + 1 for line in (context, full) if line)
    if isinstance(problem, Problems):
        said = problem.within(left)
    elif said and len(said) > left:
        said = cut(said, left) if left > 1 else None
    return {**args, "question": question, "context": _joined(said, context, full)}, in_full


def typed_asked(
    interrupt_id: str,
    value: Any,
    schema: Mapping[str, Any],
    locale: Locale,
    shown: Mapping[str, Any] | None = None,
    problem: str | Problems | None = None,
    above: bool = True,
) -> Asked:
    """The form for interrupt ``interrupt_id`` (its text fallback when a form cannot ask it), and
    (``above``) what it cannot hold of the graph's text, in full, to show right above it.

    ``shown`` fills the fields with what the person gave (the form asked again, ``problem``
    saying why): a field it leaves out (emptied) is empty, not its default."""
    args = _question(value, locale)
    locale = "zh" if detect_locale(f"{args['question']} {args.get('context') or ''}") == "zh" else locale
    try:
        form = schema_form(schema)
        fields = [field_spec(f, locale, shown) for f in form.fields]
        fitted, in_full = _fitted(args, args.get("context") or form.description, problem, None, above)
        request, omitted = normalize_with_omissions({**fitted, "fields": fields}, interrupt_id)
        _check_fit(form, request, omitted, locale)
        request = _bounded(form, _clearable(form, request) if shown is not None else request)
    except NotAForm as unfit:
        fitted, in_full = _fitted(args, args.get("context"), problem, _as_text(schema, unfit, locale), above)
        request, _ = normalize_with_omissions(fitted, interrupt_id)
    return Asked(as_kind(request, INTERRUPT, interrupt_id, INTERRUPT, locale), in_full)


def typed_request(
    interrupt_id: str,
    value: Any,
    schema: Mapping[str, Any],
    locale: Locale,
    shown: Mapping[str, Any] | None = None,
    problem: str | Problems | None = None,
) -> HumanInputRequest:
    """``typed_asked``'s request alone, for a question shown with nothing above it: what fits."""
    return typed_asked(interrupt_id, value, schema, locale, shown, problem, above=False).request


def _clearable(form: SchemaForm, request: HumanInputRequest) -> HumanInputRequest:
    """The form asked again: a field showing what the person gave where the schema has no default
    may be emptied (left out of the answer, it stays empty: no default of the graph's comes back)."""
    free = {f.name for f in form.fields if f.spec.get("default") is None}
    fields = [
        f.model_copy(update={"clearable": True}) if f.name in free and f.default is not None else f
        for f in request.fields
    ]
    return request.model_copy(update={"fields": fields})


def _bounded(form: SchemaForm, request: HumanInputRequest) -> HumanInputRequest:
    """Each field with its schema's bounds (a number's range, whole for an integer, a text's
    length), for a form asked a field at a time to check each value as it is typed (the answer is
    checked whole here)."""
    fields = [
        made.model_copy(update={"bounds": bounds_of(field.spec, whole=field.kind == "integer")})
        if field.kind in ("string", "integer", "number")
        else made
        for made, field in zip(request.fields, form.fields, strict=True)
    ]
    return request.model_copy(update={"fields": fields})


def _check_fit(form: SchemaForm, request: HumanInputRequest, omitted: list[str], locale: Locale) -> None:
    """``NotAForm`` when the protocol's limits left part of the schema's form out."""
    if request.input_mode != "form" or omitted or len(request.fields) != len(form.fields):
        raise NotAForm(catalog.text("typed_too_big", locale))
    for made, field in zip(request.fields, form.fields, strict=True):
        if made.name != field.name or len(made.options) != len(field.choices):
            raise NotAForm(f"`{field.key}`")


def _as_text(schema: Mapping[str, Any], unfit: NotAForm, locale: Locale) -> Callable[[int], str]:
    """The line saying the schema is asked as text, with an example of the JSON expected
    (``schema_examples.example``), within the room it is given: the example shortens first."""

    def line(room: int) -> str:
        bare = catalog.text("typed_as_text", locale, what=unfit.what, example="")
        return catalog.text(
            "typed_as_text", locale, what=unfit.what, example=example(schema, locale, room - len(bare))
        )

    return line


def schema_takes(schema: Mapping[str, Any], value: Any) -> bool:
    """True when ``schema`` takes ``value``, checked as a person's answer to its form is
    (``schema_values.fits``); False for a schema beyond a form, which nothing here checks: it is
    never resumed with a value it may refuse."""
    try:
        return fits(schema_form(schema), value)
    except NotAForm:
        return False


#: The keys of a declined payload that tell a graph the person declined (and why).
_DECLINE_KEYS = frozenset({"response_kind", "reason"})


def carries_decline(schema: Mapping[str, Any]) -> bool:
    """True when a value ``schema`` resumes with still says it was declined: the schema names
    ``response_kind`` or ``reason``, or takes keys it does not name (``additionalProperties: true``,
    a Pydantic model's ``extra="allow"``; a hand-written JSON Schema dict not refusing them, which
    LangGraph passes through as it is). A schema LangGraph made from a Pydantic model (a
    ``TypedDict``, a dataclass) has a ``title``: LangGraph rebuilds the model without the keys it
    does not name, and a model defaulting every field would come back as if the person had chosen
    its defaults. Only the JSON Schema reaches here, in process as from a server, so the ``title``
    tells the two apart."""
    try:
        form = schema_form(schema)
    except NotAForm:
        return False
    others = schema.get("additionalProperties")
    hand_written = "title" not in schema and others is not False
    return others is True or hand_written or any(f.key in _DECLINE_KEYS for f in form.fields)


def typed_resume(
    interrupt_id: str, value: Any, schema: Mapping[str, Any], response: HumanInputResponse, locale: Locale
) -> Any | AskAgain | Dismissed:
    """What ``Command(resume=...)`` carries for ``response``, the form asked again, or ``Dismissed``.

    A declined answer (Cancel, a new message) resumes with the declined answer's payload, as an
    untyped interrupt in the protocol's shape would, when the schema takes it (``schema_takes``)
    and what it resumes with still says it was declined (``carries_decline``); else the
    interrupt is not resumed and the question is closed (``Dismissed``): a decision the person
    did not make (a model's defaults) never takes effect.
    One the graph itself rejects (a Pydantic validator) is never asked again either
    (``resume_checked``; on a server, ``asked_again``)."""
    if response.response_kind == "declined":
        payload = response.to_payload()
        taken = carries_decline(schema) and schema_takes(schema, payload)
        return payload if taken else Dismissed()
    try:
        form = schema_form(schema)
    except NotAForm:
        return _json_answer(interrupt_id, value, schema, response, locale)
    asked = typed_request(interrupt_id, value, schema, locale)
    if asked.input_mode != "form":
        return _json_answer(interrupt_id, value, schema, response, locale)
    if response.response_kind != "form" or response.values is None:
        problem = catalog.text("reply_form", asked.locale)
        return _again(typed_asked(interrupt_id, value, schema, locale, problem=problem))
    # a multi-select with a default the person emptied is left out of the answer (its default
    # would come back): nothing chosen is what they saw, an empty list the value
    emptied: dict[str, Any] = {
        f.name: [] for f in asked.fields if f.type == "multi_select" and f.default is not None
    }
    resumed, errors = schema_values(form, {**emptied, **response.values}, asked.locale)
    if errors:
        labels = {f.name: f.label for f in asked.fields}
        wrong = _problems([(labels.get(name, name), error) for name, error in errors.items()], asked.locale)
        return _again(typed_asked(interrupt_id, value, schema, locale, response.values, wrong))
    return resumed


def _again(asked: Asked) -> AskAgain:
    return AskAgain(asked.request, asked.in_full)


def _json_answer(
    interrupt_id: str, value: Any, schema: Mapping[str, Any], response: HumanInputResponse, locale: Locale
) -> Any | AskAgain:
    """A text answer to a schema asked as text: the JSON it holds, or the question asked again."""
    try:
        parsed = json.loads(response.value)
    except ValueError as error:
        taken, bare = bare_value(schema, response.value)
        if taken:  # a schema of one field answered with its value alone
            return bare
        problem = catalog.text("typed_bad_json", locale, error=catalog.json_error(error, locale))
        return _again(typed_asked(interrupt_id, value, schema, locale, problem=problem))
    if not isinstance(parsed, Mapping) and isinstance(schema.get("properties"), Mapping):
        taken, bare = bare_value(schema, response.value)
        return bare if taken else parsed
    return parsed


def rejected_asked(
    interrupt_id: str, value: Any, schema: Mapping[str, Any], resumed: Any, error: str, locale: Locale
) -> Asked:
    """The form asked again after the graph rejected ``resumed`` with ``error`` (a pydantic
    ``ValidationError``'s text): filled in as the person filled it, each problem named; what it
    cannot hold of the graph's text in full, to show right above it again (``typed_asked``)."""
    try:
        form: SchemaForm | None = schema_form(schema)
    except NotAForm:
        form = None
    labels: dict[str, str] = {}
    shown = None
    if form is not None:
        shown = form_values(form, resumed)
        made = typed_request(interrupt_id, value, schema, locale)
        labels = {f.key: m.label for f, m in zip(form.fields, made.fields, strict=False)}
    problems = [(labels.get(where, where), message) for where, message in validation_problems(error)]
    problem = _problems(problems, locale, "typed_rejected")
    return typed_asked(interrupt_id, value, schema, locale, shown, problem)


def validation_problems(error: str) -> list[tuple[str, str]]:
    """``(where, message)`` for each problem a pydantic ``ValidationError``'s text names (where:
    the first key of its location, ``""`` for the value itself); the first line of any other text."""
    lines = [line for line in error.splitlines() if line.strip()]
    if not lines or not VALIDATION_HEAD.match(lines[0]):
        return [("", lines[0].strip() if lines else error)]
    problems: list[tuple[str, str]] = []
    where: str | None = None
    for line in lines[1:]:
        text = line.strip()
        if not line.startswith(" "):
            where = text.split(".")[0]
        elif not text.startswith("For further information"):
            problems.append((where or "", _VALIDATION_TYPE.sub("", text)))
            where = None
    return problems or [("", lines[0])]


def _problems(problems: list[tuple[str, str]], locale: Locale, key: str | None = None) -> Problems:
    separator = "：" if locale == "zh" else ": "
    entries = tuple(f"{label}{separator}{message}" if label else message for label, message in problems)
    return Problems(entries, locale, key)
