"""``/cancel`` in the Edit form of an approval no decision can turn down: the edit is dropped.

Such an approval (``HumanInputRequest.dismissible`` False, ``gateway/flow/held.py``) answered
"Edit" is asked again as its Edit form, which is the approval from then on: submitted as it showed,
it approves the calls; changed, it edits them. ``/cancel`` while its asker fills it in drops the
edit only: their entries are forgotten, the form's message offers the decision again ("⚠️ Approve",
as it is; "Edit", the form again from the current values) and they are told so. Nothing is answered
and nothing runs: the core never hears that ``/cancel`` (it would tell them to pick one of the
approval's options, which its Edit form does not show). "⚠️ Approve" asks again before it counts,
as the approval's own go-ahead does (``confirms``); "⚠️ Yes: Approve" submits the form as it showed,
tapped by the person whose "⚠️ Approve" drew it (nobody else: nobody approves in one tap). The
note saying the edit was dropped, as the form's "That form is closed.", joins the conversation's
reply chain: a reply to it in a group stays in that conversation (``effects.posted_note``).
A form tap sent before the ``/cancel`` and delivered after it reopens nothing ("That form is closed.").
An Edit form asked again (an edit it could not take) shows the person's values, not the calls':
no "⚠️ Approve" could stand for the approval there, and its ``/cancel`` is the gateway's as before.
"""

from __future__ import annotations

import re

from telegram import Message

from clarigate.agent.protocol import HumanInputRequest, ui_text
from clarigate.gateway.boundary.messages import AnswerStatus, Conversation, InboundAnswer, PendingView, Sender
from clarigate.gateway.boundary.port import GatewayPort

from . import callback_data as cb
from . import wizard
from .effects import AfterAck, Effect, TapReply, answered_edit, posted_note
from .forms import Forms
from .migration import reply_point
from .render import TelegramMessage, escape, held_yes_label, render_held_edit
from .send import TelegramSender

HANDLED_TTL = 24 * 3600  # a /cancel that dropped an edit is remembered this long (redeliveries)
#: The id of a question asked again (``clarigate.agent.interrupt_kinds.asked_again``): an Edit form
#: asked again after an edit it could not take shows the person's values, not the calls' own.
_ASKED_AGAIN = re.compile(r"#\d+$")


def is_held_edit(request: HumanInputRequest) -> bool:
    """True for the Edit form of an approval no decision can turn down (the only form that is not
    dismissible) as first asked: it shows the calls' own values, so submitted as it is it approves
    them. One asked again shows what the person gave (``/cancel`` there is the gateway's)."""
    first = not _ASKED_AGAIN.search(request.request_id)
    return request.input_mode == "form" and request.dismissible is False and first


class HeldEdits:
    """Drops a held approval's edit on ``/cancel``; answers the decision its message offers then."""

    def __init__(
        self, gateway: GatewayPort, sender: TelegramSender, after_ack: AfterAck, forms: Forms
    ) -> None:
        self.gateway = gateway
        self.sender = sender
        self.after_ack = after_ack
        self.forms = forms

    async def drop(self, message: Message, conversation: Conversation, who: Sender) -> bool:
        """``/cancel`` from ``who`` in ``conversation``: True when it dropped their edit of a held
        approval there (its message shows the decision again, and they are told); False when
        they fill in no such form here (the gateway answers the ``/cancel``)."""
        handled = f"held-edit-dropped:{message.chat_id}:{message.message_id}"
        if await self.gateway.state.get_json(handled):
            return True  # the same /cancel delivered again (webhook retry, polling takeover)
        state = await self.forms.active(str(message.chat_id), who.user_id)
        view = await self.gateway.pending_by_token(state.token) if state is not None else None
        if state is None or view is None or view.status != "pending" or not is_held_edit(view.request):
            return False
        if view.conversation.thread_key != conversation.thread_key:
            return False  # a form of another topic or reply chain: this /cancel is not about it
        await self.gateway.state.set_json(handled, True, HANDLED_TTL)
        # a form tap sent before the /cancel, delivered after it, reopens nothing ("That form is
        # closed."): the message keeps offering the decision; its "Edit" opens the form again
        await self.forms.closed_by_them(view, state)
        await self.forms.forget(state)
        request = view.request
        await self.after_ack.run(
            "editMessageText",
            self._edit(state.chat_id, state.message_id, render_held_edit(request, view.token)),
        )
        approve, edit = f"⚠️ {ui_text('approve', request.locale)}", ui_text("edit", request.locale)
        words = ui_text("held_edit_dropped", request.locale, approve=approve, edit=edit, new="/new")
        quoted = reply_point(str(message.chat_id), str(message.message_id), conversation.chat_id)
        where = conversation.model_copy(update={"reply_to": quoted})
        note = TelegramMessage(escape(words))  # a reply to it stays in this conversation
        await self.after_ack.run(*posted_note(self.sender, self.gateway.state, where, note))
        return True

    async def tap(
        self,
        view: PendingView,
        who: Sender,
        tap: cb.ButtonAction,
        event_id: str,
        chat_id: str,
        message_id: str,
    ) -> TapReply:
        """ "⚠️ Approve" (asks again), "◀ Go back" or "⚠️ Yes: Approve" on a held approval's Edit form.

        "⚠️ Yes: Approve" counts only for the person whose "⚠️ Approve" drew it (the button says
        whose it is): nobody approves in one tap what someone else started. One drawn before
        buttons said whose it is counts as "⚠️ Approve" (it asks again, for whoever tapped)."""
        request, code = view.request, tap.action
        if code == cb.HELD_APPROVE_YES and tap.owner is None:  # drawn before buttons said whose:
            code = cb.HELD_APPROVE  # it asks again, for whoever tapped (their "⚠️ Yes" approves)
        if not is_held_edit(request):
            return TapReply()  # not a button of this question
        if code == cb.HELD_APPROVE_YES and tap.owner == who.user_id:
            return await self._approve(view, who, event_id, chat_id, message_id)
        refusal = await self.gateway.may_answer(view, who, expect_typing=False)
        if refusal is not None:
            return TapReply(refusal.message, True)
        if code == cb.HELD_APPROVE_YES:  # someone else's: it answers nothing
            approve = ui_text("approve", request.locale)
            return TapReply(ui_text("confirm_not_yours", request.locale, option=approve), True)
        picker = who.user_id if code == cb.HELD_APPROVE else None
        shown = self._edit(chat_id, message_id, render_held_edit(request, view.token, picker))
        hint = ui_text("confirm_tap", request.locale, yes=held_yes_label(request)) if picker else None
        return TapReply(hint, then=[("editMessageText", shown)])

    async def _approve(
        self, view: PendingView, who: Sender, event_id: str, chat_id: str, message_id: str
    ) -> TapReply:
        """The form submitted with the values it showed: every call approved as it is."""
        request = view.request
        values = wizard.defaults(request)
        answer = InboundAnswer(
            sender=who, event_id=event_id, token=view.token, values=values, conversation=view.conversation
        )
        outcome = await self.gateway.submit_answer(answer)
        if outcome.status is AnswerStatus.DUPLICATE:
            return TapReply()  # a redelivered tap: the first delivery did everything
        if not outcome.accepted:
            return TapReply(outcome.message or ui_text("invalid_values", request.locale), True)
        state = await self.forms.load(request.request_id, who.user_id)
        if state is not None:  # "Edit" opened the form again before this tap arrived: it ends
            await self.forms.forget(state)
        edit = answered_edit(self.sender, request, chat_id, message_id, outcome.answered_line)
        return TapReply(ui_text("answer_received", request.locale), then=[edit])

    def _edit(self, chat_id: str, message_id: str, message: TelegramMessage) -> Effect:
        async def edit() -> None:
            await self.sender.edit(chat_id, message_id, message)

        return edit
