"""The catalog's lines about a question closed without an answer (``response_kind``
"declined"), by its reason (``DeclineReason``), part of ``WORDS``: ``closed_{reason}`` is the line
on the question's message, for everyone (``closed_line``), ``late_{reason}`` the verdict for a
click on it afterwards (``already_answered_outcome``). ``{who}`` is the one who closed it."""

from __future__ import annotations

from ..models import Locale

CLOSED_WORDS: dict[str, dict[Locale, str]] = {
    "closed_cancelled": {"en": "✖ Cancelled by {who}", "zh": "✖ {who} 已取消"},
    "closed_superseded": {
        "en": "✖ Closed: {who} sent a new message instead",
        "zh": "✖ 已关闭：{who} 发送了新消息",
    },
    "closed_restarted": {
        "en": "✖ Closed: {who} started a new conversation",
        "zh": "✖ 已关闭：{who} 开始了新的对话",
    },
    "closed_replaced": {
        "en": "✖ Closed: replaced by a newer question to {who}",
        "zh": "✖ 已关闭：已被向 {who} 提出的新问题取代",
    },
    "closed_crossed": {
        "en": "✖ Closed: {who}'s answer to an earlier question ran first; this was not done.",
        "zh": "✖ 已关闭：{who} 对先前问题的回答先执行了，此操作未执行。",
    },
    "late_cancelled": {"en": "{who} cancelled this question.", "zh": "{who} 已取消这个问题。"},
    # a closed question whose record names nobody (the lines above name who closed it)
    "question_closed": {"en": "This question is already closed.", "zh": "这个问题已经关闭了。"},
    "late_superseded": {
        "en": "This question was closed when {who} sent a new message.",
        "zh": "{who} 发送了新消息，这个问题已关闭。",
    },
    "late_restarted": {
        "en": "This conversation was restarted, so this question is closed. Send your request again.",
        "zh": "对话已重新开始，这个问题已关闭。请重新发送您的请求。",
    },
    "late_replaced": {
        "en": "This question was closed: a newer question to {who} replaced it.",
        "zh": "这个问题已关闭：已被向 {who} 提出的新问题取代。",
    },
    "late_crossed": {
        "en": "This question was closed: {who}'s answer to an earlier question ran first, and this "
        "was not done.",
        "zh": "这个问题已关闭：{who} 对先前问题的回答先执行了，此操作未执行。",
    },
}
