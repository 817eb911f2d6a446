"""A typed interrupt's ``response_schema`` (JSON Schema) read as a form the renderers show.

``interrupt(value, response_schema=…)`` (langgraph 1.2+) hands clients a JSON Schema for the answer.
The subset read here is what a chat form can ask:

- an object whose properties are strings (``format: date`` a date picker), numbers, integers,
  booleans, enums (of strings, numbers or booleans) and arrays of enums, with ``required``,
  ``default``, ``title``, ``description``, ``minimum`` / ``maximum`` (and the exclusive ones),
  ``minLength`` / ``maxLength``, ``pattern`` and ``minItems`` / ``maxItems``;
- or one such value alone (the form has one field, and the answer is that value);
- local ``$ref`` (``#/$defs/…``, as Pydantic writes enums), a one-item ``allOf``, and a
  nullable property (``anyOf`` / ``oneOf`` with ``null``, or ``type: [T, "null"]``).

Anything else (nested objects, arrays of free values, unions, ``date-time``) raises
``NotAForm`` naming what cannot be shown; the question is then asked as text
(``clarigate.agent.typed_interrupts``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clarigate.agent.protocol.models import RESERVED_FIELD_NAMES

#: A field name every platform keeps as it is (action ids, form keys).
PLAIN_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_-]{0,46}[A-Za-z0-9])?")
#: String formats that are not a plain line of text and have no field type of their own.
_NOT_TEXT_FORMATS = frozenset({"date-time", "time", "duration", "binary", "byte"})
_MAX_REFS = 16


class NotAForm(ValueError):
    """The schema holds something a form cannot ask; ``what`` names it (field names, in backticks)."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


@dataclass(frozen=True)
class SchemaField:
    """One property of the schema as a form field.

    ``kind``: ``string``, ``integer``, ``number``, ``boolean``, ``date``, ``enum`` or ``enums`` (an
    array of enum values); ``spec`` is the property's schema with ``$ref`` and ``null`` resolved;
    ``choices`` the enum's values as the schema gives them."""

    key: str
    name: str
    kind: str
    spec: Mapping[str, Any]
    required: bool
    choices: tuple[Any, ...] = ()


@dataclass(frozen=True)
class SchemaForm:
    """The form a schema reads as; ``bare``: the schema is one value, so the answer is that value;
    ``closed``: an object that takes no keys but its properties (``additionalProperties: false``)."""

    fields: tuple[SchemaField, ...]
    bare: bool = False
    description: str | None = None
    closed: bool = False


def plain_names(keys: Sequence[str]) -> list[str]:
    """A form field name for each key: the key itself where platforms keep it as it is, else
    ``arg_<n>``; unique whatever the case, so every field maps back to exactly one key."""
    names: list[str] = []
    taken: set[str] = set()
    for key in keys:
        name = key
        if not PLAIN_NAME.fullmatch(name) or name in RESERVED_FIELD_NAMES or name.casefold() in taken:
            name = f"arg_{len(names) + 1}"
            while name.casefold() in taken:
                name += "_"
        taken.add(name.casefold())
        names.append(name)
    return names


def schema_form(schema: Mapping[str, Any]) -> SchemaForm:
    """The form ``schema`` reads as; ``NotAForm`` when it holds something a form cannot ask."""
    root = _resolve(schema, schema)
    properties = root.get("properties")
    if root.get("type") == "object" or isinstance(properties, Mapping):
        if not isinstance(properties, Mapping) or not properties:
            raise NotAForm("an object with no properties")
        required = set(root.get("required") or ())
        keys = [str(k) for k in properties]
        names = plain_names(keys)
        fields, unfit = [], []
        for key, name in zip(keys, names, strict=True):
            try:
                fields.append(_field(key, name, properties[key], key in required, schema))
            except NotAForm:
                unfit.append(f"`{key}`")
        if unfit:
            raise NotAForm(", ".join(unfit))
        closed = root.get("additionalProperties") is False
        return SchemaForm(tuple(fields), description=_text(root.get("description")), closed=closed)
    field = _field("value", "value", root, True, schema)
    return SchemaForm((field,), bare=True)


def _field(key: str, name: str, raw: Any, required: bool, root: Mapping[str, Any]) -> SchemaField:
    spec = _resolve(raw, root)
    kind, choices = _kind(spec, root)
    return SchemaField(key, name, kind, spec, required and "default" not in spec, choices)


def _kind(spec: Mapping[str, Any], root: Mapping[str, Any]) -> tuple[str, tuple[Any, ...]]:
    if "enum" in spec or "const" in spec:
        values = spec["enum"] if "enum" in spec else [spec["const"]]
        return "enum", _choices(values)
    kind = spec.get("type")
    if kind is None and not {"properties", "items"} & spec.keys():
        kind = "string"  # any value (``Any``): what a person types is one
    if kind == "string":
        form = spec.get("format")
        if form == "date":
            return "date", ()
        if form in _NOT_TEXT_FORMATS:
            raise NotAForm(str(form))
        return "string", ()
    if kind in ("integer", "number", "boolean"):
        return str(kind), ()
    if kind == "array" and isinstance(spec.get("items"), Mapping):
        items = _resolve(spec["items"], root)
        if "enum" in items:
            return "enums", _choices(items["enum"])
    raise NotAForm(str(kind))


def _choices(values: Any) -> tuple[Any, ...]:
    if not isinstance(values, list):
        raise NotAForm("enum")
    kept = tuple(v for v in values if v is not None)  # a nullable enum: blank is the null
    if not kept or not all(isinstance(v, str | int | float | bool) for v in kept):
        raise NotAForm("enum")
    return kept


def _resolve(raw: Any, root: Mapping[str, Any]) -> dict[str, Any]:
    """``raw`` with local ``$ref``, a one-item ``allOf`` and a ``null`` alternative resolved; the
    outer keys (``title``, ``default``, ``description``) kept over the referenced ones."""
    if not isinstance(raw, Mapping):
        raise NotAForm("schema")
    spec = dict(raw)
    for _ in range(_MAX_REFS):
        if "$ref" in spec:
            target = _pointer(root, spec.pop("$ref"))
            spec = {**target, **spec}
        elif isinstance(spec.get("allOf"), list) and len(spec["allOf"]) == 1:
            inner = spec.pop("allOf")[0]
            spec = {**_resolve(inner, root), **spec}
        elif isinstance(spec.get("anyOf") or spec.get("oneOf"), list):
            branches = spec.pop("anyOf", None) or spec.pop("oneOf")
            kept = [b for b in branches if not (isinstance(b, Mapping) and b.get("type") == "null")]
            if len(kept) != 1:
                raise NotAForm("anyOf")
            spec = {**_resolve(kept[0], root), **spec}
        elif isinstance(spec.get("type"), list):
            types = [t for t in spec["type"] if t != "null"]
            if len(types) != 1:
                raise NotAForm("type")
            spec["type"] = types[0]
        else:
            return spec
    raise NotAForm("$ref")


def _pointer(root: Mapping[str, Any], ref: Any) -> Mapping[str, Any]:
    """The schema a local JSON pointer (``#/$defs/Color``) names."""
    if not isinstance(ref, str) or not ref.startswith("#"):
        raise NotAForm("$ref")
    node: Any = root
    for part in [p for p in ref[1:].split("/") if p]:
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, Mapping) or part not in node:
            raise NotAForm("$ref")
        node = node[part]
    if not isinstance(node, Mapping):
        raise NotAForm("$ref")
    return node


def _text(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None
