"""The wizard's summary, which the person submits: every field and its value on it, within 4096."""

from __future__ import annotations

from clarigate.adapters.telegram.markup import html_to_plain
from clarigate.adapters.telegram.render import render_wizard
from clarigate.adapters.telegram.wizard import WizardState
from clarigate.agent.protocol import normalize_request


def test_a_long_forms_summary_shows_every_field_and_its_value_before_submit():
    fields = [{"name": f"f{i}", "label": f"Field {i} " + "l" * 150, "type": "textarea"} for i in range(16)]
    request = normalize_request({"question": "The rollout plan", "fields": fields}, "call-1")
    values = {f.name: f"value {i} " + "<&> " * 50 for i, f in enumerate(request.fields)}
    state = WizardState(
        request_id=request.request_id, token="t", user_id="1", chat_id="1", message_id="1"
    ).model_copy(update={"values": values, "step": len(request.fields)})

    message = render_wizard(request, state)

    assert len(message.text) <= 4096
    shown = html_to_plain(message.text)
    assert len(request.fields) == 16
    for i in range(16):  # none cut away below what the message holds
        assert f"Field {i} l" in shown and f"value {i} <&>" in shown
