"""The catalog's words by which a risk confirmation's options and a plain typed "yes" or "no" are
read (``clarigate.agent.protocol.risk``)."""

from __future__ import annotations

from ..models import Locale

#: How a risk confirmation's option labels read (agent/protocol/risk.py), lower case. ``yes``: an
#: opening that says nothing on its own ("Yes, keep it"); ``no``: a refusal, safe alone or with
#: ``polite`` words ("No thanks", "不用了") or a safe choice after it ("No, keep it"; "No, drop
#: it" goes ahead); ``dont``: a negation of whatever follows ("Don't send it", "不同意"), unless
#: that keeps or stops ("Don't keep it", "Don't cancel" go ahead); ``act``: always safe after a
#: ``dont``; ``keep``: leaves things as they are; ``stop``: stops, but only safely alone or with
#: ``alone`` words ("Cancel", "Stop for now"; "Cancel the order" goes ahead); ``joins``: what
#: splits a label into parts, each of which must read safe ("No, but delete the logs", "不删除而是
#: 覆盖"), besides punctuation.
RISK_WORDS: dict[str, dict[Locale, tuple[str, ...]]] = {
    "yes": {
        "en": ("yes", "ok", "okay", "sure", "confirm"),
        "zh": ("是的", "是", "好的", "好", "确认", "确定"),
    },
    "no": {
        "en": (
            "no",
            "nope",
            "nah",
            "no way",
            "no need",
            "not now",
            "not yet",
            "never mind",
            "nevermind",
            "i changed my mind",
            "i've changed my mind",
            "changed my mind",
        ),
        "zh": ("否", "不用", "不必", "算了", "暂不", "先不", "不", "我改主意", "改主意"),
    },
    "dont": {
        "en": ("don't", "dont", "do not", "never", "no need to"),
        "zh": ("不要", "不用", "不必", "无需", "不需要", "暂不", "先不", "别", "勿", "不"),
    },
    "act": {
        "en": (
            "delete",
            "remove",
            "drop",
            "wipe",
            "erase",
            "purge",
            "truncate",
            "destroy",
            "overwrite",
            "reset",
            "format",
            "kill",
            "clear",
            "rm",
            "proceed",
            "continue",
            "go ahead",
            "go on",
            "do it",
            "do that",
            "do this",
            "do anything",
            "do so",
            "execute",
            "touch",
            "change",
        ),
        "zh": (
            "删除",
            "删掉",
            "删",
            "移除",
            "清空",
            "清除",
            "销毁",
            "覆盖",
            "重置",
            "格式化",
            "丢弃",
            "继续",
            "执行",
            "进行",
            "动",
            "改",
            "修改",
        ),
    },  # fmt: skip
    "keep": {"en": ("keep", "retain", "preserve"), "zh": ("保留", "保持", "留着", "维持")},
    "stop": {
        "en": (
            "cancel",
            "abort",
            "stop",
            "leave",
            "skip",
            "go back",
            "back",
            "hold off",
            "wait",
            "reject",
            "decline",
            "hold back",
            "hesitate",
            "bother",
        ),
        "zh": ("取消", "停止", "中止", "跳过", "返回", "暂停", "等等", "等", "拒绝", "犹豫"),
    },
    "alone": {
        "en": ("it", "that", "this", "now", "for now", "here", "as is", "it as is", "it alone", "alone"),
        "zh": ("吧", "了", "操作", "此操作", "本次操作", "一下", "现在"),
    },
    "polite": {
        "en": ("thanks", "thank you", "thx", "please", "sorry"),
        "zh": ("谢谢", "谢了", "了", "吧", "啦"),
    },
    "joins": {
        "en": ("and then", "and", "but", "then", "except", "other than", "apart from", "instead"),
        "zh": ("然后", "但是", "并且", "而是", "改为", "改成", "除了"),
    },
}

#: A plain yes typed to a risk confirmation (``risk.is_affirmative``): whole messages only, compared
#: case- and width-insensitively, a trailing . ! 。！ allowed. Read as picking its one go-ahead
#: option, which then asks for the typed confirmation ("confirm", 确认) like any typed pick.
AFFIRMATIVE_WORDS: dict[Locale, tuple[str, ...]] = {
    "en": ("yes", "y", "yeah", "yep", "ok", "okay", "sure", "go ahead", "do it"),
    "zh": ("是", "是的", "好", "好的", "行", "可以", "确定", "对", "同意", "没问题"),
}

#: A plain no typed to a risk confirmation (``risk.is_negative``), compared as ``AFFIRMATIVE_WORDS``
#: are. Read as picking its one safe option (``risk.option_roles``), which answers at once.
NEGATIVE_WORDS: dict[Locale, tuple[str, ...]] = {
    "en": ("no", "n", "nope", "nah", "no thanks"),
    "zh": ("否", "不", "不要", "不用", "不用了", "算了"),
}
