"""The one catalog of words and icons: every line in both languages, with the same placeholders."""

from __future__ import annotations

from string import Formatter

import pytest

from clarigate.agent.protocol import catalog


def placeholders(line: str) -> set[str]:
    """The ``{names}`` a line is filled with."""
    return {name for _, name, _, _ in Formatter().parse(line) if name is not None}


@pytest.mark.parametrize("key", sorted(catalog.WORDS))
def test_every_key_is_written_in_both_languages_with_the_same_placeholders(key: str) -> None:
    lines = catalog.WORDS[key]
    assert set(lines) == set(catalog.LOCALES)
    assert all(line.strip() for line in lines.values())
    assert placeholders(lines["en"]) == placeholders(lines["zh"])


def test_a_line_is_filled_in_the_language_asked_for() -> None:
    assert catalog.text("cancelled", "zh", question="用哪个数据库？") == (
        "✖ 已取消问题「用哪个数据库？」，我会在没有答案的情况下继续。"
    )
    assert catalog.text("cmd_new", "en") == "start a new conversation (closes the open question)"


def test_an_unknown_key_is_an_error_not_a_blank_line() -> None:
    with pytest.raises(KeyError):
        catalog.text("no_such_line", "en")


def test_ages_count_in_their_largest_unit() -> None:
    assert catalog.age_text(1, "en") == "1 second"
    assert catalog.age_text(125, "en") == "2 minutes"
    assert catalog.age_text(2 * 86_400 + 5, "zh") == "2 天"


def test_icons_by_clarification_type_and_status() -> None:
    assert catalog.icon("approach_choice") == "🔀"
    assert catalog.icon("working") == "⏳"
    assert catalog.icon("something new") == "❓"
