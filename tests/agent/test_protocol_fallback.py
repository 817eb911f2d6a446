"""Golden text fallbacks (English and Chinese) and the text of answers."""

import json

from clarigate.agent.protocol import (
    AnsweredBy,
    HumanInputResponse,
    answer_message_text,
    answer_with_form,
    answer_with_option,
    answer_with_text,
    normalize_request,
    render_text_fallback,
    summarize_answer,
)

FORM_FIELDS = [
    {"name": "project_name", "label": "Project name", "required": True},
    {
        "name": "framework",
        "label": "Framework",
        "type": "select",
        "options": ["React", "Vue"],
        "required": True,
    },
    {"name": "features", "label": "Features", "type": "multi_select", "options": ["Router", "Store"]},
    {"name": "init_git", "label": "Init git", "type": "checkbox"},
    {"name": "replicas", "label": "Replicas", "type": "number"},
    {"name": "deadline", "label": "Deadline", "type": "date"},
]


def test_options_with_context():
    req = normalize_request(
        {
            "question": "Which framework?",
            "clarification_type": "approach_choice",
            "context": "I can scaffold either.",
            "options": ["React", "Vue"],
        },
        "c",
    )
    assert render_text_fallback(req) == (
        "🔀 I can scaffold either.\n"
        "\n"
        "Which framework?\n"
        "\n"
        "  1. React\n"
        "  2. Vue\n"
        "\n"
        "Reply with a number or your own answer."
    )


def test_options_without_context_put_the_icon_before_the_question():
    req = normalize_request(
        {
            "question": "Which database?",
            "clarification_type": "ambiguous_requirement",
            "options": ["PostgreSQL", "SQLite"],
        },
        "c",
    )
    assert render_text_fallback(req) == (
        "🤔 Which database?\n\n  1. PostgreSQL\n  2. SQLite\n\nReply with a number or your own answer."
    )


def test_chinese_options_with_context():
    req = normalize_request(
        {
            "question": "用哪个框架？",
            "clarification_type": "approach_choice",
            "context": "两个都可以。",
            "options": ["React", "Vue"],
        },
        "c",
    )
    assert render_text_fallback(req) == (
        "🔀 两个都可以。\n\n用哪个框架？\n\n  1. React\n  2. Vue\n\n请回复编号或直接输入您的答案。"
    )


def test_risk_confirmation_in_english_and_chinese():
    en = normalize_request(
        {"question": "Delete the test data?", "clarification_type": "risk_confirmation"}, "c"
    )
    assert render_text_fallback(en) == (
        "⚠️ Delete the test data?\n\n  1. Confirm\n  2. Cancel\n\nReply with a number or your own answer."
    )
    zh = normalize_request(
        {
            "question": "确定删除测试数据吗？",
            "clarification_type": "risk_confirmation",
            "context": "此操作不可撤销。",
        },
        "c",
    )
    assert render_text_fallback(zh) == (
        "⚠️ 此操作不可撤销。\n\n确定删除测试数据吗？\n\n  1. 确认\n  2. 取消\n\n请回复编号或直接输入您的答案。"
    )


def test_free_text_in_english_and_chinese():
    en = normalize_request(
        {"question": "What should the bot be called?", "clarification_type": "suggestion"}, "c"
    )
    assert render_text_fallback(en) == "💡 What should the bot be called?\n\nType your answer as a reply."
    zh = normalize_request({"question": "机器人叫什么名字？"}, "c")
    assert render_text_fallback(zh) == "❓ 机器人叫什么名字？\n\n请直接回复您的答案。"


def test_form_in_english():
    req = normalize_request(
        {"question": "Set up the project?", "context": "A few details first.", "fields": FORM_FIELDS}, "c"
    )
    assert render_text_fallback(req) == (
        "❓ A few details first.\n"
        "\n"
        "Set up the project?\n"
        "\n"
        "  1. Project name (required)\n"
        "  2. Framework (required) — options: React / Vue\n"
        "  3. Features — options: Router / Store (multiple allowed)\n"
        "  4. Init git — yes / no\n"
        "  5. Replicas — a number\n"
        "  6. Deadline — a date like 2026-12-01\n"
        "\n"
        "Reply with one `name: value` line per field."
    )


def test_form_in_chinese():
    fields = [
        {"name": "name", "label": "项目名称", "required": True},
        {
            "name": "framework",
            "label": "框架",
            "type": "select",
            "options": ["React", "Vue"],
            "required": True,
        },
        {"name": "features", "label": "功能", "type": "multi_select", "options": ["路由", "状态"]},
        {"name": "git", "label": "初始化 Git", "type": "checkbox"},
    ]
    req = normalize_request({"question": "创建项目需要这些信息：", "fields": fields}, "c")
    assert render_text_fallback(req) == (
        "❓ 创建项目需要这些信息：\n"
        "\n"
        "  1. 项目名称（必填）\n"
        "  2. 框架（必填） — 选项：React / Vue\n"
        "  3. 功能 — 选项：路由 / 状态（可多选）\n"
        "  4. 初始化 Git — 是 / 否\n"
        "\n"
        "请每行回复一个字段，格式为「名称: 值」。"
    )


def test_answer_texts_for_option_text_and_form():
    by = AnsweredBy(platform="slack", user_id="U1", display_name="Ann")
    choice = normalize_request({"question": "Which framework?", "options": ["React", "Vue"]}, "c")
    picked = answer_with_option(choice, "option-2", by)
    assert (
        answer_message_text(choice, picked) == 'For your clarification "Which framework?", my answer is: Vue'
    )
    assert summarize_answer(choice, picked) == "Vue"
    typed = answer_with_text(choice, "  Svelte, please ", by)
    assert (
        answer_message_text(choice, typed)
        == 'For your clarification "Which framework?", my answer is: Svelte, please'
    )

    form = normalize_request({"question": "Set up?", "fields": FORM_FIELDS}, "c")
    values = {
        "project_name": "demo",
        "framework": "Vue",
        "features": ["Router", "Store"],
        "init_git": False,
        "replicas": 3,
    }
    filled = answer_with_form(form, values, by)
    summary = "Project name: demo; Framework: Vue; Features: Router, Store; Init git: no; Replicas: 3"
    assert filled.value == summary and summarize_answer(form, filled) == summary
    sentence, values_line = answer_message_text(form, filled).split("\n")
    assert sentence == f'For your clarification "Set up?", my answer is: {summary}'
    # the typed values, exactly: a list stays a list, a bool a bool, a number a number
    assert json.loads(values_line.split(": ", 1)[1]) == values


def test_answer_texts_in_chinese_and_for_a_decline():
    question = normalize_request({"question": "用哪个数据库？", "options": ["PostgreSQL", "MySQL"]}, "c")
    picked = answer_with_option(question, "option-1", None)
    assert (
        answer_message_text(question, picked) == "关于您的澄清问题「用哪个数据库？」，我的回答是：PostgreSQL"
    )
    declined = HumanInputResponse(request_id=question.request_id, response_kind="declined", value="取消")
    assert "我选择不回答" in answer_message_text(question, declined)
    english = normalize_request({"question": "Which database?"}, "d")
    declined = HumanInputResponse(request_id=english.request_id, response_kind="declined", value="Cancelled")
    assert answer_message_text(english, declined).startswith(
        'For your clarification "Which database?", I declined'
    )


def test_form_values_with_separators_stay_unambiguous():
    form = normalize_request({"question": "Tags?", "fields": [{"name": "tags", "type": "text"}]}, "e")
    filled = answer_with_form(form, {"tags": "a; b, c"}, None)
    assert json.loads(answer_message_text(form, filled).split("\n")[1].split(": ", 1)[1]) == {
        "tags": "a; b, c"
    }


def test_form_summary_shows_option_labels_and_chinese_yes_no():
    fields = [
        {
            "name": "db",
            "label": "数据库",
            "type": "select",
            "options": [{"label": "PostgreSQL", "value": "pg"}],
        },
        {"name": "git", "label": "初始化 Git", "type": "checkbox"},
    ]
    req = normalize_request({"question": "配置？", "fields": fields}, "c")
    answer = answer_with_form(req, {"db": "pg", "git": True}, None)
    assert answer.values == {"db": "pg", "git": True}
    assert summarize_answer(req, answer) == "数据库：PostgreSQL；初始化 Git：是"
    empty = answer_with_form(req, {}, None)
    assert empty.values == {} and empty.value == "（未填写）"


def test_chinese_form_with_context_number_and_date():
    fields = [
        {"name": "replicas", "label": "副本数", "type": "number", "required": True},
        {"name": "deadline", "label": "截止日期", "type": "date"},
    ]
    req = normalize_request(
        {"question": "部署需要哪些参数？", "context": "先确认两项。", "fields": fields}, "c"
    )
    assert render_text_fallback(req) == (
        "❓ 先确认两项。\n"
        "\n"
        "部署需要哪些参数？\n"
        "\n"
        "  1. 副本数（必填） — 数字\n"
        "  2. 截止日期 — 日期，如 2026-12-01\n"
        "\n"
        "请每行回复一个字段，格式为「名称: 值」。"
    )


def test_an_unknown_clarification_type_gets_the_question_mark():
    req = normalize_request(
        {"question": "Which region?", "clarification_type": "curiosity", "options": ["EU", "US"]}, "c"
    )
    assert render_text_fallback(req) == (
        "❓ Which region?\n\n  1. EU\n  2. US\n\nReply with a number or your own answer."
    )
