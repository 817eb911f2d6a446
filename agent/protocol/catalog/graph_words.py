"""The catalog's lines for what an operator's own graph leaves unsaid (part of ``WORDS``): a run
that ends without a reply, an ``interrupt()`` whose value holds no text to ask."""

from __future__ import annotations

from ..models import Locale

GRAPH_WORDS: dict[str, dict[Locale, str]] = {
    # a run that finished without a word for the person (a step that only did something, or only
    # updated its state): it is done, nothing failed (gateway/flow/agent_run.py)
    "run_nothing_to_report": {"en": "Done: nothing to report.", "zh": "已完成，没有需要汇报的内容。"},
    # the model's provider sent no answer and said it filtered it (``finish_reason``
    # "content_filter"): said instead of "nothing to report" (agent/turn_output.py)
    "model_answer_withheld": {
        "en": "The model's provider withheld the answer (its content filter stopped it). "
        "Try rephrasing your message.",
        "zh": "模型服务商拦截了这次回答（被其内容过滤器阻止）。请尝试换一种说法。",
    },
    # under an answer the model's length limit cut off (``finish_reason`` "length")
    "model_answer_cut_off": {
        "en": "(The answer was cut off at the model's length limit.)",
        "zh": "（回答在模型的长度上限处被截断。）",
    },
    # the question of an interrupt whose value has no text (``interrupt(None)``, ``interrupt("")``)
    "interrupt_without_text": {
        "en": "The agent is waiting for your reply.",
        "zh": "智能体正在等待您的回复。",
    },
}
