"""A notice naming people, as parts (``Notice``): the same words as the finished text, each person
where an adapter puts its own form of them, every other piece escaped."""

from __future__ import annotations

from clarigate.agent.protocol import ui_text
from clarigate.gateway.boundary.messages import Notice, Sender
from clarigate.gateway.boundary.outbound_items import TextReply

ADA = Sender(user_id="U1", display_name="Ada")


def brackets(text: str) -> str:
    return f"[{text}]"


def test_the_text_is_the_catalogs_line_with_the_persons_name_in_each_language():
    for locale in ("en", "zh"):
        notice = Notice.of("not_allowed", locale, who=ADA)
        assert notice.text == ui_text("not_allowed", locale, who="Ada")
    assert Notice.of("not_allowed", "en", who=Sender(user_id="U1")).text == ui_text("not_allowed", who="U1")


def test_each_person_is_shown_the_adapters_way_and_the_words_around_them_escaped():
    notice = Notice(
        words="{a} and {b} asked {q}", people={"a": ADA, "b": Sender(user_id="U2")}, values={"q": "x"}
    )
    assert notice.render(brackets, lambda p: f"<{p.user_id}>") == "[]<U1>[ and ]<U2>[ asked x]"


def test_a_person_without_a_form_of_their_own_is_a_name_escaped_with_the_words_around_it():
    # one piece: a name can never complete a sequence the escaping breaks ("@" + "here")
    notice = Notice(words="ping @{who}!", people={"who": Sender(user_id="x", display_name="here")})
    assert notice.render(brackets, lambda p: None) == "[ping @here!]"


def test_a_reply_keeps_its_notice_through_json():
    note = Notice.of("cancel_not_yours", "zh", who=ADA)
    reply = TextReply(text=note.text, private_to=Sender(user_id="U2"), notice=note)
    assert TextReply.model_validate_json(reply.model_dump_json()) == reply
    assert TextReply.model_validate_json('{"text": "hi"}').notice is None  # recorded before notices
