"""Operators' own graphs at the edges, through the gateway, in process and on a real LangGraph
server: a graph that finishes without a word is told it is done (not that it failed, nothing
logged as a problem); a typed question cancelled next to a plain one pending from the same step
stops the whole task, so nothing says a question is still open; interrupt values with no text
ask a question in words; a graph the gateway cannot run is refused naming only the keys its
author wrote."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from clarigate.agent.harness import AgentSettings
from clarigate.agent.protocol import catalog
from clarigate.agent.settings import AgentOptions
from clarigate.gateway.runners.base import AgentRunner
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.runners.server import LangGraphServerRunner, server_thread_id
from clarigate.gateway.store.memory import MemoryStore
from tests.agent import edge_graphs

NOTHING = "Done: nothing to report."
STOPPED = (
    "The task this question was part of has stopped: it cannot go on without an answer. "
    "Send a new message to start again."
)
WAITING = "The agent is waiting for your reply."


@pytest.fixture(autouse=True)
def _fresh() -> None:
    edge_graphs.DONE.clear()
    edge_graphs.ANSWERS.clear()


def _runner(where: str, graph: str, request: pytest.FixtureRequest) -> AgentRunner:
    if where == "server":
        server = request.getfixturevalue("langgraph_server")
        return LangGraphServerRunner(AgentOptions(server_url=server.url, assistant_id=graph), bot_id="bot-1")
    return LangGraphRunner(
        AgentSettings(checkpointer_url="memory://", graph=f"tests.agent.edge_graphs:{graph}")
    )


async def _thread(gateway: Any, chat: Any, where: str) -> str:
    """The runner's thread of the test chat (a server thread's id on a server)."""
    thread = await gateway.store.thread_for_chat(chat.conversation().thread_key, 3600)
    assert thread is not None
    return server_thread_id(thread) if where == "server" else thread


def test_the_new_lines_are_in_every_language() -> None:
    assert catalog.text("run_nothing_to_report", "en") == NOTHING
    assert catalog.text("run_nothing_to_report", "zh") == "已完成，没有需要汇报的内容。"
    assert catalog.text("interrupt_without_text", "en") == WAITING
    assert catalog.text("interrupt_without_text", "zh") == "智能体正在等待您的回复。"


@pytest.mark.parametrize("where", ["in_process", "server"])
async def test_a_graph_that_finishes_without_a_reply_is_told_done_not_failed(
    where: str, request: pytest.FixtureRequest, make_gateway: Any, caplog: pytest.LogCaptureFixture
) -> None:
    runner = _runner(where, "silent", request)
    try:
        gateway, chat = await make_gateway(MemoryStore(f"silent-{where}"), runner)
        with caplog.at_level(logging.INFO):
            await chat.say("remember the milk")
            await gateway.drain(timeout=30)
            await chat.say("记住买牛奶")
            await gateway.drain(timeout=30)
    finally:
        await runner.aclose()
    assert chat.texts() == [NOTHING, "已完成，没有需要汇报的内容。"]
    assert not chat.of_kind("error") and not chat.requests()
    if where == "in_process":
        assert edge_graphs.DONE == ["noted remember the milk", "noted 记住买牛奶"]
    problems = [r for r in caplog.records if r.name.startswith("clarigate") and r.levelno >= logging.WARNING]
    assert problems == []


@pytest.mark.parametrize("where", ["in_process", "server"])
async def test_cancelling_a_typed_question_next_to_a_plain_one_stops_the_whole_task(
    where: str, request: pytest.FixtureRequest, make_gateway: Any
) -> None:
    """Both steps of one super-step ask; the typed "Really deploy?" is asked first and cancelled
    (its schema needs ``sure``: the declined answer cannot resume it). The person reads that the
    task stopped, and the thread agrees: no question of it is still waiting (``clarigate chat``
    going on with the thread asks none); the next message starts afresh."""
    runner = _runner(where, "parallel", request)
    try:
        gateway, chat = await make_gateway(MemoryStore(f"parallel-{where}"), runner)
        await chat.say("deploy")
        await gateway.drain(timeout=30)
        [asked] = chat.requests()
        assert asked.request.question == "Really deploy?"
        thread = await _thread(gateway, chat, where)
        await chat.cancel()
        await gateway.drain(timeout=30)
        assert chat.texts() == [STOPPED] and chat.requests() == [asked]
        assert await runner.pending_request(thread) is None
        assert await runner.pending_asked(thread) is None

        await chat.say("/status")
        await gateway.drain(timeout=30)
        assert "• No open question." in chat.texts()[-1]
    finally:
        await runner.aclose()
    assert edge_graphs.DONE == []  # neither step went on


@pytest.mark.parametrize(
    ("value", "question"),
    [(None, WAITING), ("", WAITING), ("   ", WAITING), ({}, WAITING), (0, "0"), (2.5, "2.5")],
)
async def test_an_interrupt_value_without_text_asks_in_words(
    value: Any, question: str, request: pytest.FixtureRequest, make_gateway: Any
) -> None:
    edge_graphs.ODD.append(value)
    runner = _runner("in_process", "odd", request)
    try:
        gateway, chat = await make_gateway(MemoryStore("odd-value"), runner)
        await chat.say("go")
        await gateway.drain(timeout=30)
        [asked] = chat.requests()
        assert asked.request.question == question
        assert asked.request.input_mode == "free_text" and asked.request.context is None
        await chat.reply("blue")
        await gateway.drain(timeout=30)
    finally:
        await runner.aclose()
    assert edge_graphs.ANSWERS == ["blue"] and chat.texts() == ["Got 'blue'."]


async def test_a_chinese_thread_is_asked_in_chinese(
    request: pytest.FixtureRequest, make_gateway: Any
) -> None:
    edge_graphs.ODD.append(None)
    runner = _runner("in_process", "odd", request)
    try:
        gateway, chat = await make_gateway(MemoryStore("odd-value-zh"), runner)
        await chat.say("开始吧")
        await gateway.drain(timeout=30)
    finally:
        await runner.aclose()
    assert chat.last_request().request.question == "智能体正在等待您的回复。"


async def test_prompt_and_choices_are_asked_as_a_question_with_options(
    request: pytest.FixtureRequest, make_gateway: Any
) -> None:
    """``{"prompt": …, "choices": […]}``: the prompt asked with the choices as buttons (not the value
    as JSON), resumed as any value outside the protocol's shape is: with the answer's text."""
    edge_graphs.ODD.append({"prompt": "Which colour?", "choices": ["red", "blue"], "why": "for the logo"})
    runner = _runner("in_process", "odd", request)
    try:
        gateway, chat = await make_gateway(MemoryStore("prompt-choices"), runner)
        await chat.say("go")
        await gateway.drain(timeout=30)
        asked = chat.last_request().request
        assert (asked.question, asked.context) == ("Which colour?", "for the logo")
        assert [o.label for o in asked.options] == ["red", "blue"]
        await chat.click(1)
        await gateway.drain(timeout=30)
    finally:
        await runner.aclose()
    assert edge_graphs.ANSWERS == ["blue"]


async def test_a_graph_without_messages_is_refused_naming_only_its_own_keys(tmp_path: Path) -> None:
    runner = LangGraphRunner(
        AgentSettings(
            graph="tests.agent.stream_graphs:no_messages",
            checkpointer_url="memory://",
            data_dir=str(tmp_path),
        )
    )
    with pytest.raises(ValueError, match="state has no 'messages' key") as raised:
        await runner.start()
    await runner.aclose()
    assert "(its keys: count)" in str(raised.value) and "branch:" not in str(raised.value)


async def test_question_and_choices_are_asked_with_the_choices_as_options(
    request: pytest.FixtureRequest, make_gateway: Any
) -> None:
    """``{"question": …, "choices": […]}`` is in the protocol's shape but for its options' name: the
    choices are its buttons (not a line of JSON under the question), and the graph is resumed with
    the answer's payload, the picked choice its value as the graph wrote it."""
    edge_graphs.ODD.append({"question": "How many?", "choices": [1, 3]})
    runner = _runner("in_process", "odd", request)
    try:
        gateway, chat = await make_gateway(MemoryStore("question-choices"), runner)
        await chat.say("go")
        await gateway.drain(timeout=30)
        asked = chat.last_request().request
        assert (asked.question, asked.context) == ("How many?", None)
        assert [o.label for o in asked.options] == ["1", "3"]
        await chat.click(1)
        await gateway.drain(timeout=30)
    finally:
        await runner.aclose()
    [answer] = edge_graphs.ANSWERS
    assert answer["response_kind"] == "option" and answer["value"] == 3


@pytest.mark.parametrize(("value", "question"), [(None, WAITING), ("", WAITING), (7, "7")])
async def test_a_typed_interrupt_without_text_asks_its_form_in_words(
    value: Any, question: str, request: pytest.FixtureRequest, make_gateway: Any
) -> None:
    edge_graphs.ODD.append(value)
    runner = _runner("in_process", "odd_form", request)
    try:
        gateway, chat = await make_gateway(MemoryStore("odd-form"), runner)
        await chat.say("go")
        await gateway.drain(timeout=30)
        asked = chat.last_request().request
        assert (asked.question, asked.input_mode) == (question, "form")
        await chat.submit({"sure": True})
        await gateway.drain(timeout=30)
    finally:
        await runner.aclose()
    assert edge_graphs.ANSWERS == [edge_graphs.Deploy(sure=True)]


@pytest.mark.parametrize(
    ("value", "question", "buttons", "pick", "value_picked"),
    [
        (
            {"context": "Prod deploy pending", "options": ["go", "stop"]},
            "Prod deploy pending",
            ["go", "stop"],
            1,
            "stop",
        ),
        ({"question": None, "options": ["a", "b"]}, WAITING, ["a", "b"], 0, "a"),
        ({"choices": [{"label": "Yes", "value": True}, "no"]}, WAITING, ["Yes", "no"], 0, True),
    ],
)
async def test_options_without_a_question_are_asked_as_buttons(
    value: dict[str, Any],
    question: str,
    buttons: list[str],
    pick: int,
    value_picked: Any,
    request: pytest.FixtureRequest,
    make_gateway: Any,
) -> None:
    """A value with options but no question is no line of JSON: its context (else the catalog's
    words) asks, its options are buttons, and a click resumes the graph as a choice question's
    does, with the picked option's value as the graph wrote it."""
    edge_graphs.ODD.append(value)
    runner = _runner("in_process", "odd", request)
    try:
        gateway, chat = await make_gateway(MemoryStore("options-only"), runner)
        await chat.say("go")
        await gateway.drain(timeout=30)
        asked = chat.last_request().request
        assert (asked.question, asked.context) == (question, None)
        assert asked.input_mode == "choice_with_other"
        assert [o.label for o in asked.options] == buttons
        await chat.click(pick)
        await gateway.drain(timeout=30)
    finally:
        await runner.aclose()
    [answer] = edge_graphs.ANSWERS
    assert answer["response_kind"] == "option" and answer["value"] == value_picked


@pytest.mark.parametrize(
    ("value", "question"), [({"question": 5}, "5"), ({"colour": "red"}, '{"colour": "red"}')]
)
async def test_a_number_as_the_question_is_asked_as_its_text(
    value: Any, question: str, request: pytest.FixtureRequest, make_gateway: Any
) -> None:
    """``{"question": 5}`` asks "5", as ``interrupt(5)`` does; a dict with none of the request's
    keys is still shown as it is."""
    edge_graphs.ODD.append(value)
    runner = _runner("in_process", "odd", request)
    try:
        gateway, chat = await make_gateway(MemoryStore("number-question"), runner)
        await chat.say("go")
        await gateway.drain(timeout=30)
        asked = chat.last_request().request
        assert (asked.question, asked.context, asked.input_mode) == (question, None, "free_text")
        await chat.reply("blue")
        await gateway.drain(timeout=30)
    finally:
        await runner.aclose()
    [answer] = edge_graphs.ANSWERS
    # a request is resumed with the answer's payload, any other value with the answer's text
    assert (answer["value"] if "question" in value else answer) == "blue"


@pytest.mark.parametrize(
    ("options", "buttons", "named"),
    [
        ("ab", [], "`options` is a str, not a list"),
        ([None, {"x": 1}], [], "2 of 2 `options` items are not options"),
        (["go", None], ["go"], "1 of 2 `options` items are not options"),
    ],
)
async def test_options_that_are_no_options_are_not_buttons_and_are_named_once(
    options: Any,
    buttons: list[str],
    named: str,
    request: pytest.FixtureRequest,
    make_gateway: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A string is not a list of one option, an item without a label no option: no button for
    them, the question answerable as free text, and the graph's author told once in the log (by
    position and type, not content) however often the question is shown or read."""
    edge_graphs.ODD.append({"question": "Pick", "options": options})
    runner = _runner("in_process", "odd", request)
    try:
        gateway, chat = await make_gateway(MemoryStore("bad-options"), runner)
        with caplog.at_level(logging.WARNING):
            await chat.say("go")
            await gateway.drain(timeout=30)
            asked = chat.last_request().request
            assert asked.question == "Pick" and [o.label for o in asked.options] == buttons
            await chat.say("/status")
            await gateway.drain(timeout=30)
            await (chat.click(0) if buttons else chat.reply("blue"))
            await gateway.drain(timeout=30)
    finally:
        await runner.aclose()
    [answer] = edge_graphs.ANSWERS
    assert answer["value"] == (buttons[0] if buttons else "blue")
    [warned] = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert named in warned and "'ab'" not in warned
