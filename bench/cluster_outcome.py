"""What the people of a ``cluster_faults.py`` run saw on the platform: each message's answers by
delivery id, the order a thread's answers came in, the "kept" notices and errors, and what the
job stream still holds.
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from redis.asyncio import Redis

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from clarigate.agent.protocol import catalog  # noqa: E402
from clarigate.gateway.store.keys import GROUP  # noqa: E402
from tests.deploy.fault_platform import FakePlatform  # noqa: E402

#: How the scripted model's answers begin: the rest is the message answered ("t3 m2").
ANSWER = "answer to: "


async def pending_jobs(redis_url: str, prefix: str) -> int:
    client = Redis.from_url(redis_url)
    try:
        summary = await client.xpending(f"{prefix}:jobs", GROUP)
        return int(summary["pending"])
    except Exception:  # noqa: BLE001 (no stream yet, or Redis down)
        return -1
    finally:
        await client.aclose()


def inversions(order: list[int]) -> int:
    return sum(1 for i, a in enumerate(order) for b in order[i + 1 :] if a > b)


@dataclass
class Shown:
    """What the people saw on the platform (one message per delivery id, in arrival order)."""

    answers: dict[str, set[str]] = field(default_factory=dict)  # "t3 m2" -> delivery ids of its answer
    order: dict[str, list[int]] = field(default_factory=dict)  # chat -> message numbers answered, in order
    kept: Counter[str] = field(default_factory=Counter)  # "your message is kept" notices
    errors: Counter[str] = field(default_factory=Counter)  # anything else that is not an answer


def what_was_shown(platform: FakePlatform) -> Shown:
    shown = Shown()
    kept_notices = {catalog.text(key, "en") for key in ("agent_unavailable", "store_unavailable")}
    for delivery_id, item in platform.shown.items():
        text = item["text"]
        if not text.startswith(ANSWER):
            (shown.kept if text in kept_notices else shown.errors)[f"{item['kind']}: {text[:60]}"] += 1
            continue
        message = text[len(ANSWER) :]
        if message not in shown.answers:
            shown.order.setdefault(item["chat"], []).append(int(message.split(" m")[1]))
        shown.answers.setdefault(message, set()).add(delivery_id)
    return shown
