"""Text made of emoji sequences and Chinese characters, for the tests of every platform that cut
it (Telegram, Slack, Feishu): what a person sees as one character must never end up split across
two messages or before an ellipsis (``clarigate.agent.protocol.graphemes``)."""

from __future__ import annotations

import re

from hypothesis import strategies as st

FAMILY = "👨\u200d👩\u200d👧"  # three people joined by U+200D
THUMBS = "👍🏽"  # a thumb and its skin tone
FLAG = "🇯🇵"  # two regional indicators
KEYCAP = "1️⃣"  # a digit, U+FE0F and U+20E3
#: The ones a cut lands in the middle of in the examples.
AT_THE_CUT = [FAMILY, THUMBS, FLAG, KEYCAP]
#: Characters as a person sees them: emoji sequences (a flag of tags, a profession, a heart with
#: its variation selector), a letter and a combining accent, Chinese and Korean characters.
SEQUENCES = [
    *AT_THE_CUT,
    "🇫🇷",
    "❤️",
    "👩🏽\u200d💻",
    "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",
    "e\u0301",
    "中",
    "文",
    "字",
    "한",
]
_WHOLE = re.compile("(?:" + "|".join(re.escape(s) for s in sorted(SEQUENCES, key=len, reverse=True)) + ")*")

#: Text of such characters only: no space to cut at.
emoji_texts = st.lists(st.sampled_from(SEQUENCES), min_size=1, max_size=300).map("".join)


def whole(piece: str) -> bool:
    """True when ``piece`` (white space aside) is made of whole characters of ``SEQUENCES``: it
    starts and ends where one does."""
    return _WHOLE.fullmatch(re.sub(r"\s", "", piece)) is not None
