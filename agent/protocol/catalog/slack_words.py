"""The catalog's lines only Slack shows (part of ``WORDS``, kept apart to keep modules small)."""

from __future__ import annotations

from ..models import Locale

SLACK_WORDS: dict[str, dict[Locale, str]] = {
    # assistant.threads.setStatus while a run works: Slack shows "<app> is working on it…" and
    # rotates the loading messages (one a line; Slack takes ten at most)
    "slack_status": {"en": "is working on it…", "zh": "正在处理…"},
    "slack_loading": {
        "en": "Reading your message…\nThinking it over…\nChecking what I need to know…\n"
        "Putting the answer together…",
        "zh": "正在阅读您的消息…\n正在思考…\n正在确认需要了解的信息…\n正在整理回答…",
    },
    # assistant.threads.setSuggestedPrompts: the list's title, and the prompt offered when the
    # bot's YAML names none (slack.suggested_prompts)
    "slack_prompts_title": {"en": "Try asking", "zh": "可以这样问我"},
    "slack_prompt_title": {"en": "What can you do?", "zh": "你能做什么？"},
    "slack_prompt_message": {
        "en": "What can you help me with, and how do I ask?",
        "zh": "你能帮我做些什么？我应该怎么问？",
    },
    # a slash command typed in an agent app's DM (adapters/slack/commands.py): each conversation
    # there is a thread, which a slash command does not name, so it does nothing (help answers)
    "slack_agent_slash": {
        "en": "Nothing was done: a command acts on one conversation, and here each conversation "
        "with me is a thread of its own, which a slash command cannot name. Type the command in "
        "that conversation's thread: {new}, {cancel}, {status} or {help}. Every question also "
        "has its own Cancel button.",
        "zh": "没有执行任何操作：命令只作用于一个对话，而这里与我的每个对话都是一个单独的话题，"
        "斜杠命令无法指明是哪一个。请在该对话的话题里输入命令：{new}、{cancel}、{status} 或 {help}。"
        "每个问题也都有自己的「取消」按钮。",
    },
    "slack_agent_commands": {
        "en": "Each conversation with me is a thread of its own, and a command acts on that one "
        "conversation: type it in the conversation's thread, as written below (a slash command "
        "cannot say which thread it is meant for).",
        "zh": "与我的每个对话都是一个单独的话题，命令只作用于该对话：请在对话的话题里按下面的写法输入"
        "（斜杠命令无法指明是哪个话题）。",
    },
    # the "Other…" modal submitted with nothing but spaces or line breaks: shown under its box
    "slack_other_empty": {
        "en": "The answer is empty: write it in this box.",
        "zh": "回答是空的：请在这个输入框里填写。",
    },
    # a risk form's field whose default goes ahead, shown with nothing picked (adapters/slack/
    # modals.py, and Feishu's card form: adapters/feishu/form_card.py): its hint names what the
    # agent proposed; submitted without a pick, it is refused
    "slack_proposed": {
        "en": "Proposed: {value}. Nothing is picked for you: choose it yourself to go ahead.",
        "zh": "建议：{value}。不会替您预先选择：如要执行，请自己选择。",
    },
    "slack_pick_first": {
        "en": "Choose one: nothing that goes ahead is taken unless you pick it.",
        "zh": "请选择一项：未经您亲自选择，不会执行任何操作。",
    },
    # a bare mention where replies are not threaded (a classic bot's DM): ``mention_prompt`` there
    "mention_prompt_direct": {"en": "Yes? Tell me what you need.", "zh": "在的，请告诉我您需要什么。"},
}
