"""A risk confirmation asked as a form on Slack: a decision the person did not make never takes
effect. A field whose default goes ahead (a checkbox shown ticked, a select showing "Drop all":
Submit alone would answer it in one click) opens with nothing picked, as a required input, its hint
naming what the agent proposed; submitted untouched it is refused and the agent gets nothing; picked
by the person, the values go through. A form that is no risk confirmation opens filled in.
The real slack-bolt adapter against the fake Slack, the real core."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from clarigate.adapters.slack.modals import field_block_id, modal_metadata, render_form_modal
from clarigate.adapters.testing import ScriptedRunner, Turn, asking
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import normalize_request

from ..unchanged_submissions import slack_state
from .conftest import MakeWorld
from .fake_views import view_problems

FIELDS = [
    {"name": "confirm_delete", "type": "checkbox", "default": True},
    {"name": "mode", "type": "select", "options": ["Drop all", "Keep all"], "default": "Drop all"},
]
QUESTION = {"question": "Delete the 3 prod tables?", "fields": FIELDS}
PICK_FIRST = "Choose one: nothing that goes ahead is taken unless you pick it."


def _runner(kind: str) -> ScriptedRunner:
    def script(turn: Turn) -> TurnOutput:
        if turn.response is not None:
            return TurnOutput(replies=[f"answer: {turn.response.values}"])
        return asking(normalize_request({**QUESTION, "clarification_type": kind}, "call-wipe"))

    return ScriptedRunner(script)


async def _open(world: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    await world.user.dm("tidy up")
    await world.settle()
    await world.user.click(world.fake.posted(), "clarigate:form")
    await world.adapter.idle()  # the modal opens beside the ack
    modal = world.fake.of("views.open")[-1]["view"]
    return modal, [b for b in modal["blocks"] if b["type"] == "input"]


def _answers(runner: ScriptedRunner) -> list[Any]:
    return [call.response.values for call in runner.calls if call.response is not None]


async def test_a_risk_forms_go_ahead_defaults_open_unpicked_and_untouched_are_refused(
    make_world: MakeWorld,
) -> None:
    runner = _runner("risk_confirmation")
    world = await make_world(runner)
    modal, (delete, mode) = await _open(world)
    assert delete["element"]["type"] == "radio_buttons" and "initial_option" not in delete["element"]
    assert mode["element"]["type"] == "static_select" and "initial_option" not in mode["element"]
    assert [b.get("optional", False) for b in (delete, mode)] == [False, False]  # Slack requires a pick
    assert delete["hint"]["text"].startswith("Proposed: Yes.")
    assert mode["hint"]["text"].startswith("Proposed: Drop all.")

    response = await world.user.submit(modal, slack_state(modal))  # untouched (Slack's check passed by)
    await world.settle()
    assert response.json() == {
        "response_action": "errors",
        "errors": {"field-1": PICK_FIRST, "field-2": PICK_FIRST},
    }
    assert _answers(runner) == []  # the agent never got "Drop all"

    yes = next(o for o in delete["element"]["options"] if o["text"]["text"] == "Yes")
    drop = next(o for o in mode["element"]["options"] if o["text"]["text"] == "Drop all")
    picked = {
        "field-1": {"value": {"type": "radio_buttons", "selected_option": yes}},
        "field-2": {"value": {"type": "static_select", "selected_option": drop}},
    }
    response = await world.user.submit(modal, picked)
    await world.settle()
    assert response.status_code == 200 and not response.content  # accepted, the modal closes
    assert _answers(runner) == [{"confirm_delete": True, "mode": "Drop all"}]


async def test_a_risk_forms_box_whose_untouched_no_goes_ahead_must_be_picked(make_world: MakeWorld) -> None:
    # "Keep the backups" left unticked says "do not keep them": a lone checkbox would answer so
    keep = {"name": "keep", "label": "Keep the backups", "type": "checkbox"}
    question = {"question": "Clean up?", "clarification_type": "risk_confirmation", "fields": [keep]}
    runner = ScriptedRunner(
        lambda turn: (
            TurnOutput(replies=[f"answer: {turn.response.values}"])
            if turn.response is not None
            else asking(normalize_request(question, "call-clean"))
        )
    )
    world = await make_world(runner)
    modal, [box] = await _open(world)
    assert box["element"]["type"] == "radio_buttons" and "initial_option" not in box["element"]
    assert box.get("optional", False) is False and "Proposed" not in (box.get("hint") or {}).get("text", "")

    response = await world.user.submit(modal, slack_state(modal))  # untouched
    await world.settle()
    assert response.json() == {"response_action": "errors", "errors": {"field-1": PICK_FIRST}}
    assert _answers(runner) == []  # the backups were not given up for them

    no = next(o for o in box["element"]["options"] if o["text"]["text"] == "No")
    response = await world.user.submit(
        modal, {"field-1": {"value": {"type": "radio_buttons", "selected_option": no}}}
    )
    await world.settle()
    assert _answers(runner) == [{"keep": False}]


@pytest.mark.parametrize("kind", ["missing_info", "approach_choice"])
async def test_a_form_that_is_no_risk_confirmation_opens_filled_in(make_world: MakeWorld, kind: str) -> None:
    runner = _runner(kind)
    world = await make_world(runner)
    modal, (delete, mode) = await _open(world)
    assert delete["element"]["type"] == "checkboxes" and delete["element"]["initial_options"]
    assert mode["element"]["initial_option"]["text"]["text"] == "Drop all"

    await world.user.submit(modal, slack_state(modal))
    await world.settle()
    assert _answers(runner) == [{"confirm_delete": True, "mode": "Drop all"}]


LONG = ["Deploy build to cluster " + "with extra words " * 9 + f"in region-{i}" for i in range(10)]
LONG_QUESTION = {
    "question": "Deploy?",
    "clarification_type": "risk_confirmation",
    "fields": [{"name": "target", "type": "select", "required": True, "options": LONG, "default": LONG[0]}],
}


def listed_under(view: dict[str, Any], block_id: str) -> str:
    """The texts a person reads for the input ``block_id``: its hint and the blocks under it."""
    blocks = view["blocks"]
    at = next(i for i, b in enumerate(blocks) if b.get("block_id") == block_id)
    end = next((i for i in range(at + 1, len(blocks)) if blocks[i]["type"] == "input"), len(blocks))
    texts = [(blocks[at].get("hint") or {}).get("text", "")]
    for block in blocks[at + 1 : end]:
        texts += [e.get("text", "") for e in block.get("elements", [])]
        texts.append((block.get("text") or {}).get("text", ""))
    return "\n".join(texts)


async def test_a_risk_forms_long_choices_are_all_readable_and_told_apart_in_the_modal(
    make_world: MakeWorld,
) -> None:
    # the "Proposed" line and the ten labels in full do not fit one hint's 2,000 characters
    runner = ScriptedRunner(
        lambda turn: (
            TurnOutput(replies=[f"answer: {turn.response.values}"])
            if turn.response is not None
            else asking(normalize_request(LONG_QUESTION, "call-deploy"))
        )
    )
    world = await make_world(runner)
    modal, [target] = await _open(world)  # the view Slack took (the fake refuses what Slack does)
    assert target["hint"]["text"].startswith(f"Proposed: {LONG[0]}.")
    shown = listed_under(modal, "field-1")
    assert [f"{i}. {label}" in shown for i, label in enumerate(LONG, 1)] == [True] * 10
    texts = [o["text"]["text"] for o in target["element"]["options"]]
    assert all(len(t) <= 75 and t.startswith(f"{i}. ") for i, t in enumerate(texts, 1))
    assert len({t.split(". ", 1)[1] for t in texts}) == 10  # told apart by more than their number
    assert all(f"region-{i}" in t for i, t in enumerate(texts))

    last = target["element"]["options"][9]  # picked by the person: the one they read
    await world.user.submit(modal, {"field-1": {"value": {"type": "static_select", "selected_option": last}}})
    await world.settle()
    assert _answers(runner) == [{"target": LONG[9]}]


_words = st.from_regex(r"[a-h][a-h -]{0,139}", fullmatch=True)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example([LONG], "", "select")  # the "Proposed" line and the list just over a hint's 2,000
@example([LONG[:9]], "", "multi_select")
@given(
    st.lists(st.lists(_words, min_size=1, max_size=30, unique=True), min_size=1, max_size=16),
    st.sampled_from(["", "Deploy the service to the production cluster in region "]),
    st.sampled_from(["select", "multi_select"]),
)
def test_every_choice_of_a_risk_form_is_readable_in_full_in_its_modal(
    fields: list[list[str]], prefix: str, kind: str
) -> None:
    specs = [
        {"name": f"f{n}", "type": kind, "options": [prefix + w for w in words], "default": prefix + words[0]}
        for n, words in enumerate(fields)
    ]
    request = normalize_request(
        {"question": "Go?", "clarification_type": "risk_confirmation", "fields": specs}, "c"
    )
    view = render_form_modal(request, modal_metadata("AbCdEfGhIjKlMnOp", "C1", "1.2"))
    assert view_problems(view) == []  # Slack takes it
    for index, field in enumerate(request.fields):
        [block] = [b for b in view["blocks"] if b.get("block_id") == field_block_id(index)]
        if not field.options:  # none left once normalized: a text input
            continue
        texts = [o["text"]["text"] for o in block["element"]["options"]]
        assert len(set(texts)) == len(texts)
        if any(len(o.label) > 75 for o in field.options):  # cut in the element: listed in full
            shown = listed_under(view, field_block_id(index))
            assert all(f"{i}. {o.label}" in shown for i, o in enumerate(field.options, 1))
