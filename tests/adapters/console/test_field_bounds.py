"""A form field's bounds (a number's range, a text's length) and a required field are checked in
the terminal as each field is typed: that field alone is asked again with the reason (the
catalog's words, in the form's language), the fields typed before it kept, and the form is sent
once, every value within its bounds."""

from __future__ import annotations

from .test_console import Bot


def _prompts(out: str, label: str) -> int:
    return out.count(f"  {label}")


def test_a_value_out_of_bounds_asks_that_field_again_with_the_reason(bot: Bot) -> None:
    out = bot.chat("plan a trip", "Lisbon", "20", "0", "4", "window seat")

    assert "  ! Must be at most 10" in out and "  ! Must be at least 1" in out
    assert _prompts(out, "Title (required): ") == 1  # the title typed before is kept, not asked again
    assert _prompts(out, "Guests [a number]: ") == 3
    assert out.index("Must be at most 10") < out.index("  Note: ")  # at once, not after the form
    answers = [call.response for call in bot.agent.calls if call.response is not None]
    assert len(answers) == 1  # sent once, within its bounds
    assert answers[0].values == {"title": "Lisbon", "guests": 4, "note": "window seat"}


def test_a_text_too_long_and_a_required_field_left_empty_are_asked_again_at_once(bot: Bot) -> None:
    out = bot.chat("plan a trip", "", "Lisbon in spring", "Lisbon", "", "")

    assert "  ! This field is required" in out
    assert "  ! Use at most 8 characters" in out
    assert _prompts(out, "Title (required): ") == 3 and _prompts(out, "Guests [a number]: ") == 1
    answers = [call.response for call in bot.agent.calls if call.response is not None]
    assert len(answers) == 1 and answers[0].values == {"title": "Lisbon"}


def test_the_reason_is_in_the_forms_language(bot: Bot) -> None:
    out = bot.chat("计划一次旅行", "里斯本", "12", "3", "")

    assert "  ! 不能大于 10" in out
    answers = [call.response for call in bot.agent.calls if call.response is not None]
    assert len(answers) == 1 and answers[0].values == {"title": "里斯本", "guests": 3}


def test_a_fraction_for_a_whole_number_field_is_asked_again_at_once(bot: Bot) -> None:
    out = bot.chat("plan a trip", "Lisbon", "2.5", "4", "")

    assert "  ! Enter a whole number" in out  # an integer property: its bounds' multipleOf 1
    assert _prompts(out, "Guests [a number]: ") == 2
    answers = [call.response for call in bot.agent.calls if call.response is not None]
    assert len(answers) == 1 and answers[0].values == {"title": "Lisbon", "guests": 4}
