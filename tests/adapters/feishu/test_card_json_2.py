"""A card built with card JSON 2.0, forwarded to the bot or sent by another bot: its event content
is Feishu's projection for old clients (the title, then the "please upgrade" line where the body
was) with the sender's card itself as a JSON string in ``user_dsl``; the agent reads the card."""

from __future__ import annotations

import json
from typing import Any

from clarigate.adapters.testing import ScriptedRunner, Turn
from clarigate.agent.harness import TurnOutput

from .events import message_event

#: Feishu's fallback line where a JSON 2.0 card's body was, for clients older than 7.20.
UPGRADE = "请升级至最新版本客户端，以查看内容"


def agent(turn: Turn) -> TurnOutput:
    return TurnOutput(replies=[f"Got: {turn.text}"])


def card_event(content: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    event = message_event("", **kwargs)
    event["event"]["message"].update(message_type="interactive", content=json.dumps(content))
    return event


ALERT = {
    "schema": "2.0",
    "config": {"update_multi": True},
    "card_link": {"url": "https://x.io/alert/7"},
    "header": {
        "title": {"tag": "plain_text", "content": "Deploy failed"},
        "subtitle": {"tag": "plain_text", "content": "prod-eu"},
    },
    "body": {
        "elements": [
            {"tag": "markdown", "content": "service **api** exited 137"},
            {
                "tag": "column_set",
                "columns": [
                    {"tag": "column", "elements": [{"tag": "markdown", "content": "owner: core team"}]},
                    {
                        "tag": "column",
                        "elements": [{"tag": "div", "text": {"tag": "plain_text", "content": "since 10:40"}}],
                    },
                ],
            },
            {"tag": "img", "img_key": "img_v3_chart", "alt": {"tag": "plain_text", "content": "chart"}},
            {
                "tag": "button",
                "text": {"tag": "plain_text", "content": "Open runbook"},
                "behaviors": [{"type": "open_url", "default_url": "https://x.io/rb"}],
            },
        ]
    },
}


async def test_a_json_2_card_reaches_the_agent_with_its_text_not_the_upgrade_line(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    projection = {
        "title": "Deploy failed",
        "elements": [[{"tag": "img", "image_key": "img_v3_fallback"}, {"tag": "text", "text": UPGRADE}]],
        "user_dsl": json.dumps(ALERT, ensure_ascii=False),
    }
    await bot.deliver(card_event(projection))
    await bot.gateway.drain()
    [seen] = [c.text for c in bot.runner.calls]
    assert UPGRADE not in seen
    assert seen == (
        "(attached: card: Deploy failed prod-eu service **api** exited 137 owner: core team "
        "since 10:40 Open runbook)"
    )


async def test_a_json_1_card_in_user_dsl_is_read_too_and_an_unreadable_one_keeps_the_projection(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    v1 = {
        "header": {"title": {"tag": "plain_text", "content": "Weekly"}},
        "elements": [{"tag": "div", "text": {"tag": "lark_md", "content": "all green"}}],
    }
    await bot.deliver(card_event({"title": "Weekly", "elements": [], "user_dsl": json.dumps(v1)}))
    broken = {"title": "Old", "elements": [[{"tag": "text", "text": "kept"}]], "user_dsl": "{not json"}
    await bot.deliver(card_event(broken, user="ou_bob", chat="oc_p2p_bob"))
    await bot.gateway.drain()
    assert sorted(c.text for c in bot.runner.calls) == [  # two chats: run in either order
        "(attached: card: Old kept)",
        "(attached: card: Weekly all green)",
    ]


def mentioned(card: dict[str, Any], mentions: list[dict[str, Any]]) -> dict[str, Any]:
    """A forwarded JSON 2.0 card whose markdown mentions people, with the event's ``mentions``."""
    event = card_event(
        {"title": "", "elements": [[{"tag": "text", "text": UPGRADE}]], "user_dsl": json.dumps(card)}
    )
    event["event"]["message"]["mentions"] = mentions
    return event


BOB = {
    "key": "@_user_1",
    "id": {"open_id": "ou_bob", "user_id": "u_bob", "union_id": "on_bob"},
    "name": "Bob",
}


async def test_card_markdown_mentions_read_as_names_never_as_raw_tags_or_ids(make_bot):
    """Card markdown writes mentions as ``<at id=…></at>`` (Feishu's rich-text syntax: ``id``,
    ``ids``, ``email``, ``user_id``; ``id=all`` for everyone), not the message's ``@_user_N`` keys:
    a person the event's ``mentions`` names reads "@Name" (by any of their ids), anyone else
    "@someone" (no id, no address), everyone "@all" like a text message's "@所有人"."""
    bot = await make_bot(ScriptedRunner(agent))
    body = (
        '<at id=ou_bob></at> and <at user_id="u_bob"></at> please look; '
        "cc <at ids=on_bob,ou_carol></at> <at email=dave@x.io></at> <at id=all></at>"
    )
    card = {"schema": "2.0", "body": {"elements": [{"tag": "markdown", "content": body}]}}
    await bot.deliver(mentioned(card, [BOB]))
    await bot.gateway.drain()
    [seen] = [c.text for c in bot.runner.calls]
    assert "<at" not in seen and "ou_" not in seen and "dave@" not in seen
    assert seen == "(attached: card: @Bob and @Bob please look; cc @Bob @someone @someone @all)"


async def test_a_chinese_card_reads_its_mentions_in_chinese(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    body = "请 <at id=ou_carol></at> 处理这个问题，<at id=all></at> 注意"
    card = {"schema": "2.0", "body": {"elements": [{"tag": "markdown", "content": body}]}}
    await bot.deliver(mentioned(card, []))
    await bot.gateway.drain()
    [seen] = [c.text for c in bot.runner.calls]
    assert seen == "(attached: card: 请 @某人 处理这个问题，@所有人 注意)"


async def test_a_template_card_keeps_the_projection(make_bot):
    """A card sent by template id carries the template's id and variables, not its words: the
    projection (title, paragraphs) is what the agent reads."""
    bot = await make_bot(ScriptedRunner(agent))
    template = {"type": "template", "data": {"template_id": "AAqk1", "template_variable": {"who": "ou_bob"}}}
    projection = {"title": "Leave request", "elements": [[{"tag": "text", "text": "3 days"}]]}
    await bot.deliver(card_event({**projection, "user_dsl": json.dumps(template)}))
    await bot.gateway.drain()
    assert [c.text for c in bot.runner.calls] == ["(attached: card: Leave request 3 days)"]
