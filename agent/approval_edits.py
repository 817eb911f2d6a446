"""Edit, for an approval that allows it: a form of the reviewed calls' arguments.

Each field is filled in with the argument's current value (a checkbox ticked when true, a number,
a date, JSON text for lists and objects); only a field whose value differs from the one it showed
is an edit, so a field left as shown (or blank) keeps the argument's value and type. A field is
labelled by its argument (``tool.argument`` when the approval reviews several calls, ``tool #2 ·
argument`` for the second of two calls of one tool).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from clarigate.agent.approvals import Action, cut_line, decisions_for
from clarigate.agent.interrupt_kinds import APPROVAL, APPROVAL_EDIT, AskAgain, as_kind
from clarigate.agent.protocol import HumanInputRequest, catalog, normalize_request
from clarigate.agent.protocol.models import Locale
from clarigate.agent.schema_forms import plain_names


def _field_names(actions: Sequence[Action]) -> dict[tuple[int, str], str]:
    """The form field name of each (call, argument): the argument's own name where a form
    keeps it as it is (``1_table`` for the first of several calls), else ``arg_<n>``; unique
    whatever the case, so every field maps back to exactly one argument."""
    many = len(actions) > 1
    pairs = [(index, arg) for index, action in enumerate(actions) for arg in action.args]
    keys = [f"{index + 1}_{arg}" if many else arg for index, arg in pairs]
    return dict(zip(pairs, plain_names(keys), strict=True))


#: The most of a tool's name a field's label shows: a label is cut at ``MAX_STRING``, and what
#: follows the name (which call, which argument) must survive the cut.
NAME_IN_LABEL = 60


def _labels(actions: Sequence[Action]) -> dict[tuple[int, str], str]:
    """The label of each (call, argument) field: the argument alone for one call; for several,
    ``tool.argument``, and ``tool #n · argument`` for the n-th of the calls of a tool the approval
    reviews more than once, so that the person can tell which call a field edits."""
    if len(actions) == 1:
        return {(0, arg): arg for arg in actions[0].args}
    counts = Counter(action.name for action in actions)
    seen: Counter[str] = Counter()
    labels = {}
    for index, action in enumerate(actions):
        seen[action.name] += 1
        name = cut_line(action.name, NAME_IN_LABEL)
        call = f"{name} #{seen[action.name]} · " if counts[action.name] > 1 else f"{name}."
        labels.update({(index, arg): call + arg for arg in action.args})
    return labels


_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _is_iso_date(value: str) -> bool:
    if not _ISO_DATE.fullmatch(value):
        return False
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        return False
    return True


def _field_type(value: Any) -> str:
    if isinstance(value, bool):
        return "checkbox"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str) and _is_iso_date(value):
        return "date"
    if isinstance(value, str) and "\n" not in value and len(value) <= 80:
        return "text"
    return "textarea"


def _shown(value: Any) -> Any:
    """The field's default for an argument: itself for scalars, JSON text for anything else."""
    if isinstance(value, bool | int | float | str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _arg_field(name: str, label: str, value: Any, shown: Any) -> dict[str, Any]:
    text = shown if isinstance(shown, str) else json.dumps(shown, ensure_ascii=False, default=str)
    field_type = _field_type(value)
    return {
        "name": name,
        "label": label,
        "type": field_type,
        "required": False,
        "placeholder": None if field_type == "checkbox" else cut_line(text, 150),
        "default": shown,
    }


def edit_request(
    interrupt_id: str,
    actions: Sequence[Action],
    locale: Locale,
    shown: Mapping[str, Any] | None = None,
    problem: str | None = None,
) -> HumanInputRequest:
    """A form of the reviewed calls' arguments; each field is filled in with the current value.

    ``shown`` fills fields with what the person gave instead (the form asked again, with
    ``problem`` saying why).
    """
    names, labels = _field_names(actions), _labels(actions)
    fields = []
    for index, action in enumerate(actions):
        for arg, value in action.args.items():
            name = names[(index, arg)]
            given = (shown or {}).get(name, _shown(value))
            fields.append(_arg_field(name, labels[(index, arg)], value, given))
    context = catalog.text("approval_edit_context", locale)
    args = {
        "question": catalog.text("approval_edit_question", locale, name=_edited(actions, locale)),
        "clarification_type": "risk_confirmation",
        "context": f"{problem} {context}" if problem else context,
        "fields": fields,
    }
    request = normalize_request(args, tool_call_id=interrupt_id)
    return as_kind(request, APPROVAL_EDIT, interrupt_id, APPROVAL, locale)


def _edited(actions: Sequence[Action], locale: Locale) -> str:
    """The tools a form edits, each named once in the order called, with how many calls of it
    when more than one ("transfer (2 calls), refund")."""
    counts = Counter(action.name for action in actions)
    named = [
        name if n == 1 else catalog.text("approval_edit_calls", locale, name=name, count=n)
        for name, n in counts.items()
    ]
    return catalog.joined(named, locale)


class _BadJson(ValueError):
    """An edited JSON argument that does not parse (``args[0]``: the JSON error)."""


def _edited_value(original: Any, given: Any) -> Any:
    """The value a changed form field gives back, in the original argument's type."""
    if isinstance(original, bool) or isinstance(original, str):
        return given
    if isinstance(original, float) and isinstance(given, int) and not isinstance(given, bool):
        return float(given)  # 2.5 edited to "3" stays a float
    if isinstance(original, int | float) or not isinstance(given, str):
        return given
    try:
        return json.loads(given)
    except ValueError as error:
        if original is None:
            return given  # nothing said what the argument holds: the text is the value
        raise _BadJson(error) from None


def edit_decisions(
    interrupt_id: str,
    value: Mapping[str, Any],
    actions: Sequence[Action],
    values: Mapping[str, Any],
    locale: Locale,
) -> Any | AskAgain:
    """Approve the calls nobody changed; edit the others with only the changed arguments. A
    changed call whose review allows no edit asks again, saying so (it never runs as written).

    A field counts as changed when its value differs from the one it showed (its default):
    a field left as shown keeps the argument as it was, value and type.
    """
    form = edit_request(interrupt_id, actions, locale)
    defaults = {f.name: f.default for f in form.fields}
    labels = {f.name: f.label for f in form.fields}
    names = _field_names(actions)
    decisions = []
    for index, action in enumerate(actions):
        args, changed = dict(action.args), False
        for arg, original in action.args.items():
            name = names[(index, arg)]
            if name not in values or _same(values[name], defaults.get(name)):
                continue
            try:
                args[arg] = _edited_value(original, values[name])
            except _BadJson as error:
                problem = catalog.text(
                    "approval_edit_bad_json",
                    locale,
                    field=labels[name],
                    error=catalog.json_error(error.args[0], locale),
                )
                return AskAgain(edit_request(interrupt_id, actions, locale, shown=values, problem=problem))
            changed = True
        if changed and "edit" not in action.allowed:  # never run as written instead: asked again
            problem = catalog.text("approval_not_editable", locale, name=action.name)
            return AskAgain(edit_request(interrupt_id, actions, locale, shown=values, problem=problem))
        if not changed:
            decisions.append({"type": "approve"})
        else:
            edited: dict[str, Any] = {"type": "edit", "edited_action": {"name": action.name, "args": args}}
            decisions.append(edited)
    return decisions_for(value, decisions)


def _same(given: Any, default: Any) -> bool:
    """True when a typed form value is the one the field showed (``1`` is not ``True``)."""
    return type(given) is type(default) and given == default
