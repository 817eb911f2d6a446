"""A form's message: drawn in place, and posted anew when it can no longer be edited.

A form is one message edited step by step (``forms``). It can stop being editable: the person
deleted it (Telegram answers "message to edit not found"; "message can't be edited" for one it
will no longer let the bot change), or its group was upgraded to a supergroup, where the Bot API
refuses every call for the old chat (``migration.LeftBehind``). The step it was to show is then
posted anew where its conversation goes on (the same chat, or the supergroup:
``TelegramSender.post``), as a link of the conversation's reply chain
(``receive.remember_chain``), and the person's wizard follows that message: its taps, the replies
typed to it, the edits that show its steps and its answer; in a private chat it is the agent's
latest message (``note_said``), so what is typed next goes on filling the form where the person
sees it. An old message that is still there stays as it was; a tap on it still counts, and shows
the form in the new one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from telegram.error import BadRequest

from clarigate.gateway.boundary.messages import Conversation, MessageRef, PendingView, Sender
from clarigate.gateway.boundary.port import AdapterState, GatewayPort
from clarigate.gateway.flow.answers import answered_line

from . import wizard
from .migration import LeftBehind
from .receive import DM_TOPIC, remember_chain
from .render import TelegramMessage, render_answered
from .send import PLATFORM, TelegramSender
from .wizard import WizardState

#: Keeps a wizard and the pointer its typed messages follow (``Forms._save``).
Save = Callable[[PendingView, WizardState], Awaitable[None]]

LATEST_TTL = 30 * 24 * 3600
#: How Telegram refuses an edit of a message that is gone or that it no longer lets the bot edit.
GONE = ("message to edit not found", "message can't be edited")


def latest_key(chat_id: str, topic: str | None = None) -> str:
    """The agent's latest message in a private chat, or in one topic of it (``note_said``)."""
    return f"latest-bot-message:{chat_id}" + (f":{topic}" if topic else "")


async def note_said(state: AdapterState, conversation: Conversation, ref: MessageRef | None) -> None:
    """Keep ``ref`` as the agent's latest message in a private chat: its question, its reply or its
    file. A form there takes typed values that reply to nothing only while it is that message (of
    its topic: what the agent says in another topic of the chat leaves it be). The gateway's own
    lines (``/help``, ``/status``, a refusal, "answer first", "That form is closed") are never
    noted: they answer out of turn and do not take the form's place. A person's topic of a channel's
    direct messages chat (``DM_TOPIC``) is their private chat with the channel: noted as one."""
    one_to_one = conversation.is_direct or (conversation.topic or "").startswith(DM_TOPIC)
    if ref is not None and one_to_one:
        await state.set_json(latest_key(ref.chat_id, conversation.topic), ref.message_id, LATEST_TTL)


async def draw(
    gateway: GatewayPort, sender: TelegramSender, state: WizardState, drawn: TelegramMessage, save: Save
) -> None:
    """Edit the form message to ``drawn``, then look again: when its question was answered or
    closed while the edit was on its way, the closing edit may have landed first, so the
    message shows the answer again ("✅ Answered by …"). Telegram applies a message's edits in
    the order they come: a closing edit made after this look lands after this one. A message
    deleted, or left in a group since upgraded, is posted anew (``carry_on``)."""
    try:
        await sender.edit(state.chat_id, state.message_id, drawn)
    except BadRequest as exc:
        if not isinstance(exc, LeftBehind) and not any(gone in exc.message.lower() for gone in GONE):
            raise
        moved = await carry_on(gateway, sender, state, drawn, save)
        if moved is None:
            return
        state = moved
    view = await gateway.pending_by_token(state.token)
    if view is not None and view.status == "answered":
        closed = render_answered(view.request, answered_line(view))
        await sender.edit(state.chat_id, state.message_id, closed)


async def carry_on(
    gateway: GatewayPort, sender: TelegramSender, state: WizardState, drawn: TelegramMessage, save: Save
) -> WizardState | None:
    """Post ``drawn`` where the form's conversation goes on and move the person's wizard to that
    message; its pointer in an old group goes (one wizard per person per conversation); in a
    private chat the message is the agent's latest (``note_said``: typing goes on there). None,
    and nothing posted, when the question is no longer open or the wizard ended (the question
    shown again after ``/cancel``: the old message's buttons still open the form). One moved
    meanwhile (by another tap's drawing) is drawn where it is now."""
    view, before = await gateway.pending_by_token(state.token), await _load(gateway, state)
    if view is None or view.status != "pending" or before is None:
        return None
    if (before.chat_id, before.message_id) != (state.chat_id, state.message_id):
        await sender.edit(before.chat_id, before.message_id, drawn)
        return before
    sent = await sender.post(view.conversation, drawn)
    chat_id, message_id = str(sent.chat_id), str(sent.message_id)
    await remember_chain(gateway.state, view.conversation, message_id, chat_id)
    current = await _load(gateway, state)  # as the taps made meanwhile left it
    if current is None:  # it ended while the message was on its way
        return None
    moved = current.model_copy(update={"chat_id": chat_id, "message_id": message_id})
    await save(view, moved)
    await note_said(
        gateway.state,
        view.conversation,
        MessageRef(platform=PLATFORM, chat_id=chat_id, message_id=message_id),
    )
    left = wizard.active_key(current.chat_id, current.user_id)
    pointer = await gateway.state.get_json(left) if current.chat_id != chat_id else None
    if isinstance(pointer, dict) and pointer.get("request_id") == current.request_id:
        await gateway.state.delete(left)
    return moved


async def closed_by_command(
    gateway: GatewayPort, view: PendingView, state: WizardState, who: Sender, command: str
) -> bool:
    """Whether ``command`` (``/new``, ``/cancel``), said by ``who`` in the conversation of the open
    question ``view``, has the gateway close it: its closing edit ("✖ Cancelled by …", "✖ Closed …")
    is then the form message's one edit, with no redraw of the question before it (a flicker).
    ``/cancel`` when ``who`` may answer it (the gateway's own check): it is answered at once.
    ``/new`` waits its turn behind a run going on in the thread, so the form shows the question
    again meanwhile (a form no longer taking values would stay on screen). A form posted anew
    after an upgrade (``carry_on``) is not the question's message, which that edit goes to."""
    ref = view.message_ref
    if (
        command != "cancel"
        or ref is None
        or (ref.chat_id, ref.message_id) != (state.chat_id, state.message_id)
    ):
        return False
    return await gateway.may_answer(view, who, expect_typing=False) is None


async def _load(gateway: GatewayPort, state: WizardState) -> WizardState | None:
    data = await gateway.state.get_json(wizard.state_key(state.request_id, state.user_id))
    return WizardState.model_validate(data) if data else None
