"""Button taps and typed form input: options, "Other…", risk confirmation, the form wizard.

Every tap is answered with ``answerCallbackQuery`` (in a ``finally``), with a short
text where it helps; refusals (already answered, expired, not allowed) are shown
as an alert to the person who tapped and change nothing in the chat.
"""

from __future__ import annotations

import logging
import time

from telegram import CallbackQuery, Message
from telegram.error import TelegramError

from agent.protocol import HumanInputRequest, ui_text
from gateway.messages import (
    AnswerOutcome,
    AnswerStatus,
    Conversation,
    InboundAnswer,
    PendingView,
    Sender,
)
from gateway.port import GatewayPort

from . import callback_data as cb
from . import wizard
from .receive import remember_chain, sender_of
from .render import render_answered, render_other_prompt, render_wizard
from .send import TelegramSender
from .wizard import WizardState

log = logging.getLogger(__name__)

WIZARD_ACTIONS = {
    cb.STEP_DONE,
    cb.STEP_YES,
    cb.STEP_NO,
    cb.STEP_BACK,
    cb.STEP_SKIP,
    cb.SUMMARY_SUBMIT,
    cb.SUMMARY_EDIT,
}
Notice = tuple[str | None, bool]  # (callback answer text, show as alert)
OTHER_ASKED_TTL = 24 * 3600  # Telegram stops redelivering an update long before this


class Interactions:
    """Turns taps and wizard input into gateway answers and message edits."""

    def __init__(self, gateway: GatewayPort, sender: TelegramSender) -> None:
        self.gateway = gateway
        self.sender = sender

    async def on_callback(self, query: CallbackQuery) -> None:
        """Handle one button tap; the tap is always acknowledged, even when handling fails."""
        notice: Notice = (None, False)
        try:
            notice = await self._dispatch(query)
        finally:
            try:
                await self.sender.answer_callback(query.id, notice[0], notice[1])
            except TelegramError as exc:  # e.g. "query is too old": the tap itself was handled
                log.warning("telegram answerCallbackQuery failed: %s", exc)

    async def _dispatch(self, query: CallbackQuery) -> Notice:
        action = cb.decode(query.data)
        message = query.message
        if action is None or message is None:
            return None, False
        who = sender_of(query.from_user)
        view = await self.gateway.pending_by_token(action.token)
        if view is None:
            return ui_text("expired"), True
        code = action.action
        # Only the buttons this question was rendered with act: a payload made for another
        # kind of question (forged, or from a buggy client) must not answer this one.
        is_form = view.request.input_mode == "form"
        wizard_step = code in WIZARD_ACTIONS or code[:1] in (cb.STEP_SELECT, cb.STEP_TOGGLE)
        if is_form != (code == cb.FORM or wizard_step):
            return None, False
        if code == cb.FORM:
            return await self._open_form(view, who, str(message.chat.id), str(message.message_id))
        if code == cb.OTHER:
            return await self._ask_other(view, who, query.id, str(message.message_id))
        if wizard_step:
            return await self._wizard_tap(
                view, who, code, query.id, str(message.chat.id), str(message.message_id)
            )
        return await self._choose(view, who, code, query.id, str(message.chat.id), str(message.message_id))

    async def _choose(
        self, view: PendingView, who: Sender, code: str, event_id: str, chat_id: str, message_id: str
    ) -> Notice:
        """An option or Confirm/Cancel: submit it; on success the message shows the answer."""
        request = view.request
        answer = InboundAnswer(
            sender=who, event_id=event_id, token=view.token, conversation=view.conversation
        )
        index = cb.ButtonAction(view.token, code).option_index
        if code.startswith(cb.OPTION_PREFIX) and index is not None and 1 <= index <= len(request.options):
            answer = answer.model_copy(update={"option_id": request.options[index - 1].id})
        elif code in (cb.CONFIRM, cb.CANCEL) and not request.options:  # risk without options
            label = ui_text("confirm" if code == cb.CONFIRM else "cancel", request.locale)
            answer = answer.model_copy(update={"text": label})
        else:
            return None, False  # not a button of this question
        outcome = await self.gateway.submit_answer(answer)
        return await self._after_submit(outcome, request, chat_id, message_id)

    async def _after_submit(
        self, outcome: AnswerOutcome, request: HumanInputRequest, chat_id: str, message_id: str
    ) -> Notice:
        if outcome.status is AnswerStatus.DUPLICATE:
            return None, False  # a redelivered tap: the first delivery already did everything
        if not outcome.accepted:
            return outcome.message or ui_text("invalid_values", request.locale), True
        await self.sender.edit(chat_id, message_id, render_answered(request, outcome.answered_line))
        return ui_text("answer_received", request.locale), False

    async def _ask_other(self, view: PendingView, who: Sender, event_id: str, message_id: str) -> Notice:
        """ "Other…": prompt with ForceReply; the person's reply is matched by the core."""
        refusal = await self._refusal(view, who)
        if refusal:
            return refusal
        # The one tap that posts a message: a redelivered update must not prompt twice.
        asked = f"other-asked:{event_id}"
        if await self.gateway.state.get_json(asked):
            return None, False
        conversation = view.conversation.model_copy(update={"reply_to": message_id})
        sent = await self.sender.post(conversation, render_other_prompt(view.request, who))
        await self.gateway.state.set_json(asked, True, OTHER_ASKED_TTL)  # after: a failed post may retry
        await remember_chain(self.gateway.state, conversation, str(sent.message_id))
        return ui_text("type_answer", view.request.locale), False

    async def _refusal(self, view: PendingView, who: Sender) -> Notice | None:
        outcome = await self.gateway.may_answer(view, who)
        return (outcome.message, True) if outcome is not None else None

    # --- the form wizard ---------------------------------------------------------------------

    async def _open_form(self, view: PendingView, who: Sender, chat_id: str, message_id: str) -> Notice:
        """ "Fill in": start (or resume) this person's wizard in the request's message."""
        refusal = await self._refusal(view, who)
        if refusal:
            return refusal
        state = await self._load(view.request.request_id, who.user_id) or WizardState(
            request_id=view.request.request_id,
            token=view.token,
            user_id=who.user_id,
            chat_id=chat_id,
            message_id=message_id,
        )
        await self._save(view, state)
        await self.sender.edit(chat_id, message_id, render_wizard(view.request, state))
        return None, False

    async def _wizard_tap(
        self, view: PendingView, who: Sender, code: str, event_id: str, chat_id: str, message_id: str
    ) -> Notice:
        request = view.request
        state = await self._load(request.request_id, who.user_id)
        if state is None:  # someone else's wizard, or one that ended: start over as "Fill in" would
            return await self._open_form(view, who, chat_id, message_id)
        # A tap sent before the person saw the question answered or expired must not
        # bring the wizard back into the closed message.
        refusal = await self._refusal(view, who)
        if refusal:
            await self._forget(state)
            return refusal
        if state.has_applied(event_id):
            return None, False
        if code == cb.SUMMARY_SUBMIT:
            return await self._submit(view, who, state, event_id)
        index = cb.ButtonAction(view.token, code).option_index or 0
        transitions = {
            cb.STEP_DONE: lambda s: wizard.done(s, request),
            cb.STEP_YES: lambda s: wizard.set_checkbox(s, request, True),
            cb.STEP_NO: lambda s: wizard.set_checkbox(s, request, False),
            cb.STEP_BACK: wizard.back,
            cb.STEP_SKIP: lambda s: wizard.skip(s, request),
            cb.SUMMARY_EDIT: wizard.edit,
            cb.STEP_SELECT: lambda s: wizard.choose(s, request, index),
            cb.STEP_TOGGLE: lambda s: wizard.toggle(s, request, index),
        }
        step = transitions.get(code) or transitions.get(code[:1])
        if step is None:
            return None, False
        state = step(state).applied(event_id)
        await self._save(view, state)
        await self.sender.edit(state.chat_id, state.message_id, render_wizard(request, state))
        return state.notice, bool(state.notice)

    async def _submit(self, view: PendingView, who: Sender, state: WizardState, event_id: str) -> Notice:
        request = view.request
        answer = InboundAnswer(
            sender=who,
            event_id=event_id,
            token=view.token,
            values=dict(state.values),
            conversation=view.conversation,
        )
        outcome = await self.gateway.submit_answer(answer)
        if outcome.errors:
            state = wizard.show_errors(state, request, outcome.errors).applied(event_id)
            await self._save(view, state)
            await self.sender.edit(state.chat_id, state.message_id, render_wizard(request, state))
            return outcome.message or ui_text("invalid_values", request.locale), True
        if outcome.accepted or outcome.status in (AnswerStatus.ALREADY_ANSWERED, AnswerStatus.EXPIRED):
            await self._forget(state)
        return await self._after_submit(outcome, request, state.chat_id, state.message_id)

    async def on_typed(self, message: Message, conversation: Conversation, text: str) -> bool:
        """A message from someone in the middle of a form, in its thread: True when the wizard took it."""
        assert message.from_user is not None
        user_id, chat_id = str(message.from_user.id), str(message.chat_id)
        pointer = await self.gateway.state.get_json(wizard.active_key(chat_id, user_id))
        if not pointer:
            return False
        state = await self._load(pointer.get("request_id", ""), user_id)
        view = await self.gateway.pending_by_token(state.token) if state else None
        if state is None or view is None or view.status != "pending":
            if state is not None:
                await self._forget(state)
            else:
                await self.gateway.state.delete(wizard.active_key(chat_id, user_id))
            return False
        if view.conversation.thread_key != conversation.thread_key:
            return False  # the person talks about something else elsewhere in the chat
        if state.field(view.request) is None:
            return False  # on the summary only Submit / Edit / Back apply
        event_id = f"m{message.message_id}"
        if not state.has_applied(event_id):
            state = wizard.type_value(state, view.request, text).applied(event_id)
            await self._save(view, state)
            await self.sender.edit(state.chat_id, state.message_id, render_wizard(view.request, state))
        return True

    async def _load(self, request_id: str, user_id: str) -> WizardState | None:
        data = await self.gateway.state.get_json(wizard.state_key(request_id, user_id))
        return WizardState.model_validate(data) if data else None

    async def _save(self, view: PendingView, state: WizardState) -> None:
        """Keep the wizard (and the pointer its typed input follows) as long as the request lives."""
        ttl = max(60, int(view.expires_at - time.time())) if view.expires_at else 7 * 24 * 3600
        store = self.gateway.state
        await store.set_json(
            wizard.state_key(state.request_id, state.user_id), state.model_dump(mode="json"), ttl
        )
        pointer = {"request_id": state.request_id}
        await store.set_json(wizard.active_key(state.chat_id, state.user_id), pointer, ttl)

    async def _forget(self, state: WizardState) -> None:
        await self.gateway.state.delete(wizard.state_key(state.request_id, state.user_id))
        await self.gateway.state.delete(wizard.active_key(state.chat_id, state.user_id))
