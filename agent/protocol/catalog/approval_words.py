"""The catalog's lines about an approval no decision can turn down (part of ``WORDS``): its review
allows neither reject nor respond, so only an answer or ``/new`` closes it
(``HumanInputRequest.dismissible`` False)."""

from __future__ import annotations

from ..models import Locale

APPROVAL_WORDS: dict[str, dict[Locale, str]] = {
    # its asker's Cancel, /cancel or new message (gateway/flow/held.py, answers.py, commands.py)
    "approval_answer_first": {
        "en": "This approval cannot be rejected or dismissed: answer it with one of its options "
        "(it stays open), or send {new} to start a new conversation.",
        "zh": "这个审批不能拒绝或取消：请选择它的一个选项作答（它仍然保留），或发送 {new} 开始新的对话。",
    },
    # someone else's message or /cancel in a shared conversation, in a note for them only
    "approval_only_asker": {
        "en": "Only {who} can answer this approval, and it cannot be turned down: nothing else goes "
        "to the agent in this conversation until they answer. Sending {new} starts a new "
        "conversation for everyone.",
        "zh": "只有 {who} 可以回答这个审批，而且它不能拒绝：在其回答之前，本对话中的其他消息都不会发给助手。"
        "发送 {new} 会为所有人开始新的对话。",
    },
}
