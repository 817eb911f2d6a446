"""``clarigate admin reset-thread``: a chat named as ``admin threads --chat`` finds it, started over
as ``/new`` starts it (``Control.restart``), every open question of the chat closed."""

from __future__ import annotations

from typing import Any

from clarigate.gateway.cli.admin_store import OPERATOR, Admin, AdminError


async def chat_key(admin: Admin, text: str) -> str:
    """The chat key ``text`` names, as ``admin threads --chat`` finds it: the key itself, else the
    one key holding it (as a whole part, ``D123`` of ``slack:T1:D123:-``, before a key merely
    holding it, ``D1234``). Several: they are named, and nothing is chosen."""
    keys = [row["chat"] for row in await admin.threads(text)]
    if text in keys:
        return text
    found = [key for key in keys if text in key.split(":")] or keys
    if not found:
        raise AdminError(f"no chat thread {text!r} {admin._where} (see `clarigate admin threads`)")
    if len(found) > 1:
        listed = ", ".join(found)
        raise AdminError(f"{text!r} names {len(found)} chat threads, so none was changed: {listed}")
    return found[0]


async def reset_thread(
    admin: Admin, thread_key: str, control: Any, unavailable: dict[str, str] | None = None
) -> dict[str, Any]:
    """Start the chat ``thread_key`` over as ``/new`` does (``control``: the gateway's ``Control``):
    a new agent thread, the old one cleaned up after the retention period, and every open question
    of the chat closed, its message edited where ``control`` has the platform's adapter (elsewhere a
    click on it is refused, its thread being no longer the chat's)."""
    if await admin.redis.get(admin.keys.thread(thread_key)) is None:
        raise AdminError(f"no chat thread {thread_key!r} {admin._where} (see `clarigate admin threads`)")
    open_here = [r for r in await admin.open_records() if r.conversation.thread_key == thread_key]
    old, new, _ = await control.restart(thread_key, OPERATOR)  # closes the current thread's question
    for record in open_here:  # and any an older thread of the chat left open
        await control.close_question(record, OPERATOR, "restarted")
    still_open = {r.request_id for r in await admin.open_records()}
    closed = [r.request_id for r in open_here if r.request_id not in still_open]
    result: dict[str, Any] = {"chat": thread_key, "old_thread_id": old, "thread_id": new, "closed": closed}
    platform = thread_key.partition(":")[0]
    if closed and not any(adapter.platform == platform for adapter in control.outbox.adapters):
        why = (unavailable or {}).get(platform) or admin._not_configured(platform)
        result["message_note"] = f"{why}: the question's message is left as it is (a click on it is refused)"
    return result
