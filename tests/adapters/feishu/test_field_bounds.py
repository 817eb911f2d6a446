"""A form field's bounds (``FormField.bounds``, a typed interrupt's schema) on a Feishu card: a text's
``maxLength`` is the input's ``max_length`` (Feishu stops the person there), and a submit with a value
outside its bounds is refused at once with a toast naming the field, the card kept, before the
agent would ask the form again."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clarigate.adapters.feishu.form_card import field_component
from clarigate.adapters.feishu.render import native_card
from clarigate.adapters.testing import ScriptedRunner, asking, form_request
from clarigate.agent.protocol import FormField
from clarigate.agent.protocol.bounds import BOUND_KEYS

from .card_schema import check_card
from .cards import button, components, payload
from .events import card_action
from .test_scenarios import ask

FIELDS = [
    FormField(name="title", label="Title", type="text", required=True, bounds={"maxLength": 8}),
    FormField(name="guests", label="Guests", type="number", bounds={"minimum": 1, "maximum": 10}),
    FormField(name="notes", label="Notes", type="textarea", bounds={"minLength": 3}),
]


async def test_a_value_out_of_bounds_is_refused_at_once_and_the_card_kept(make_bot: Any) -> None:
    bot = await make_bot(ScriptedRunner(lambda turn: asking(form_request("Book?", FIELDS))))
    message_id, card = await ask(bot, "book it")
    title, guests, notes = components(card, "input")
    assert title["max_length"] == 8  # what Feishu's input enforces itself
    assert "max_length" not in guests and "max_length" not in notes
    submit = payload(button(card, "Submit"))
    cards = len(bot.api.cards)

    async def send(form_value: dict[str, Any]) -> dict[str, Any]:
        return await bot.click(
            card_action(submit, tag="button", form_value=form_value, message_id=message_id)
        )

    refused = await send({"f1": "Trip", "f2": "20", "f3": "ab"})
    assert refused["toast"] == {
        "type": "error",
        "content": "Guests: Must be at most 10; Notes: Use at least 3 characters",
    }
    refused = await send({"f1": "A much longer title", "f2": "0"})  # a client that let it through
    assert refused["toast"]["content"] == "Title: Use at most 8 characters; Guests: Must be at least 1"
    await bot.gateway.drain()
    assert len(bot.runner.calls) == 1 and len(bot.api.cards) == cards  # not answered, nothing new

    done = await send({"f1": "Trip", "f2": "4", "f3": ""})
    assert done["toast"]["type"] == "success", done
    await bot.gateway.drain()
    assert bot.runner.calls[-1].response.values == {"title": "Trip", "guests": 4}


def test_max_length_only_where_feishu_takes_it_and_the_value_shown_fits() -> None:
    def component(**update: Any) -> dict[str, Any]:
        return field_component(FIELDS[0].model_copy(update=update), 1, "en")

    assert component()["max_length"] == 8
    assert component(type="textarea")["max_length"] == 8
    assert "max_length" not in component(bounds={"maxLength": 5000})  # Feishu takes 1 to 1,000
    assert "max_length" not in component(bounds={"maxLength": 0})
    assert "max_length" not in component(bounds={"maxLength": 2.5})
    assert "max_length" not in component(default="A much longer title")  # asked again as given
    assert component(default="Trip")["max_length"] == 8
    assert "max_length" not in component(type="number", bounds={"maxLength": 8})


#: Any bounds a schema may set (crossing, huge, fractional, infinite, NaN), on any text or number
bound_numbers = st.integers(-5, 1200) | st.integers(-(10**30), 10**30) | st.floats()
typed_fields = st.builds(
    FormField,
    name=st.just("f"),
    label=st.text(max_size=20),
    type=st.sampled_from(["text", "textarea", "number"]),
    required=st.booleans(),
    default=st.none() | st.text(max_size=1200) | st.integers() | st.floats(allow_nan=False),
    bounds=st.none() | st.dictionaries(st.sampled_from(BOUND_KEYS), bound_numbers, max_size=6),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(typed_fields, min_size=1, max_size=5))
def test_any_bounded_field_renders_a_card_feishu_takes(fields: list[FormField]) -> None:
    fields = [f.model_copy(update={"name": f"f{i}"}) for i, f in enumerate(fields)]
    card = native_card(form_request("Book?", fields), "tok")
    check_card(card)
    for box in components(card, "input"):
        if "max_length" in box:
            assert len(box.get("default_value", "")) <= box["max_length"]
