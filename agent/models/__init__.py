"""Chat models from ``LLM_MODEL``: ``offline`` (default), ``scripted:PATH``, or ``provider:model``."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel

OFFLINE = "offline"
SCRIPTED_PREFIX = "scripted:"
#: Model-call retries and per-request timeout, set where the provider's class takes them (a
#: hung provider fails its call in a minute rather than holding the run to its run timeout).
MODEL_CALL_RETRIES = 2
MODEL_CALL_TIMEOUT_SECONDS = 60.0
#: ``init_chat_model`` providers whose class takes ``max_retries`` and ``timeout``.
CALL_LIMITED_PROVIDERS = frozenset({"openai", "azure_openai", "anthropic"})
#: The ``_llm_type`` of those classes not on the OpenAI SDK (``connections`` sees to those): how
#: a bare name LangChain inferred the provider of (``claude-sonnet-4-5``) gets the limits too.
CALL_LIMITED_TYPES = frozenset({"anthropic-chat"})


def build_chat_model(spec: str) -> BaseChatModel:
    """The chat model ``spec`` names.

    ``offline``: the deterministic demo model. ``scripted:PATH``: turns read from a
    YAML/JSON file. Anything else goes to ``init_chat_model`` (``openai:gpt-4.1-mini``,
    ``anthropic:…``); install the provider's extra (``clarigate[openai]``) and set its key.
    Anthropic's calls (a bare ``claude-…`` too: ``inferred_limits``) and those of a model on the
    OpenAI SDK (``connections``) are retried ``MODEL_CALL_RETRIES`` times, each given
    ``MODEL_CALL_TIMEOUT_SECONDS`` (other providers keep their own defaults), but an OpenAI
    ``insufficient_quota`` is not retried; an answer with no choices fails as the provider's
    (``provider_answers``).
    """
    spec = spec.strip()
    if spec in ("", OFFLINE):
        from clarigate.agent.models.offline import OfflineDemoModel

        return OfflineDemoModel()
    if spec.startswith(SCRIPTED_PREFIX):
        from clarigate.agent.models.scripted import ScriptedChatModel

        return ScriptedChatModel.from_file(spec[len(SCRIPTED_PREFIX) :])
    from langchain.chat_models import init_chat_model

    from clarigate.agent.models.provider_answers import RequireChoices

    guard_openai_tool_arguments()
    try:
        limits = call_limits(spec)
        model = init_chat_model(spec, callbacks=[RequireChoices()], **limits)
        # on the OpenAI SDK, however ``spec`` named it; or a class taking limits ``spec`` did not name
        if again := connections(model) or ({} if limits else inferred_limits(model)):
            model = init_chat_model(spec, callbacks=[RequireChoices()], **again)
    except ValueError as exc:
        if "model_provider" not in str(exc):  # the provider's own complaint: as it is
            raise
        raise ValueError(unknown_model(spec, str(exc))) from exc
    return model


def call_limits(spec: str) -> dict[str, Any]:
    """``max_retries`` and ``timeout`` for a provider whose class takes them, else nothing."""
    provider, colon, _ = spec.partition(":")
    if not colon or provider.strip() not in CALL_LIMITED_PROVIDERS:
        return {}
    return {"max_retries": MODEL_CALL_RETRIES, "timeout": MODEL_CALL_TIMEOUT_SECONDS}


def inferred_limits(model: BaseChatModel) -> dict[str, Any]:
    """``max_retries`` and ``timeout`` when ``model``'s class takes them (``CALL_LIMITED_TYPES``),
    told by the class ``init_chat_model`` built, not by LangChain's table of names, else nothing."""
    if getattr(model, "_llm_type", None) not in CALL_LIMITED_TYPES:
        return {}
    return {"max_retries": MODEL_CALL_RETRIES, "timeout": MODEL_CALL_TIMEOUT_SECONDS}


def connections(model: BaseChatModel) -> dict[str, Any]:
    """The HTTP clients (``provider_answers.quota_clients``), retries and timeout to build ``model``
    again with when it is on the OpenAI SDK, else nothing.

    Decided on the class ``init_chat_model`` built, which LangChain has no public way to tell in
    advance: ``openai:…``, ``azure_openai:…``, a bare ``gpt-4.1-mini`` (inferred as OpenAI), and
    ``deepseek``/``xai``, whose classes are ``langchain_openai``'s ``BaseChatOpenAI`` and take its
    ``http_client``s."""
    try:
        from langchain_openai.chat_models.base import BaseChatOpenAI
    except ImportError:
        return {}
    if not isinstance(model, BaseChatOpenAI):
        return {}
    from clarigate.agent.models.provider_answers import quota_clients

    return {**quota_clients(), "max_retries": MODEL_CALL_RETRIES, "timeout": MODEL_CALL_TIMEOUT_SECONDS}


def unknown_model(spec: str, said: str) -> str:
    """Why ``spec`` names no model, in clarigate's settings (LangChain's words ask for a
    ``model_provider`` argument, which clarigate has no setting for), with LangChain's list of
    providers when it gave one."""
    providers = next(
        (
            line.partition(":")[2].strip()
            for line in said.splitlines()
            if line.startswith("Supported providers:")
        ),
        "",
    )
    return (
        f"model {spec!r} names no provider: a model is `{OFFLINE}`, `{SCRIPTED_PREFIX}PATH` (a YAML/JSON "
        "list of turns) or `provider:model` such as `openai:gpt-4.1-mini`"
        + (f" (providers: {providers})" if providers else "")
    )


def guard_openai_tool_arguments() -> None:
    """Make ``langchain_openai`` file a tool call whose arguments are not a JSON object
    (``"Which one?"``, ``["a", "b"]``) under ``invalid_tool_calls``, as it does for broken JSON.

    Left alone, such a call fails the AIMessage's validation and the whole run with it; as an
    invalid call the clarification middleware reads it, asks, and stops its siblings.
    Idempotent; does nothing when the package is not installed.
    """
    try:
        from langchain_openai.chat_models import base
    except ImportError:
        return
    original = base.parse_tool_call
    if getattr(original, "_clarigate_guard", False):
        return

    def parse_tool_call(raw_tool_call: dict[str, Any], **kwargs: Any) -> Any:
        parsed = original(raw_tool_call, **kwargs)
        if isinstance(parsed, dict) and not isinstance(parsed.get("args"), dict):
            raise ValueError("tool call arguments are not a JSON object")
        return parsed

    parse_tool_call._clarigate_guard = True  # type: ignore[attr-defined]
    base.parse_tool_call = parse_tool_call
