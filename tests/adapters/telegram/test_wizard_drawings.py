"""A form's step drawn again is another drawing: a tap sent on an earlier drawing of the same form
(before the person opened it anew, while the message showed it) and delivered once the new drawing
shows that very step fills nothing there. The person made that choice on a form they left, not on
the one they see. (Edit and Back: ``test_shared_taps``.)"""

from __future__ import annotations

import json

from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.protocol import catalog

from .harness import ALICE, callback_update
from .test_choices import clarification_call
from .test_form_details import Form, script
from .test_private_topics import DEPLOYS, DOCS, in_topic


def drawn(tg, form: Form, label: str) -> str:
    """The callback data of the button ``label`` the form message shows now, as Telegram keeps it."""
    markup = json.loads(tg.api.messages[(ALICE["id"], form.message_id)][1])
    return next(b["callback_data"] for row in markup["inline_keyboard"] for b in row if b["text"] == label)


async def test_a_tap_on_a_form_closed_since_fills_nothing_in_the_form_opened_anew(bench):
    """Alice taps "React" on the form of Deploys, opens the form of Docs before that tap arrives
    (which closes the first: one form per person per chat takes typed values), then "Fill in" on
    Deploys again: the form starts anew, on the Framework step the late tap was drawn for."""
    runner = ScriptedRunner(script)
    tg = await bench(runner)
    await tg.deliver(in_topic("deploy", DEPLOYS))
    deploys = Form(tg, clarification_call(tg).result["message_id"], DEPLOYS)
    await deploys.tap("form")
    late_react = callback_update(drawn(tg, deploys, "React"), deploys.message_id, thread_id=DEPLOYS)
    await tg.deliver(in_topic("name it", DOCS))
    docs = Form(tg, [c for c in tg.api.of("sendMessage") if c.markup][-1].result["message_id"], DOCS)
    await docs.tap("form")
    assert "📝 Fill in" in deploys.labels  # closed: the question shown again
    await deploys.tap("form")
    assert "1/6 · Framework" in deploys.text

    await tg.deliver(late_react)
    assert tg.api.of("answerCallbackQuery")[-1].params.get("text") == catalog.text("wizard_step_gone")
    assert "1/6 · Framework" in deploys.text and "→" not in deploys.text
    await deploys.tap("s2")  # what she chooses on the form she sees
    assert "2/6 · Features" in deploys.text
    await deploys.tap("b")
    assert "→ Vue" in deploys.text
