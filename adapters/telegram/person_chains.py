"""The reply chain each person takes part in, in a group outside forum topics.

A group's conversations are reply chains (``receive.conversation_for``): a top-level message to
the bot starts one (``/ask@bot …``), a reply to the bot goes on in the one it answers. A command
about a conversation (``/cancel``, ``/status``) written at the top level, not as a reply, would
be a chain of its own with nothing in it; a command never starts a conversation: it is about the
one its writer takes part in there, the chain of their last message to the bot in that chat
(``accept_noted``), as the same command sent as a reply in that chain is; so is one the core
reads after the bot's @mention (``@bot /cancel``, ``@bot /取消``: ``command_named``). Only a
message the agent reads notes its chain: a command of the core's (``/help`` between ``/ask`` and
``/cancel``, ``/帮助``, ``/new``) leaves the one noted before. With none known it stays where it
was written (nothing to cancel, nothing going on). A chain is written to the store when it
changes (or ``FRESH`` seconds after this process last wrote it), not for every message.
"""

from __future__ import annotations

import logging
import time
import weakref

from telegram import Message

from clarigate.agent.bounded import BoundedDict
from clarigate.gateway.boundary.messages import Conversation, InboundMessage, Sender
from clarigate.gateway.boundary.port import AdapterState, GatewayPort
from clarigate.gateway.flow.commands import parse_command as core_command

from .commands import NEUTRAL_COMMANDS, Command
from .receive import CHAIN_TTL, conversation_for

log = logging.getLogger(__name__)

#: How long a chain noted by this process is taken as still noted (another replica may have noted
#: another since: a top-level command then goes to the older chain for at most this long).
FRESH = 300.0
MAX_REMEMBERED = 10_000  #: people's chains remembered per gateway in this process
#: The chains noted by this process, per gateway: ``person_key`` -> (chain, monotonic time).
_Noted = BoundedDict[str, tuple[str, float]]
_NOTED: weakref.WeakKeyDictionary[GatewayPort, _Noted] = weakref.WeakKeyDictionary()

#: The commands that act on a conversation (the others greet, help, ask or restart).
ABOUT_A_CONVERSATION = frozenset({"cancel", "status"})


def person_key(chat_id: str, user_id: str) -> str:
    """The state key of the reply chain ``user_id`` last wrote to the bot in, in ``chat_id``."""
    return f"person-chain:{chat_id}:{user_id}"


def _chain(conversation: Conversation) -> str | None:
    """The reply chain a group's message is in (None in a private chat or a topic)."""
    topic = conversation.topic or ""
    return topic if not conversation.is_direct and topic.startswith("msg-") else None


def command_named(command: Command | None, said: str) -> str | None:
    """The core's command a message is (``cancel``…), or None: the one Telegram marked, else the
    core's reading of ``said``, the text the gateway gets (``@bot /取消``, ``/reset@bot``: no
    command Telegram marked, or not under the core's own name)."""
    if command is not None and command.name in NEUTRAL_COMMANDS:
        return command.name
    found = core_command(said)
    return found.name if found is not None else None


async def their_conversation(
    state: AdapterState, message: Message, conversation: Conversation, sender: Sender, command: str | None
) -> Conversation:
    """Where ``sender``'s ``message``, written in ``conversation``, belongs: there, unless it is a
    command about a conversation (``command_named``) that would start a chain of its own (written
    at the top level): then in their reply chain of the chat (the bot's reply still under the
    command), if any."""
    if command not in ABOUT_A_CONVERSATION:
        return conversation
    if _chain(conversation) != f"msg-{message.message_id}":
        return conversation  # a reply in a chain, a topic, a private chat: that conversation
    chain = await state.get_json(person_key(conversation.chat_id, sender.user_id))
    if not isinstance(chain, str) or not chain:
        return conversation
    return conversation_for(message, chain, conversation.chat_id)


async def accept_noted(gateway: GatewayPort, inbound: InboundMessage) -> None:
    """Hand ``inbound`` to the gateway; its group reply chain is now its writer's if it starts or
    goes on with a conversation: not for a command the core handles, read as the core reads it
    (``/help@bot``, ``/帮助``, ``@bot /cancel``, an empty ``/ask``: a command Telegram marked is in
    ``inbound.text`` as ``/name …``, ``Command.neutral_text``)."""
    await gateway.accept(inbound)
    chain = _chain(inbound.conversation)
    if chain is None or core_command(inbound.text) is not None:
        return
    key = person_key(inbound.conversation.chat_id, inbound.sender.user_id)
    noted = _NOTED.setdefault(gateway, BoundedDict(MAX_REMEMBERED))
    if (known := noted.get(key)) is not None and known[0] == chain and time.monotonic() - known[1] < FRESH:
        return  # noted a moment ago here: no store write for each message of a conversation
    try:
        await gateway.state.set_json(key, chain, CHAIN_TTL)
    except Exception as exc:  # noqa: BLE001 (the message is accepted; only the note is lost)
        log.warning("noting the reply chain of %s failed: %s", inbound.inbound_id, exc)
        return
    noted[key] = (chain, time.monotonic())
