"""The agent every platform's approval tests talk to: the real LangGraph agent on a scripted
model that calls ``delete_records`` (``tests.agent.user_graphs``) once, behind
``require_approval``, then says ``closing`` (``{last_user}``: the last thing the person said)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import yaml

from clarigate.agent.harness import AgentSettings
from clarigate.gateway.runners.in_process import LangGraphRunner

DELETE_TURN = {"tool_calls": [{"name": "delete_records", "args": {"table": "users", "limit": 5}}]}


def delete_records_agent(
    folder: Path, decisions: Sequence[str], closing: str = "Finished.", closings: int = 1
) -> LangGraphRunner:
    """The runner: ``delete_records`` needs a person's decision among ``decisions``; the model
    then says ``closing`` on each of its next ``closings`` turns."""
    script = folder / "script.yaml"
    turns = [DELETE_TURN, *({"content": closing} for _ in range(closings))]
    script.write_text(yaml.safe_dump(turns, sort_keys=False))  # table, then limit
    return LangGraphRunner(
        AgentSettings(
            model=f"scripted:{script}",
            checkpointer_url="memory://",
            tools=("tests.agent.user_graphs:delete_records",),
            require_approval={"delete_records": list(decisions)},
        )
    )


#: A query longer than an approval holds, with characters every platform's markup would take
#: (emphasis, a mention, an entity, a code span), and each of its parts numbered.
LONG_QUERY = "SELECT " + ", ".join(f"c{n}_a*b <@U1> &amp; `x`" for n in range(400)) + " FROM customers"
TWO_CALLS = {
    "tool_calls": [
        {"name": "run_sql", "args": {"query": LONG_QUERY}},
        {"name": "drop_table", "args": {"name": "customers"}},
    ]
}


def two_calls_agent(folder: Path) -> LangGraphRunner:
    """The runner: the model asks for a long ``run_sql`` and a ``drop_table`` at once, both behind
    ``require_approval`` (one Approve runs both), then says "Done." (``tests.agent.user_graphs``)."""
    script = folder / "two_calls.yaml"
    script.write_text(yaml.safe_dump([TWO_CALLS, {"content": "Done."}], sort_keys=False))
    gated = {"run_sql": ["approve", "reject"], "drop_table": ["approve", "reject"]}
    return LangGraphRunner(
        AgentSettings(
            model=f"scripted:{script}",
            checkpointer_url="memory://",
            tools=("tests.agent.user_graphs:run_sql", "tests.agent.user_graphs:drop_table"),
            require_approval=gated,
        )
    )


async def tool_results(runner: LangGraphRunner) -> list[str]:
    """What the agent read as its tool calls' results, in the latest checkpoint it saved (the
    runner's checkpointer keeps the tests' one conversation)."""
    assert runner._agent is not None
    saver = runner._agent._checkpointer.saver
    latest = [c async for c in saver.alist(None, limit=1)][0]
    return [m.text for m in latest.checkpoint["channel_values"]["messages"] if m.type == "tool"]
