"""Conversation control in ``clarigate chat``: /cancel, /status, /help, and new requests."""

from __future__ import annotations

import io
from pathlib import Path

from clarigate.gateway.cli.chat import chat_main
from clarigate.gateway.runtime.config import GatewayConfig


def run_chat(tmp_path: Path, typed: list[str]) -> str:
    """The terminal chat on the offline model with ``typed`` as its input; what it printed."""
    stdout = io.StringIO()
    config = GatewayConfig(
        data_dir=str(tmp_path), agent={"model": "offline", "checkpointer_url": "memory://"}
    )
    code = chat_main(config, io.StringIO("\n".join(typed) + "\n"), stdout, tmp_path / "thread")
    assert code == 0
    return stdout.getvalue()


def test_cancel_dismisses_the_open_question(tmp_path: Path) -> None:
    out = run_chat(tmp_path, ["which database?", "/cancel", "/status"])

    # the core's words, as on every platform
    cancelled = (
        "bot> ✖ Cancelled the question “Which database should I use?” I will go on without the answer."
    )
    assert cancelled in out
    assert "Going with" not in out
    status = out[out.rindex("Where this conversation stands:") :]
    assert "• No open question." in status  # the question is gone
    assert "• This conversation started " in status


def test_cancel_leaves_a_form_half_way(tmp_path: Path) -> None:
    out = run_chat(tmp_path, ["create a project", "atlas", "/cancel", "/status"])

    assert "bot> ✖ Cancelled the question “Tell me about the new project.”" in out
    assert out.count("Language [") == 1  # the form was left at its second field
    assert "Created the project" not in out
    assert "• No open question." in out


def test_status_quotes_the_open_question(tmp_path: Path) -> None:
    out = run_chat(tmp_path, ["which database?", "/status"])

    assert "• Waiting for an answer to “Which database should I use?”" in out


def test_help_lists_the_commands_and_help_in_a_form_asks_the_field_again(tmp_path: Path) -> None:
    out = run_chat(tmp_path, ["/help", "create a project", "/help"])

    assert out.count("/cancel — dismiss the open question, or stop the request in progress\n") == 2
    assert out.count("/quit — leave the chat") == 2
    assert out.count("Project name (required): ") == 2  # asked again after the help


def test_cancel_with_nothing_open(tmp_path: Path) -> None:
    out = run_chat(tmp_path, ["/cancel"])

    assert "bot> There is no open question to cancel." in out


def test_a_new_request_while_a_choice_is_open_is_not_taken_as_its_answer(tmp_path: Path) -> None:
    out = run_chat(tmp_path, ["which database?", "delete the test data"])

    assert "(the open question is closed: this goes to the agent as a new request)" in out
    assert "Going with" not in out and "Understood" not in out


def test_help_follows_the_language_of_the_last_message(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("LANG", "en_US.UTF-8")  # the system's language is the fallback, not the rule
    out = run_chat(tmp_path, ["你好，请介绍一下你自己", "/help", "hello, who are you?", "/help"])

    chinese, english = out.index("直接告诉我您需要什么。"), out.rindex("Just write what you need.")
    assert chinese < english  # the first /help in Chinese, the second in English
    assert "/new — 开始新的对话（关闭当前问题）" in out
    assert "/quit — 退出" in out
