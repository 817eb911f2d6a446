"""``clarigate chat`` is the bot on the console platform: the core's settings, approvals,
streaming and runner apply as on every platform (LANGGRAPH_URL included)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from clarigate.gateway.cli.chat import chat_main
from clarigate.gateway.runtime.config import GatewayConfig
from tests.agent.typed_graphs import TRIP
from tests.gateway.langgraph_server.process import free_port

TOOL = "tests.gateway.cli.chat_tools:delete_data"


def script(tmp_path: Path, turns: list[dict[str, Any]]) -> str:
    """A scripted model playing ``turns``."""
    path = tmp_path / "script.json"
    path.write_text(json.dumps(turns), encoding="utf-8")
    return f"scripted:{path}"


class Recorded(io.StringIO):
    """A terminal that remembers each write (to see a reply arrive in pieces)."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[str] = []

    def write(self, text: str) -> int:
        self.writes.append(text)
        return super().write(text)


def run_chat(config: GatewayConfig, typed: list[str], stdout: io.StringIO | None = None) -> str:
    """The chat with ``typed`` as its input; what it printed."""
    stdout = stdout if stdout is not None else io.StringIO()
    assert chat_main(config, io.StringIO("\n".join(typed) + "\n"), stdout) == 0
    return stdout.getvalue()


def test_run_timeout_seconds_stops_a_run_in_the_chat_too(tmp_path: Path) -> None:
    model = script(tmp_path, [{"content": "Too late.", "delay_seconds": 30}])
    config = GatewayConfig(data_dir=str(tmp_path), run_timeout_seconds=0.5, agent={"model": model})

    out = run_chat(config, ["think hard", "again"])

    # each run is stopped, and the chat goes on to the next message
    assert out.count("  ! Sorry, that took too long and I stopped.") == 2
    assert "Too late." not in out
    assert "took longer than 0 s: stopped" in (tmp_path / "chat.log").read_text(encoding="utf-8")


def approval_chat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, decisions: list[str], target: str = "test-data"
) -> GatewayConfig:
    """A model that calls ``delete_data`` on ``target`` under ``require_approval`` with
    ``decisions``, then says it finished; each call of the tool is written to ``tools.log``."""
    tool_log = tmp_path / "tools.log"
    tool_log.touch()
    monkeypatch.setenv("CHAT_TOOL_LOG", str(tool_log))
    model = script(
        tmp_path,
        [
            {"tool_calls": [{"name": "delete_data", "args": {"target": target}}]},
            {"content": "Finished: {last_user}"},
        ],
    )
    agent = {"model": model, "tools": [TOOL], "require_approval": {"delete_data": decisions}}
    return GatewayConfig(data_dir=str(tmp_path), agent=agent)


def tools_ran(tmp_path: Path) -> list[str]:
    """The tool calls made, as ``approval_chat``'s tool logged them."""
    return (tmp_path / "tools.log").read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize(("typed", "ran"), [(["1", "confirm"], ["delete_data test-data"]), (["Reject"], [])])
def test_an_approval_is_asked_and_decided_by_typing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, typed: list[str], ran: list[str]
) -> None:
    config = approval_chat(tmp_path, monkeypatch, ["approve", "reject"])

    out = run_chat(config, ["clean up the test data", *typed])  # Approve asks "confirm" first

    assert "Approve running delete_data?" in out
    assert "  1. Approve" in out and "  2. Reject" in out
    assert tools_ran(tmp_path) == ran
    assert "bot> Finished" in out


def test_an_approvals_edit_asks_the_arguments_field_by_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = approval_chat(tmp_path, monkeypatch, ["approve", "edit", "reject"])

    out = run_chat(config, ["clean up the test data", "Edit", "other-data"])

    assert "  3. Edit" in out and "Edit the arguments of delete_data" in out
    assert "  target (now test-data; Enter keeps it): " in out
    assert tools_ran(tmp_path) == ["delete_data other-data"]
    assert "bot> Finished" in out


#: An argument longer than an approval's question holds (200 characters a string).
LONG_SQL = "DELETE FROM sales WHERE " + " AND ".join(f"s.region_{i} = 'eu-{i}'" for i in range(12))


def test_an_approval_still_open_after_a_restart_shows_its_calls_in_full_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = approval_chat(tmp_path, monkeypatch, ["approve", "reject"], target=LONG_SQL)
    shown = f'bot> ```\ndelete_data(target="{LONG_SQL}")\n```\n'
    question = "⚠️ Every call is shown in full above."

    first = run_chat(config, ["clean up the sales data"])  # input ends, the approval open
    assert shown in first and first.index(shown) < first.index(question)

    second = run_chat(config, ["Reject"])  # the chat again: the approval as its turn showed it

    continuing = second.index("(continuing: this question is still open)")
    assert continuing < second.index(shown) < second.index(question) < second.index("bot> Finished")
    assert tools_ran(tmp_path) == []


def test_a_reply_is_printed_as_the_model_writes_it(tmp_path: Path) -> None:
    words = "The guide says to run the migration first, then restart every worker in turn."
    model = script(tmp_path, [{"content": words, "token_delay_seconds": 0.05}])
    stdout = Recorded()

    config = GatewayConfig(data_dir=str(tmp_path), agent={"model": model})

    out = run_chat(config, ["how do I upgrade?"], stdout)

    assert out.count(words) == 1 and f"bot> {words}\n" in out
    pieces = [w for w in stdout.writes if w and w in words]
    assert len(pieces) > 2  # streamed: the line grew piece by piece


def test_a_tool_step_is_shown_while_it_runs(tmp_path: Path) -> None:
    model = script(
        tmp_path,
        [
            {"tool_calls": [{"name": "search_docs", "args": {"query": "upgrades"}}]},
            {"content": "Run the migration first."},
        ],
    )
    agent = {"model": model, "tools": ["tests.gateway.cli.chat_tools:search_docs"]}

    out = run_chat(GatewayConfig(data_dir=str(tmp_path), agent=agent), ["how do I upgrade?"])

    step, reply = out.find("  🔧 Searching the docs…\n"), out.find("bot> Run the migration first.\n")
    assert 0 <= step < reply  # the step on its own line, before the answer
    assert out.count("Searching the docs") == 1


def test_with_streaming_off_the_reply_comes_whole(tmp_path: Path) -> None:
    words = "The guide says to run the migration first, then restart every worker in turn."
    model = script(tmp_path, [{"content": words, "token_delay_seconds": 0.05}])
    stdout = Recorded()
    config = GatewayConfig(data_dir=str(tmp_path), streaming="off", agent={"model": model})

    out = run_chat(config, ["how do I upgrade?"], stdout)

    assert f"bot> {words}\n" in out
    assert not [w for w in stdout.writes if w and w in words]  # no piece on its own


def test_langgraph_url_chat_runs_on_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, langgraph_server: Any
) -> None:
    monkeypatch.setenv("LANGGRAPH_URL", langgraph_server.url)
    monkeypatch.setenv("CLARIGATE_AGENT__ASSISTANT_ID", "asker")
    config = GatewayConfig(data_dir=str(tmp_path))

    out = run_chat(config, ["set up storage", "2"])

    assert "Which database should I use?" in out and "  2. SQLite" in out
    assert "bot> Going with" in out and "SQLite" in out.split("bot> Going with", 1)[1]


def test_an_approval_on_the_server_runs_its_tool_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, langgraph_server: Any
) -> None:
    monkeypatch.setenv("LANGGRAPH_URL", langgraph_server.url)
    monkeypatch.setenv("CLARIGATE_AGENT__ASSISTANT_ID", "approver")
    before = len(langgraph_server.tool_calls())

    out = run_chat(GatewayConfig(data_dir=str(tmp_path)), ["clean up the test data", "Approve", "confirm"])

    assert "delete_data" in out
    assert langgraph_server.tool_calls()[before:] == ["delete_data test-data"]
    assert "bot> Done" in out


def test_a_server_question_is_still_open_after_a_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, langgraph_server: Any
) -> None:
    monkeypatch.setenv("LANGGRAPH_URL", langgraph_server.url)
    monkeypatch.setenv("CLARIGATE_AGENT__ASSISTANT_ID", "interrupter")
    first = run_chat(GatewayConfig(data_dir=str(tmp_path)), ["deploy it"])  # input ends, question open
    assert "Which region should I deploy to?" in first

    second = run_chat(GatewayConfig(data_dir=str(tmp_path)), ["us-east"])

    assert "(continuing: this question is still open)" in second
    assert "Which region should I deploy to?" in second
    assert "bot> Deploying to us-east." in second


def test_a_long_server_question_still_open_after_a_restart_shows_its_text_in_full_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, langgraph_server: Any
) -> None:
    monkeypatch.setenv("LANGGRAPH_URL", langgraph_server.url)
    monkeypatch.setenv("CLARIGATE_AGENT__ASSISTANT_ID", "long_booking")
    trip = TRIP.rsplit("\n", 1)[0]
    shown = f"bot> ```\n{trip}\n\nWho travels, when, and how.\n```\n"
    first = run_chat(GatewayConfig(data_dir=str(tmp_path)), ["book my trip"])  # input ends in the form
    assert shown in first and "Who travels, and when?" in first.split(shown, 1)[1]

    second = run_chat(GatewayConfig(data_dir=str(tmp_path)), ["/quit"])

    continuing = second.index("(continuing: this question is still open)")
    assert continuing < second.index(shown) < second.index("Who travels, and when?")
    assert "Shown in full above." in second.split(shown, 1)[1]


def test_an_unreachable_langgraph_url_is_one_line_not_a_chat_that_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    monkeypatch.setenv("LANGGRAPH_URL", url)

    code = chat_main(GatewayConfig(data_dir=str(tmp_path)), io.StringIO("hello\n"), io.StringIO())

    assert code == 1
    err = capsys.readouterr().err
    assert err == f"clarigate chat: the agent could not start: the agent does not answer at {url}\n"


def test_an_unreachable_langgraph_url_is_named_without_its_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    port = free_port()  # nothing listens there
    monkeypatch.setenv("LANGGRAPH_URL", f"http://lguser:pw-s3cret@127.0.0.1:{port}/?api_key=key-s3cret")

    code = chat_main(GatewayConfig(data_dir=str(tmp_path)), io.StringIO("hello\n"), io.StringIO())

    assert code == 1
    err = capsys.readouterr().err
    assert "the agent does not answer at http://lguser:***@127.0.0.1" in err, err
    assert "s3cret" not in err
