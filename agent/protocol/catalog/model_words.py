"""The catalog's lines for a run the model provider failed (part of ``WORDS``): told apart by
``gateway/flow/model_failures.py`` from a failure of ours (``run_failed``)."""

from __future__ import annotations

from ..models import Locale

MODEL_WORDS: dict[str, dict[Locale, str]] = {
    # the conversation is longer than the model takes (a 400 ``context_length_exceeded``)
    "model_context_too_long": {
        "en": "Sorry, this conversation has grown too long for me to continue. "
        "Send /new to start a fresh conversation.",
        "zh": "抱歉，这段对话太长了，我无法继续。请发送 /new 开始新的对话。",
    },
    # the provider refuses the conversation's history (a 400: a tool call left without its result,
    # as when a tool of an operator's own graph raised): every later message fails the same way
    "model_history_refused": {
        "en": "Sorry, this conversation cannot go on: my model service refuses its history "
        "(a tool step was left unfinished). Send /new to start a fresh conversation.",
        "zh": "抱歉，这段对话无法继续：模型服务拒绝了之前的对话记录（有一个工具步骤没有完成）。"
        "请发送 /new 开始新的对话。",
    },
    # the provider refuses the operator's settings (a wrong key, a model that does not exist)
    "model_unusable": {
        "en": "Sorry, I cannot reach my model right now. The operator has been told.",
        "zh": "抱歉，我现在无法使用我的模型。已通知管理员。",
    },
    # the provider account's quota is used up (OpenAI's 429 ``insufficient_quota``): no wait cures it
    "model_out_of_quota": {
        "en": "Sorry, I cannot answer right now: my model service's usage quota has run out. "
        "The operator needs to fix this (plan or billing) and has been told.",
        "zh": "抱歉，我现在无法回答：模型服务的使用额度已用完。需要管理员处理（套餐或账单），已通知管理员。",
    },
    # the provider did not answer, or was busy, after the retries (429, 5xx, connection, timeout),
    # or answered with no choices
    "model_unavailable": {
        "en": "Sorry, the model service is not answering right now. Please try again in a moment.",
        "zh": "抱歉，模型服务暂时没有响应。请稍后再试。",
    },
    # the model answered with nothing (no text, no tool call), and again when asked once more
    # (``agent/empty_answers.py``): said instead of "Done: nothing to report."
    "model_answer_empty": {
        "en": "Sorry, the model sent back an empty answer, twice. "
        "Please try again, or rephrase your message.",
        "zh": "抱歉，模型两次都返回了空白回答。请重试，或换一种说法。",
    },
}
