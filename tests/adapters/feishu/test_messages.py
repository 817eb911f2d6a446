"""Messages as Feishu really sends them: re-pushed, of every type, with commands, through the real core."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from clarigate.adapters.testing import ScriptedRunner, Turn, asking
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import HumanInputRequest, Option
from clarigate.gateway.boundary.errors import AttachmentTooLarge
from clarigate.gateway.boundary.messages import Attachment, InboundMessage

from .cards import button, components, payload, text_of
from .events import card_action, message_event

PNG = b"\x89PNG\r\n\x1a\n"


def risk() -> HumanInputRequest:
    """The pending risk confirmation of the report: option-1 deletes."""
    return HumanInputRequest(
        request_id="clarification:del", tool_call_id="del", clarification_type="risk_confirmation",
        question="Delete 1,204 rows of test data?", input_mode="choice_with_other",
        options=[Option(id=f"option-{i}", label=x, value=x) for i, x in enumerate(["Delete", "Keep"], 1)],
    )  # fmt: skip


def agent(turn: Turn) -> TurnOutput:
    """Asks before deleting; says what it got otherwise."""
    if turn.response is not None:
        return TurnOutput(replies=[f"Answer: {turn.response.value}"])
    if "delete" in turn.text:
        return asking(risk())
    return TurnOutput(replies=[f"Got: {turn.text}"])


def repush(event: dict[str, Any]) -> dict[str, Any]:
    """The same message pushed again, as Feishu documents it may: a new event id, the same message."""
    return {**event, "header": {**event["header"], "event_id": f"ev-repush-{time.monotonic_ns()}"}}


async def test_a_repushed_request_never_answers_the_question_it_raised(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    request = message_event("delete the test data", message_id="om_delete")
    await bot.deliver(request)
    await bot.gateway.drain()
    assert "Delete 1,204 rows" in text_of(bot.api.shown()[-1])

    await bot.deliver(repush(request))
    await bot.gateway.drain()
    assert [c.text for c in bot.runner.calls] == ["delete the test data"]  # run once, nothing answered
    assert "Delete 1,204 rows" in text_of(bot.api.shown()[-1])


async def test_a_message_written_before_the_question_is_not_its_answer(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    await bot.deliver(message_event("delete the test data"))
    await bot.gateway.drain()
    # written a minute ago, delivered only now (Feishu's first push failed)
    late = message_event("Delete", message_id="om_late")
    late["event"]["message"]["create_time"] = str(int((time.time() - 60) * 1000))
    await bot.deliver(late)
    await bot.gateway.drain()
    assert [c.response for c in bot.runner.calls] == [None, None]  # more context, not the answer
    assert bot.runner.calls[-1].text == "Delete"


def typed(message_type: str, content: dict, **kwargs: Any) -> dict[str, Any]:
    """A message event of another type, with the content Feishu documents for it."""
    event = message_event("", **kwargs)
    event["event"]["message"].update(message_type=message_type, content=json.dumps(content))
    return event


async def test_an_image_reaches_the_agent_and_its_bytes_can_be_fetched_within_a_cap(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    bot.api.resources[("om_img", "img_v2_abc")] = ("image", PNG + b"0" * 2000, "image/png")
    await bot.deliver(typed("image", {"image_key": "img_v2_abc"}, message_id="om_img"))
    await bot.gateway.drain()
    [seen] = bot.runner.calls[-1].images  # the agent sees the image itself, downloaded by the core
    assert seen.data.startswith(b"\x89PNG") and "(attached: image)" in bot.runner.calls[-1].text
    assert "Got:" in text_of(bot.api.shown()[-1])  # and the person gets an answer

    image = Attachment(kind="image", name="image", ref="om_img/image/img_v2_abc")
    assert (await bot.adapter.fetch_attachment(image, max_bytes=10_000)).startswith(b"\x89PNG")
    with pytest.raises(AttachmentTooLarge):  # over the cap: nothing, and the core can say why
        await bot.adapter.fetch_attachment(image, max_bytes=1000)
    downloads = [c for c in bot.api.calls if "/resources/" in c.path]
    assert [c.query for c in downloads] == [{"type": ["image"]}] * 3
    gone = Attachment(kind="file", name="x", ref="om_img/file/file_v2_gone")
    assert await bot.adapter.fetch_attachment(gone, max_bytes=10_000) is None  # Feishu's 234003
    assert await bot.adapter.fetch_attachment(Attachment(kind="sticker"), max_bytes=10_000) is None


async def test_a_bmp_reaches_the_agent_as_a_bmp_and_an_image_over_the_cap_is_told(make_bot):
    bot = await make_bot(ScriptedRunner(agent), progress_after_seconds=100)
    bot.gateway.config.agent.max_image_bytes = 1024 * 1024
    bmp = b"BM" + (3 * 1024).to_bytes(4, "little") + b"\x00" * (3 * 1024 - 6)
    bot.api.resources[("om_bmp", "img_v2_bmp")] = ("image", bmp, "image/bmp")
    await bot.deliver(typed("image", {"image_key": "img_v2_bmp"}, message_id="om_bmp"))
    await bot.gateway.drain()
    [seen] = bot.runner.calls[-1].images
    assert (seen.mime_type, seen.data) == ("image/bmp", bmp)  # its true type, not "image/png"

    big = PNG + b"0" * (3 * 1024 * 1024)
    bot.api.resources[("om_big", "img_v2_big")] = ("image", big, "image/png")
    await bot.deliver(typed("image", {"image_key": "img_v2_big"}, message_id="om_big"))
    await bot.gateway.drain()
    assert bot.runner.calls[-1].images == ()  # the agent ran without it
    told = [text_of(card) for card in bot.api.shown()]
    assert "I cannot look at image (3 MB): images over 1 MB are not read." in told
    assert any(line.startswith("Got:") for line in told[-1:])


async def test_files_stickers_and_forwards_each_get_an_answer(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    for message_type, content in [
        ("file", {"file_key": "file_v2_1", "file_name": "plan.pdf"}),
        ("sticker", {"file_key": "v2_sticker"}),
        ("merge_forward", {"content": "Merged and Forwarded Message"}),
        ("audio", {"file_key": "file_v2_2", "duration": 3000}),
    ]:
        await bot.deliver(typed(message_type, content))
    await bot.gateway.drain()
    seen = [c.text for c in bot.runner.calls]
    assert seen == [
        "(attached: plan.pdf)",
        "(attached: sticker)",
        "(attached: forwarded chat history)",
        "(attached: voice message (3 s))",
    ]
    assert len([c for c in bot.api.shown() if "Got:" in text_of(c)]) == 4


#: Shared tasks, calendar cards, votes and video calls: each content as Feishu's "接收消息内容结构"
#: documents it (times in ms), and what the agent reads of it.
SHARED = {
    "todo": (
        {
            "task_id": "acd096a5-a157-4b9d-80e2-5b317456f005",
            "summary": {
                "title": "",
                "content": [[{"tag": "text", "text": "多吃水果，多运动，健康生活，快乐工作。"}]],
            },
            "due_time": "1623124318000",
        },
        "task: 多吃水果，多运动，健康生活，快乐工作。 (due 2021-06-08 03:51 UTC)",
    ),
    "share_calendar_event": (
        {"summary": "Weekly release sync", "start_time": "1608265395000", "end_time": "1608267015000"},
        "shared calendar event: Weekly release sync (from 2020-12-18 04:23 UTC to 2020-12-18 04:50 UTC)",
    ),
    "calendar": (
        {"summary": "日程邀请测试", "start_time": "1608265395000", "end_time": "1608267015000"},
        "calendar invitation: 日程邀请测试 (from 2020-12-18 04:23 UTC to 2020-12-18 04:50 UTC)",
    ),
    "general_calendar": (
        {"summary": "日程转让测试", "start_time": "1608265395000", "end_time": "1608267015000"},
        "calendar event: 日程转让测试 (from 2020-12-18 04:23 UTC to 2020-12-18 04:50 UTC)",
    ),
    "vote": (
        {"topic": "Which database?", "options": ["Postgres", "MySQL", "SQLite"]},
        "vote: Which database? (options: Postgres, MySQL, SQLite)",
    ),
    "video_chat": (
        {"topic": "Incident bridge", "start_time": "1623124523829"},
        "video call: Incident bridge (started 2021-06-08 03:55 UTC)",
    ),
}


@pytest.mark.parametrize("message_type", sorted(SHARED))
async def test_a_shared_task_event_vote_or_call_reaches_the_agent_with_its_title_and_time(
    make_bot, message_type
):
    content, read = SHARED[message_type]
    bot = await make_bot(ScriptedRunner(agent))
    await bot.deliver(typed(message_type, content))
    await bot.gateway.drain()
    assert [c.text for c in bot.runner.calls] == [f"(attached: {read})"]


async def test_what_a_shared_thing_says_is_cut_short(make_bot):
    """A vote's topic and options are anyone's words: the agent reads a line of them, not pages."""
    bot = await make_bot(ScriptedRunner(agent))
    vote = {"topic": "Which one?\n" + "really " * 2000, "options": [f"option {i} " * 50 for i in range(100)]}
    await bot.deliver(typed("vote", vote))
    await bot.gateway.drain()
    [seen] = [c.text for c in bot.runner.calls]
    assert seen.startswith("(attached: vote: Which one? really really") and "\n" not in seen
    assert len(seen) < 1200 and "option 9 " in seen and "option 10 " not in seen


async def test_a_card_someone_sends_reaches_the_agent_with_its_title_and_text(make_bot):
    """A card forwarded to the bot (an alert, say): a received ``interactive`` message's content is
    its title and post-like paragraphs, mentions as ``@_user_N`` keys resolved through ``mentions``."""
    bot = await make_bot(ScriptedRunner(agent))
    card = {
        "title": "Deploy failed",
        "elements": [
            [
                {"tag": "text", "text": "service: api "},
                {"tag": "a", "text": "runbook", "href": "https://x.io/rb"},
            ],
            [{"tag": "text", "text": "on call: "}, {"tag": "at", "user_id": "@_user_1", "user_name": ""}],
            [{"tag": "img", "image_key": "img_v2_chart"}],
        ],
    }
    event = typed("interactive", card)
    event["event"]["message"]["mentions"] = [
        {"key": "@_user_1", "id": {"open_id": "ou_bob"}, "name": "Bob Li"}
    ]
    await bot.deliver(event)
    await bot.gateway.drain()
    assert [c.text for c in bot.runner.calls] == [
        "(attached: card: Deploy failed service: api [runbook](https://x.io/rb) on call: @Bob Li)"
    ]


async def accepted(bot) -> list[InboundMessage]:
    """What the core receives from the adapter (recorded at the boundary)."""
    seen: list[InboundMessage] = []
    accept = bot.gateway.accept

    async def record(message: InboundMessage):
        seen.append(message)
        return await accept(message)

    bot.gateway.accept = record
    bot.adapter.receiver.gateway = bot.gateway
    return seen


async def test_commands_reach_the_core_as_neutral_commands_in_p2p_and_groups(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    seen = await accepted(bot)
    await bot.deliver(message_event("/help"))
    await bot.deliver(message_event("／New"))  # a Chinese input method's full-width slash, a capital
    await bot.deliver(message_event("/status", chat="oc_g", chat_type="group", mention_bot=True))
    group_cancel = message_event("", chat="oc_g", chat_type="group", root_id="om_root", mention_bot=True)
    group_cancel["event"]["message"]["content"] = json.dumps({"text": "/cancel @_user_1"})
    await bot.deliver(group_cancel)
    await bot.deliver(message_event("", chat="oc_g", chat_type="group", mention_bot=True))  # just "@bot"
    assert [m.text for m in seen] == ["/help", "/new", "/status", "/cancel", "/help"]
    assert seen[3].conversation.topic == "om_root"  # the thread the question is in


async def test_cancel_on_a_card_tells_the_core_the_person_declined(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    await bot.deliver(message_event("delete the test data"))
    await bot.gateway.drain()
    message_id, card = list(bot.api.cards.items())[-1]
    answers = []
    submit = bot.gateway.submit_answer

    async def record(answer):
        answers.append(answer)
        return await submit(answer)

    bot.gateway.submit_answer = record
    await bot.click(card_action(payload(button(card, "Cancel")), message_id=message_id))
    [answer] = answers
    assert answer.decline and answer.option_id is None and answer.text is None
    assert answer.token == payload(button(card, "Cancel"))["t"] and answer.sender.user_id == "ou_alice"


async def test_cancel_closes_the_question_for_everyone_and_the_agent_is_told(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    await bot.deliver(message_event("delete the test data"))
    await bot.gateway.drain()
    message_id, card = list(bot.api.cards.items())[-1]

    reply = await bot.click(card_action(payload(button(card, "Cancel")), message_id=message_id))
    assert reply["toast"]["type"] == "success" and "Cancelled by" in reply["toast"]["content"]
    closed = reply["card"]["data"]
    assert "✖ Cancelled by <at id=ou_alice></at>" in text_of(closed) and not components(closed, "button")
    await bot.gateway.drain()
    assert bot.runner.calls[-1].response.response_kind == "declined"


async def test_cancel_typed_in_a_group_thread_closes_the_question_there(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    group = {"chat": "oc_g", "chat_type": "group"}
    await bot.deliver(message_event("delete the test data", message_id="om_root", mention_bot=True, **group))
    await bot.gateway.drain()
    message_id = next(m for m, c in bot.api.cards.items() if "Delete 1,204 rows" in text_of(c))

    await bot.deliver(message_event("/cancel", root_id="om_root", mention_bot=True, **group))
    await bot.gateway.drain()
    assert "✖ Cancelled by" in text_of(bot.api.cards[message_id]) and not components(
        bot.api.cards[message_id], "button"
    )
    assert bot.runner.calls[-1].response.response_kind == "declined"
    await bot.deliver(message_event("", root_id="om_root", mention_bot=True, **group))  # a bare "@bot"
    await bot.gateway.drain()
    assert "/cancel" in text_of(bot.api.shown()[-1])  # the help, naming the commands


async def test_help_after_a_chinese_message_answers_in_chinese_with_the_shared_words(make_bot):
    bot = await make_bot(ScriptedRunner())
    await bot.deliver(message_event("/help"))
    await bot.gateway.drain()
    english = text_of(bot.api.shown()[-1])
    assert "/cancel — dismiss the open question, or stop the request in progress" in english.splitlines()
    await bot.deliver(message_event("帮我写一份周报"))
    await bot.gateway.drain()
    await bot.deliver(message_event("/help"))
    await bot.gateway.drain()
    chinese = text_of(bot.api.shown()[-1])
    assert chinese.startswith("直接告诉我您需要什么。")
    assert "/cancel — 取消待回答的问题，或停止进行中的请求" in chinese.splitlines()
