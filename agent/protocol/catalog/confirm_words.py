"""The catalog's lines of a risk confirmation's second step: a go-ahead option asks again before
it counts (``clarigate.agent.protocol.risk``; typed, ``gateway/flow/confirm.py``) (part of ``WORDS``)."""

from __future__ import annotations

from ..models import Locale

CONFIRM_WORDS: dict[str, dict[Locale, str]] = {
    "confirm_title": {"en": "Are you sure?", "zh": "确定吗？"},
    "confirm_body": {"en": "This action may not be reversible.", "zh": "此操作可能无法撤销。"},
    "confirm_option": {
        "en": "Go ahead with “{option}”? This may not be reversible.",
        "zh": "确定要执行「{option}」吗？此操作可能无法撤销。",
    },
    "confirm_yes": {"en": "Yes: {option}", "zh": "确认：{option}"},
    "confirm_deny": {"en": "Go back", "zh": "返回"},
    "confirm_tap": {"en": "Tap “{yes}” to go ahead.", "zh": "点击「{yes}」以继续。"},
    "confirm_typed": {
        "en": "Reply “{word}” to go ahead with “{option}”; anything else keeps the question open.",
        "zh": "回复「{word}」以执行「{option}」；回复其他内容则问题保持未答。",
    },
    "confirm_nothing": {
        "en": "There is nothing of yours to confirm: pick an option first (its number or label).",
        "zh": "您没有待确认的选择：请先选择一个选项（编号或名称）。",
    },
    "confirm_dropped": {
        "en": "Not confirmed, so “{option}” was not chosen; the question is still open.",
        "zh": "未确认，因此没有选择「{option}」；问题仍在等待回答。",
    },
    # a plain "yes" typed to a risk confirmation with several go-ahead options: which one
    "confirm_which": {
        "en": "More than one option goes ahead here: reply with the number or label of the one you mean "
        "({options}).",
        "zh": "这里有不止一个会执行的选项：请回复您要选的选项的编号或名称（{options}）。",
    },
    # a tap on "⚠️ Yes: …" (Telegram's second step, adapters/telegram/interactions.py) by someone
    # other than the person whose pick it confirms: nothing is answered
    "confirm_not_yours": {
        "en": "Only the person who picked “{option}” can confirm it: your tap answered nothing.",
        "zh": "只有选择了「{option}」的人才能确认：您的点击没有回答任何内容。",
    },
}
