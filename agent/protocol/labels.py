"""Short interface strings every renderer shares, in English and Chinese.

Renderers take the request's ``locale`` and ask here, so the same words appear on
every platform and a translation is made once.
"""

from __future__ import annotations

from .models import Locale

_TEXT: dict[str, dict[str, str]] = {
    "other": {"en": "Other…", "zh": "其他…"},
    "fill_in": {"en": "Fill in", "zh": "填写"},
    "submit": {"en": "Submit", "zh": "提交"},
    "cancel": {"en": "Cancel", "zh": "取消"},
    "confirm": {"en": "Confirm", "zh": "确认"},
    "edit": {"en": "Edit", "zh": "修改"},
    "done": {"en": "Done", "zh": "完成"},
    "back": {"en": "Back", "zh": "上一步"},
    "skip": {"en": "Skip", "zh": "跳过"},
    "next": {"en": "Next", "zh": "下一步"},
    "clear": {"en": "Clear", "zh": "清除"},
    "form_closed": {"en": "That form is closed.", "zh": "该表单已关闭。"},
    "form_reopen": {"en": "Tap “Fill in” on it to open it again.", "zh": "点击其中的「填写」可重新打开。"},
    "required": {"en": "required", "zh": "必填"},
    "optional": {"en": "optional", "zh": "选填"},
    "yes": {"en": "Yes", "zh": "是"},
    "no": {"en": "No", "zh": "否"},
    "choose": {"en": "Choose…", "zh": "请选择…"},
    "your_answer": {"en": "Your answer", "zh": "您的回答"},
    "type_answer": {"en": "Type your answer as a reply.", "zh": "请直接回复您的答案。"},
    "confirm_title": {"en": "Are you sure?", "zh": "确定吗？"},
    "confirm_body": {"en": "This action may not be reversible.", "zh": "此操作可能无法撤销。"},
    "answered_by": {"en": "✅ Answered by {who}: {answer}", "zh": "✅ {who} 已回答：{answer}"},
    "already_answered": {"en": "Already answered by {who}.", "zh": "{who} 已经回答过了。"},
    "expired": {
        "en": "This question has expired; send your request again.",
        "zh": "该问题已过期，请重新发送请求。",
    },
    "not_allowed": {"en": "Only {who} can answer this question.", "zh": "只有 {who} 可以回答这个问题。"},
    "answer_received": {"en": "Answer received.", "zh": "已收到回答。"},
    # A question closed without an answer (response_kind "declined"), by reason: the line on the
    # question's message, the verdict for a late click, the value and the text the agent reads.
    "closed_cancelled": {"en": "✖ Cancelled by {who}", "zh": "✖ {who} 已取消"},
    "closed_superseded": {
        "en": "✖ Closed: {who} sent a new message instead",
        "zh": "✖ 已关闭：{who} 发送了新消息",
    },
    "closed_restarted": {
        "en": "✖ Closed: {who} started a new conversation",
        "zh": "✖ 已关闭：{who} 开始了新的对话",
    },
    "late_cancelled": {"en": "{who} cancelled this question.", "zh": "{who} 已取消这个问题。"},
    "late_superseded": {
        "en": "This question was closed when {who} sent a new message.",
        "zh": "{who} 发送了新消息，这个问题已关闭。",
    },
    "late_restarted": {
        "en": "This conversation was restarted, so this question is closed. Send your request again.",
        "zh": "对话已重新开始，这个问题已关闭。请重新发送您的请求。",
    },
    "declined_value": {"en": "(declined to answer)", "zh": "（未回答，已取消）"},
    "declined_text": {
        "en": 'For your clarification "{question}", I declined to answer. '
        "Go on without it if you can, or ask again only if you truly cannot.",
        "zh": "对于您的澄清问题「{question}」，我选择不回答。"
        "如果可以，请在没有这个信息的情况下继续；确实无法继续时再问。",
    },
    "invalid_values": {"en": "Some values need fixing.", "zh": "部分内容需要修改。"},
    "working": {"en": "Working…", "zh": "处理中…"},
    # Slack: a bare mention, and a form or "Other…" box Slack would not open in time.
    "mention_prompt": {
        "en": "Yes? Tell me what you need in this thread.",
        "zh": "在的，请在这个话题里告诉我您需要什么。",
    },
    "modal_failed": {"en": "The answer box could not be opened.", "zh": "无法打开回答窗口。"},
    "summary": {"en": "Please check your answers:", "zh": "请确认您的回答："},
    # The text fallback and typed replies (agent/protocol/fallback.py, answers.py).
    "default_question": {
        "en": "Could you tell me more about what you need?",
        "zh": "能再具体说明一下您的需求吗？",
    },
    "reply_choice": {"en": "Reply with a number or your own answer.", "zh": "请回复编号或直接输入您的答案。"},
    "reply_form": {
        "en": "Reply with one `name: value` line per field.",
        "zh": "请每行回复一个字段，格式为「名称: 值」。",
    },
    "field_required": {"en": " (required)", "zh": "（必填）"},
    "field_options": {"en": " — options: {choices}", "zh": " — 选项：{choices}"},
    "field_multiple": {"en": " (multiple allowed)", "zh": "（可多选）"},
    "field_yes_no": {"en": " — yes / no", "zh": " — 是 / 否"},
    "field_number": {"en": " — a number", "zh": " — 数字"},
    "field_date": {"en": " — a date like 2026-12-01", "zh": " — 日期，如 2026-12-01"},
    "answer_text": {
        "en": 'For your clarification "{question}", my answer is: {answer}',
        "zh": "关于您的澄清问题「{question}」，我的回答是：{answer}",
    },
    "answer_values": {
        "en": "Values as JSON (by field name): {values}",
        "zh": "各字段的值（JSON，按字段名）：{values}",
    },
    "answer_yes": {"en": "yes", "zh": "是"},
    "answer_no": {"en": "no", "zh": "否"},
    "answer_empty": {"en": "(nothing filled in)", "zh": "（未填写）"},
    "err_required": {"en": "This field is required", "zh": "此项为必填"},
    "err_number": {"en": "Enter a number", "zh": "请输入数字"},
    "err_yes_no": {"en": "Answer yes or no", "zh": "请回答是或否"},
    "err_choose_one": {"en": "Choose one of: {choices}", "zh": "请从以下选项中选择一个：{choices}"},
    "err_choose_from": {"en": "Choose from: {choices}", "zh": "请从以下选项中选择：{choices}"},
    "err_date": {"en": "Use a date like 2026-12-01", "zh": "请使用 2026-12-01 这样的日期格式"},
}


def ui_text(key: str, locale: Locale = "en", **values: str) -> str:
    """The interface string ``key`` in ``locale``, with ``{placeholders}`` filled."""
    text = _TEXT[key].get(locale) or _TEXT[key]["en"]
    return text.format(**values) if values else text
