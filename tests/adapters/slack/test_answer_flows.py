"""Whole conversations through the real core: a person on (fake) Slack asks, clicks, fills in, types."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
import yaml

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request, form_request
from clarigate.agent.harness import AgentSettings, ClarifyingAgent, TurnOutput
from clarigate.agent.protocol import FormField, Option
from clarigate.gateway.runners.in_process import LangGraphRunner

from ..unchanged_submissions import slack_state
from .conftest import MakeWorld
from .fake_slack import BOT_USER_ID

FRAMEWORK_SCRIPT = [
    {
        "content": "",
        "tool_calls": [
            {
                "name": "ask_clarification",
                "args": {
                    "question": "Which framework should I use?",
                    "clarification_type": "approach_choice",
                    "context": "I can scaffold either.",
                    "options": ["React", "Vue"],
                },
            }
        ],
    },
    {"content": "Scaffolding the **Vue** app now."},
]


def action_ids(message: dict) -> list[str]:
    """Every action id among a message's blocks."""
    return [e.get("action_id") for b in message.get("blocks", []) for e in b.get("elements", [])]


async def test_dm_question_click_updates_message_and_next_turn_follows(make_world: MakeWorld, tmp_path: Path):
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump(FRAMEWORK_SCRIPT))
    agent = await ClarifyingAgent.create(
        AgentSettings(model=f"scripted:{script}", checkpointer_url="memory://")
    )
    world = await make_world(LangGraphRunner(agent.settings, agent=agent))
    try:
        response, _ = await world.user.dm("set up a web app")
        assert response.status_code == 200
        await world.settle()

        question = world.fake.posted()
        assert question["channel"] == "D1" and "thread_ts" not in question
        rendered = json.dumps(question["blocks"], ensure_ascii=False)
        assert "Which framework should I use?" in rendered and "I can scaffold either." in rendered
        expected = ["clarigate:o1", "clarigate:o2", "clarigate:other", "clarigate:decline"]
        assert action_ids(question) == expected
        assert "React" not in question["blocks"][-1]["elements"][0]["value"]  # payloads carry a token

        click = await world.user.click(question, "clarigate:o2")
        assert click.status_code == 200
        await world.settle()

        update = world.fake.edits(question["ts"])[-1]
        assert update["channel"] == "D1"
        assert not [b for b in update["blocks"] if b["type"] == "actions"]  # controls gone
        assert "✅ Answered by <@U1>: Vue" in update["blocks"][-1]["elements"][0]["text"]
        reply = world.fake.last_shown()
        assert reply["text"] == "Scaffolding the *Vue* app now." and reply["channel"] == "D1"
    finally:
        await agent.aclose()


async def test_channel_mention_runs_in_its_own_thread_and_ignores_unrelated_chatter(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)

    _, ts = await world.user.mention("hello there")
    await world.user.channel_message("unrelated top-level chatter")
    await world.user.channel_message("a thread the bot is not in", thread_ts="1700000099.000001")
    await world.settle()
    assert [c.text for c in runner.calls] == ["hello there"]
    assert world.fake.last_shown()["thread_ts"] == ts

    await world.user.channel_message("and a follow-up", thread_ts=ts)
    await world.settle()
    assert [c.text for c in runner.calls] == ["hello there", "and a follow-up"]
    assert runner.calls[0].thread_id == runner.calls[1].thread_id
    # in a thread each run streams (Slack's chat stream, "Working…" as its task card) to the person
    # who wrote, and the stream became that run's reply: nothing deleted, nothing left streaming
    streams = world.fake.of("chat.startStream")
    assert [s["thread_ts"] for s in streams] == [ts, ts]
    assert all(s["recipient_user_id"] == "U1" and s["recipient_team_id"] == "T0TEAM" for s in streams)
    assert [s["chunks"][0]["title"] for s in streams] == ["Working…", "Working…"]
    assert world.fake.of("chat.delete") == [] and world.fake.of("chat.postMessage") == []
    shown = world.fake.shown()
    assert [m["text"] for m in shown] == ["You said: hello there", "You said: and a follow-up"]
    assert not any(m["streaming"] for m in shown)


async def test_bot_messages_and_edits_are_ignored(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)
    await world.user.dm("from the bot itself", user=BOT_USER_ID, bot_id="B0BOT")
    await world.user.dm("another bot", user="U9", bot_id="B0OTHER")
    await world.user.dm("edited", subtype="message_changed")
    await world.user.dm("joined", subtype="channel_join")
    await world.settle()
    assert runner.calls == []
    assert world.fake.of("chat.postMessage") == []


async def test_form_modal_invalid_submit_gets_errors_then_valid_submit_answers_typed(make_world: MakeWorld):
    fields = [
        FormField(name="name", label="Project name", type="text", required=True),
        FormField(name="replicas", label="Replicas", type="number", required=True),
        FormField(
            name="region",
            label="Region",
            type="select",
            options=[
                Option(id="region-option-1", label="EU", value="eu"),
                Option(id="region-option-2", label="US", value="us"),
            ],
        ),
        FormField(name="tls", label="Enable TLS", type="checkbox"),
        FormField(name="launch", label="Launch date", type="date"),
    ]

    def script(turn: Turn):
        if turn.response is None:
            return asking(form_request("Tell me about the deployment", fields))
        return ScriptedRunner().script(turn)

    runner = ScriptedRunner(script)
    world = await make_world(runner)
    await world.user.dm("deploy it")
    await world.settle()
    question = world.fake.posted()
    assert action_ids(question) == ["clarigate:form", "clarigate:decline"]

    await world.user.click(question, "clarigate:form")
    await world.adapter.idle()  # the modal opens beside the ack
    opened = world.fake.of("views.open")[-1]
    modal = opened["view"]
    assert opened["trigger_id"].startswith("trigger-")
    labels = [b["label"]["text"] for b in modal["blocks"] if b["type"] == "input"]
    assert labels == ["Project name *", "Replicas *", "Region", "Enable TLS", "Launch date"]
    kinds = [b["element"]["type"] for b in modal["blocks"] if b["type"] == "input"]
    assert kinds == ["plain_text_input", "number_input", "static_select", "checkboxes", "datepicker"]

    bad = {
        "field-1": {"value": {"type": "plain_text_input", "value": "shop"}},
        "field-2": {"value": {"type": "number_input", "value": "many"}},
    }
    response = await world.user.submit(modal, bad)
    body = response.json()
    assert body["response_action"] == "errors" and set(body["errors"]) == {"field-2"}
    await world.settle()
    assert len(runner.calls) == 1  # nothing ran

    good = {
        "field-1": {"value": {"type": "plain_text_input", "value": "shop"}},
        "field-2": {"value": {"type": "number_input", "value": "3"}},
        "field-3": {"value": {"type": "static_select", "selected_option": {"value": "2"}}},
        "field-4": {"value": {"type": "checkboxes", "selected_options": [{"value": "true"}]}},
        "field-5": {"value": {"type": "datepicker", "selected_date": "2026-12-01"}},
    }
    response = await world.user.submit(modal, good)
    assert response.status_code == 200 and not response.content  # an empty ack closes the modal
    await world.settle()
    answer = runner.calls[-1].response
    assert answer is not None and answer.response_kind == "form"
    assert answer.values == {
        "name": "shop",
        "replicas": 3,
        "region": "us",
        "tls": True,
        "launch": "2026-12-01",
    }
    update = world.fake.edits(question["ts"])[-1]
    assert "Answered by <@U1>" in json.dumps(update["blocks"])


def asks_to_email_customers(turn: Turn) -> TurnOutput:
    """A form of one required yes/no (as a typed interrupt's required boolean is); then the echo."""
    if turn.response is None:
        email = FormField(
            name="email_customers", label="Email every customer", type="checkbox", required=True
        )
        return asking(form_request("The outage is over. Should I email every customer?", [email]))
    return ScriptedRunner().script(turn)


@pytest.mark.parametrize(("picked", "value"), [("Yes", True), ("No", False)])
async def test_a_required_yes_no_is_asked_as_yes_or_no_and_never_taken_as_no_untouched(
    make_world: MakeWorld, picked: str, value: bool
):
    """A decision nobody made never takes effect: the modal offers Yes and No, neither picked, and
    Slack keeps it open until one is (a required input); a submit without one (Slack's check
    passed by) is asked again, not read as "no"."""
    runner = ScriptedRunner(asks_to_email_customers)
    world = await make_world(runner)
    await world.user.dm("the outage is over")
    await world.settle()
    question = world.fake.posted()
    await world.user.click(question, "clarigate:form")
    await world.adapter.idle()  # the modal opens beside the ack
    modal = world.fake.of("views.open")[-1]["view"]
    block = next(b for b in modal["blocks"] if b["type"] == "input")
    assert block["label"]["text"] == "Email every customer *" and block.get("optional", False) is False
    assert block["element"]["type"] == "radio_buttons" and "initial_option" not in block["element"]
    assert [o["text"]["text"] for o in block["element"]["options"]] == ["Yes", "No"]

    response = await world.user.submit(modal, slack_state(modal))  # untouched: neither picked
    await world.settle()
    assert response.json() == {"response_action": "errors", "errors": {"field-1": "This field is required"}}
    assert len(runner.calls) == 1 and world.fake.edits(question["ts"]) == []  # nothing ran or closed

    option = next(o for o in block["element"]["options"] if o["text"]["text"] == picked)
    chosen = {"field-1": {"value": {"type": "radio_buttons", "selected_option": option}}}
    response = await world.user.submit(modal, chosen)
    await world.settle()
    assert response.status_code == 200 and not response.content  # an empty ack closes the modal
    answer = runner.calls[-1].response
    assert answer is not None and answer.values == {"email_customers": value}
    assert "Answered by <@U1>" in json.dumps(world.fake.edits(question["ts"])[-1]["blocks"])


async def test_other_opens_a_modal_and_free_text_answers(make_world: MakeWorld):
    def script(turn: Turn):
        if turn.response is None:
            return asking(choice_request("Which database?", ["Postgres", "MySQL"]))
        return ScriptedRunner().script(turn)

    runner = ScriptedRunner(script)
    world = await make_world(runner)
    await world.user.dm("store data")
    await world.settle()
    question = world.fake.posted()
    await world.user.click(question, "clarigate:other")
    await world.adapter.idle()  # the modal opens beside the ack
    modal = world.fake.of("views.open")[-1]["view"]
    assert modal["blocks"][-1]["element"]["type"] == "plain_text_input"

    await world.user.submit(
        modal, {"answer": {"value": {"type": "plain_text_input", "value": "SQLite, please"}}}
    )
    await world.settle()
    answer = runner.calls[-1].response
    assert answer is not None and answer.response_kind == "text" and answer.value == "SQLite, please"
    assert "SQLite, please" in json.dumps(world.fake.edits(question["ts"])[-1]["blocks"])


@pytest.mark.parametrize(
    ("locale", "said"),
    [("en", "The answer is empty: write it in this box."), ("zh", "回答是空的：请在这个输入框里填写。")],
    ids=["en", "zh"],
)
async def test_other_sent_blank_says_under_its_box_that_the_answer_is_empty(
    make_world: MakeWorld, locale: str, said: str
):
    """Slack's required box refuses only a box left truly empty: spaces and line breaks come
    through, and the error under the box says the answer is empty, in the question's language,
    not the chat's "Type your answer as a reply." (which sends the person away from the box)."""
    asked = choice_request("Which database?", ["Postgres", "MySQL"]).model_copy(update={"locale": locale})
    runner = ScriptedRunner(lambda turn: asking(asked) if turn.response is None else TurnOutput())
    world = await make_world(runner)
    await world.user.dm("store data")
    await world.settle()
    question = world.fake.posted()
    await world.user.click(question, "clarigate:other")
    await world.adapter.idle()  # the modal opens beside the ack
    modal = world.fake.of("views.open")[-1]["view"]

    response = await world.user.submit(
        modal, {"answer": {"value": {"type": "plain_text_input", "value": "  \n "}}}
    )

    assert response.status_code == 200
    assert response.json() == {"response_action": "errors", "errors": {"answer": said}}
    await world.settle()
    assert [t.response for t in runner.calls] == [None]  # still open: nothing answered it
    assert world.fake.edits(question["ts"]) == []


async def test_risk_confirmation_renders_confirm_dialog_and_cancel_answers(make_world: MakeWorld):
    def script(turn: Turn):
        if turn.response is None:
            request = choice_request("Drop the production table?", ["Drop it", "Keep it"])
            return asking(request.model_copy(update={"clarification_type": "risk_confirmation"}))
        return ScriptedRunner().script(turn)

    runner = ScriptedRunner(script)
    world = await make_world(runner)
    await world.user.dm("clean up")
    await world.settle()
    question = world.fake.posted()
    buttons = question["blocks"][-1]["elements"]
    assert [(b["text"]["text"], b.get("style")) for b in buttons] == [
        ("Drop it", "danger"),  # goes ahead: red, behind a dialog
        ("Keep it", None),  # the safe choice: a plain button
        ("Cancel", None),
    ]
    assert buttons[0]["confirm"]["confirm"]["text"] == "Confirm" and "confirm" not in buttons[1]
    assert buttons[0]["confirm"]["style"] == "danger" and "“Drop it”" in buttons[0]["confirm"]["text"]["text"]

    await world.user.click(question, "clarigate:o2")
    await world.settle()
    answer = runner.calls[-1].response
    assert answer is not None and answer.option_id == "option-2" and answer.value == "Keep it"


async def test_typed_reply_in_the_thread_answers_and_closes_the_question(make_world: MakeWorld):
    def script(turn: Turn):
        if turn.response is None:
            return asking(choice_request("Which framework?", ["React", "Vue"]))
        return ScriptedRunner().script(turn)

    runner = ScriptedRunner(script)
    world = await make_world(runner)
    _, ts = await world.user.mention("build a site")
    await world.settle()
    question = world.fake.posted()
    assert question["thread_ts"] == ts

    await world.user.channel_message("2", thread_ts=ts)
    await world.settle()
    answer = runner.calls[-1].response
    assert answer is not None and answer.option_id == "option-2"
    update = world.fake.edits(question["ts"])[-1]
    assert "Answered by <@U1>: Vue" in json.dumps(update["blocks"], ensure_ascii=False)
    next_turn = world.fake.last_shown()  # the agent's turn after the answer, in the same thread
    assert next_turn["text"].startswith("You said:") and next_turn["thread_ts"] == ts


async def test_many_options_become_a_select_whose_pick_answers(make_world: MakeWorld):
    def script(turn: Turn):
        if turn.response is None:
            return asking(choice_request("Which region?", [f"Region {i}" for i in range(1, 8)]))
        return ScriptedRunner().script(turn)

    runner = ScriptedRunner(script)
    world = await make_world(runner)
    await world.user.dm("deploy")
    await world.settle()
    question = world.fake.posted()
    assert action_ids(question) == ["clarigate:select", "clarigate:other", "clarigate:decline"]
    select = question["blocks"][-1]["elements"][0]

    await world.user.click(question, "clarigate:select", option_value=select["options"][5]["value"])
    await world.settle()
    answer = runner.calls[-1].response
    assert answer is not None and answer.option_id == "option-6" and answer.value == "Region 6"


async def test_people_not_on_the_allowlist_get_one_polite_refusal(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner, slack={"allowed_users": ["U1"]})
    await world.user.dm("let me in", user="U2", channel="D2")
    await world.user.dm("please", user="U2", channel="D2")
    await world.settle()
    assert runner.calls == []
    refusals = [p for p in world.fake.of("chat.postMessage") if p["channel"] == "D2"]
    assert len(refusals) == 1 and refusals[0]["text"].startswith("⚠️ Sorry, I am not set up to work with you")


def _minified_config() -> str:
    """A firewall config as minified JSON: one line of 22,000 characters, no space to break it at."""
    rules = [{"id": n, "allow": f"10.0.{n % 256}.0/24", "port": 443} for n in range(500)]
    return json.dumps({"rules": rules}, separators=(",", ":"))


async def test_a_question_quoting_a_long_code_line_keeps_its_buttons_and_every_section_fits(
    make_world: MakeWorld,
):
    config = _minified_config()
    asked = f"Apply this firewall config?\n\n```json\n{config}\n```"

    def script(turn: Turn):
        if turn.response is None:
            return asking(choice_request(asked, ["Apply", "Keep the old one"]))
        return ScriptedRunner().script(turn)

    runner = ScriptedRunner(script)
    world = await make_world(runner)
    await world.user.dm("tighten the firewall")
    await world.settle()
    question = world.fake.posted()
    sections = [b["text"]["text"] for b in question["blocks"] if b["type"] == "section"]
    assert action_ids(question) == ["clarigate:o1", "clarigate:o2", "clarigate:other", "clarigate:decline"]
    assert len(sections) == 5 and all(len(text) <= 3000 for text in sections)  # Slack's section limit
    assert "Apply this firewall config?" in sections[0] and sections[-1].endswith("```\n…")  # cut, visibly
    shown = "".join(re.findall(r"```\n(.*?)\n```", "\n".join(sections), re.DOTALL))
    assert len(shown) > 11000 and config.startswith(shown)  # the code as written, up to the cut

    await world.user.click(question, "clarigate:o2")
    await world.settle()
    assert [c.response.value for c in runner.calls if c.response] == ["Keep the old one"]
    update = world.fake.edits(question["ts"])[-1]
    assert all(len(b["text"]["text"]) <= 3000 for b in update["blocks"] if b["type"] == "section")
    assert "✅ Answered by <@U1>: Keep the old one" in update["blocks"][-1]["elements"][0]["text"]


async def test_a_message_edited_to_mention_the_bot_is_answered_once(make_world: MakeWorld):
    """Slack sends ``app_mention`` with ``edited`` when a message is edited to add the mention (and
    for each later edit of it): answered once, soon after it was written; never again for a
    mention already answered, nor for an edit long after (an old request run anew)."""
    runner = ScriptedRunner()
    world = await make_world(runner)
    ts = f"{time.time() - 30:.6f}"
    edited = {"user": "U1", "ts": f"{time.time():.6f}"}
    await world.user.mention("deploy please", ts=ts, edited=edited)
    await world.settle()
    assert [c.text for c in runner.calls] == ["deploy please"]
    assert world.fake.last_shown()["thread_ts"] == ts
    await world.user.mention("deploy please, to staging", ts=ts, edited=edited)  # edited again
    old = f"{time.time() - 3600:.6f}"
    await world.user.mention("an old message edited today", ts=old, edited=edited)
    await world.settle()
    assert [c.text for c in runner.calls] == ["deploy please"]
