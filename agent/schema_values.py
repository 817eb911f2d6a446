"""A schema field as a form field, and a form's typed answer as values of the schema's types.

The form's values arrive typed by field (``clarigate.agent.protocol.answers.check_form_values``:
a number is an ``int`` or ``float``, a checkbox a ``bool``, a select the option's value); here
they take the schema's keys and types and are checked against its bounds; ``fits`` checks any
value the same way (a declined answer is resumed only when its schema takes it). Not a JSON
Schema validator: only the subset ``clarigate.agent.schema_forms`` reads.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from clarigate.agent.protocol import catalog, number_text
from clarigate.agent.protocol.bounds import length_error, range_error
from clarigate.agent.protocol.models import Locale
from clarigate.agent.schema_forms import SchemaField, SchemaForm

#: The protocol's field type for each kind of schema field.
FIELD_TYPES = {
    "string": "text",
    "integer": "number",
    "number": "number",
    "boolean": "checkbox",
    "date": "date",
    "enum": "select",
    "enums": "multi_select",
}
#: A string allowed to be longer than this is asked in a multi-line box.
LONG_TEXT = 200


def choice_text(choice: Any) -> str:
    """An enum value as its option shows it (``true``, ``2``, ``red``)."""
    if isinstance(choice, bool):
        return "true" if choice else "false"
    return number_text(choice) or str(choice)


def _number(value: Any) -> str:
    return number_text(value) or str(value)


def field_spec(field: SchemaField, locale: Locale, filled: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The form field (as ``normalize_request`` takes it) for ``field``, showing the schema's
    ``default``; or, for a form asked again, what the person gave (``filled``, by field name):
    a field they gave nothing (emptied) shows empty, never the default they had removed."""
    spec = field.spec
    field_type = FIELD_TYPES[field.kind]
    if field.kind == "string" and _int(spec.get("maxLength"), 0) > LONG_TEXT:
        field_type = "textarea"
    title = spec.get("title") if isinstance(spec.get("title"), str) else None
    return {
        "name": field.name,
        "label": title or field.key.replace("_", " ").strip().capitalize() or field.name,
        "type": field_type,
        "required": field.required,
        "placeholder": _hint(field, locale),
        "options": [choice_text(c) for c in field.choices],
        "default": _shown(field, spec.get("default")) if filled is None else filled.get(field.name),
    }


def _int(value: Any, otherwise: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else otherwise


def _shown(field: SchemaField, value: Any) -> Any:
    """A schema value as the form field shows it (an enum by its option text)."""
    if value is None:
        return None
    if field.kind == "enum":
        return choice_text(value)
    if field.kind == "enums":
        return [choice_text(v) for v in value] if isinstance(value, list) else None
    return value


def _hint(field: SchemaField, locale: Locale) -> str | None:
    """The field's description and, for a number, the range it takes."""
    spec = field.spec
    parts = [spec["description"].strip()] if isinstance(spec.get("description"), str) else []
    if field.kind in ("integer", "number"):
        low, high = _bound(spec, "minimum"), _bound(spec, "maximum")
        if low is not None and high is not None:
            parts.append(catalog.text("hint_between", locale, low=_number(low), high=_number(high)))
        elif low is not None:
            parts.append(catalog.text("hint_at_least", locale, low=_number(low)))
        elif high is not None:
            parts.append(catalog.text("hint_at_most", locale, high=_number(high)))
    return " · ".join(p for p in parts if p) or None


def _bound(spec: Mapping[str, Any], key: str) -> int | float | None:
    value = spec.get(key)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def schema_values(form: SchemaForm, values: Mapping[str, Any], locale: Locale) -> tuple[Any, dict[str, str]]:
    """The resume value for a form's typed ``values`` (by field name), and what breaks the schema
    (field name → message). A blank optional field is left out, as the schema allows, except an
    array of choices given empty (``[]``: nothing chosen, not its default)."""
    resumed: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for field in form.fields:
        raw = values.get(field.name)
        chose_none = raw == [] and field.kind == "enums" and not field.required
        if not chose_none and (raw is None or raw == "" or raw == []):
            if field.required:
                errors[field.name] = catalog.text("err_required", locale)
            continue
        typed, error = _typed(field, raw, locale)
        if error is not None:
            errors[field.name] = error
        else:
            resumed[field.key] = typed
    if form.bare:
        return resumed.get("value"), errors
    return resumed, errors


def _typed(field: SchemaField, raw: Any, locale: Locale) -> tuple[Any, str | None]:
    """``raw`` in the schema's type for ``field``, or what is wrong with it."""
    spec = field.spec
    if field.kind in ("integer", "number"):
        if isinstance(raw, bool) or not isinstance(raw, int | float):
            return None, catalog.text("err_number", locale)
        if field.kind == "integer" and not float(raw).is_integer():
            return None, catalog.text("err_whole_number", locale)
        number = int(raw) if field.kind == "integer" else float(raw)
        return number, range_error(spec, number, locale)
    if field.kind == "boolean":
        return (raw, None) if isinstance(raw, bool) else (None, catalog.text("err_yes_no", locale))
    if field.kind == "enum":
        by_text = {choice_text(c): c for c in field.choices}
        if str(raw) not in by_text:
            return None, catalog.text("err_choose_one", locale, choices=", ".join(by_text))
        return by_text[str(raw)], None
    if field.kind == "enums":
        return _choices(field, raw, locale)
    text = str(raw)
    return text, _text_error(spec, text, locale)


def _text_error(spec: Mapping[str, Any], text: str, locale: Locale) -> str | None:
    if (too := length_error(spec, text, locale)) is not None:
        return too
    pattern = spec.get("pattern")
    if isinstance(pattern, str):
        try:
            if re.search(pattern, text) is None:
                return catalog.text("err_pattern", locale)
        except re.error:
            return None  # a pattern Python does not read: the graph checks it, if anyone does
    return None


def _choices(field: SchemaField, raw: Any, locale: Locale) -> tuple[Any, str | None]:
    by_text = {choice_text(c): c for c in field.choices}
    items = raw if isinstance(raw, list) else [raw]
    if any(str(item) not in by_text for item in items):
        return None, catalog.text("err_choose_from", locale, choices=", ".join(by_text))
    chosen = [by_text[str(item)] for item in items]
    if len(chosen) < _int(field.spec.get("minItems"), 0):
        return None, catalog.text("err_min_items", locale, low=field.spec["minItems"])
    if len(chosen) > _int(field.spec.get("maxItems"), len(chosen)):
        return None, catalog.text("err_max_items", locale, high=field.spec["maxItems"])
    return chosen, None


def form_values(form: SchemaForm, resumed: Any) -> dict[str, Any]:
    """The form's values (by field name) for a resume value: a rejected answer shown again."""
    given = {"value": resumed} if form.bare else resumed
    if not isinstance(given, Mapping):
        return {}
    return {f.name: _shown(f, given[f.key]) for f in form.fields if given.get(f.key) is not None}


def fits(form: SchemaForm, value: Any) -> bool:
    """True when ``value`` is an answer the form's schema takes: read back as the form's values
    (``form_values``) and checked as a person's answer is (``schema_values``), it comes back as it
    went in (a key the schema does not name is allowed unless the form is ``closed``)."""
    given: Any = value
    if not form.bare:
        if not isinstance(value, Mapping):
            return False
        keys = {f.key for f in form.fields}
        if form.closed and not set(value) <= keys:
            return False
        given = {k: v for k, v in value.items() if k in keys and v is not None}
    resumed, errors = schema_values(form, form_values(form, value), "en")
    return not errors and resumed == given
