"""An approval sends only the decisions its review allows, never runs a call with changes the
person made dropped, and approves only through a confirmed pick of its Approve option."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from clarigate.agent.approval_edits import edit_decisions, edit_request
from clarigate.agent.approvals import actions_of, approval_asked
from clarigate.agent.interrupt_kinds import AskAgain
from clarigate.agent.interrupts import APPROVAL, resume_value
from clarigate.agent.protocol import (
    answer_message_text,
    answer_with_option,
    answer_with_text,
    catalog,
    parse_typed_reply,
)
from clarigate.agent.protocol.risk import go_ahead_ids
from tests.agent import user_graphs
from tests.agent.conftest import AgentFactory, scripted

DECISIONS = ("approve", "edit", "reject", "respond")
#: Every label of every decision in every language, as typed, and with a trailing mark.
TYPED = sorted(
    {w for key in ("approve", "reject", "edit", "approval_respond") for w in catalog.every(key)}
    | {f"{w}." for w in catalog.every("approve")}
)


def _hitl(*calls: tuple[str, dict[str, Any], list[str]]) -> dict[str, Any]:
    return {
        "action_requests": [{"name": name, "args": args} for name, args, _ in calls],
        "review_configs": [{"action_name": name, "allowed_decisions": allowed} for name, _, allowed in calls],
    }


def _typed(value: dict[str, Any], text: str, locale: str = "en") -> Any:
    request = approval_asked("i-1", actions_of(value), locale).request  # type: ignore[arg-type]
    return resume_value(APPROVAL, "i-1", value, answer_with_text(request, text, None), locale)  # type: ignore[arg-type]


def _allowed_subsets() -> list[list[str]]:
    found = []
    for size in range(1, len(DECISIONS) + 1):
        found += [list(c) for c in itertools.combinations(DECISIONS, size)]
    return found


@pytest.mark.parametrize("allowed", _allowed_subsets(), ids="+".join)
def test_only_allowed_decisions_are_ever_sent(allowed: list[str]) -> None:
    """Whatever is typed in "Other…", in any language: the graph gets only decisions its review
    allows (LangChain raises on any other), or the question is asked again."""
    value = _hitl(("restart", {"service": "api"}, allowed))
    for text, locale in itertools.product([*TYPED, "not today"], ("en", "zh")):
        resumed = _typed(value, text, locale)
        if isinstance(resumed, AskAgain) or not isinstance(resumed, dict):
            continue
        sent = {d["type"] for d in resumed["decisions"]}
        assert sent <= set(allowed), (text, locale, resumed)


def test_a_typed_decision_the_review_does_not_allow_is_a_rejection_with_it_as_reason() -> None:
    value = _hitl(("restart", {"service": "api"}, ["edit", "reject"]))
    assert _typed(value, "Approve") == {"decisions": [{"type": "reject", "message": "Approve"}]}
    value = _hitl(("restart", {"service": "api"}, ["approve", "reject"]))
    assert _typed(value, "Reply instead") == {"decisions": [{"type": "reject", "message": "Reply instead"}]}
    assert _typed(value, "Edit") == {"decisions": [{"type": "reject", "message": "Edit"}]}


@pytest.mark.parametrize("text", ["批准", "approve.", "APPROVE!", "批准。"])
def test_a_typed_approve_that_is_no_pick_of_the_option_asks_again(text: str) -> None:
    value = _hitl(("restart", {"service": "api"}, ["approve", "reject"]))
    again = _typed(value, text)
    assert isinstance(again, AskAgain)
    assert [o.label for o in again.request.options] == ["Approve", "Reject"]
    assert again.in_full and "Approve" in again.in_full
    # the option itself, picked (and confirmed by the platform), approves
    request = approval_asked("i-1", actions_of(value), "en").request
    picked = answer_with_option(request, request.options[0].id, None)
    assert resume_value(APPROVAL, "i-1", value, picked, "en") == {"decisions": [{"type": "approve"}]}


def test_a_changed_call_whose_review_allows_no_edit_is_never_approved() -> None:
    value = _hitl(
        ("restart", {"service": "api"}, ["approve", "reject"]),
        ("scale", {"replicas": 2}, ["approve", "edit", "reject"]),
    )
    actions = actions_of(value)
    form = edit_request("i-1", actions, "en")
    names = [f.name for f in form.fields]
    again = edit_decisions("i-1", value, actions, {names[0]: "db", names[1]: 3}, "en")
    assert isinstance(again, AskAgain)
    assert "restart" in (again.request.context or "")
    assert {f.name: f.default for f in again.request.fields} == {names[0]: "db", names[1]: 3}
    # the editable call alone changed: edited, the other approved as shown
    done = edit_decisions("i-1", value, actions, {names[0]: "api", names[1]: 3}, "en")
    assert done == {
        "decisions": [
            {"type": "approve"},
            {"type": "edit", "edited_action": {"name": "scale", "args": {"replicas": 3}}},
        ]
    }


@pytest.fixture(autouse=True)
def _fresh_log() -> None:
    user_graphs.RAN.clear()


async def _answer(agent: Any, thread: str, out: Any, text: str) -> Any:
    reply = parse_typed_reply(out.request, text, None)
    assert reply.response is not None, reply.problems
    return await agent.run_turn(thread, answer_message_text(out.request, reply.response), reply.response)


async def test_typed_edit_to_a_review_without_edit_opens_no_form_and_runs_nothing(
    make_agent: AgentFactory,
) -> None:
    settings: dict[str, Any] = {
        "tool_paths": ("tests.agent.user_graphs:delete_records",),
        "require_approval": {"delete_records": ["approve", "reject"]},
    }
    call = {"name": "delete_records", "args": {"table": "users", "limit": 5}}
    agent = await make_agent(scripted({"tool_calls": [call]}, {"content": "{last_user}"}), **settings)
    asked = await agent.run_turn("t", "clean up users")
    assert [o.label for o in asked.request.options] == ["Approve", "Reject"]
    out = await _answer(agent, "t", asked, "Edit")
    assert out.request is None and user_graphs.RAN == []


@pytest.mark.parametrize("locale", ["en", "zh"])
def test_an_approve_only_review_has_one_cancel(locale: str) -> None:
    """Approve, then the question's own Cancel: no second Cancel option next to it."""
    value = _hitl(("restart", {"service": "api"}, ["approve"]))
    request = approval_asked("i-1", actions_of(value), locale).request  # type: ignore[arg-type]
    assert [o.label for o in request.options] == [catalog.text("approve", locale)]  # type: ignore[arg-type]
    assert request.clarification_type == "risk_confirmation"
    assert go_ahead_ids(request) == [request.options[0].id]
