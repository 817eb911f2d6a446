"""What each platform sends back for a form submitted as shown: built from what our renderer
rendered (Slack's ``initial_*``, Feishu's defaults, Telegram's Keep, the terminal's Enter), in
the platforms' documented submit shapes, then read by each adapter's own parsing code."""

from __future__ import annotations

import io
from typing import Any

from clarigate.adapters.console.receive import ConsoleChat
from clarigate.adapters.feishu import actions as feishu_actions
from clarigate.adapters.feishu.render import native_card
from clarigate.adapters.slack.modals import form_values as slack_form_values
from clarigate.adapters.slack.modals import render_form_modal
from clarigate.adapters.telegram import callback_data as cb
from clarigate.adapters.telegram import wizard
from clarigate.adapters.telegram.render import render_wizard
from clarigate.agent.protocol import HumanInputRequest


def _slack_state(element: dict[str, Any]) -> dict[str, Any]:
    """One element's ``view.state.values`` entry when the person changed nothing."""
    kind = element["type"]
    if kind in ("plain_text_input", "number_input"):
        return {"type": kind, "value": element.get("initial_value")}  # null when left empty
    if kind == "datepicker":
        return {"type": kind, "selected_date": element.get("initial_date")}
    if kind in ("static_select", "radio_buttons"):  # null when nothing is picked
        return {"type": kind, "selected_option": element.get("initial_option")}
    return {"type": kind, "selected_options": element.get("initial_options") or []}


def slack_state(view: dict[str, Any]) -> dict[str, Any]:
    """The ``view.state.values`` Slack sends for the modal ``view`` submitted as shown."""
    return {
        block["block_id"]: {block["element"]["action_id"]: _slack_state(block["element"])}
        for block in view["blocks"]
        if block["type"] == "input"
    }


def slack_unchanged(request: HumanInputRequest) -> dict[str, Any]:
    """Raw values from a ``view_submission`` of the form modal as rendered."""
    return slack_form_values(request, slack_state(render_form_modal(request, "{}")))


def _feishu_components(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        found = [node] if str(node.get("name", "")).startswith("f") and "tag" in node else []
        return found + [c for v in node.values() for c in _feishu_components(v)]
    if isinstance(node, list):
        return [c for item in node for c in _feishu_components(item)]
    return []


def _feishu_value(component: dict[str, Any]) -> Any:
    """One component's ``form_value`` entry when the person changed nothing (Feishu's shapes)."""
    tag = component["tag"]
    if tag == "checker":
        return component["checked"]
    if tag == "select_static":
        return component.get("initial_option", "")
    if tag == "multi_select_static":
        return component.get("selected_values", [])
    if tag == "date_picker":
        date = component.get("initial_date")
        return f"{date} +0800" if date else ""
    return component.get("default_value", "")


def feishu_form_value(card: dict[str, Any]) -> dict[str, Any]:
    """The ``form_value`` Feishu sends for the form in ``card`` submitted as shown."""
    return {c["name"]: _feishu_value(c) for c in _feishu_components(card["body"])}


def feishu_unchanged(request: HumanInputRequest) -> dict[str, Any]:
    """Raw values from a ``card.action.trigger`` form submit of the card as rendered."""
    return feishu_actions.form_values(request, feishu_form_value(native_card(request, "tok")))


def telegram_unchanged(request: HumanInputRequest) -> dict[str, Any]:
    """The wizard's values after tapping Keep on every step (Skip where a step has no Keep)."""
    state = wizard.WizardState(
        request_id=request.request_id,
        token="tok",
        user_id="u",
        chat_id="c",
        message_id="m",
        values=wizard.defaults(request),
    )
    while state.field(request) is not None:
        markup = render_wizard(request, state).reply_markup
        # each button's action, read as the adapter reads it (its payload also names owner and step)
        codes = [cb.decode(b.callback_data).action for row in markup.inline_keyboard for b in row]
        if cb.STEP_KEEP in codes:
            state = wizard.keep(state, request)
        else:
            assert cb.STEP_SKIP in codes
            state = wizard.skip(state, request)
    return dict(state.values)


class _Terminal:
    """Just enough of the console adapter for ``ConsoleChat.fill_in``: prints, takes the submit."""

    def __init__(self) -> None:
        self.out = io.StringIO()
        self.open: Any = None
        self.submitted: dict[str, str] | None = None

    def print(self, text: str) -> None:
        self.out.write(text + "\n")

    async def submit(self, raw: dict[str, str]) -> Any:
        self.submitted = raw
        return type("Outcome", (), {"accepted": True})()


def console_unchanged(request: HumanInputRequest) -> tuple[dict[str, str], str]:
    """The raw values the terminal submits when Enter is pressed on every field, and what it
    printed (the prompts)."""
    import asyncio

    terminal = _Terminal()
    out = type("Out", (), {"request": request})()
    terminal.open = out
    stdin = io.StringIO("\n" * len(request.fields))

    async def settle() -> None:
        return None

    chat = ConsoleChat(terminal, stdin, asyncio.run, settle)  # type: ignore[arg-type]
    chat.fill_in(out)  # type: ignore[arg-type]
    assert terminal.submitted is not None
    return terminal.submitted, terminal.out.getvalue()
