"""A message written in the chat after Edit is no new argument for the tool.

The person clicks Edit on "post_announcement(text='Release 2.0 is out')", gets the Edit form
("Fill in" / Cancel) and writes in the DM instead: "ok" (meaning: fine as it is), or a new
question. Before, a one-field form took any bare message as its value, so the call counted as
edited and the tool posted "ok" to the whole team at once. A message is no decision on the
call: the tool never runs with words written to the bot; the form (or a ``text: …`` line)
changes the argument.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from clarigate.agent.harness import AgentSettings
from clarigate.gateway.runners.in_process import LangGraphRunner
from tests.agent import approval_tools

from .conftest import MakeWorld

ANNOUNCEMENT = "Release 2.0 is out"


@pytest.fixture
async def runner(tmp_path: Path) -> Any:
    """The agent on a scripted model: it calls ``post_announcement`` once, behind an approval
    allowing approve, edit and reject, then says "Done."."""
    approval_tools.ANNOUNCED.clear()
    script = tmp_path / "script.yaml"
    call = {"tool_calls": [{"name": "post_announcement", "args": {"text": ANNOUNCEMENT}}]}
    script.write_text(yaml.safe_dump([call, {"content": "Done."}], sort_keys=False))
    made = LangGraphRunner(
        AgentSettings(
            model=f"scripted:{script}",
            checkpointer_url="memory://",
            tools=(approval_tools.ANNOUNCE_TOOL,),
            require_approval={"post_announcement": ["approve", "edit", "reject"]},
        )
    )
    yield made
    await made.aclose()


async def _edit_form_then(make_world: MakeWorld, runner: Any, typed: str) -> tuple[Any, dict[str, Any]]:
    world = await make_world(runner)
    await world.user.dm("announce the release")
    await world.settle()
    await world.user.click(world.fake.posted(), "clarigate:o3")  # Edit
    await world.settle()
    form = world.fake.posted()
    assert "Edit the arguments of post_announcement" in json.dumps(form["blocks"])
    await world.user.dm(typed)  # written in the DM, not in the form
    await world.settle()
    return world, form


@pytest.mark.parametrize("typed", ["ok", "hmm wait, who is on call today?"])
async def test_a_message_after_edit_is_never_posted_as_the_edited_argument(
    make_world: MakeWorld, runner: Any, typed: str
) -> None:
    world, form = await _edit_form_then(make_world, runner, typed)
    assert approval_tools.ANNOUNCED == []  # nothing was posted: not "ok", not the original
    closed = json.dumps([e["blocks"] for e in world.fake.edits(form["ts"])], ensure_ascii=False)
    assert f"text: {typed}" not in closed  # never "✅ Answered by <@U1>: text: ok"


async def test_a_named_line_still_edits_the_argument(make_world: MakeWorld, runner: Any) -> None:
    """``text: …`` names the field: the person changed the argument on purpose."""
    await _edit_form_then(make_world, runner, "text: Release 2.0.1 is out")
    assert approval_tools.ANNOUNCED == ["Release 2.0.1 is out"]
