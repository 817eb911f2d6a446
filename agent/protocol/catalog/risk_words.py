"""The catalog's words by which a risk confirmation's options and a plain typed "yes" are read
(``clarigate.agent.protocol.risk``)."""

from __future__ import annotations

from ..models import Locale

#: How a risk confirmation's option labels read (agent/protocol/risk.py), lower case. ``yes``: an
#: opening that says nothing on its own ("Yes, keep it"); ``no``: an answer that declines ("No,
#: …"); ``dont``: a negation of what follows ("Don't delete"); ``keep``: leaves things as they
#: are; ``stop``: stops, but only safely alone or with ``alone`` words ("Cancel", "Stop for
#: now"; "Cancel the order" goes ahead).
RISK_WORDS: dict[str, dict[Locale, tuple[str, ...]]] = {
    "yes": {
        "en": ("yes", "ok", "okay", "sure", "confirm"),
        "zh": ("是的", "是", "好的", "好", "确认", "确定"),
    },
    "no": {
        "en": ("no", "nope", "nah", "not now", "not yet", "never mind", "nevermind"),
        "zh": ("否", "不用", "不必", "算了", "暂不", "先不", "不"),
    },
    "dont": {"en": ("don't", "dont", "do not", "never"), "zh": ("不要", "别", "勿", "不")},
    "keep": {"en": ("keep", "retain", "preserve"), "zh": ("保留", "保持", "留着", "维持")},
    "stop": {
        "en": ("cancel", "abort", "stop", "leave", "skip", "go back", "back", "hold off", "wait", "reject"),
        "zh": ("取消", "停止", "中止", "跳过", "返回", "暂停", "等等", "拒绝"),
    },
    "alone": {
        "en": ("it", "that", "this", "now", "for now", "here", "as is", "it as is", "it alone", "alone"),
        "zh": ("吧", "了", "操作", "此操作", "本次操作", "一下", "现在"),
    },
}

#: A plain yes typed to a risk confirmation (``risk.is_affirmative``): whole messages only, compared
#: case- and width-insensitively, a trailing . ! 。！ allowed. Read as picking its one go-ahead
#: option, which then asks for the typed confirmation ("confirm", 确认) like any typed pick.
AFFIRMATIVE_WORDS: dict[Locale, tuple[str, ...]] = {
    "en": ("yes", "y", "yeah", "yep", "ok", "okay", "sure", "go ahead", "do it"),
    "zh": ("是", "是的", "好", "好的", "行", "可以", "确定", "对", "同意", "没问题"),
}
