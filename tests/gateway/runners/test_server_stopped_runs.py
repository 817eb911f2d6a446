"""Server runs that do not end as their graph planned, as the person sees them: a run that reaches
the recursion limit reads as in process; a run someone stops on the server (Studio's Cancel:
``runs.cancel`` with ``interrupt`` or ``rollback``) is said to be stopped, asked nothing and never
run again; a run past the gateway's ``run_timeout_seconds`` is stopped on the server too, so the
person's next message runs at once; one the server gives up on itself reads as one the gateway gave
up on."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client

from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.harness import AgentSettings
from clarigate.agent.protocol import catalog
from clarigate.agent.settings import AgentOptions
from clarigate.gateway.runners.base import AgentRunner
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.runners.routed import RoutedRunner, route_thread
from clarigate.gateway.runners.server import LangGraphServerRunner, server_thread_id
from clarigate.gateway.runtime.routes import DEFAULT_ROUTE, Route
from clarigate.gateway.store.memory import MemoryStore

from ..langgraph_server.long_graphs import SLOW_DONE, SLOW_SECONDS
from ..langgraph_server.process import LangGraphServer

DELETED = "deleted the old backups"  # the slow job's side effect, in the server's tool log
TOO_LONG = "Sorry, that took too long and I stopped. Please try again, perhaps with a smaller request."
#: How long the second server's background runs may take (``BG_JOB_TIMEOUT_SECS``), in seconds.
SERVER_TIMEOUT = 1.5


@pytest.fixture(scope="module")
def short_runs_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LangGraphServer]:
    """A second ``langgraph dev`` whose own timeout stops every run after ``SERVER_TIMEOUT``."""
    server = LangGraphServer(
        tmp_path_factory.mktemp("short-runs"), env={"BG_JOB_TIMEOUT_SECS": str(SERVER_TIMEOUT)}
    )
    server.start()
    yield server
    server.stop()


def _runner(server: LangGraphServer, graph: str, **settings: Any) -> LangGraphServerRunner:
    return LangGraphServerRunner(AgentOptions(server_url=server.url, assistant_id=graph, **settings))


async def _server_thread(gateway: Any, chat: Any, name: str, route: str = DEFAULT_ROUTE) -> str:
    """The server thread of chat ``name`` (its ``route``'s), once the gateway has mapped it."""
    for _ in range(100):
        if thread := await gateway.store.thread_for_chat(chat.conversation(name).thread_key, 3600):
            return server_thread_id(route_thread(route, thread))
        await asyncio.sleep(0.1)
    raise AssertionError("the chat has no thread")


async def _running(client: Any, sid: str) -> str:
    """The id of the run under way on server thread ``sid``."""
    for _ in range(100):
        try:
            runs = await client.runs.list(sid, status="running")
        except Exception:  # noqa: BLE001 - the thread may not be made yet
            runs = []
        if runs:
            return str(runs[0]["run_id"])
        await asyncio.sleep(0.1)
    raise AssertionError("no run started")


async def test_the_recursion_limit_on_a_server_reads_as_in_process(
    langgraph_server: LangGraphServer, make_gateway: Any
) -> None:
    """A graph that never ends stops at ``recursion_limit`` (README: it applies in process and on
    a server) with one honest sentence, the same on both, instead of "something went wrong"."""
    local = LangGraphRunner(
        AgentSettings(
            checkpointer_url="memory://",
            graph="tests.gateway.langgraph_server.long_graphs:loop",
            recursion_limit=5,
        )
    )
    said: dict[str, list[str]] = {}
    for where, runner in (
        ("in process", local),
        ("server", _runner(langgraph_server, "loop", recursion_limit=5)),
    ):
        try:
            gateway, chat = await make_gateway(MemoryStore(f"stopped-loop-{where}"), runner)
            await chat.say("go on and on", chat=f"loop-{where}")
            await gateway.drain(timeout=60)
            said[where] = chat.texts()
        finally:
            await runner.aclose()
    assert said["server"] == said["in process"] == [catalog.text("limit_model_calls", "en")]


@pytest.mark.parametrize(
    ("action", "text", "locale"),
    [("interrupt", "do the slow cleanup", "en"), ("rollback", "请做 slow 清理", "zh")],
)
async def test_a_run_cancelled_on_the_server_is_said_stopped_and_not_run_again(
    langgraph_server: LangGraphServer, make_gateway: Any, action: str, text: str, locale: str
) -> None:
    """Someone stops the run on the server. With ``interrupt`` the thread is left as on a
    breakpoint, but the graph has none: no "Continue?" (which would run the step again). With
    ``rollback`` the server deletes the run, as a crash may: it is not started again. Either way the
    person reads one line saying so, in their language, and the job is not done."""
    runner = _runner(langgraph_server, "slow_if")
    client = get_client(url=langgraph_server.url)
    chat_id = f"cancel-{action}"
    try:
        gateway, chat = await make_gateway(MemoryStore(f"stopped-{action}"), runner)
        await chat.say(text, chat=chat_id)
        sid = await _server_thread(gateway, chat, chat_id)
        await client.runs.cancel(sid, await _running(client, sid), action=action)  # type: ignore[arg-type]
        await gateway.drain(timeout=60)
        assert chat.texts() == [catalog.text("run_cancelled", locale)]  # type: ignore[arg-type]
        assert chat.requests() == []  # nothing to answer
        runs = await client.runs.list(sid)
        # the stopped run stays stopped (rollback: deleted), and none was started again
        assert [run["status"] for run in runs] == (["interrupted"] if action == "interrupt" else [])
        assert DELETED not in langgraph_server.tool_calls()
        await chat.say("hello", chat=chat_id)  # the chat goes on as ever
        await gateway.drain(timeout=60)
        assert chat.texts()[1:] == ["echo: hello"]
    finally:
        await client.http.client.aclose()
        await runner.aclose()


def _flaky_cancel(runner: LangGraphServerRunner) -> list[str]:
    """Make the runner's first cancel fail as a server that is briefly unreachable does; the
    actions of the cancels that reached the server."""
    cancel, reached = runner._client.runs.cancel, []

    async def once_refused(*args: Any, **kwargs: Any) -> None:
        if not reached:
            reached.append("refused")
            raise httpx.ConnectError("connection refused")
        reached.append(kwargs["action"])
        await cancel(*args, **kwargs)

    runner._client.runs.cancel = once_refused  # type: ignore[method-assign]
    return reached


@pytest.mark.parametrize("through", ["agent", "route", "flaky server"])
async def test_a_run_past_the_gateways_timeout_is_stopped_on_the_server(
    langgraph_server: LangGraphServer, make_gateway: Any, through: str
) -> None:
    """``run_timeout_seconds`` passes: the person reads "I stopped", and it is true: the server run
    is cancelled (the job does not go on to delete the backups), so the next message runs at once
    instead of waiting behind it. The same through a route whose agent is on the server, and when
    the first cancel finds the server unreachable for a moment (it is tried again)."""
    server_runner = _runner(langgraph_server, "slow_if")
    cancels = _flaky_cancel(server_runner) if through == "flaky server" else None
    chat_id = f"timeout-{through}"
    runner: AgentRunner = server_runner
    route_name = "ops" if through == "route" else DEFAULT_ROUTE
    if through == "route":
        route = Route(name=route_name, match={"chat": chat_id}, agent={})  # type: ignore[arg-type]
        runner = RoutedRunner(ScriptedRunner(), [(route, server_runner)])
    client = get_client(url=langgraph_server.url)
    try:
        gateway, chat = await make_gateway(MemoryStore(f"stopped-{chat_id}"), runner, run_timeout_seconds=1.5)
        await chat.say("do the slow cleanup", chat=chat_id)
        await gateway.drain(timeout=60)
        assert chat.texts() == [TOO_LONG]
        sid = await _server_thread(gateway, chat, chat_id, route_name)
        await chat.say("hello", chat=chat_id)
        await gateway.drain(timeout=60)
        assert chat.texts() == [TOO_LONG, "echo: hello"]  # not queued behind the stopped run
        await asyncio.sleep(SLOW_SECONDS)  # the slow job's time, had it gone on
        assert [run["status"] for run in await client.runs.list(sid)] == ["success", "interrupted"]
        assert DELETED not in langgraph_server.tool_calls()
        said = [m["content"] for m in (await client.threads.get_state(sid))["values"]["messages"]]
        assert SLOW_DONE not in said
        if cancels is not None:
            assert cancels == ["refused", "interrupt"]
    finally:
        await client.http.client.aclose()
        await runner.aclose()


@pytest.mark.parametrize(
    ("action", "text", "locale"), [("interrupt", "what is new?", "en"), ("rollback", "有什么新消息？", "zh")]
)
async def test_a_superseding_run_cancelled_on_the_server_is_said_stopped(
    langgraph_server: LangGraphServer, make_gateway: Any, action: str, text: str, locale: str
) -> None:
    """A new message over an open question first closes it on the server (a run resuming it as
    superseded), and someone stops that run there. The person reads that the request was stopped,
    as for any run stopped on the server: the new message does not run, nor is the question
    closed again in a run of its own."""
    runner = _runner(langgraph_server, "ask_then_slow")
    client = get_client(url=langgraph_server.url)
    chat_id = f"cancel-superseding-{action}"
    try:
        gateway, chat = await make_gateway(MemoryStore(f"stopped-superseding-{action}"), runner)
        await chat.say("clean up the backups", chat=chat_id)
        await gateway.drain(timeout=60)
        assert chat.last_request().request.question == "Which backups should I delete?"
        await chat.reply(text)
        sid = await _server_thread(gateway, chat, chat_id)
        await client.runs.cancel(sid, await _running(client, sid), action=action)  # type: ignore[arg-type]
        await gateway.drain(timeout=60)
        assert chat.texts() == [catalog.text("run_cancelled", locale)]  # type: ignore[arg-type]
        # the question's run, then the superseding run stopped there (rollback: deleted): none after
        stopped = ["interrupted"] if action == "interrupt" else []
        assert [run["status"] for run in await client.runs.list(sid)] == [*stopped, "success"]
    finally:
        await client.http.client.aclose()
        await runner.aclose()


@pytest.mark.parametrize(("text", "locale"), [("do the slow cleanup", "en"), ("请做 slow 清理", "zh")])
async def test_a_run_past_the_servers_own_timeout_reads_as_the_gateways(
    short_runs_server: LangGraphServer, make_gateway: Any, text: str, locale: str
) -> None:
    """The server gives up on a run itself (``BG_JOB_TIMEOUT_SECS``: the run ends ``timeout``): the
    person reads that it took too long, in their language, as when the gateway gives up, not that
    something went wrong; the job was not done, and the next message runs."""
    runner = _runner(short_runs_server, "slow_if")
    client = get_client(url=short_runs_server.url)
    chat_id = f"server-timeout-{locale}"
    try:
        gateway, chat = await make_gateway(MemoryStore(f"stopped-{chat_id}"), runner)
        await chat.say(text, chat=chat_id)
        await gateway.drain(timeout=60)
        assert chat.texts() == [catalog.text("run_too_long", locale)]  # type: ignore[arg-type]
        sid = await _server_thread(gateway, chat, chat_id)
        assert [run["status"] for run in await client.runs.list(sid)] == ["timeout"]
        await chat.say("hello", chat=chat_id)
        await gateway.drain(timeout=60)
        assert chat.texts()[1:] == ["echo: hello"]
        assert DELETED not in short_runs_server.tool_calls()
    finally:
        await client.http.client.aclose()
        await runner.aclose()
