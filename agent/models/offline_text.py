"""What the offline demo model says, in English and Chinese.

The demo answers in the language of the request (Chinese when it holds CJK
ideographs), so its questions, and the hints the text fallback adds to them, are
in one language.
"""

from __future__ import annotations

from typing import Any

from clarigate.agent.protocol.models import Locale

_LANGUAGES = ["Python", "TypeScript", "Go"]


def _project_form(question: str, context: str, labels: list[str]) -> dict[str, Any]:
    name, language, private, deadline, team_size = labels
    return {
        "question": question,
        "clarification_type": "missing_info",
        "context": context,
        "fields": [
            {"name": "name", "label": name, "type": "text", "required": True, "placeholder": "my-project"},
            {"name": "language", "label": language, "type": "select", "options": _LANGUAGES},
            {"name": "private", "label": private, "type": "checkbox"},
            {"name": "deadline", "label": deadline, "type": "date", "placeholder": "YYYY-MM-DD"},
            {"name": "team_size", "label": team_size, "type": "number"},
        ],
    }


PROJECT_FORM: dict[Locale, dict[str, Any]] = {
    "en": _project_form(
        "Tell me about the new project.",
        "I need a few details before I create it.",
        ["Project name", "Language", "Private repository", "Deadline", "Team size"],
    ),
    "zh": _project_form(
        "请介绍一下这个新项目。",
        "创建之前我需要几项信息。",
        ["项目名称", "语言", "私有仓库", "截止日期", "团队人数"],
    ),
}
DELETE_CONFIRMATION: dict[Locale, dict[str, Any]] = {
    "en": {
        "question": "Delete the test data? This cannot be undone.",
        "clarification_type": "risk_confirmation",
        "context": "Deleting removes every record in the test dataset.",
        "options": ["Yes, delete it", "No, keep it"],
    },
    "zh": {
        "question": "确定删除测试数据吗？此操作无法撤销。",
        "clarification_type": "risk_confirmation",
        "context": "删除会移除测试数据集中的所有记录。",
        "options": ["是，删除", "否，保留"],
    },
}
DATABASE_CHOICE: dict[Locale, dict[str, Any]] = {
    "en": {
        "question": "Which database should I use?",
        "clarification_type": "approach_choice",
        "context": "Each fits a different workload.",
        "options": ["PostgreSQL", "SQLite", "Redis"],
    },
    "zh": {
        "question": "我应该用哪个数据库？",
        "clarification_type": "approach_choice",
        "context": "它们各自适合不同的负载。",
        "options": ["PostgreSQL", "SQLite", "Redis"],
    },
}

#: Sentences with ``{placeholders}``, by key and locale.
SAY: dict[str, dict[Locale, str]] = {
    "vague_question": {
        "en": "What would you like me to do about “{word}”?",
        "zh": "关于“{word}”，您希望我做什么？",
    },
    "vague_context": {"en": "A sentence about the goal is enough.", "zh": "用一句话说明目标就够了。"},
    "demo_hint": {
        "en": "(Offline demo model: try “create a project”, “delete the test data”, “which database?” "
        "or a one-word request to see each kind of question.)",
        "zh": "（离线演示模型：试试“创建一个项目”“删除测试数据”“用哪个数据库？”，"
        "或者只说一个词，看看每种提问方式。）",
    },
    "greeting": {"en": "Hello! I ask before I guess. {hint}", "zh": "你好！我会先问清楚再动手。{hint}"},
    "plain": {
        "en": "Here is how I would handle “{text}”: make sure I understand the goal, plan, then act. {hint}",
        "zh": "我会这样处理“{text}”：先确认目标，再做计划，然后执行。{hint}",
    },
    "no_one_answered": {
        "en": "No one could answer, so I went ahead with sensible defaults for “{text}” "
        "and noted my assumptions.",
        "zh": "没有人能回答，所以我按合理的默认值处理了“{text}”，并记下了我的假设。",
    },
    "created": {
        "en": "Created the project “{name}” in {language} ({private}, deadline {deadline}, "
        "team size {team_size}). (Demo: nothing was really created.)",
        "zh": "已创建项目“{name}”，语言 {language}（{private}，截止日期 {deadline}，"
        "团队人数 {team_size}）。（演示：并没有真的创建。）",
    },
    "default_language": {"en": "the default language", "zh": "默认语言"},
    "private": {"en": "private", "zh": "私有"},
    "public": {"en": "public", "zh": "公开"},
    "not_set": {"en": "not set", "zh": "未设置"},
    "deleted": {
        "en": "Deleted the test data. (Demo: nothing was really deleted.)",
        "zh": "已删除测试数据。（演示：并没有真的删除。）",
    },
    "kept": {"en": "Understood: I left the test data untouched.", "zh": "好的，测试数据保持不变。"},
    "going_with": {
        "en": "Going with {value}: next I would set up the connection settings and a first migration.",
        "zh": "就用 {value}：接下来我会配置连接参数，并做第一次迁移。",
    },
    "understood": {
        "en": "Thanks, now I understand: “{value}”. My plan: confirm the goal, list the steps, then do them.",
        "zh": "谢谢，现在我明白了：“{value}”。我的计划：确认目标，列出步骤，然后执行。",
    },
    "declined": {
        "en": "No answer, then: I will leave it for now. Ask me again whenever you like.",
        "zh": "好的，不回答也没关系：这件事我先放一放。需要时随时再问我。",
    },
    "what_exactly": {"en": "What exactly do you mean by “{text}”?", "zh": "您说的“{text}”具体是指什么？"},
    "starting": {
        "en": "Understood: “{text}”. I will start on it now.",
        "zh": "明白了：“{text}”。我现在就开始。",
    },
}


def say(key: str, locale: Locale, **values: Any) -> str:
    """The demo's sentence ``key`` in ``locale`` with its placeholders filled."""
    return SAY[key][locale].format(**values)
