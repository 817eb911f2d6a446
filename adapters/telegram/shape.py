"""Whether an update has the shape the Bot API documents, before anything reads it.

python-telegram-bot builds an ``Update`` from whatever JSON it is given: a message without a
chat, or with a number where text belongs, comes out as an object that fails later, deep in
our handling, where it would look like our bug. So the parts we read are checked first, on
the raw JSON, against the types in https://core.telegram.org/bots/api (``Message``, ``Chat``,
``User``, ``CallbackQuery``, ``MessageEntity`` and the media objects); what does not match
is a bad request.

A message may hold another (``reply_to_message``, ``pinned_message``), which is read, here
and by PTB, by recursion: the number of messages nested in one another is bounded
(``MOST_MESSAGES``), not the depth of objects, which the documented types set (a user in an
entity of a message is as deep as Telegram nests it).
"""

from __future__ import annotations

from typing import Any

#: Per object: its fields, their type, and whether the Bot API always sends them. A type
#: named by a string is another object of this table (a dict checked in turn; ``[name]``: a
#: list of them).
Fields = dict[str, tuple[Any, bool]]

#: Messages nested in one another in an update, at most: a message, the one it replies to, and
#: the one that pinned (the Bot API sends no ``reply_to_message`` inside a ``reply_to_message``
#: or a ``pinned_message``, and pins no pin notice); more is not Telegram's doing.
MOST_MESSAGES = 3
_FILE: Fields = {
    "file_id": (str, True),
    "file_unique_id": (str, True),
    "file_size": (int, False),
    "file_name": (str, False),
    "mime_type": (str, False),
}
_SHAPES: dict[str, Fields] = {
    "callback_query": {
        "id": (str, True),
        "from": ("user", True),
        "chat_instance": (str, True),
        "message": ("message", False),
        "data": (str, False),
    },
    "message": {
        "message_id": (int, True),
        "date": (int, True),
        "chat": ("chat", True),
        "from": ("user", False),
        "sender_chat": ("chat", False),
        "reply_to_message": ("message", False),
        "pinned_message": ("message", False),  # or an InaccessibleMessage: chat, message_id, date 0
        "message_thread_id": (int, False),
        "is_topic_message": (bool, False),
        "is_automatic_forward": (bool, False),
        "migrate_to_chat_id": (int, False),
        "migrate_from_chat_id": (int, False),
        "text": (str, False),
        "caption": (str, False),
        "entities": (["entity"], False),
        "caption_entities": (["entity"], False),
        "photo": (["file"], False),
        **{
            media: ("file", False)
            for media in ("document", "audio", "video", "voice", "video_note", "animation", "sticker")
        },
        "story": ("story", False),
        "game": ("game", False),
        "invoice": ("invoice", False),
    },
    "chat": {"id": (int, True), "type": (str, True), "title": (str, False), "username": (str, False)},
    "user": {
        "id": (int, True),
        "is_bot": (bool, True),
        "first_name": (str, True),
        "username": (str, False),
        "language_code": (str, False),
    },
    "entity": {"type": (str, True), "offset": (int, True), "length": (int, True), "user": ("user", False)},
    "file": _FILE,
    # what ``media`` reads of a forwarded story, a game and an invoice
    "story": {"chat": ("chat", True), "id": (int, True)},
    "game": {"title": (str, True)},
    "invoice": {"title": (str, True), "currency": (str, True), "total_amount": (int, True)},
}


def update_problem(data: dict[str, Any]) -> str | None:
    """What keeps a ``message`` or ``callback_query`` update from being read, or None."""
    for kind in ("message", "callback_query"):
        if kind in data:
            problem = _problem(data[kind], kind, kind)
            if problem is not None:
                return problem
    return None


def _problem(value: Any, shape: str, where: str, messages: int = 0) -> str | None:
    """What is wrong with ``value`` as a ``shape``, inside ``messages`` nested messages."""
    if not isinstance(value, dict):
        return f"{where} is not an object"
    if shape == "message":
        messages += 1
        if messages > MOST_MESSAGES:
            return f"{where} is nested too deep (more than {MOST_MESSAGES} messages in one another)"
    for name, (kind, required) in _SHAPES[shape].items():
        field = value.get(name)
        if field is None:  # PTB reads a null as absent
            if required:
                return f"{where} has no {name}"
            continue
        problem = _field_problem(field, kind, f"{where}.{name}", messages)
        if problem is not None:
            return problem
    return None


def _field_problem(value: Any, kind: Any, where: str, messages: int) -> str | None:
    if isinstance(kind, list):
        if not isinstance(value, list):
            return f"{where} is not a list"
        for item in value:
            problem = _problem(item, kind[0], where, messages)
            if problem is not None:
                return problem
        return None
    if isinstance(kind, str):
        return _problem(value, kind, where, messages)
    # bool is an int in Python; the Bot API never sends true for a number
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        return f"{where} is not {'text' if kind is str else f'a {kind.__name__}'}"
    return None
