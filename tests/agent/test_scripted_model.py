"""``scripted:PATH``: turns from YAML or JSON, chosen by the number of AI messages given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from clarigate.agent.models import build_chat_model
from clarigate.agent.models.scripted import RECORDED_CALLS, SCRIPT_FINISHED, ScriptedChatModel, load_script

YAML_SCRIPT = """\
- content: "You said: {last_user}"
- content: ""
  tool_calls:
    - name: ask_clarification
      args: {question: "About {last_user}?", options: [a, b]}
"""


def test_turns_follow_the_number_of_ai_messages(tmp_path: Path) -> None:
    path = tmp_path / "script.yaml"
    path.write_text(YAML_SCRIPT)
    model = build_chat_model(f"scripted:{path}")
    assert isinstance(model, ScriptedChatModel) and model.bind_tools([]) is model

    first = model.invoke([HumanMessage("hello", id="h1")])
    assert first.content == "You said: hello" and not first.tool_calls

    history = [HumanMessage("hello", id="h1"), first, HumanMessage("pets", id="h2")]
    second = model.invoke(history)
    assert second.tool_calls[0]["name"] == "ask_clarification"
    assert second.tool_calls[0]["args"] == {"question": "About pets?", "options": ["a", "b"]}

    tool_result = ToolMessage("asked", tool_call_id=second.tool_calls[0]["id"])
    third = model.invoke([*history, second, tool_result, HumanMessage("a", id="h3")])
    assert third.content == SCRIPT_FINISHED
    assert len(model.calls) == 3 and model.calls[1] == history


def test_json_works_the_same(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(json.dumps([{"content": "one"}, {"content": "two"}]))
    model = ScriptedChatModel.from_file(path)
    assert model.invoke([HumanMessage("x")]).content == "one"
    assert model.invoke([HumanMessage("x"), AIMessage("one"), HumanMessage("y")]).content == "two"


def test_a_restarted_model_plays_the_same_turn(tmp_path: Path) -> None:
    path = tmp_path / "script.yaml"
    path.write_text(YAML_SCRIPT)
    history = [HumanMessage("hello", id="h1"), AIMessage("You said: hello"), HumanMessage("pets", id="h2")]
    before = ScriptedChatModel.from_file(path).invoke(history)
    after = ScriptedChatModel.from_file(path).invoke(history)
    assert before.tool_calls == after.tool_calls


def test_tool_call_ids_differ_between_threads(tmp_path: Path) -> None:
    path = tmp_path / "script.yaml"
    path.write_text("- content: ''\n  tool_calls: [{name: a}, {name: b}]\n")
    model = ScriptedChatModel.from_file(path)
    one = model.invoke([HumanMessage("same words", id="thread-1-msg")])
    other = model.invoke([HumanMessage("same words", id="thread-2-msg")])
    ids = [c["id"] for c in one.tool_calls] + [c["id"] for c in other.tool_calls]
    assert len(set(ids)) == 4


def test_a_script_must_be_a_list(tmp_path: Path) -> None:
    path = tmp_path / "script.yaml"
    path.write_text("content: not a list\n")
    with pytest.raises(ValueError, match="list of turns"):
        load_script(path)


def test_settings_from_the_environment() -> None:
    from clarigate.agent.harness import AgentSettings

    env = {"LLM_MODEL": "scripted:demo.yaml", "CHECKPOINTER_URL": "memory://", "ALLOW_CLARIFICATION": "true"}
    settings = AgentSettings.from_env(env)
    assert settings == AgentSettings(
        model="scripted:demo.yaml", checkpointer_url="memory://", allow_clarification=True
    )
    assert AgentSettings.from_env({}) == AgentSettings()


async def test_a_turn_can_wait_like_a_remote_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from clarigate.agent.models.scripted import turn_delay

    path = tmp_path / "slow.yaml"
    path.write_text('- content: "Done: {last_user}"\n  delay_seconds: [1, 2]\n')
    model = build_chat_model(f"scripted:{path}")
    assert isinstance(model, ScriptedChatModel)
    waited: list[float] = []

    async def sleep(seconds: float) -> None:
        waited.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", sleep)
    answer = await model.ainvoke([HumanMessage("job 7", id="h1")])
    assert answer.content == "Done: job 7"
    # drawn from [1, 2], the same for the same text: the sender can tell what the model took
    assert waited == [turn_delay(model.turns[0], "job 7")] and 1 <= waited[0] <= 2
    assert turn_delay(model.turns[0], "job 8") != waited[0]


def test_a_long_serving_script_keeps_only_its_latest_conversations(tmp_path: Path) -> None:
    path = tmp_path / "script.yaml"
    path.write_text(YAML_SCRIPT)
    model = build_chat_model(f"scripted:{path}")

    for n in range(RECORDED_CALLS + 50):  # each a new conversation, as a bot serving many people
        assert model.invoke([HumanMessage(f"message {n}", id=f"h{n}")]).content == f"You said: message {n}"

    assert len(model.calls) == RECORDED_CALLS
    first, last = model.calls[0][0], model.calls[-1][0]
    assert first.content == "message 50" and last.content == f"message {RECORDED_CALLS + 49}"
