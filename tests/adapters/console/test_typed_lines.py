"""What a typed line does in the terminal where a question asks something of its own: another
option at a risk confirmation's "confirm" prompt, a ``name: value`` line at a form field's prompt.

The core reads every typed line (``gateway/flow/confirm.py``), as it does on Slack, Telegram and
Feishu; the terminal asks a form field by field and takes a line naming a field as that field's.
"""

from __future__ import annotations

from tests.adapters.console.test_console import Bot

ASK = "bot> Reply “confirm” to go ahead with “Yes, delete everything”; anything else keeps the question open."


def test_another_option_at_the_confirm_prompt_is_taken_at_once(bot: Bot) -> None:
    out = bot.chat("wipe the test data", "2", "1")

    assert "bot> Answered option: No, keep it" in out  # a safe option needs no confirmation
    assert "Not confirmed" not in out
    response = bot.agent.calls[-1].response
    assert response is not None and response.option_id == "option-1"
    assert bot.adapter.open is None


def test_a_plain_yes_asks_for_confirm_as_a_typed_pick_does(bot: Bot) -> None:
    out = bot.chat("wipe the test data", "yes", "2", "confirm")

    assert out.count(ASK) == 2  # "yes" and "2" are asked the same way, in the same style
    assert "⚠️ Reply" not in out
    response = bot.agent.calls[-1].response
    assert response is not None and response.option_id == "option-2"


def test_a_plain_no_answers_the_safe_option_at_once(bot: Bot) -> None:
    out = bot.chat("wipe the test data", "no")

    assert "bot> Answered option: No, keep it" in out  # not "What would you like me to do about “no”?"
    assert "the open question is closed" not in out
    response = bot.agent.calls[-1].response
    assert response is not None and response.option_id == "option-1"
    assert bot.adapter.open is None


def test_name_value_lines_at_field_prompts_take_the_value(bot: Bot) -> None:
    out = bot.chat("create a project", "name: demo", "Team size: 3", "language: Go")

    response = bot.agent.calls[-1].response
    assert response is not None and response.values == {"name": "demo", "size": 3, "language": "go"}
    assert out.count("  Project name (required): ") == 1


def test_a_line_naming_another_field_fills_it_and_asks_this_one_again(bot: Bot) -> None:
    out = bot.chat("create a project", "size: 4", "atlas", "")

    assert out.count("  Project name (required): ") == 2  # asked again: "size: 4" is not its value
    assert "  Team size [a number]: " not in out  # filled already: not asked
    response = bot.agent.calls[-1].response
    assert response is not None and response.values == {"name": "atlas", "size": 4}


def test_a_form_says_name_value_lines_work_and_cancel_dismisses_it(bot: Bot) -> None:
    out = bot.chat("create a project", "/cancel")

    intro = (
        "(one field at a time, or name: value lines; Enter skips an optional field; "
        "/cancel dismisses the form)"
    )
    assert intro in out
    assert "bot> ✖ Cancelled the question “Tell me about the project.”" in out
