"""Options Slack must cut stay distinguishable; a risky choice is never one click away."""

from __future__ import annotations

from typing import Any

from slack_sdk.models.blocks import Block

from clarigate.adapters.slack.modals import render_form_modal
from clarigate.adapters.slack.render import render_clarification
from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request, form_request
from clarigate.agent.protocol import FormField, HumanInputRequest, Option
from clarigate.gateway.boundary.outbound_items import ClarificationOut

from .conftest import MakeWorld
from .fake_slack import block_problems

PREFIX = "Deploy the service to the production cluster in the eu-west region using the "  # 79 chars


def elements(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for b in blocks for e in b.get("elements", [])]


def rendered(request: HumanInputRequest) -> list[dict[str, Any]]:
    blocks = render_clarification(ClarificationOut(request=request, fallback_text="fb", token="tok"))
    for block in blocks:  # what Slack would accept
        assert Block.parse(block).to_dict() == block  # type: ignore[union-attr]
    return blocks


def test_buttons_whose_labels_differ_after_75_characters_stay_distinguishable():
    labels = [PREFIX + "blue-green strategy", PREFIX + "canary strategy"]
    blocks = rendered(choice_request("How?", labels))
    buttons = [e for e in elements(blocks) if e["action_id"][len("clarigate:o") :].isdigit()]
    texts = [b["text"]["text"] for b in buttons]
    assert len(set(texts)) == 2 and all(len(t) <= 75 for t in texts)
    assert texts[0].startswith("1. ") and texts[1].startswith("2. ")
    listed = " ".join(b["text"]["text"] for b in blocks if b["type"] == "section")
    assert f"1. {labels[0]}" in listed and f"2. {labels[1]}" in listed  # the full labels, readable


def test_select_options_whose_labels_differ_after_75_characters_stay_distinguishable():
    labels = [PREFIX + f"strategy number {i}" for i in range(1, 8)]
    blocks = rendered(choice_request("How?", labels))
    [select] = [e for e in elements(blocks) if e["type"] == "static_select"]
    texts = [o["text"]["text"] for o in select["options"]]
    assert len(set(texts)) == 7 and texts[6].startswith("7. ")
    assert all(f"{i}. {label}" in str(blocks) for i, label in enumerate(labels, 1))


def test_short_labels_are_shown_as_they_are():
    blocks = rendered(choice_request("Which?", ["React", "Vue"]))
    assert [e["text"]["text"] for e in elements(blocks)][:2] == ["React", "Vue"]
    assert [b["type"] for b in blocks] == ["section", "actions"]


def risky(count: int) -> HumanInputRequest:
    options = [Option(id="option-1", label="Drop the table", value="drop")] + [
        Option(id=f"option-{i}", label=f"Keep it, plan {i}", value=f"keep{i}") for i in range(2, count + 1)
    ]
    return HumanInputRequest(
        request_id="r",
        tool_call_id="t",
        question="Drop the users table?",
        clarification_type="risk_confirmation",
        input_mode="choice_with_other",
        options=options,
    )


def test_a_risk_confirmation_in_a_dropdown_keeps_its_confirm_dialog():
    blocks = rendered(risky(7))
    [select] = [e for e in elements(blocks) if e["type"] == "static_select"]
    assert select["confirm"]["title"]["text"] == "Are you sure?"
    assert "tok|o1" in [o["value"] for o in select["options"]]
    # no other control answers it in one click: only the way out (which declines) is left
    assert [e["action_id"] for e in elements(blocks) if e["type"] != "static_select"] == ["clarigate:decline"]


def test_no_risk_confirmation_has_a_one_click_path_to_the_risky_option():
    for count in (2, 5, 6, 30):
        for element in elements(rendered(risky(count))):
            values = [element.get("value")] + [o["value"] for o in element.get("options", [])]
            if "tok|o1" in values:
                assert "confirm" in element, (count, element["type"])


async def test_a_long_label_picked_by_its_number_answers_that_option(make_world: MakeWorld):
    labels = [PREFIX + "blue-green strategy", PREFIX + "canary strategy"]

    def script(turn: Turn):
        if turn.response is None:
            return asking(choice_request("How?", labels))
        return ScriptedRunner().script(turn)

    runner = ScriptedRunner(script)
    world = await make_world(runner)
    await world.user.dm("deploy")
    await world.settle()
    question = world.fake.posted()
    await world.user.click(question, "clarigate:o2")
    await world.settle()
    assert [c.response.value for c in runner.calls if c.response] == [labels[1]]
    assert "canary strategy" in str(world.fake.edits(question["ts"])[-1]["blocks"])


def test_form_choices_whose_labels_differ_after_75_characters_stay_distinguishable():
    labels = [PREFIX + "blue-green strategy", PREFIX + "canary strategy"]
    options = [Option(id=f"how-option-{i}", label=label, value=label) for i, label in enumerate(labels, 1)]
    field = FormField(name="how", label="How", type="select", options=options)
    modal = render_form_modal(form_request("Deploy?", [field]), "{}")
    [block] = [b for b in modal["blocks"] if b["type"] == "input"]
    texts = [o["text"]["text"] for o in block["element"]["options"]]
    assert len(set(texts)) == 2 and texts[1].startswith("2. ")
    assert block["hint"]["text"] == f"1. {labels[0]}\n2. {labels[1]}"


def test_a_select_of_24_long_options_lists_every_option_readably():
    words = "migrate the orders table to the new schema and " + "x" * 55
    labels = [f"Option {i:02d}: {words}" for i in range(24)]
    assert all(len(label) >= 110 for label in labels)
    options = [Option(id=f"db-option-{i}", label=label, value=label) for i, label in enumerate(labels, 1)]
    field = FormField(name="db", label="Which migration?", type="select", options=options)
    modal = render_form_modal(form_request("Migrate?", [field]), "{}")
    assert block_problems(modal["blocks"]) == []  # Slack takes the view
    [at] = [i for i, b in enumerate(modal["blocks"]) if b["type"] == "input"]
    listed = "\n".join(
        element["text"]
        for block in modal["blocks"][at:]
        for element in [block.get("hint") or {}, *block.get("elements", [])]
        if element.get("text")
    )
    for number, label in enumerate(labels, 1):
        assert f"{number}. {label}" in listed  # every option in full, none cut
    assert all(
        len(element["text"]) <= 2000 for block in modal["blocks"] for element in block.get("elements", [])
    )
