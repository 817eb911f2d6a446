"""The messages of a turn, found by id, when some of the thread's were writes still pending as it
began (a parallel branch that replied while another asked): LangGraph gives such a message written
without an id a new one at every read of the state, so it is recognised by what it says."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from clarigate.agent.turn_output import new_messages, turn_output


def test_a_pending_reply_read_again_with_a_new_id_is_not_new() -> None:
    human = HumanMessage("order a shirt", id="h1")
    pending = AIMessage("Branch A finished.", id="read-1")  # the id of the read the turn began with
    after = [human, AIMessage("Branch A finished.", id="read-2"), AIMessage("size=S", id="s")]
    assert turn_output(after, [human, pending], [pending]).replies == ["size=S"]


def test_a_reply_like_one_the_run_removed_is_still_new() -> None:
    """Only pending writes are recognised by what they say: a graph that trims its thread and
    answers as it did before shows that answer again."""
    before = [AIMessage("Done.", id="old"), HumanMessage("again", id="h2")]
    after = [HumanMessage("again", id="h2"), AIMessage("Done.", id="new")]
    assert [m.id for m in new_messages(after, before)] == ["new"]
