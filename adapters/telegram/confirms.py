"""The second step in front of a risk confirmation's go-ahead option (Telegram has no dialog).

A tap on a go-ahead option (``clarigate.agent.protocol.risk``) answers nothing: the message turns
into the confirm keyboard, "⚠️ Yes: <option>" (which answers with that option) and "◀ Go back"
(which brings the question's own keyboard back). Everyone in the chat sees the same message, so
only someone who may answer the question can turn it, and only the person who turned it can
answer with its "⚠️ Yes: …" (the button carries whose pick it confirms: ``interactions``). A
"⚠️ Yes: …" drawn before buttons said whose pick they confirm (a release before) is a first tap on
its option: the confirm keyboard is drawn again for whoever tapped, whose own "⚠️ Yes: …" answers.
"""

from __future__ import annotations

from clarigate.agent.protocol import HumanInputRequest, ui_text
from clarigate.agent.protocol.risk import goes_ahead
from clarigate.gateway.boundary.messages import PendingView, Sender
from clarigate.gateway.boundary.port import GatewayPort

from . import callback_data as cb
from .effects import Effect, TapReply
from .render import TelegramMessage, confirm_label, render_confirm, render_question
from .send import TelegramSender


def go_ahead_index(request: HumanInputRequest, code: str) -> int | None:
    """The 1-based index of the go-ahead option a first tap ``code`` picks (0: the Confirm of a
    risk confirmation without options), else None (the tap answers at once)."""
    if code == cb.CONFIRM and not request.options and request.clarification_type == "risk_confirmation":
        return 0
    index = cb.ButtonAction("", code).option_index
    if not code.startswith(cb.OPTION_PREFIX) or index is None or not 1 <= index <= len(request.options):
        return None
    return index if goes_ahead(request, request.options[index - 1].id) else None


def first_pick(tap: cb.ButtonAction) -> str:
    """The code ``tap`` stands for before a confirm keyboard is drawn: a "⚠️ Yes: …" drawn for no
    one (before buttons said whose pick they confirm) is a first tap on its option (``Y2``: ``o2``;
    ``Y0``: Confirm), so it only asks again, for whoever tapped; any other tap is its own code."""
    index = tap.option_index
    if not tap.action.startswith(cb.CONFIRM_PREFIX) or tap.owner is not None or index is None:
        return tap.action
    return f"{cb.OPTION_PREFIX}{index}" if index else cb.CONFIRM


def not_their_pick(request: HumanInputRequest, tap: cb.ButtonAction, who: Sender) -> TapReply | None:
    """The refusal of a "⚠️ Yes: …" tapped by someone other than the person whose pick it was drawn
    for (``render_confirm``), or drawn for no one on an option that is no go-ahead, else None."""
    if not tap.action.startswith(cb.CONFIRM_PREFIX) or tap.owner == who.user_id:
        return None
    index = tap.option_index or 0
    picked = request.options[index - 1].label if 0 < index <= len(request.options) else ""
    option = picked or ui_text("confirm", request.locale)
    return TapReply(ui_text("confirm_not_yours", request.locale, option=option), True)


class Confirms:
    """Turns a question's keyboard into its confirm keyboard and back."""

    def __init__(self, gateway: GatewayPort, sender: TelegramSender) -> None:
        self.gateway = gateway
        self.sender = sender

    async def tap(self, view: PendingView, who: Sender, code: str, chat_id: str, message_id: str) -> TapReply:
        """A first tap on a go-ahead option, or "◀ Go back": the message changes, nothing is answered."""
        refusal = await self.gateway.may_answer(view, who, expect_typing=False)
        if refusal is not None:
            return TapReply(refusal.message, True)
        request = view.request
        if code == cb.RESTORE:
            return TapReply(then=[self._edit(chat_id, message_id, render_question(request, view.token))])
        index = go_ahead_index(request, code)
        if index is None:  # the caller checked: never reached
            return TapReply()
        asking = render_confirm(request, view.token, index, who.user_id)  # only their Yes answers
        hint = ui_text("confirm_tap", request.locale, yes=confirm_label(request, index))
        return TapReply(hint, then=[self._edit(chat_id, message_id, asking)])

    def _edit(self, chat_id: str, message_id: str, message: TelegramMessage) -> tuple[str, Effect]:
        async def edit() -> None:
            await self.sender.edit(chat_id, message_id, message)

        return ("editMessageText", edit)
