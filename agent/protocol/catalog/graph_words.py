"""The catalog's lines for what an operator's own graph leaves unsaid (part of ``WORDS``): a run
that ends without a reply, an ``interrupt()`` whose value holds no text to ask."""

from __future__ import annotations

from ..models import Locale

GRAPH_WORDS: dict[str, dict[Locale, str]] = {
    # a run that finished without a word for the person (a step that only did something, or only
    # updated its state): it is done, nothing failed (gateway/flow/agent_run.py)
    "run_nothing_to_report": {"en": "Done: nothing to report.", "zh": "已完成，没有需要汇报的内容。"},
    # the question of an interrupt whose value has no text (``interrupt(None)``, ``interrupt("")``)
    "interrupt_without_text": {
        "en": "The agent is waiting for your reply.",
        "zh": "智能体正在等待您的回复。",
    },
}
