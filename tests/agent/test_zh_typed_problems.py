"""A typed form (``response_schema``) asked again in Chinese lists its problems with Chinese
punctuation (``；`` between them), as its answered line does."""

from __future__ import annotations

from pydantic import BaseModel, Field

from clarigate.agent.interrupts import AskAgain
from clarigate.agent.protocol import answer_with_form, check_form_values
from clarigate.agent.typed_interrupts import typed_request, typed_resume


class Booking(BaseModel):
    name: str = Field(title="姓名", min_length=2)
    guests: int = Field(title="人数", default=2, ge=1, le=10)


SCHEMA = Booking.model_json_schema()


def asked_again(locale: str) -> str:
    """The context of the form asked again after a name too short and too many guests."""
    request = typed_request("i1", "请预订行程", SCHEMA, locale)  # type: ignore[arg-type]
    typed = check_form_values(request, {"name": "李", "guests": "11"})  # as typed: no bounds yet
    response = answer_with_form(request, typed.values, None)
    again = typed_resume("i1", "请预订行程", SCHEMA, response, locale)  # type: ignore[arg-type]
    assert isinstance(again, AskAgain)
    return again.request.context or ""


def test_the_problems_of_a_chinese_form_are_separated_with_a_full_width_semicolon() -> None:
    shown = asked_again("zh")
    assert "姓名：至少 2 个字符；人数：不能大于 10" in shown
