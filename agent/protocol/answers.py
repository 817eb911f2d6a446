"""Build and check answers: option clicks, free text, typed form values, typed replies."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .models import AnsweredBy, HumanInputRequest, HumanInputResponse


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


def answer_with_option(request: HumanInputRequest, option_id: str, by: AnsweredBy | None) -> HumanInputResponse:
    """The answer for a click on option ``option_id``; ``ValueError`` if it is not an option."""
    raise NotImplementedError


def answer_with_text(request: HumanInputRequest, text: str, by: AnsweredBy | None) -> HumanInputResponse:
    """A free-text answer."""
    raise NotImplementedError


def check_form_values(request: HumanInputRequest, raw: Mapping[str, Any]) -> FormCheck:
    """Type raw values (strings, lists, bools) by field and enforce required fields."""
    raise NotImplementedError


def answer_with_form(request: HumanInputRequest, values: Mapping[str, Any], by: AnsweredBy | None) -> HumanInputResponse:
    """The answer for checked (typed) form values."""
    raise NotImplementedError


def parse_typed_reply(request: HumanInputRequest, text: str, by: AnsweredBy | None) -> TypedReply:
    """Match a typed message against the request (PROTOCOL.md, "Typed replies")."""
    raise NotImplementedError
