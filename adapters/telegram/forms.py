"""The form wizard's side effects: opening, taps, typed values, Submit, Cancel, closing.

``wizard`` holds the pure transitions; this module loads and saves the state, decides
whether a typed message is meant for the form, and edits the form message.

A message is taken as a form value only while it is plausibly meant for the form: a reply to
the wizard's message (anywhere), or, in a private chat (or a person's topic of a channel's direct
messages chat, ``receive.one_to_one``), any message while nothing from the agent came after it
(``note_said``: a command's answer or a notice of the gateway's does not count);
either written once the form was opened (``receive.written_time``: one delivered late, written
before, was meant for something else), and it fills no step shown after it was written (the step
says so: ``wizard.typed``). Anything else (a new request, a command, a message after the agent
said something else) goes to the gateway as usual.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from telegram import Message

from clarigate.agent.protocol import ui_text
from clarigate.gateway.boundary.messages import (
    AnswerStatus,
    Attachment,
    Conversation,
    InboundAnswer,
    PendingView,
    Sender,
)
from clarigate.gateway.boundary.port import GatewayPort

from . import callback_data as cb
from . import wizard
from .effects import AfterAck, Effect, TapReply, answered_edit
from .form_message import closed_by_command, draw, latest_key
from .form_message import note_said as note_said  # where outbound and adapter take it from
from .form_notes import not_used, note, say_closed
from .receive import one_to_one, written_time
from .render import TelegramMessage, render_question, render_wizard
from .send import TelegramSender
from .wizard import WizardState

log = logging.getLogger(__name__)


class Forms:
    """One person's wizard per chat, kept in the gateway's shared state."""

    def __init__(self, gateway: GatewayPort, sender: TelegramSender, after_ack: AfterAck) -> None:
        self.gateway = gateway
        self.sender = sender
        self.after_ack = after_ack

    # --- taps ------------------------------------------------------------------------------

    async def open(self, view: PendingView, who: Sender, chat_id: str, message_id: str) -> TapReply:
        """ "Fill in": start (or resume) this person's wizard in the request's message.

        One form per person per chat takes typed values: opening another closes the older one
        (its message shows the question again, "Fill in" reopens it).
        """
        then: list[tuple[str, Effect]] = []
        older = await self.active(chat_id, who.user_id)
        if older is not None and older.request_id != view.request.request_id:
            then += await self._close(older)
        state = await self._load(view.request.request_id, who.user_id) or WizardState(
            request_id=view.request.request_id,
            token=view.token,
            user_id=who.user_id,
            chat_id=chat_id,
            message_id=message_id,
            values=wizard.defaults(view.request),
            opened_at=time.time(),
        )
        await self.gateway.state.delete(wizard.closed_key(view.request.request_id, who.user_id))
        refusal = await self._keep(view, who, state)
        if refusal is not None:  # answered (or closed) since the tap was let through
            return TapReply(refusal.text, True, then)
        opened = {"token": view.token, "request_id": view.request.request_id}
        await self.gateway.state.set_json(
            wizard.opened_key(chat_id, message_id, who.user_id), opened, self._ttl(view)
        )
        then.append(("editMessageText", self._shower(view, state)))
        return TapReply(then=then)

    async def step(
        self,
        view: PendingView,
        who: Sender,
        tap: cb.ButtonAction,
        event_id: str,
        chat_id: str,
        message_id: str,
    ) -> TapReply:
        """A form button, applied to this person's wizard if drawn for them on the step they are on,
        as the message shows it now; one for a step they left (tapped twice) changes nothing, nor
        does one drawn for an earlier drawing of that step (``WizardState.drawing``: sent before they
        went Back to it, tapped Edit, or opened the form anew). One drawn for someone else's form
        (the message shows whoever's was drawn last; its values were theirs) applies nothing: it
        shows the tapper's form, as "Fill in" would, as any tap does with no wizard, unless they
        closed it themselves (``/cancel``, ``/new``): a tap sent before they saw that opens nothing.
        (A button drawn before buttons said whose step they were is applied as then.)"""
        state = await self._load(view.request.request_id, who.user_id)
        foreign = tap.owner is not None and tap.owner != who.user_id
        if state is not None and not foreign:
            moved_on = tap.step not in (None, state.step) or tap.drawing not in (None, state.drawing)
            if moved_on and not state.has_applied(event_id):
                return TapReply(ui_text("wizard_step_gone", view.request.locale), True)
            return await self.tap(view, who, tap.action, event_id, state)
        if state is None and await self._closed_by(view, who):
            return TapReply(ui_text("form_closed", view.request.locale), True)
        opened = await self.open(view, who, chat_id, message_id)
        if foreign and opened.text is None:
            opened.text, opened.alert = ui_text("wizard_not_yours", view.request.locale), True
        return opened

    async def tap(
        self, view: PendingView, who: Sender, code: str, event_id: str, state: WizardState
    ) -> TapReply:
        """A step button (choose, toggle, Done, Yes/No, Back, Skip/Next, Clear, Edit, Submit)."""
        request = view.request
        if state.has_applied(event_id):
            return TapReply()
        if code == cb.SUMMARY_SUBMIT:
            return await self._submit(view, who, state, event_id)
        index = cb.ButtonAction(view.token, code).option_index or 0
        transitions = {
            cb.STEP_DONE: lambda s: wizard.done(s, request),
            cb.STEP_YES: lambda s: wizard.set_checkbox(s, request, True),
            cb.STEP_NO: lambda s: wizard.set_checkbox(s, request, False),
            cb.STEP_BACK: wizard.back,
            cb.STEP_SKIP: lambda s: wizard.skip(s, request),
            cb.STEP_CLEAR: lambda s: wizard.clear(s, request),
            cb.STEP_KEEP: lambda s: wizard.keep(s, request),
            cb.SUMMARY_EDIT: wizard.edit,
            cb.STEP_SELECT: lambda s: wizard.choose(s, request, index),
            cb.STEP_TOGGLE: lambda s: wizard.toggle(s, request, index),
        }
        step = transitions.get(code) or transitions.get(code[:1])
        if step is None:
            return TapReply()
        state = wizard.moved(state, step(state), time.time()).applied(event_id)
        refusal = await self._keep(view, who, state)
        if refusal is not None:  # a Submit tapped with this one (or another close) came first
            return refusal
        return TapReply(state.notice, bool(state.notice), [("editMessageText", self._shower(view, state))])

    async def _submit(self, view: PendingView, who: Sender, state: WizardState, event_id: str) -> TapReply:
        request = view.request
        answer = InboundAnswer(
            sender=who,
            event_id=event_id,
            token=view.token,
            values=dict(state.values),
            conversation=view.conversation,
            attachments=state.attachments,  # sent with its typed values
        )
        outcome = await self.gateway.submit_answer(answer)
        if outcome.errors:
            state = wizard.moved(state, wizard.show_errors(state, request, outcome.errors), time.time())
            state = state.applied(event_id)
            refusal = await self._keep(view, who, state)
            if refusal is not None:
                return refusal
            message = outcome.message or ui_text("invalid_values", request.locale)
            return TapReply(message, True, [("editMessageText", self._shower(view, state))])
        if outcome.status is AnswerStatus.DUPLICATE:
            return TapReply()
        await self.forget(state)
        if not outcome.accepted:  # refused: the photos and files sent with its values go nowhere
            unused = not_used(self.gateway, self.sender, view, state.attachments)
            return TapReply(outcome.message or ui_text("invalid_values", request.locale), True, unused)
        edit = answered_edit(self.sender, request, state.chat_id, state.message_id, outcome.answered_line)
        return TapReply(ui_text("answer_received", request.locale), then=[edit])

    # --- typed values ----------------------------------------------------------------------

    async def on_typed(
        self,
        message: Message,
        conversation: Conversation,
        sender: Sender,
        text: str,
        aside: bool = False,
        attachments: Sequence[Attachment] = (),
    ) -> bool:
        """A message that may be a value for this person's form: True when handled here.

        ``aside``: it names others but not the bot (``receive.said_to_others``): taken only as a
        value the step takes (``wizard.takes_typed``: a text step any text), else never answered
        here, not even with "That form is closed" (the core ignores it unless it is an answer).
        ``attachments``: the photos and files it came with (its ``text`` their caption), kept to go
        with the form's answer; sent alone they are a new message, which closes the question: the
        form ends, and the person is told its values were not sent (``form_notes``), as they are
        for an album's item (``_album_sent``: its caption fills no step)."""
        if message.media_group_id:  # an album: a message of its own, its caption no step's value
            await self._album_sent(message, conversation, sender, aside)
            return False
        found = await self._meant(message, conversation, sender, aside)
        if isinstance(found, bool):
            return found
        state, view = found
        if attachments and not text.strip() and not aside:  # alone: a new message, closing the question
            await self.forget(state)
            words = ui_text("wizard_values_dropped", view.request.locale)
            await note(self.gateway, self.sender, self.after_ack, conversation, message, words)
            return False
        if aside and not (text.strip() and wizard.takes_typed(state, view.request, text)):
            return False  # said to the people it names, not a value of this step (nor a file alone)
        event_id = f"m{message.message_id}"
        if not state.has_applied(event_id):  # one written for an earlier step fills none: ``typed``
            typed = wizard.typed(state, view.request, text, written_time(message))
            typed = typed.model_copy(update={"attachments": [*typed.attachments, *attachments]})
            state = wizard.moved(state, typed, time.time()).applied(event_id)
            if await self._keep(view, sender, state) is not None:
                return False  # its question closed meanwhile: a message of its own, as just above
            await self.after_ack.run("editMessageText", self._shower(view, state))
        return True

    async def _album_sent(
        self, message: Message, conversation: Conversation, sender: Sender, aside: bool
    ) -> None:
        """An album's item while this person's form takes their messages: a new message, closing the
        question; the form ends, and they are told once (its other items find it ended). ``aside``
        for ``_meant``: a reply to a form they closed is not said to be closed, item after item."""
        found = None if aside else await self._meant(message, conversation, sender, aside=True)
        if isinstance(found, tuple):
            await self.forget(found[0])
            words = ui_text("wizard_album_dropped", found[1].request.locale)
            await note(self.gateway, self.sender, self.after_ack, conversation, message, words)

    async def _meant(
        self, message: Message, conversation: Conversation, sender: Sender, aside: bool
    ) -> tuple[WizardState, PendingView] | bool:
        """The form ``message`` is meant for, with its question; else whether it was handled here
        (a reply to a form this person closed: said to be closed) or is a message of its own."""
        chat_id = str(message.chat_id)
        private = one_to_one(message)  # a private chat, or a person's topic of a channel's DMs
        target = message.reply_to_message
        target_id = str(target.message_id) if target is not None else None
        state = await self.active(chat_id, sender.user_id)
        view = await self.gateway.pending_by_token(state.token) if state else None
        if state is not None and (view is None or view.status != "pending"):
            await self.forget(state)
            state, view = None, None
        if not aside and target_id is not None and (state is None or target_id != state.message_id):
            # a reply to a form this person had open here before: say it is closed
            opened = await self.gateway.state.get_json(wizard.opened_key(chat_id, target_id, sender.user_id))
            if opened and await say_closed(
                self.gateway, self.sender, self.after_ack, opened, conversation, message, view
            ):
                return True
        if state is None or view is None or view.conversation.thread_key != conversation.thread_key:
            return False
        if written_time(message) < state.opened_at:
            return False  # written before the form showed, delivered late: a message of its own
        if target_id != state.message_id:
            latest_said = latest_key(chat_id, conversation.topic)
            latest = await self.gateway.state.get_json(latest_said) if private else None
            if str(latest) != state.message_id:
                return False  # not a reply to the form, and the agent spoke since: a message of its own
        if state.field(view.request) is None:
            return False  # on the summary only Submit / Edit / Back apply
        return state, view

    # --- closing ---------------------------------------------------------------------------

    async def close_for(self, chat_id: str, who: Sender, conversation: Conversation, command: str) -> None:
        """``/new`` or ``/cancel`` in ``conversation``: this person's form of it stops taking values and
        shows the question again, unless the gateway's closing edit shows it closed (its one edit:
        ``form_message.closed_by_command``); one of another topic or reply chain stays, as its question."""
        state = await self.active(chat_id, who.user_id)
        if state is None:
            return
        view = await self.gateway.pending_by_token(state.token)
        if view is not None and view.status == "pending":
            if view.conversation.thread_key != conversation.thread_key:
                return  # a form of another topic or reply chain: it stays, as its question does
            await self.closed_by_them(view, state)
            if await closed_by_command(self.gateway, view, state, who, command):
                await self.forget(state)
                return
        for what, effect in await self._close(state):
            await self.after_ack.run(what, effect)

    async def closed_by_them(self, view: PendingView, state: WizardState) -> None:
        """Its person closed ``state`` (``/cancel``, ``/new``): a tap on it sent before they saw that
        (or before the gateway closes the question) opens it not again (``step``, ``_keep``)."""
        closed = wizard.closed_key(state.request_id, state.user_id)
        await self.gateway.state.set_json(closed, True, self._ttl(view))

    async def close_after_decline(self, view: PendingView, who: Sender) -> list[tuple[str, Effect]]:
        """Cancel was tapped and not accepted: this person's wizard ends; the question stays."""
        state = await self._load(view.request.request_id, who.user_id)
        return await self._close(state) if state is not None else []

    async def _close(self, state: WizardState) -> list[tuple[str, Effect]]:
        """End the wizard; its message shows the question again, if the question is still open
        when the edit runs (a Submit tapped with ``/cancel`` shows the answer, not the question)."""
        await self.forget(state)

        async def show_question() -> None:
            view = await self.gateway.pending_by_token(state.token)
            if view is None or view.status != "pending":
                return  # answered or closed meanwhile: that edit is the message's
            if await self._load(state.request_id, state.user_id) is not None:
                return  # opened again meanwhile ("Fill in"): the form is shown
            await self._draw(state, render_question(view.request, view.token))

        return [("editMessageText", show_question)]

    # --- state -----------------------------------------------------------------------------

    def _shower(self, view: PendingView, state: WizardState) -> Effect:
        """Edit the form message to show the wizard as it is when the edit runs (a retry after
        a flood wait shows the latest step, not the one of the tap that waited).

        A wizard ended meanwhile, or whose question was answered or closed, is not shown: what
        ended it shows the message (a Submit tapped with this tap: "✅ Answered by …")."""

        async def show() -> None:
            current = await self._load(state.request_id, state.user_id)
            if current is None or not await self._still_open(view):
                return
            await self._draw(current, render_wizard(view.request, current))

        return show

    async def _draw(self, state: WizardState, drawn: TelegramMessage) -> None:
        """Edit the form message to ``drawn``, or post it anew in the supergroup its group was
        upgraded to, the wizard following it (``form_message.draw``)."""
        await draw(self.gateway, self.sender, state, drawn, self._save)

    async def active(self, chat_id: str, user_id: str) -> WizardState | None:
        """The wizard that takes this person's typed messages in this chat, if one is open."""
        pointer = await self.gateway.state.get_json(wizard.active_key(chat_id, user_id))
        if not pointer:
            return None
        state = await self._load(str(pointer.get("request_id", "")), user_id)
        if state is None:
            await self.gateway.state.delete(wizard.active_key(chat_id, user_id))
        return state

    async def load(self, request_id: str, user_id: str) -> WizardState | None:
        """This person's wizard for a request, if one is open."""
        return await self._load(request_id, user_id)

    async def _load(self, request_id: str, user_id: str) -> WizardState | None:
        data = await self.gateway.state.get_json(wizard.state_key(request_id, user_id))
        return WizardState.model_validate(data) if data else None

    @staticmethod
    def _ttl(view: PendingView) -> int:
        return max(60, int(view.expires_at - time.time())) if view.expires_at else 7 * 24 * 3600

    async def _save(self, view: PendingView, state: WizardState) -> None:
        """Keep the wizard (and the pointer its typed input follows) as long as the request lives."""
        ttl = self._ttl(view)
        store = self.gateway.state
        await store.set_json(
            wizard.state_key(state.request_id, state.user_id), state.model_dump(mode="json"), ttl
        )
        await store.set_json(
            wizard.active_key(state.chat_id, state.user_id), {"request_id": state.request_id}, ttl
        )

    async def _keep(self, view: PendingView, who: Sender, state: WizardState) -> TapReply | None:
        """Save the wizard, then check that its question is still open to ``who`` and that they did
        not close the form themselves; if not (a Submit tapped with this tap was taken meanwhile,
        someone answered, ``/new``, ``/cancel``), end it and return the refusal to show ("already
        answered", "That form is closed."). Saving before checking leaves no wizard behind in any
        order: an answer recorded or a form closed after the check is followed by its ``forget``."""
        await self._save(view, state)
        refusal = await self.gateway.may_answer(view, who, expect_typing=False)
        if refusal is None and not await self._closed_by(view, who):
            return None
        await self.forget(state)
        return TapReply(refusal.message if refusal else ui_text("form_closed", view.request.locale), True)

    async def _closed_by(self, view: PendingView, who: Sender) -> bool:
        """Whether ``who`` closed their form of this question (``close_for``) and opened it not again."""
        return bool(
            await self.gateway.state.get_json(wizard.closed_key(view.request.request_id, who.user_id))
        )

    async def _still_open(self, view: PendingView) -> bool:
        current = await self.gateway.pending_by_token(view.token)
        return current is not None and current.status == "pending"

    async def forget(self, state: WizardState) -> None:
        """End this wizard: its values and the pointer typed messages follow."""
        await self.gateway.state.delete(wizard.state_key(state.request_id, state.user_id))
        pointer = await self.gateway.state.get_json(wizard.active_key(state.chat_id, state.user_id))
        if pointer and pointer.get("request_id") == state.request_id:
            await self.gateway.state.delete(wizard.active_key(state.chat_id, state.user_id))
