"""The offline demo model shows every input mode and replies with what was answered."""

from __future__ import annotations

from typing import Any

from clarigate.agent.models import build_chat_model
from clarigate.agent.models.offline import OfflineDemoModel
from clarigate.agent.protocol import (
    answer_declined,
    answer_message_text,
    answer_with_form,
    answer_with_option,
    answer_with_text,
    parse_typed_reply,
)


async def _ask(make_agent: Any, text: str, thread: str = "t1") -> Any:
    agent = await make_agent(OfflineDemoModel())
    return agent, await agent.run_turn(thread, text)


async def test_create_a_project_asks_a_form_and_uses_the_answer(make_agent: Any) -> None:
    agent, out = await _ask(make_agent, "Please create a project for the new team")

    request = out.request
    assert request is not None and request.input_mode == "form"
    kinds = {f.name: (f.type, f.required) for f in request.fields}
    assert kinds == {
        "name": ("text", True),
        "language": ("select", False),
        "private": ("checkbox", False),
        "deadline": ("date", False),
        "team_size": ("number", False),
    }
    assert [o.label for o in request.field_by_name("language").options] == ["Python", "TypeScript", "Go"]

    values = {"name": "atlas", "language": "Go", "private": "yes", "deadline": "2026-12-01", "team_size": "5"}
    response = answer_with_form(request, values, None)
    done = await agent.run_turn("t1", answer_message_text(request, response), response)

    assert done.request is None
    assert len(done.replies) == 1
    reply = done.replies[0]
    for expected in ("atlas", "Go", "private", "2026-12-01", "5"):
        assert expected in reply


async def test_delete_asks_a_risk_confirmation(make_agent: Any) -> None:
    agent, out = await _ask(make_agent, "delete the test data")

    assert out.request is not None
    assert out.request.clarification_type == "risk_confirmation"
    assert out.fallback_text and out.fallback_text.startswith("⚠️")
    no = answer_with_option(out.request, "option-2", None)
    kept = await agent.run_turn("t1", answer_message_text(out.request, no), no)
    assert kept.replies == ["Understood: I left the test data untouched."]


async def test_which_database_offers_options(make_agent: Any) -> None:
    agent, out = await _ask(make_agent, "which database?")

    assert out.request is not None and out.request.input_mode == "choice_with_other"
    assert [o.label for o in out.request.options] == ["PostgreSQL", "SQLite", "Redis"]
    pick = answer_with_option(out.request, "option-3", None)
    done = await agent.run_turn("t1", answer_message_text(out.request, pick), pick)
    assert "Redis" in done.replies[0]


async def test_a_vague_word_asks_free_text(make_agent: Any) -> None:
    agent, out = await _ask(make_agent, "reports")

    assert out.request is not None and out.request.input_mode == "free_text"
    assert "reports" in out.request.question
    answer = answer_with_text(out.request, "a monthly revenue summary", None)
    done = await agent.run_turn("t1", answer_message_text(out.request, answer), answer)
    assert "a monthly revenue summary" in done.replies[0]


async def test_a_cancelled_question_is_not_taken_for_an_answer(make_agent: Any) -> None:
    """/cancel (or Cancel) answers "declined": the demo says it goes on without the answer, in the
    question's language, instead of quoting the "(declined to answer)" marker as what it learnt;
    a declined risk confirmation keeps the data."""
    for thread, (text, expected) in enumerate(
        [
            ("which database?", "No answer, then: I will leave it for now."),
            ("create a project", "No answer, then: I will leave it for now."),
            ("reports", "No answer, then: I will leave it for now."),
            ("用哪个数据库？", "好的，不回答也没关系：这件事我先放一放。"),
            ("delete the test data", "Understood: I left the test data untouched."),
        ]
    ):
        agent, out = await _ask(make_agent, text, thread=f"d{thread}")
        assert out.request is not None, text
        declined = answer_declined(out.request, None)
        done = await agent.run_turn(f"d{thread}", answer_message_text(out.request, declined), declined)
        assert done.request is None and done.replies and done.replies[0].startswith(expected), done.replies


async def test_ordinary_messages_get_a_plain_reply(make_agent: Any) -> None:
    _, out = await _ask(make_agent, "how should I structure a small web service")

    assert out.request is None
    assert len(out.replies) == 1 and "how should I structure a small web service" in out.replies[0]


async def test_clarify_first_with_the_offline_model(make_agent: Any) -> None:
    agent = await make_agent(OfflineDemoModel(), allow_clarification=True)

    out = await agent.run_turn("t1", "explain caching strategies for APIs")

    assert out.replies[0].startswith("Understood:")
    assert len(out.replies) == 2


def test_offline_is_the_default_model() -> None:
    model = build_chat_model("offline")
    assert isinstance(model, OfflineDemoModel)
    assert model.bind_tools([]) is model


async def test_chinese_requests_show_every_input_mode_in_chinese(make_agent: Any) -> None:
    agent = await make_agent(OfflineDemoModel())
    modes = {}
    for thread, text in enumerate(["创建一个新项目", "帮我删除测试数据", "用哪个数据库？", "报告"]):
        out = await agent.run_turn(f"zh{thread}", text)
        assert out.request is not None, text
        assert out.request.locale == "zh", text
        modes[text] = (out.request.input_mode, out.request.clarification_type)
        # One language throughout: the question, the context and the hints are Chinese.
        assert (
            out.fallback_text is not None
            and "Reply" not in out.fallback_text
            and "?" not in out.fallback_text
        )
    assert modes == {
        "创建一个新项目": ("form", "missing_info"),
        "帮我删除测试数据": ("choice_with_other", "risk_confirmation"),
        "用哪个数据库？": ("choice_with_other", "approach_choice"),
        "报告": ("free_text", "ambiguous_requirement"),
    }


async def test_chinese_answers_get_chinese_replies_that_use_them(make_agent: Any) -> None:
    agent, out = await _ask(make_agent, "新建一个项目")
    request = out.request
    assert request is not None and request.field_by_name("name").label == "项目名称"
    reply = parse_typed_reply(request, "项目名称: 星图\n语言: Go\n私有仓库: 是\n团队人数: 3", None)
    assert reply.response is not None, reply.problems
    done = await agent.run_turn("t1", answer_message_text(request, reply.response), reply.response)
    assert done.replies == [
        "已创建项目“星图”，语言 Go（私有，截止日期 未设置，团队人数 3）。（演示：并没有真的创建。）"
    ]

    agent, out = await _ask(make_agent, "删除测试数据", thread="t2")
    assert out.request is not None
    yes = parse_typed_reply(out.request, "1", None).response
    assert yes is not None
    deleted = await agent.run_turn("t2", answer_message_text(out.request, yes), yes)
    assert deleted.replies == ["已删除测试数据。（演示：并没有真的删除。）"]

    agent, out = await _ask(make_agent, "周报", thread="t3")
    assert out.request is not None and out.request.question == "关于“周报”，您希望我做什么？"
    typed = answer_with_text(out.request, "每周五汇总销售数据", None)
    done = await agent.run_turn("t3", answer_message_text(out.request, typed), typed)
    assert done.replies[0].startswith("谢谢，现在我明白了：“每周五汇总销售数据”。")


async def test_a_chinese_sentence_is_not_a_vague_word(make_agent: Any) -> None:
    _, out = await _ask(make_agent, "请帮我解释一下缓存策略的优缺点")

    assert out.request is None
    assert out.replies[0].startswith("我会这样处理“请帮我解释一下缓存策略的优缺点”")

    agent = await make_agent(OfflineDemoModel(), allow_clarification=True)
    checked = await agent.run_turn("t9", "请帮我解释一下缓存策略的优缺点")
    assert checked.request is None
    assert checked.replies[0] == "明白了：“请帮我解释一下缓存策略的优缺点”。我现在就开始。"


def _speaker(locale: str | None) -> Any:
    sender = {"user_id": "u1", "display_name": None, "locale": locale, "may_answer": True}
    conversation = {
        "platform": "console",
        "workspace": None,
        "chat_id": "c1",
        "thread": None,
        "chat_type": "private",
        "answer_policy": "starter",
    }
    return {"bot_id": "demo", "agent": "default", "sender": sender, "conversation": conversation}


async def test_a_chinese_cancel_of_an_english_question_is_followed_up_in_chinese(make_agent: Any) -> None:
    """``/取消`` of "Delete the test data?": the run carries the person's language (the speaker's
    locale), and the demo's own words follow it, not the question's; ``/cancel`` stays English."""
    for thread, (locale, expected) in enumerate(
        [
            ("zh-CN", "好的，测试数据保持不变。"),
            ("en-US", "Understood: I left the test data untouched."),
            (None, "Understood:"),
        ]
    ):
        agent, out = await _ask(make_agent, "delete the test data", thread=f"c{thread}")
        assert out.request is not None and out.request.locale == "en"
        declined = answer_declined(out.request, None)
        text = answer_message_text(out.request, declined)
        done = await agent.run_turn(f"c{thread}", text, declined, speaker=_speaker(locale))
        assert done.replies and done.replies[0].startswith(expected), done.replies


async def test_an_answer_typed_in_chinese_is_followed_up_in_chinese(make_agent: Any) -> None:
    """The person's own words choose the reply's language, whatever the question's was."""
    for thread, (answer, expected) in enumerate(
        [
            ("每月的收入汇总", "谢谢，现在我明白了：“每月的收入汇总”"),
            ("a monthly summary", "Thanks, now I understand"),
        ]
    ):
        agent, out = await _ask(make_agent, "reports", thread=f"r{thread}")
        assert out.request is not None and out.request.locale == "en"
        typed = answer_with_text(out.request, answer, None)
        done = await agent.run_turn(f"r{thread}", answer_message_text(out.request, typed), typed)
        assert done.replies and done.replies[0].startswith(expected), done.replies


async def test_digits_typed_to_a_chinese_question_keep_it_chinese(make_agent: Any) -> None:
    agent, out = await _ask(make_agent, "报告")
    assert out.request is not None and out.request.locale == "zh"
    typed = answer_with_text(out.request, "2026", None)
    done = await agent.run_turn("t1", answer_message_text(out.request, typed), typed)
    assert done.replies and done.replies[0].startswith("谢谢，现在我明白了：“2026”"), done.replies
