"""Model text is untrusted: no link in a reply is unfolded into the linked page's card or picture.
Every message the bot posts asks Slack for neither (``unfurl_links``, ``unfurl_media`` false), the
"Working…" message a reply is edited into included (``chat.update`` takes neither argument)."""

from __future__ import annotations

from typing import Any

from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.harness import TurnOutput

from .conftest import MakeWorld

LINKED = "Your session expired: https://evil.example/login"
PICTURE = "Chart: https://evil.example/pixel.png"


def replying(*replies: str) -> ScriptedRunner:
    return ScriptedRunner(lambda turn: TurnOutput(replies=list(replies)))


def _unfolds_nothing(params: dict[str, Any]) -> bool:
    return params.get("unfurl_links") in (False, "false") and params.get("unfurl_media") in (False, "false")


async def test_a_reply_post_unfolds_neither_links_nor_media(make_world: MakeWorld):
    world = await make_world(replying(PICTURE), progress_after_seconds=60.0)
    await world.user.dm("show me")
    await world.settle()
    (reply,) = [c for c in world.fake.of("chat.postMessage") if "evil.example" in str(c.get("text"))]
    assert _unfolds_nothing(reply), reply


async def test_the_working_message_a_reply_is_edited_into_unfolds_nothing(make_world: MakeWorld):
    world = await make_world(replying(LINKED))
    await world.user.dm("why can't I log in?")
    await world.settle()
    (edit,) = [c for c in world.fake.of("chat.update") if "evil.example" in str(c.get("text"))]
    posts = [world.fake.posted(i) for i in range(len(world.fake.of("chat.postMessage")))]
    (working,) = [p for p in posts if p["ts"] == edit["ts"]]
    assert _unfolds_nothing(working), working
    assert all(_unfolds_nothing(post) for post in posts), posts
