"""An agent thread's status is set again while its run works (Slack removes it after two minutes
without a message): each renewal goes on with the loading messages where the rotation stood,
rather than starting them over from the first, which a long run would show again and again.

Real Bolt, the real core and the real slack_sdk against the fake Web API (``fake_agent.py``).
"""

from __future__ import annotations

import asyncio

from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.harness import TurnOutput

from .conftest import MakeWorld

AGENT = {"agent_view": True}
STATUS = "assistant.threads.setStatus"
LOADING = [
    "Reading your message…",
    "Thinking it over…",
    "Checking what I need to know…",
    "Putting the answer together…",
]


async def test_a_renewed_status_goes_on_with_the_loading_messages_instead_of_starting_over(
    make_world: MakeWorld,
):
    async def long(turn):
        await asyncio.sleep(0.8)  # renewals every 0.1 s (shortened), nothing streamed
        return TurnOutput(replies=["Done."])

    world = await make_world(ScriptedRunner(long), slack=AGENT)
    world.adapter.agent.renew_every = 0.1
    _, ts = await world.user.dm("rebuild the search index")
    await world.settle()

    sets = [c for c in world.fake.of(STATUS) if c["status"]]  # the clearing call has none
    assert len(sets) >= 5 and all(c["thread_ts"] == ts for c in sets)
    assert (
        [c["loading_messages"] for c in sets[:5]]
        == [  # each renewal one message further on
            LOADING,
            LOADING[1:] + LOADING[:1],
            LOADING[2:] + LOADING[:2],
            LOADING[3:] + LOADING[:3],
            LOADING,  # round again
        ]
    )
    assert world.fake.agent.statuses == {} and world.fake.shown()[-1]["text"] == "Done."
