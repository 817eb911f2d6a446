"""The catalog's lines about what a question shows in full beside it (part of ``WORDS``): what the
protocol's 200-character strings cannot hold (``clarigate.agent.shown_above``), what an input
cannot hold."""

from __future__ import annotations

from ..models import Locale

SHOWN_WORDS: dict[str, dict[Locale, str]] = {
    # an approval's context when its calls do not fit: they are in the reply above (approvals.py)
    "approval_calls_above": {
        "en": "Every call is shown in full above.",
        "zh": "每个调用的完整内容见上方。",
    },
    # a graph's question whose text does not fit: it is in the reply above (interrupts.py)
    "text_above": {"en": "Shown in full above.", "zh": "完整内容见上方。"},
    # the question of such a text when no line of it is a question
    "question_above": {
        "en": "What is your answer to the text above?",
        "zh": "您对上面的内容有什么回答？",
    },
    # a form's text default longer than its input takes, shown under the empty input
    # (adapters/feishu/form_card.py): left empty, the field keeps it
    "kept_if_empty": {"en": "Left empty, this keeps:", "zh": "留空则保留以下内容："},
}
