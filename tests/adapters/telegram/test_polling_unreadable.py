"""Long polling skips an update it cannot read, and goes on with the others.

python-telegram-bot reads a ``getUpdates`` batch whole: one update it cannot build (a poll from
a Bot API server older than 9.6, whose options have no ``persistent_id``) failed the whole call,
so the offset never moved, every later update was stuck, the poller asked again every second and
the library logged the raw batch (what people wrote) at CRITICAL each time.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from prometheus_client import REGISTRY

from clarigate.adapters.testing import ScriptedRunner
from tests.log_capture import captured_logs

from .harness import GROUP, message_update
from .test_polling import replica, wait_until

QUESTION = "Where shall we meet, Alice?"
OPTIONS = ("Café Anna, Hauptstraße 5", "At Bob's flat")


def poll_without_persistent_ids() -> dict[str, Any]:
    """A group message carrying a poll as a Bot API server before 9.6 sends it: the documented
    ``Poll`` and ``PollOption`` minus ``persistent_id`` (required since 9.6, and by PTB 22.8)."""
    poll = {
        "id": "5432109876543210",
        "question": QUESTION,
        "options": [{"text": text, "voter_count": 0} for text in OPTIONS],
        "total_voter_count": 0,
        "is_closed": False,
        "is_anonymous": True,
        "type": "regular",
        "allows_multiple_answers": False,
    }
    return message_update(None, chat=GROUP, poll=poll)  # type: ignore[arg-type]


def unreadable_count() -> float:
    labels = {"platform": "telegram", "kind": "unreadable"}
    return REGISTRY.get_sample_value("clarigate_inbound_events_total", labels) or 0.0


async def test_an_update_that_cannot_be_read_is_skipped_and_the_rest_answered(bot_api, redis_prefix):
    runner, counted = ScriptedRunner(), unreadable_count()
    before, bad, after = message_update("before"), poll_without_persistent_ids(), message_update("after")
    with captured_logs([bot_api.token], level=logging.DEBUG) as logs:
        gateway, adapter = await replica(bot_api, redis_prefix, runner)
        try:
            for update in (before, bad, after):
                bot_api.queue_update(update)
            await wait_until(lambda: [c.text for c in runner.calls] == ["before", "after"])
            await gateway.drain()
            polls = len(bot_api.of("getUpdates"))
            await asyncio.sleep(1.5)  # a poller stuck on the batch would ask again every second
            # the offset moved past all three: Telegram drops them, nothing is served again
            assert all(u["update_id"] > after["update_id"] for u in bot_api.updates)
            assert adapter.poller.running and adapter.poller.trouble.kind is None
        finally:
            await gateway.stop(grace=0)
            await gateway.store.close()
    assert [c.params["text"] for c in bot_api.of("sendMessage")] == ["You said: before", "You said: after"]
    assert len(bot_api.of("getUpdates")) - polls <= 2  # long polls of 1 s, not a retry loop
    assert [c.text for c in runner.calls] == ["before", "after"]
    # still asked as ever: a long poll, for the kinds of updates the gateway handles
    asked = bot_api.of("getUpdates")[-1].params
    wanted = ["message", "callback_query", "chat_member"]  # members leaving: ``departures``
    assert asked["timeout"] == "1" and json.loads(asked["allowed_updates"]) == wanted
    assert unreadable_count() == counted + 1  # operators see it on /metrics
    # one line says it, naming the update and what failed, never what it held
    said = [line for line in logs.lines() if str(bad["update_id"]) in line]
    assert len(said) == 1, said
    assert " WARNING " in said[0] and "TypeError" in said[0]
    assert not [line for line in logs.lines() if " CRITICAL " in line or " ERROR " in line]
    for secret in (QUESTION, *OPTIONS, "Hauptstra"):
        assert secret not in logs.text()
