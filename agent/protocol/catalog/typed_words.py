"""The catalog's lines for typed interrupts, approvals' "Reply instead" and forms filled by typing
over several messages, and the terminal's Ctrl-C during a run and its questions' last lines
(part of ``WORDS``)."""

from __future__ import annotations

from ..models import Locale

TYPED_WORDS: dict[str, dict[Locale, str]] = {
    # --- approvals: the respond decision (agent/approvals.py) -------------------------------------
    "approval_respond": {"en": "Reply instead", "zh": "改为回复"},
    "approval_respond_question": {
        "en": "Your reply instead of running {name} (the agent reads it as the result)",
        "zh": "代替执行 {name} 的回复（助手会把它当作执行结果）",
    },
    # --- a question past what a platform shows natively (adapters' text fallbacks) ----------------
    "shown_as_text": {
        "en": "(Too big for buttons or a form here, so this is asked as text.)",
        "zh": "（超出了这里按钮或表单的限制，改为文字提问。）",
    },
    # --- a form typed over several messages (gateway/flow/typed_drafts.py) -------------------------
    "typed_form_kept": {
        "en": "I kept what you gave ({fields}): reply with only what is still missing or wrong, "
        "one `name: value` line each.",
        "zh": "已保留您填写的内容（{fields}）：只需回复仍缺少或有误的字段，每行一个“名称: 值”。",
    },
    # --- typed interrupts: response_schema (agent/typed_interrupts.py, schema_values.py) ----------
    "typed_as_text": {
        "en": "This cannot be asked as a form here ({what}): reply with JSON like {example}",
        "zh": "这里无法用表单询问（{what}）：请用 JSON 回复，例如 {example}",
    },
    # the allowed values of a choice, after the JSON example of a schema asked as text
    "typed_choices": {"en": "({name}: one of {values})", "zh": "（{name} 可选：{values}）"},
    "typed_too_big": {
        "en": "more fields or choices than a form holds",
        "zh": "字段或选项超出表单上限",
    },
    "typed_bad_json": {
        "en": "Not valid JSON ({error}). Reply with JSON.",
        "zh": "不是有效的 JSON（{error}）。请用 JSON 回复。",
    },
    "typed_rejected": {"en": "The answer was not accepted: {problems}", "zh": "答案未被接受：{problems}"},
    # the problems of an answer past what the form asked again has room for (the rest, counted)
    "typed_more": {"en": "…and {count} more", "zh": "……另有 {count} 项"},
    "hint_between": {"en": "{low} to {high}", "zh": "{low} 到 {high}"},
    "hint_at_least": {"en": "at least {low}", "zh": "至少 {low}"},
    "hint_at_most": {"en": "at most {high}", "zh": "最多 {high}"},
    "err_whole_number": {"en": "Enter a whole number", "zh": "请输入整数"},
    "err_at_least": {"en": "Must be at least {low}", "zh": "不能小于 {low}"},
    "err_at_most": {"en": "Must be at most {high}", "zh": "不能大于 {high}"},
    "err_more_than": {"en": "Must be more than {low}", "zh": "必须大于 {low}"},
    "err_less_than": {"en": "Must be less than {high}", "zh": "必须小于 {high}"},
    # a date typed in the right form that is on no calendar (2026-02-30, 2026-13-01)
    "err_no_such_date": {"en": "{value} is not a date on the calendar", "zh": "{value} 不是日历上的日期"},
    "err_min_chars": {"en": "Use at least {low} characters", "zh": "至少 {low} 个字符"},
    "err_max_chars": {"en": "Use at most {high} characters", "zh": "最多 {high} 个字符"},
    "err_pattern": {"en": "Not in the expected form", "zh": "格式不符合要求"},
    "err_min_items": {"en": "Choose at least {low}", "zh": "至少选择 {low} 项"},
    "err_max_items": {"en": "Choose at most {high}", "zh": "最多选择 {high} 项"},
    # --- the end of a form field's prompt in the terminal (adapters/console/render.py) -------------
    "chat_field_end": {"en": ": ", "zh": "："},
    # a choice's last line: the terminal has no "Other…", so other text is a new request (chat_help);
    # it has no Cancel button either, so /cancel is named (chat_type_answer too)
    "chat_reply_choice": {
        "en": "Reply with an option's number or label, or /cancel to dismiss the question.",
        "zh": "请回复选项编号或名称，或发送 /取消 关闭此问题。",
    },
    # an open question's last line
    "chat_type_answer": {
        "en": "Type your answer as a reply, or /cancel to dismiss the question.",
        "zh": "请直接回复您的答案，或发送 /取消 关闭此问题。",
    },
    # the agent's placeholder above a field's prompt: an example, not what Enter takes
    "chat_example": {"en": "e.g. {hint}", "zh": "例如 {hint}"},
    # --- the terminal (adapters/console/receive.py): Ctrl-C while a run works ----------------------
    "chat_interrupted": {
        "en": "Interrupted: stopped before the answer to your last message was finished (send it again"
        " to have it answered). Leaving the chat.",
        "zh": "已中断：上一条消息的回答还没有完成就停止了（如需回答，请重新发送）。正在退出。",
    },
    # /quit typed while a run works (or waits for the agent): the chat's messages live in memory
    "chat_left_waiting": {
        "en": "Left before your last message was answered. The chat keeps no message once it is closed:"
        " send it again after you start the chat again.",
        "zh": "上一条消息还没有得到回答就退出了。聊天关闭后不会保留消息：重新启动聊天后请再次发送。",
    },
}
