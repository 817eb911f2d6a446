"""Chat models from ``LLM_MODEL``: ``offline`` (default), ``scripted:PATH``, or ``provider:model``."""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel

OFFLINE = "offline"
SCRIPTED_PREFIX = "scripted:"


def build_chat_model(spec: str) -> BaseChatModel:
    """The chat model ``spec`` names.

    ``offline``: the deterministic demo model. ``scripted:PATH``: turns read from a
    YAML/JSON file. Anything else goes to ``init_chat_model`` (``openai:gpt-4.1-mini``,
    ``anthropic:…``); install the provider's extra (``clarigate[openai]``) and set its key.
    """
    spec = spec.strip()
    if spec in ("", OFFLINE):
        from agent.models.offline import OfflineDemoModel

        return OfflineDemoModel()
    if spec.startswith(SCRIPTED_PREFIX):
        from agent.models.scripted import ScriptedChatModel

        return ScriptedChatModel.from_file(spec[len(SCRIPTED_PREFIX) :])
    from langchain.chat_models import init_chat_model

    return init_chat_model(spec)
