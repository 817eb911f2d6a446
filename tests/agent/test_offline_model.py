"""The offline demo model shows every input mode and replies with what was answered."""

from __future__ import annotations

from typing import Any

from agent.models import build_chat_model
from agent.models.offline import OfflineDemoModel
from agent.protocol import answer_message_text, answer_with_form, answer_with_option, answer_with_text


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
