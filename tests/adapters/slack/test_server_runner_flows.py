"""A person on (fake) Slack talks to an agent deployed on a real LangGraph server (``langgraph dev``):
the question is rendered as buttons, the click answers it, and an approval runs the tool once."""

from __future__ import annotations

from clarigate.agent.settings import AgentOptions
from clarigate.gateway.runners.server import LangGraphServerRunner

from .conftest import MakeWorld


def buttons(message: dict) -> dict[str, str]:
    """Button text -> action id among a message's blocks."""
    return {
        e["text"]["text"]: e["action_id"]
        for b in message.get("blocks", [])
        for e in b.get("elements", [])
        if e.get("type") == "button"
    }


async def test_a_server_agents_question_is_answered_by_a_click_on_slack(
    make_world: MakeWorld, langgraph_server
):
    runner = LangGraphServerRunner(AgentOptions(server_url=langgraph_server.url, assistant_id="asker"))
    world = await make_world(runner)
    try:
        await world.user.dm("set up storage")
        await world.settle()
        question = world.fake.posted()
        assert "Which database should I use?" in str(question["blocks"])
        click = await world.user.click(question, buttons(question)["SQLite"])
        assert click.status_code == 200
        await world.settle()
        assert "Answered by <@U1>: SQLite" in str(world.fake.edits(question["ts"])[-1]["blocks"])
        reply = world.fake.last_shown()
        assert reply["text"].startswith("Going with") and "SQLite" in reply["text"]
    finally:
        await runner.aclose()


async def test_an_approval_on_slack_runs_the_tool_exactly_once(make_world: MakeWorld, langgraph_server):
    runner = LangGraphServerRunner(AgentOptions(server_url=langgraph_server.url, assistant_id="approver"))
    world = await make_world(runner)
    before = len(langgraph_server.tool_calls())
    try:
        await world.user.dm("clean up the test data")
        await world.settle()
        question = world.fake.posted()
        assert "delete_data" in str(question["blocks"]) and len(langgraph_server.tool_calls()) == before
        approve = buttons(question)["Approve"]
        await world.user.click(question, approve)
        await world.user.click(question, approve)  # a second click changes nothing
        await world.settle()
        assert langgraph_server.tool_calls()[before:] == ["delete_data test-data"]
        assert world.fake.last_shown()["text"].startswith("Done")
    finally:
        await runner.aclose()
