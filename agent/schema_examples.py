"""What a schema asked as text (``clarigate.agent.typed_interrupts``) shows and takes: an example
of the JSON expected, nested models (``$ref`` into the schema's ``$defs``) and ``Optional[...]``
(``anyOf`` with ``null``) shown in their own shape, the allowed values of a choice listed; and a
bare value (not JSON) for a schema of one field taken as that field's value.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from clarigate.agent.protocol import catalog
from clarigate.agent.protocol.coerce import cut
from clarigate.agent.protocol.models import Locale

_SAMPLES: dict[str, Any] = {"string": "…", "integer": 0, "number": 0, "boolean": False, "null": None}
_SCALARS = frozenset({"string", "integer", "number", "boolean"})
#: How deep nested models are shown (a model that holds itself stops here).
_DEPTH = 4


def resolved(schema: Mapping[str, Any], node: Any) -> Mapping[str, Any]:
    """``node`` with its ``$ref`` (into ``schema``'s ``$defs``) followed and an ``Optional[...]``
    (``anyOf``/``oneOf`` with ``null``) read as its first other type; ``{}`` when not a schema."""
    for _ in range(_DEPTH * 4):
        if not isinstance(node, Mapping):
            return {}
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            target: Any = schema
            for part in ref[2:].split("/"):
                target = target.get(part) if isinstance(target, Mapping) else None
            node = target
            continue
        options = node.get("anyOf") or node.get("oneOf")
        if isinstance(options, list) and options:
            kept = [o for o in options if not (isinstance(o, Mapping) and o.get("type") == "null")]
            node = kept[0] if kept else options[0]
            continue
        return node
    return {}


def _sample(schema: Mapping[str, Any], node: Any, depth: int) -> Any:
    node = resolved(schema, node)
    if "const" in node:
        return node["const"]
    if isinstance(node.get("enum"), list) and node["enum"]:
        return node["enum"][0]
    if "default" in node and node["default"] is not None:
        return node["default"]
    kind = node.get("type")
    properties = node.get("properties")
    if (kind == "object" or isinstance(properties, Mapping)) and depth < _DEPTH:
        return {k: _sample(schema, p, depth + 1) for k, p in (properties or {}).items()}
    if kind == "array" and depth < _DEPTH:
        return [_sample(schema, node["items"], depth + 1)] if isinstance(node.get("items"), Mapping) else []
    return {"object": {}, "array": []}.get(str(kind), _SAMPLES.get(str(kind)))


def _choices(schema: Mapping[str, Any], locale: Locale) -> list[str]:
    """A line per top-level choice (an ``enum``) naming its allowed values."""
    properties = schema.get("properties")
    named = properties.items() if isinstance(properties, Mapping) else [("", schema)]
    lines = []
    for key, node in named:
        values = resolved(schema, node).get("enum")
        if isinstance(values, list) and len(values) > 1:
            listed = ", ".join(json.dumps(v, ensure_ascii=False) for v in values)
            lines.append(catalog.text("typed_choices", locale, name=key or "…", values=listed))
    return lines


def example(schema: Mapping[str, Any], locale: Locale, room: int) -> str:
    """The JSON expected (nested models in their shape), then the allowed values of each choice,
    within ``room`` characters (cut, ending in ``…``); ``…`` alone when not even that fits."""
    text = json.dumps(_sample(schema, schema, 0), ensure_ascii=False, default=str)
    text = " ".join([text, *_choices(schema, locale)])
    return cut(text, room) if room > 1 else "…"


def bare_value(schema: Mapping[str, Any], reply: str) -> tuple[bool, Any]:
    """``(True, value)`` when ``reply`` (not JSON, or JSON of a scalar) is a value for a schema of
    one scalar field (``{key: value}``) or for a scalar schema itself; ``(False, None)`` else."""
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        if len(properties) != 1:
            return False, None
        key, node = next(iter(properties.items()))
        taken, value = _scalar(resolved(schema, node), reply)
        return (True, {key: value}) if taken else (False, None)
    return _scalar(resolved(schema, schema), reply)


def _scalar(node: Mapping[str, Any], reply: str) -> tuple[bool, Any]:
    text = reply.strip()
    try:
        parsed: Any = json.loads(text)
    except ValueError:
        parsed = text
    values = node.get("enum")
    if isinstance(values, list):
        found = [v for v in values if v == parsed or json.dumps(v, ensure_ascii=False) == text or v == text]
        return (True, found[0]) if found else (False, None)
    kind = node.get("type")
    if kind not in _SCALARS or isinstance(parsed, (dict, list)):
        return False, None
    if kind == "string":
        return True, parsed if isinstance(parsed, str) else text
    return (True, parsed) if not isinstance(parsed, str) else (False, None)
