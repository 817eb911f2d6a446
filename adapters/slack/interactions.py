"""Clicks and modal submits answering a clarification.

A click on an option answers at once; Cancel / Skip declines the question; "Other…"
and "Fill in" open a modal inside the trigger's 3 seconds (after checking the person
may answer), once and without retries: when Slack does not open it, the person is told
privately and offered the typed route. Accepted answers update the original message;
every refusal is shown to that person only, as is a click on a control clarigate never made
(a button from an older deploy, a garbled one), for which nothing runs. The "Other…" modal
closed unsubmitted (``view_closed``) ends the person's typed-answer window: their next
message is a new one.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck

from clarigate.agent.protocol import HumanInputRequest, render_text_fallback, ui_text
from clarigate.gateway.boundary.messages import (
    AnswerOutcome,
    AnswerStatus,
    InboundAnswer,
    Notice,
    PendingView,
    Sender,
)
from clarigate.gateway.boundary.port import DeliveryFailed, GatewayPort
from clarigate.gateway.flow.answering import end_typed_answer
from clarigate.gateway.flow.notices import language_hint

from .modals import (
    FORM_CALLBACK,
    OTHER_BLOCK,
    OTHER_CALLBACK,
    field_block_id,
    field_errors,
    form_values,
    modal_metadata,
    other_text,
    out_of_bounds,
    read_metadata,
    render_form_modal,
    render_other_modal,
    undecided,
)
from .receive import count_ignored, interaction_id, interaction_sender
from .render import (
    ACTION_PREFIX,
    answered_mrkdwn,
    notice_mrkdwn,
    option_index,
    parse_button_value,
    render_closed,
)
from .send import SlackSender

log = logging.getLogger(__name__)


def typed_route(request: HumanInputRequest) -> str:
    """What to say when a modal could not be opened: it failed, and how to answer by typing."""
    return f"{ui_text('modal_failed', request.locale)}\n\n{render_text_fallback(request)}"


def _clicked_value(action: dict[str, Any]) -> str | None:
    if action.get("type") == "static_select":
        return (action.get("selected_option") or {}).get("value")
    return action.get("value")


@dataclass(frozen=True)
class _Click:
    """A click on a clarification message: its button token, who clicked, and where."""

    token: str
    person: Sender
    channel: str | None
    message_ts: str | None
    thread_ts: str | None


def _click_of(body: dict[str, Any], token: str) -> _Click:
    """Where a ``block_actions`` click happened (the container names the message; the message
    itself is the fallback)."""
    # (a part of another shape, as a forged or garbled click may hold, is taken as absent)
    container, message, channel = (
        part if isinstance(part := body.get(key), dict) else {} for key in ("container", "message", "channel")
    )
    return _Click(
        token=token,
        person=interaction_sender(body),
        channel=channel.get("id") or container.get("channel_id"),
        message_ts=container.get("message_ts") or message.get("ts"),
        thread_ts=message.get("thread_ts"),
    )


def _click_answer(action: str, click: _Click, view: PendingView, event_id: str) -> InboundAnswer | None:
    """The answer a click on Cancel / Skip or on an option gives; None for an option not offered."""
    if action == "decline":
        return InboundAnswer(
            sender=click.person,
            event_id=event_id,
            token=click.token,
            decline=True,
            conversation=view.conversation,
        )
    index = option_index(action)
    if index is None or not 1 <= index <= len(view.request.options):
        return None
    return InboundAnswer(
        sender=click.person,
        event_id=event_id,
        token=click.token,
        option_id=view.request.options[index - 1].id,
        conversation=view.conversation,
    )


def _blank_other(view: PendingView, answer: InboundAnswer) -> dict[str, str]:
    """The error under the "Other…" box sent with only spaces or line breaks (Slack refuses only a
    box left truly empty): the answer is empty, not the core's "type your answer as a reply",
    which sends the person to the chat; no error of its own for any other refusal."""
    if (answer.text or "").strip():
        return {}
    return {OTHER_BLOCK: ui_text("slack_other_empty", view.request.locale)}


class ClarificationInteractions:
    """Bolt listeners for ``block_actions``, ``view_submission`` and ``view_closed`` on clarifications."""

    def __init__(
        self,
        gateway: GatewayPort,
        sender: SlackSender,
        language: Callable[[str], Awaitable[str | None]] | None = None,
    ) -> None:
        self.gateway = gateway
        self.sender = sender
        self.language = language  # a person's Slack language (``PeopleBook.locale``), after the ack
        self._after_ack: set[asyncio.Task[None]] = set()

    def listen(self, app: AsyncApp) -> None:
        """Take the clicks on a clarification's buttons, its modals' submits, and the "Other…"
        modal closed unsubmitted (Bolt's ``view`` matches a submit only, unless told the type), and
        any other click: registered after every other action listener (Bolt runs the first match)."""
        ours = re.compile("^" + re.escape(ACTION_PREFIX))
        app.action(ours)(self.on_action)
        app.action({"type": "block_actions", "action_id": re.compile("")})(self.on_unknown)
        app.view(ours)(self.on_submission)
        app.view({"type": "view_closed", "callback_id": OTHER_CALLBACK})(self.on_closed)

    async def idle(self) -> None:
        """Wait until the message updates and notices that follow answers have been sent."""
        while self._after_ack:
            await asyncio.gather(*list(self._after_ack), return_exceptions=True)

    def after_the_ack(self, work: Awaitable[Any]) -> None:
        """Run Web API calls that follow an answer without holding the ack back: Slack wants
        the ack within 3 s, and a rate-limited ``chat.update`` must not make a click look failed."""

        async def run() -> None:
            try:
                await work
            except DeliveryFailed as error:  # Slack said no (user_not_in_channel, a 429…): one line
                level = logging.INFO if error.permanent else logging.WARNING
                log.log(level, "slack: not shown after an answer: %s", error)
            except Exception:  # noqa: BLE001 - cosmetic: the answer itself is already claimed
                log.warning("slack: could not update the chat after an answer", exc_info=True)

        task = asyncio.create_task(run())
        self._after_ack.add(task)
        task.add_done_callback(self._after_ack.discard)

    async def on_action(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        """A button or select on a clarification message."""
        await ack()
        parsed = parse_button_value(_clicked_value((body.get("actions") or [{}])[0]))
        if parsed is None:
            self._unknown(body)
            return
        token, action = parsed
        click = _click_of(body, token)
        view = await self.gateway.pending_by_token(token)
        if view is None:
            self.after_the_ack(self._expired(click))  # gone (answered elsewhere, expired, unknown)
            return
        if action in ("other", "form"):
            await self._offer_modal(action, click, view, str(body.get("trigger_id")))
            return
        answer = _click_answer(action, click, view, interaction_id(body))
        if answer is None:
            return
        outcome = await self.gateway.submit_answer(answer)
        await self._after(outcome, view, click.channel, click.message_ts, click.person, click.thread_ts)

    async def on_unknown(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        """A click on a control clarigate never made (``_unknown``)."""
        await ack()
        self._unknown(body)

    def _unknown(self, body: dict[str, Any]) -> None:
        """A click clarigate cannot read (a button from an older deploy, a garbled one): nothing
        runs; a debug line and a count, and the person is told privately, in their Slack language,
        that the question is gone (asked after the ack). Slack sends each click once: one note."""
        action = (body.get("actions") or [{}])[0]
        log.debug("slack: block_actions on a control clarigate did not make (%.60r)", action.get("action_id"))
        count_ignored("block_actions")  # acknowledged without work, as a request no listener wants
        self.after_the_ack(self._expired(_click_of(body, "")))

    async def _expired(self, click: _Click) -> None:
        """Tell the person privately, in their Slack language, that the clicked question is gone."""
        if not click.channel:  # a control in a view (no channel to show a note in)
            return
        language = await self.language(click.person.user_id) if self.language else None
        text = notice_mrkdwn(ui_text("expired", language_hint(language) or "en"), None, None)
        await self.sender.ephemeral(click.channel, click.person.user_id, text, click.thread_ts)

    async def _offer_modal(self, action: str, click: _Click, view: PendingView, trigger_id: str) -> None:
        """ "Other…" or "Fill in": the modal, for someone who may answer (a refusal is told privately)."""
        channel, person, thread_ts = click.channel, click.person, click.thread_ts
        refusal = await self.gateway.may_answer(view, person)
        if refusal is not None:
            await self._tell(
                channel, person, refusal.message, refusal.view or view, thread_ts, refusal.notice
            )
            return
        metadata = modal_metadata(click.token, channel, click.message_ts, view.request.locale)
        modal = (
            render_form_modal(view.request, metadata)
            if action == "form"
            else (render_other_modal(view.request, metadata))
        )
        # Opened beside the ack, not before it: the trigger lives 3 s from the click whatever
        # the ack does, and a slow views.open must not make the click look failed.
        self.after_the_ack(self._open(trigger_id, modal, view, channel, person, thread_ts))

    async def _open(
        self,
        trigger_id: str,
        modal: dict[str, Any],
        view: PendingView,
        channel: str | None,
        person: Sender,
        thread_ts: str | None,
    ) -> None:
        """Open the modal once; when Slack does not (expired_trigger_id, a timeout, a 429), tell the
        person privately and show the question as text, to be answered by typing."""
        try:
            await self.sender.open_view(trigger_id, modal)
        except DeliveryFailed as error:
            if error.code == "exchanged_trigger_id":  # a redelivered click: the modal is already open
                log.debug("slack: modal already opened for this click")
                return
            log.warning("slack: could not open the modal: %s", error.code)
            await self._tell(channel, person, typed_route(view.request), view, thread_ts)

    async def on_submission(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        """A submitted form or "Other…" modal: per-field errors, or answered and closed."""
        modal = body.get("view") or {}
        metadata = read_metadata(modal.get("private_metadata"))
        is_form = modal.get("callback_id") == FORM_CALLBACK
        first_block = field_block_id(0) if is_form else OTHER_BLOCK
        view = await self.gateway.pending_by_token(str(metadata.get("t", "")))
        if view is None:
            locale = language_hint(str(metadata.get("l") or "")) or "en"  # the question's, kept in the modal
            await ack(response_action="errors", errors={first_block: ui_text("expired", locale)})
            return
        state = (modal.get("state") or {}).get("values") or {}
        # a risk form's go-ahead default never picked (no decision was made), or a value outside
        # its field's bounds: said under the field, the modal kept open
        refused = {**out_of_bounds(view.request, state), **undecided(view.request, state)} if is_form else {}
        if refused:
            await ack(response_action="errors", errors=refused)
            return
        person = interaction_sender(body)
        answer = InboundAnswer(
            sender=person,
            event_id=interaction_id(body),
            token=view.token,
            values=form_values(view.request, state) if is_form else None,
            text=None if is_form else other_text(state),
            conversation=view.conversation,
        )
        outcome = await self.gateway.submit_answer(answer)
        if outcome.status is AnswerStatus.INVALID:
            errors = field_errors(view.request, outcome.errors) if is_form else _blank_other(view, answer)
            await ack(response_action="errors", errors=errors or {first_block: outcome.message})
            return
        if outcome.status is AnswerStatus.EXPIRED:
            await ack(response_action="errors", errors={first_block: outcome.message})
            return
        # Accepted, or refused with a message naming people ("Already answered by <@U…>"):
        # modal errors are plain text and would show raw user ids, so the modal closes
        # and a refusal is shown like a click's, to that person only, in the thread.
        await ack()
        ref = view.message_ref
        channel = metadata.get("c") or (ref.chat_id if ref else None)
        message_ts = metadata.get("ts") or (ref.message_id if ref else None)
        thread_ts = ref.extra.get("thread_ts") if ref else None
        await self._after(outcome, view, channel, message_ts, person, thread_ts)

    async def on_closed(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        """The "Other…" modal closed without a submit (``view_closed``, asked for with
        ``notify_on_close``): the person no longer types its answer, so what they write next is a
        new message (``end_typed_answer``). The question stays open, its buttons as they were."""
        await ack()
        metadata = read_metadata((body.get("view") or {}).get("private_metadata"))
        view = await self.gateway.pending_by_token(str(metadata.get("t", "")))
        if view is None:  # answered or expired meanwhile: no window left to end
            return
        person = interaction_sender(body)
        await end_typed_answer(self.gateway.state, view.request.request_id, person.user_id)
        log.debug("slack: the Other… modal was closed unused: a typed answer is no longer expected")

    async def _after(
        self,
        outcome: AnswerOutcome,
        view: PendingView,
        channel: str | None,
        message_ts: str | None,
        person: Sender,
        thread_ts: str | None,
    ) -> None:
        """Close the original message on success; explain a refusal to that person only."""
        if outcome.status is AnswerStatus.DUPLICATE:
            return
        if not outcome.accepted:
            await self._tell(
                channel, person, outcome.message, outcome.view or view, thread_ts, outcome.notice
            )
            return
        if channel and message_ts:
            closed = outcome.view or view
            line = answered_mrkdwn(closed, outcome.answered_line)
            self.after_the_ack(self.sender.update(channel, message_ts, line, render_closed(closed, line)))

    async def _tell(
        self,
        channel: str | None,
        person: Sender,
        message: str,
        view: PendingView | None,
        thread_ts: str | None,
        notice: Notice | None = None,
    ) -> None:
        """Show ``message`` to ``person`` only, after the ack (the refusal itself is final);
        ``notice``: its parts, when it names people (they are shown as mentions)."""
        if channel and message:
            text = notice_mrkdwn(message, view, notice)
            self.after_the_ack(self.sender.ephemeral(channel, person.user_id, text, thread_ts))
