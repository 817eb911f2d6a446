"""A Feishu command whose words follow a line break or a full-width space reaches the core as
the neutral command with its words (what the core receives)."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner

from .events import message_event
from .test_messages import accepted, agent


async def test_a_command_with_its_words_after_other_whitespace_is_the_neutral_command(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    seen = await accepted(bot)
    await bot.deliver(message_event("／New\u3000从头来"))  # a Chinese input method's spaces
    await bot.deliver(message_event("/Help\n怎么用"))
    assert [m.text for m in seen] == ["/new 从头来", "/help 怎么用"]
