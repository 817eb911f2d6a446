"""An ``interrupt()`` value a graph gave as a pydantic model or a dataclass, read as a plain dict.

``interrupt(RegionQuestion(question="Which region?", options=[…]))`` is asked exactly as
``interrupt({"question": "Which region?", "options": […]})`` is (and resumed as it is): what a
LangGraph server sends for it once it has serialised it. Its fields are made JSON-safe as
pydantic's ``model_dump(mode="json")`` makes them (dates as text, nested models and dataclasses as
dicts, anything else as its ``str``); any other value is read as the graph gave it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic import BaseModel
from pydantic_core import to_jsonable_python


def plain_value(value: Any) -> Any:
    """``value`` as a dict when it is a pydantic model or a dataclass instance, else itself."""
    is_dataclass = dataclasses.is_dataclass(value) and not isinstance(value, type)
    if isinstance(value, BaseModel) or is_dataclass:
        return to_jsonable_python(value, fallback=str)
    return value
