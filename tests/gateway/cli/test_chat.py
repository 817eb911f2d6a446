"""``clarigate chat`` driven through its stdin, as a person would use it."""

from __future__ import annotations

import asyncio
import io
import logging
import os
import re
import select
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from clarigate.agent.harness import AgentSettings, ClarifyingAgent
from clarigate.agent.models.conversation import conversation_call_id, last_human_text
from clarigate.agent.models.local import LocalChatModel
from clarigate.gateway.cli.chat import chat_main
from clarigate.gateway.cli.main import main
from clarigate.gateway.runtime.config import GatewayConfig

ROOT = Path(__file__).resolve().parents[3]


CLARIGATE = Path(sys.executable).with_name("clarigate")  # the console script pip installed


def chat_config(data_dir: Path, **agent: object) -> GatewayConfig:
    """The configuration ``clarigate chat`` reads, with the offline model under ``data_dir``."""
    return GatewayConfig(data_dir=str(data_dir), agent={"model": "offline", **agent})


def chat(data_dir: Path, typed: str) -> subprocess.CompletedProcess[str]:
    """Run ``clarigate chat`` on the offline model with ``typed`` as its whole input."""
    env = {**os.environ, "CLARIGATE_DATA_DIR": str(data_dir), "LLM_MODEL": "offline"}
    for name in (
        "CHECKPOINTER_URL",
        "CLARIGATE_CONFIG",
        "ALLOW_CLARIFICATION",
        "DISABLE_CLARIFICATION",
        "LANGGRAPH_URL",
    ):
        env.pop(name, None)
    return subprocess.run(
        [str(CLARIGATE), "chat"],
        input=typed,
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=90,
    )


def test_form_and_option_flows_and_the_thread_survives_a_restart(tmp_path: Path) -> None:
    form = ["create a project", "", "atlas", "Klingon", "2", "maybe", "yes", "2026-12-01", ""]
    first = chat(tmp_path, "\n".join([*form, "which database?"]) + "\n")  # input ends, question open

    assert first.returncode == 0, first.stderr
    out = first.stdout
    assert "Tell me about the new project." in out
    assert "Language [1) Python  2) TypeScript  3) Go]" in out
    assert out.count("Project name (required): ") == 2  # empty required value: asked again
    assert out.count("Language [") == 2  # "Klingon" is not a choice: asked again
    assert out.count("Private repository [yes/no]") == 2  # "maybe" is not yes/no
    assert (
        "Created the project “atlas” in TypeScript (private, deadline 2026-12-01, team size not set)" in out
    )
    assert "  2. SQLite" in out
    assert (tmp_path / "terminal-thread").exists()

    second = chat(tmp_path, "2\n/quit\n")

    assert second.returncode == 0, second.stderr
    assert "still open" in second.stdout
    assert "Going with SQLite" in second.stdout
    assert "Traceback" not in first.stderr + second.stderr


def test_a_line_that_is_not_utf8_goes_to_the_agent_with_replacement_characters(tmp_path: Path) -> None:
    # a Latin-1 terminal, or a file piped in: "café" as one byte 0xE9
    env = {**os.environ, "CLARIGATE_DATA_DIR": str(tmp_path), "LLM_MODEL": "offline"}
    env.pop("CHECKPOINTER_URL", None)
    env.pop("CLARIGATE_CONFIG", None)
    done = subprocess.run(
        [str(CLARIGATE), "chat"],
        input=b"caf\xe9 please\n/status\n/quit\n",
        capture_output=True,
        env=env,
        cwd=ROOT,
        timeout=90,
    )

    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr.decode()[-600:]
    out = done.stdout.decode("utf-8")
    assert "“caf\ufffd please”" in out  # what the agent read, and answered
    assert "Where this conversation stands" in out  # the chat went on after the line


def test_a_data_directory_it_cannot_make_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a-file").write_text("")
    data_dir = tmp_path / "a-file" / "data"

    code = chat_main(chat_config(data_dir), io.StringIO("hello\n"), io.StringIO())

    assert code == 1
    err = capsys.readouterr().err
    assert err == (
        f"clarigate chat: the data directory {data_dir} (CLARIGATE_DATA_DIR) cannot be used: Not a "
        "directory; point CLARIGATE_DATA_DIR at a folder this user can create and write\n"
    )


def test_new_starts_a_fresh_thread(tmp_path: Path) -> None:
    stdout = io.StringIO()
    thread_file = tmp_path / "thread"
    config = chat_config(tmp_path, checkpointer_url="memory://")

    code = chat_main(config, io.StringIO("which database?\n/new\nSQLite\n"), stdout, thread_file)

    assert code == 0
    out = stdout.getvalue()
    assert "bot> Started a new conversation. What can I do for you?" in out  # the core's words
    assert "Going with" not in out  # after /new, "SQLite" is a new one-word request, not an answer
    assert "What would you like me to do about “SQLite”?" in out


class _PressesCtrlC(io.StringIO):
    def readline(self, *args: object) -> str:
        raise KeyboardInterrupt


def test_ctrl_c_exits_cleanly(tmp_path: Path) -> None:
    config = chat_config(tmp_path, checkpointer_url="memory://")
    assert chat_main(config, _PressesCtrlC(), io.StringIO(), tmp_path / "thread") == 0


def run_chat(tmp_path: Path, typed: str) -> str:
    """The terminal chat in this process on the offline model and SQLite; what it printed."""
    stdout = io.StringIO()
    config = chat_config(tmp_path)
    assert chat_main(config, io.StringIO(typed), stdout, tmp_path / "thread") == 0
    return stdout.getvalue()


def test_labels_answer_choices_and_other_text_is_a_new_message(tmp_path: Path) -> None:
    out = run_chat(tmp_path, "which database?\nsqlite\nwhich database?\nMongoDB, please\n")

    assert "Going with SQLite" in out  # the label, whatever its case
    # anything else is a new message, as on every platform: the question closes and the agent reads it
    assert "(the open question is closed: this goes to the agent as a new request)" in out
    assert "Thanks, now I understand: “MongoDB, please”" not in out


def test_quit_or_end_of_input_inside_a_form_keeps_the_question_open(tmp_path: Path) -> None:
    first = run_chat(tmp_path, "create a project\natlas\n/quit\nPython\n")

    assert "Language [" in first
    assert "Created the project" not in first  # nothing half-filled was sent
    second = run_chat(tmp_path, "atlas\n3\n")  # input ends after the second field

    assert "still open" in second
    assert second.count("Project name (required): ") == 1
    assert "Private repository [yes/no]: " in second and "Created the project" not in second
    third = run_chat(tmp_path, "atlas\n3\nno\n\n\n")
    assert "Created the project “atlas” in Go (public, deadline not set, team size not set)" in third


def test_new_inside_a_form_starts_a_fresh_thread(tmp_path: Path) -> None:
    out = run_chat(tmp_path, "create a project\natlas\n/new\nreports\n")

    assert "bot> Started a new conversation. What can I do for you?" in out
    assert "What would you like me to do about “reports”?" in out
    assert "Created the project" not in out


def test_a_chinese_form_is_asked_in_chinese(tmp_path: Path) -> None:
    typed = "新建一个项目\n\n星图\n4\ngo\n也许\n是\n2026-13-01\n2026-12-01\n\n"
    out = run_chat(tmp_path, typed)

    assert "（逐项填写，也可输入“名称: 值”；选填项直接回车即可跳过；/取消 可关闭表单）" in out
    assert out.count("项目名称（必填）：") == 2  # empty: asked again
    assert out.count("  ! 此项为必填") == 1
    assert out.count("语言 [1) Python  2) TypeScript  3) Go]：") == 2  # "4" is not a choice
    assert out.count("私有仓库 [是/否]：") == 2  # "也许" is not yes or no
    assert out.count("截止日期 [YYYY-MM-DD]：") == 2  # no 13th month
    assert "  ! 2026-13-01 不是日历上的日期" in out  # the form is right: the date does not exist
    assert "团队人数 [数字]：" in out
    assert "(required)" not in out and "yes/no" not in out
    assert "已创建项目“星图”，语言 Go（私有，截止日期 2026-12-01，团队人数 未设置）" in out


def test_chinese_status_spaces_the_age_as_the_catalog_does(tmp_path: Path) -> None:
    out = run_chat(tmp_path, "你好\n/status\n")

    # "28 秒" keeps its space inside; so does the gap before it, as around every number in Chinese
    assert re.search(r"• 本次对话开始于 \d+ 秒前；/new 可开始新的对话。", out), out


@pytest.mark.usefixtures("terminal_ctrl_c")
def test_ctrl_c_while_the_agent_starts_exits_cleanly_and_closes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_create = ClarifyingAgent.create.__func__  # type: ignore[attr-defined]
    real_close = ClarifyingAgent.aclose
    closed: list[ClarifyingAgent] = []

    async def create_with_ctrl_c(cls: type[ClarifyingAgent], settings: AgentSettings) -> ClarifyingAgent:
        os.kill(os.getpid(), signal.SIGINT)  # the person presses Ctrl-C while the agent starts
        await asyncio.sleep(0)
        return await real_create(cls, settings)

    async def recorded_close(self: ClarifyingAgent) -> None:
        closed.append(self)
        await real_close(self)

    monkeypatch.setattr(ClarifyingAgent, "create", classmethod(create_with_ctrl_c))
    monkeypatch.setattr(ClarifyingAgent, "aclose", recorded_close)
    stdout = io.StringIO()
    config = chat_config(tmp_path)

    try:
        code = chat_main(config, io.StringIO("hello\n"), stdout, tmp_path / "thread")
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C while starting escaped the chat (a traceback for the person)")

    assert code == 0
    assert len(closed) == 1  # the checkpointer it had opened is closed
    assert "clarigate chat:" not in stdout.getvalue()  # it never started talking


class _FailsOnce(LocalChatModel):
    """Asks, fails once (the provider is down), then replies with the last message."""

    replies: int = 0

    @property
    def _llm_type(self) -> str:
        return "fails-once"

    def reply_to(self, messages: Any) -> AIMessage:
        self.replies += 1
        if self.replies == 1:
            call = {"name": "ask_clarification", "args": {"question": "Which one?", "options": ["a", "b"]}}
            return AIMessage(content="", tool_calls=[{**call, "id": conversation_call_id(messages, 0)}])
        if self.replies == 2:
            raise RuntimeError("provider down")
        return AIMessage(content=f"Thanks: {last_human_text(messages)}")


def test_a_failed_turn_is_reported_and_the_chat_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("clarigate.agent.models.build_chat_model", lambda spec: _FailsOnce())

    out = run_chat(tmp_path, "start\n2\ngo on\n")

    # the core's words for a failed run, as on every platform (the traceback is in chat.log)
    assert "  ! Sorry, I could not finish that: something went wrong on my side. Please try again." in out
    assert "provider down" in (tmp_path / "chat.log").read_text(encoding="utf-8")
    assert "bot> Thanks: go on" in out


class _ChattyProvider(LocalChatModel):
    """Replies as a provider SDK would, its HTTP client saying each request at INFO."""

    @property
    def _llm_type(self) -> str:
        return "chatty"

    def reply_to(self, messages: Any) -> AIMessage:
        logging.getLogger("httpx").info("HTTP Request: POST http://provider.example/v1/chat/completions")
        return AIMessage(content=f"Thanks: {last_human_text(messages)}")


def test_chat_log_holds_the_chatty_libraries_at_warning_as_serve_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("clarigate.agent.models.build_chat_model", lambda spec: _ChattyProvider())
    assert "bot> Thanks: hello" in run_chat(tmp_path, "hello\n")
    assert "provider.example" not in (tmp_path / "chat.log").read_text(encoding="utf-8")


def test_an_agent_that_cannot_start_is_one_line_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = chat_config(tmp_path, model="nonsense:model")

    code = chat_main(config, io.StringIO("hello\n"), io.StringIO(), tmp_path / "thread")

    assert code == 1
    err = capsys.readouterr().err
    assert err.startswith("clarigate chat: the agent could not start: ") and "nonsense" in err
    assert len(err.strip().splitlines()) == 1
    # serve's hint, as the agent runs in this process
    assert "(model 'nonsense:model': check agent.model, its provider package and API key" in err
    assert err.rstrip().endswith("`clarigate doctor` says more)")


@pytest.mark.usefixtures("terminal_ctrl_c")
def test_a_real_ctrl_c_at_the_prompt_exits_cleanly(tmp_path: Path) -> None:
    env = {**os.environ, "CLARIGATE_DATA_DIR": str(tmp_path), "LLM_MODEL": "offline"}
    env.pop("CHECKPOINTER_URL", None)
    env.pop("CLARIGATE_CONFIG", None)
    chat_process = subprocess.Popen(
        [str(CLARIGATE), "chat"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        shown = b""
        while not shown.endswith(b"you> "):  # waiting for input now: the moment to press Ctrl-C
            ready, _, _ = select.select([chat_process.stdout], [], [], 60)
            assert ready, f"no prompt; got {shown!r}"
            chunk = os.read(chat_process.stdout.fileno(), 4096)  # type: ignore[union-attr]
            assert chunk, f"the chat ended early: {shown!r}"
            shown += chunk
        chat_process.send_signal(signal.SIGINT)
        out, err = chat_process.communicate(timeout=60)
    finally:
        if chat_process.poll() is None:
            chat_process.kill()
            chat_process.wait()

    assert chat_process.returncode == 0, err.decode()
    assert err == b"" and out == b"\n"


def test_a_misspelt_checkpointer_url_is_refused_without_its_password(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # the configuration refuses it before the chat starts; its line reaches the terminal as it
    # is, past the log redactor
    monkeypatch.delenv("CLARIGATE_CONFIG", raising=False)
    monkeypatch.setenv("CLARIGATE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("CHECKPOINTER_URL", "postgress://bot:hunter2@db.internal/cp")

    assert main(["chat"]) == 2

    err = capsys.readouterr().err
    assert "CHECKPOINTER_URL: unknown scheme 'postgress:'" in err
    assert "hunter2" not in err


@pytest.mark.parametrize("named", [True, False], ids=["checkpointer_url", "default_file"])
def test_a_folder_where_the_checkpointers_file_goes_is_one_line_naming_the_setting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], named: bool
) -> None:
    folder = tmp_path / ("checkpoints" if named else "checkpoints.sqlite")
    folder.mkdir()
    config = chat_config(tmp_path, checkpointer_url=f"sqlite:///{folder}") if named else chat_config(tmp_path)

    code = chat_main(config, io.StringIO("hello\n"), io.StringIO(), tmp_path / "thread")

    assert code == 1
    [line] = capsys.readouterr().err.splitlines()
    if named:
        said = f"the checkpointer's file {folder} (CHECKPOINTER_URL) cannot be used: Is a directory"
    else:
        said = f"the data directory {tmp_path} (CLARIGATE_DATA_DIR) cannot be used: Is a directory"
    assert line.startswith(f"clarigate chat: {said}")
