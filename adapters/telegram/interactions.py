"""Button taps: options, "Other…", risk confirmation, ✖ Cancel, and the form wizard's buttons.

A tap on a risk confirmation's go-ahead option only asks again (``confirms``): the answer is
taken from the "⚠️ Yes: …" tap that follows.

Every tap is answered with ``answerCallbackQuery`` first, before any edit or post, so the
person's app stops spinning at once whatever happens next; refusals (already answered,
expired, not allowed, a question's token on a message of another chat or topic: ``_where_asked``)
are an alert to the person who tapped and change nothing in the chat. The edits and posts
that follow run through ``AfterAck``: a deleted message or a flood wait never fails the update
(see ``effects``).
"""

from __future__ import annotations

import logging

from telegram import CallbackQuery, MaybeInaccessibleMessage, Message
from telegram.error import TelegramError

from clarigate.agent.protocol import HumanInputRequest, ui_text
from clarigate.gateway.boundary.messages import (
    AnswerOutcome,
    AnswerStatus,
    InboundAnswer,
    InboundFeedback,
    PendingView,
    Sender,
)
from clarigate.gateway.boundary.port import GatewayPort

from . import callback_data as cb
from .confirms import Confirms, first_pick, go_ahead_index, not_their_pick
from .effects import AfterAck, TapReply, answered_edit
from .ephemeral import EphemeralNotes
from .form_notes import not_used
from .forms import Forms
from .receive import remember_chain, sender_of, topic_of
from .render import render_other_prompt
from .send import TelegramSender

log = logging.getLogger(__name__)

WIZARD_ACTIONS = {
    cb.STEP_DONE,
    cb.STEP_YES,
    cb.STEP_NO,
    cb.STEP_BACK,
    cb.STEP_SKIP,
    cb.STEP_CLEAR,
    cb.STEP_KEEP,
    cb.SUMMARY_SUBMIT,
    cb.SUMMARY_EDIT,
}
OTHER_ASKED_TTL = 24 * 3600  # one "Other…" prompt per person and question a day


class Interactions:
    """Turns taps into gateway answers, then edits the messages once the tap is answered."""

    def __init__(
        self,
        gateway: GatewayPort,
        sender: TelegramSender,
        after_ack: AfterAck,
        notes: EphemeralNotes | None = None,
    ) -> None:
        self.gateway = gateway
        self.sender = sender
        self.after_ack = after_ack
        self.notes = notes  # "Other…" prompts only the person who tapped sees, where the Bot API can
        self.forms = Forms(gateway, sender, after_ack)
        self.confirms = Confirms(gateway, sender)

    async def on_callback(self, query: CallbackQuery) -> None:
        """Handle one tap: decide, answer the tap, then edit (the tap is answered even on failure)."""
        reply = TapReply()
        try:
            reply = await self._dispatch(query)
        finally:
            try:
                await self.sender.answer_callback(query.id, reply.text, reply.alert)
            except TelegramError as exc:  # e.g. "query is too old": the tap itself was handled
                log.warning("telegram answerCallbackQuery failed: %s", exc)
        for what, effect in reply.then:
            await self.after_ack.run(what, effect)

    async def _dispatch(self, query: CallbackQuery) -> TapReply:
        action = cb.decode(query.data)
        message = query.message
        if action is None or message is None:
            return TapReply()
        who = sender_of(query.from_user)
        if action.action in cb.VOTES:  # 👍/👎 under an answer: no question behind that token
            return await self._vote(action, who, query)
        view = await self.gateway.pending_by_token(action.token)
        if view is None or not await self._where_asked(view, message):
            code = query.from_user.language_code or ""  # nothing changes where they tapped
            return TapReply(ui_text("expired", "zh" if code.startswith("zh") else "en"), True)
        code = action.action
        chat_id, message_id = str(message.chat.id), str(message.message_id)
        if code == cb.DECLINE:
            return await self._decline(view, who, query.id, chat_id, message_id)
        # Only the buttons this question was rendered with act: a payload made for another
        # kind of question (forged, or from a buggy client) must not answer this one.
        is_form = view.request.input_mode == "form"
        wizard_step = code in WIZARD_ACTIONS or code[:1] in (cb.STEP_SELECT, cb.STEP_TOGGLE)
        if is_form != (code == cb.FORM or wizard_step):
            return TapReply()
        if code in (cb.FORM, cb.OTHER) or wizard_step:
            refusal = await self._refusal(view, who)
            if refusal is not None:
                state = await self.forms.load(view.request.request_id, who.user_id)
                if state is not None:  # a tap sent before the person saw it closed: end the wizard
                    await self.forms.forget(state)  # and its photos and files, said not used
                    refusal.then.extend(not_used(self.gateway, self.sender, view, state.attachments))
                return refusal
        if code == cb.FORM:
            return await self.forms.open(view, who, chat_id, message_id)
        if code == cb.OTHER:
            return await self._ask_other(view, who, message_id, query.id)
        if wizard_step:
            return await self.forms.step(view, who, action, query.id, chat_id, message_id)
        first = first_pick(action)  # an old "⚠️ Yes: …", drawn for no one: asks again, for whoever tapped
        if code == cb.RESTORE or go_ahead_index(view.request, first) is not None:
            return await self.confirms.tap(view, who, first, chat_id, message_id)
        return await self._choose(view, who, action, query.id, chat_id, message_id)

    async def _choose(
        self,
        view: PendingView,
        who: Sender,
        tap: cb.ButtonAction,
        event_id: str,
        chat_id: str,
        message_id: str,
    ) -> TapReply:
        """An option or Confirm/Cancel: submit it; on success the message shows the answer.

        A "⚠️ Yes: …" answers only for the person whose pick it confirms (``Confirms.tap`` drew it
        for them): anyone else's tap answers nothing (they pick an option themselves); one drawn
        before buttons said whose pick they confirm only asks again (``confirms.first_pick``)."""
        request, code = view.request, tap.action
        if (refusal := not_their_pick(request, tap, who)) is not None:
            return refusal
        answer = InboundAnswer(
            sender=who, event_id=event_id, token=view.token, conversation=view.conversation
        )
        index = cb.ButtonAction(view.token, code).option_index
        # an option, or (from the confirm keyboard) the go-ahead option the person confirmed
        option = code.startswith((cb.OPTION_PREFIX, cb.CONFIRM_PREFIX))
        if option and index is not None and 1 <= index <= len(request.options):
            answer = answer.model_copy(update={"option_id": request.options[index - 1].id})
        elif code in (cb.CONFIRM_PREFIX + "0", cb.CANCEL) and not request.options:  # risk without options
            label = ui_text("confirm" if code != cb.CANCEL else "cancel", request.locale)
            answer = answer.model_copy(update={"text": label})
        else:
            return TapReply()  # not a button of this question
        outcome = await self.gateway.submit_answer(answer)
        return self._after_submit(outcome, request, chat_id, message_id)

    async def _decline(
        self, view: PendingView, who: Sender, event_id: str, chat_id: str, message_id: str
    ) -> TapReply:
        """ "✖ Cancel": the person dismisses the question; the agent is told they declined.

        Whatever the gateway says, this person's form (if they had one open) ends; when the
        question stays open (someone else was asked, it was answered meanwhile) they are told why.
        """
        request = view.request
        answer = InboundAnswer(
            sender=who, event_id=event_id, token=view.token, decline=True, conversation=view.conversation
        )
        outcome = await self.gateway.submit_answer(answer)
        if outcome.status is AnswerStatus.DUPLICATE:
            return TapReply()
        if outcome.accepted:
            state = await self.forms.load(request.request_id, who.user_id)
            if state is not None:
                await self.forms.forget(state)
            return self._after_submit(outcome, request, chat_id, message_id)
        then = await self.forms.close_after_decline(view, who)
        return TapReply(outcome.message or ui_text("invalid_values", request.locale), True, then)

    def _after_submit(
        self, outcome: AnswerOutcome, request: HumanInputRequest, chat_id: str, message_id: str
    ) -> TapReply:
        if outcome.status is AnswerStatus.DUPLICATE:
            return TapReply()  # a redelivered tap: the first delivery already did everything
        if not outcome.accepted:
            return TapReply(outcome.message or ui_text("invalid_values", request.locale), True)
        edit = answered_edit(self.sender, request, chat_id, message_id, outcome.answered_line)
        return TapReply(ui_text("answer_received", request.locale), then=[edit])

    async def _vote(self, action: cb.ButtonAction, who: Sender, query: CallbackQuery) -> TapReply:
        """👍/👎 under an answer: the core records the person's one vote; the tap says so (an
        alert when it was not recorded: too old, or not on the allow-lists)."""
        vote, language = cb.VOTES[action.action], query.from_user.language_code
        feedback = InboundFeedback(
            sender=who, token=action.token, vote=vote, event_id=query.id, language=language
        )
        outcome = await self.gateway.submit_feedback(feedback)
        return TapReply(outcome.message, not outcome.recorded)

    async def _ask_other(self, view: PendingView, who: Sender, message_id: str, query_id: str) -> TapReply:
        """ "Other…": prompt with ForceReply; the person's reply is matched by the core. In a
        group the prompt is an ephemeral message only they see, where the Bot API has them.

        One prompt per person and question: a second tap (or a redelivered one) only
        repeats the hint.
        """
        hint = ui_text("type_answer", view.request.locale)
        asked = f"other-asked:{view.token}:{who.user_id}"
        if await self.gateway.state.get_json(asked):
            return TapReply(hint)
        await self.gateway.state.set_json(asked, True, OTHER_ASKED_TTL)
        conversation = view.conversation.model_copy(update={"reply_to": message_id})
        prompt = render_other_prompt(view.request, who)

        async def post_prompt() -> None:
            try:
                private = None
                if self.notes is not None:
                    private = await self.notes.send(conversation, who.user_id, prompt, query_id)
                sent = None if private is not None else await self.sender.post(conversation, prompt)
            except TelegramError:
                await self.gateway.state.delete(asked)  # a later tap may try again
                raise
            if sent is not None:
                await remember_chain(
                    self.gateway.state, conversation, str(sent.message_id), str(sent.chat_id)
                )

        return TapReply(hint, then=[("sendMessage", post_prompt)])

    async def _where_asked(self, view: PendingView, message: MaybeInaccessibleMessage) -> bool:
        """Whether the tapped message is in the question's conversation, as the store has it: its
        chat (or the supergroup its group was upgraded to: ``migration.ChatMoves.identity``; one begun
        there before the bot heard of it keeps the supergroup's id), and its topic where the question
        is in one (a forum's, a private chat's, a person's of a direct messages chat). A token used on
        a message of another chat or topic answers nothing there."""
        conversation, chat = view.conversation, str(message.chat.id)
        if conversation.chat_id not in (chat, await self.sender.moves.identity(chat)):
            return False
        topic = conversation.topic
        if not topic or topic.startswith("msg-") or not isinstance(message, Message):
            return True  # a reply chain of the chat, or a message too old to tell its topic (48 h)
        if message.chat.type == "private":
            return True  # the person's own chat with the bot: its topics are all theirs
        return topic_of(message) == topic

    async def _refusal(self, view: PendingView, who: Sender) -> TapReply | None:
        outcome = await self.gateway.may_answer(view, who)
        return TapReply(outcome.message, True) if outcome is not None else None
