"""The fake refuses a modal Slack would refuse, as Slack does (HTTP 200, ``invalid_arguments``,
``[ERROR] … [json-pointer:/view/…]``), to slack_sdk's own ``views_open`` / ``views_push`` /
``views_update``; a valid one opens, and only once per trigger id."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from .fake_slack import BOT_TOKEN, FakeSlack


def client(fake: FakeSlack) -> AsyncWebClient:
    return AsyncWebClient(token=BOT_TOKEN, base_url=fake.api_url, retry_handlers=[])


def plain(text: str) -> dict[str, Any]:
    return {"type": "plain_text", "text": text}


def option(text: str, value: str) -> dict[str, Any]:
    return {"text": plain(text), "value": value}


def modal() -> dict[str, Any]:
    """A modal as https://docs.slack.dev/reference/views/modal-views shows one: a section, a text
    input, a dropdown and checkboxes."""
    return {
        "type": "modal",
        "callback_id": "deploy",
        "title": plain("Deploy"),
        "submit": plain("Submit"),
        "close": plain("Cancel"),
        "private_metadata": '{"t":"x"}',
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": "*Where to?*"}},
            {
                "type": "input",
                "block_id": "name",
                "label": plain("Name"),
                "element": {"type": "plain_text_input", "action_id": "value", "max_length": 3000},
            },
            {
                "type": "input",
                "block_id": "env",
                "label": plain("Environment"),
                "element": {
                    "type": "static_select",
                    "action_id": "value",
                    "placeholder": plain("Choose"),
                    "options": [option("prod", "1"), option("staging", "2")],
                    "initial_option": option("staging", "2"),
                },
            },
            {
                "type": "input",
                "block_id": "flags",
                "optional": True,
                "label": plain("Flags"),
                "element": {"type": "checkboxes", "action_id": "value", "options": [option("TLS", "tls")]},
            },
            {
                "type": "input",
                "block_id": "replicas",
                "label": plain("Replicas"),
                "element": {
                    "type": "number_input",
                    "action_id": "value",
                    "is_decimal_allowed": False,
                    "min_value": "1",
                    "max_value": "10",
                },
            },
        ],
    }


def changed(edit: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    view = modal()
    edit(view)
    return view


def element(view: dict[str, Any], block_id: str) -> dict[str, Any]:
    return next(b for b in view["blocks"] if b.get("block_id") == block_id)["element"]


#: One documented limit broken per view, and where Slack's message points
INVALID: dict[str, tuple[Callable[[dict[str, Any]], Any], str]] = {
    "title over 24": (lambda v: v.update(title=plain("x" * 25)), "/view"),
    "no title": (lambda v: v.pop("title"), "/view"),
    "submit over 24": (lambda v: v.update(submit=plain("x" * 25)), "/view"),
    "close over 24": (lambda v: v.update(close=plain("x" * 25)), "/view"),
    "inputs, no submit": (lambda v: v.pop("submit"), "/view"),
    "title not plain_text": (lambda v: v.update(title={"type": "mrkdwn", "text": "x"}), "/view/title"),
    "private_metadata over 3000": (lambda v: v.update(private_metadata="x" * 3001), "/view"),
    "callback_id over 255": (lambda v: v.update(callback_id="x" * 256), "/view"),
    "a property views lack": (lambda v: v.update(submit_disabled=True), "/view"),
    "101 blocks": (lambda v: v.update(blocks=[v["blocks"][0]] * 101), "/view/blocks"),
    "no blocks": (lambda v: v.update(blocks=[]), "/view/blocks"),
    "block_id over 255": (lambda v: v["blocks"][0].update(block_id="x" * 256), "/view/blocks/0"),
    "block_id twice": (lambda v: v["blocks"][2].update(block_id="name"), "/view/blocks/2/block_id"),
    "label over 2000": (lambda v: v["blocks"][1].update(label=plain("x" * 2001)), "/view/blocks/1"),
    "empty label": (lambda v: v["blocks"][1].update(label=plain("")), "/view/blocks/1/label/text"),
    "max_length over 3000": (
        lambda v: element(v, "name").update(max_length=3001),
        "/view/blocks/1/element/max_length",
    ),
    "placeholder over 150": (
        lambda v: element(v, "env").update(placeholder=plain("x" * 151)),
        "/view/blocks/2",
    ),
    "101 options": (
        lambda v: element(v, "env").update(options=[option("o", str(i)) for i in range(101)]),
        "/view/blocks/2",
    ),
    "option text over 75": (
        lambda v: element(v, "env")["options"].append(option("x" * 76, "3")),
        "/view/blocks/2/element/options/2/text/text",
    ),
    "option value over 150": (
        lambda v: element(v, "env")["options"].append(option("x", "x" * 151)),
        "/view/blocks/2/element/options/2/value",
    ),
    "initial option not among them": (
        lambda v: element(v, "env").update(initial_option=option("qa", "9")),
        "/view/blocks/2/element",
    ),
    "11 checkboxes": (
        lambda v: element(v, "flags").update(options=[option("o", str(i)) for i in range(11)]),
        "/view/blocks/3/element/options",
    ),
    "min_value over max_value": (
        lambda v: element(v, "replicas").update(min_value="11"),
        "/view/blocks/4/element/min_value",
    ),
    "max_value not a string": (
        lambda v: element(v, "replicas").update(max_value=10),
        "/view/blocks/4/element/max_value",
    ),
    "decimal min_value of whole numbers": (
        lambda v: element(v, "replicas").update(min_value="0.5"),
        "/view/blocks/4/element/min_value",
    ),
    "decimal initial_value of whole numbers": (  # "3.0" too: a whole input takes no decimal point
        lambda v: element(v, "replicas").update(initial_value="3.0"),
        "/view/blocks/4/element/initial_value",
    ),
    "section over 3000": (
        lambda v: v["blocks"][0].update(text={"type": "mrkdwn", "text": "x" * 3001}),
        "/view/blocks/0",
    ),
}


async def refusal(call: Any) -> dict[str, Any]:
    """Slack's answer to a refused call, checked to be HTTP 200 as Slack answers them."""
    with pytest.raises(SlackApiError) as error:
        await call
    assert error.value.response.status_code == 200
    return dict(error.value.response.data)  # type: ignore[arg-type]


async def test_a_documented_modal_opens_once_per_trigger_and_updates_by_id(fake_slack: FakeSlack):
    web = client(fake_slack)
    opened = (await web.views_open(trigger_id="1.2.t1", view=modal()))["view"]
    assert opened["title"] == plain("Deploy") and opened["id"] and opened["hash"]
    answer = await refusal(web.views_open(trigger_id="1.2.t1", view=modal()))
    assert answer["error"] == "exchanged_trigger_id"
    pushed = await web.views_push(trigger_id="1.2.t2", view=changed(lambda v: v.update(title=plain("Next"))))
    assert pushed["view"]["title"] == plain("Next")
    updated = await web.views_update(view_id=opened["id"], hash=opened["hash"], view=modal())
    assert updated["view"]["id"] == opened["id"] and updated["view"]["hash"] != opened["hash"]
    stale = await refusal(web.views_update(view_id=opened["id"], hash=opened["hash"], view=modal()))
    assert stale["error"] == "hash_conflict"
    assert (await refusal(web.views_update(view_id="V0NONE", view=modal())))["error"] == "not_found"


@pytest.mark.parametrize("case", list(INVALID))
async def test_a_modal_slack_would_refuse_is_refused_with_slacks_answer(fake_slack: FakeSlack, case: str):
    edit, pointer = INVALID[case]
    view = changed(edit)
    web = client(fake_slack)
    for call in (
        web.views_open(trigger_id=f"1.2.{case}", view=copy.deepcopy(view)),
        web.views_push(trigger_id=f"1.3.{case}", view=copy.deepcopy(view)),
    ):
        answer = await refusal(call)
        assert answer["error"] == "invalid_arguments"
        messages = answer["response_metadata"]["messages"]
        assert messages and all(m.startswith("[ERROR] ") for m in messages)
        assert any(m.endswith(f"[json-pointer:{pointer}]") for m in messages), messages
    opened = (await web.views_open(trigger_id=f"1.4.{case}", view=modal()))["view"]
    answer = await refusal(web.views_update(view_id=opened["id"], view=view))
    assert answer["error"] == "invalid_arguments"
    assert fake_slack.views.shown[opened["id"]]["title"] == plain("Deploy")  # left as it was
    assert f"1.2.{case}" not in fake_slack.views.used_triggers  # a refused view spends no trigger


async def test_a_view_update_naming_both_ids_is_refused(fake_slack: FakeSlack):
    both = {"view_id": "V1", "external_id": "e1", "view": modal()}  # slack_sdk sends one: raw
    answer = await refusal(client(fake_slack).api_call("views.update", json=both))
    assert answer["response_metadata"]["messages"] == [
        "[ERROR] Cannot provide both `view_id` and `external_id`"
    ]


async def test_a_message_whose_dropdown_option_is_too_long_is_refused(fake_slack: FakeSlack):
    """The models take a static select's options as they are: the fake checks them itself."""
    select = {
        "type": "static_select",
        "action_id": "pick",
        "placeholder": plain("Choose"),
        "options": [option("x" * 76, "1")],
    }
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "Pick"}, "accessory": select}]
    answer = await refusal(client(fake_slack).chat_postMessage(channel="D1", text="Pick", blocks=blocks))
    assert answer["error"] == "invalid_blocks"
    assert any(m.endswith("[json-pointer:/blocks/0/accessory/options/0/text/text]") for m in answer["errors"])
