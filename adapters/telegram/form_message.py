"""A form's message: drawn in place, and carried on in the supergroup its group was upgraded to.

A form is one message edited step by step (``forms``). Once a group is upgraded to a supergroup
the Bot API refuses every call for the old chat, so a form open there at the upgrade can no longer
show a step (``migration.LeftBehind``). When its message is refused so, the form is posted anew
where its conversation goes on (the supergroup: ``TelegramSender.post``), as a link of the
conversation's reply chain (``receive.remember_chain``), and the person's wizard follows that
message: its taps, the replies typed to it, the edits that show its steps and its answer. The old
message stays as it was; a tap on it still counts, and shows the form in the new one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from clarigate.gateway.boundary.messages import PendingView
from clarigate.gateway.boundary.port import GatewayPort
from clarigate.gateway.flow.answers import answered_line

from . import wizard
from .migration import LeftBehind
from .receive import remember_chain
from .render import TelegramMessage, render_answered
from .send import TelegramSender
from .wizard import WizardState

#: Keeps a wizard and the pointer its typed messages follow (``Forms._save``).
Save = Callable[[PendingView, WizardState], Awaitable[None]]


async def draw(
    gateway: GatewayPort, sender: TelegramSender, state: WizardState, drawn: TelegramMessage, save: Save
) -> None:
    """Edit the form message to ``drawn``, then look again: when its question was answered or
    closed while the edit was on its way, the closing edit may have landed first, so the
    message shows the answer again ("✅ Answered by …"). Telegram applies a message's edits in
    the order they come: a closing edit made after this look lands after this one. A message
    left in a group since upgraded is posted anew in the supergroup (``carry_on``)."""
    try:
        await sender.edit(state.chat_id, state.message_id, drawn)
    except LeftBehind:
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
    message; its pointer in the old group goes (one wizard per person per conversation). None,
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
    left = wizard.active_key(current.chat_id, current.user_id)
    pointer = await gateway.state.get_json(left) if current.chat_id != chat_id else None
    if isinstance(pointer, dict) and pointer.get("request_id") == current.request_id:
        await gateway.state.delete(left)
    return moved


async def _load(gateway: GatewayPort, state: WizardState) -> WizardState | None:
    data = await gateway.state.get_json(wizard.state_key(state.request_id, state.user_id))
    return WizardState.model_validate(data) if data else None
