"""A failed run's cause, told apart: the model provider refusing or not answering (one log line
naming the provider, HTTP status and error code, and words that fit the cause), or a bug of ours
(its traceback kept). Told apart by type and status: LangChain's provider-neutral ``ModelError``
classes (``langchain_core.exceptions``, which langchain-openai and langchain-anthropic raise), and
the OpenAI and Anthropic SDKs' own ``APIError`` (an operator's graph calling the SDK directly)."""

from __future__ import annotations

import logging
import re
import sys
from dataclasses import dataclass
from typing import Literal

log = logging.getLogger("clarigate.gateway.flow.turn")  # the turn's lines keep the name logs know

Kind = Literal["context", "history", "permanent", "quota", "transient"]
#: The catalog line the person reads, by kind of provider failure.
NOTICES: dict[Kind, str] = {
    "context": "model_context_too_long",
    "history": "model_history_refused",
    "permanent": "model_unusable",
    "quota": "model_out_of_quota",
    "transient": "model_unavailable",
}
#: Why the call failed, in the log line, by kind of provider failure.
_WHY: dict[Kind, str] = {
    "permanent": "the model's settings or account need the operator",
    "quota": "the provider account's quota is used up: its plan or billing needs the operator",
    "transient": "after retries",
    "context": "the conversation is longer than the model takes",
    "history": "history refused by the provider: a tool call without its result (did a tool raise?)",
}
#: The provider answered 200 with ``"choices": []`` (``agent.models.provider_answers``).
_EMPTY_CHOICES = "empty_choices"
#: The model answered with nothing, twice (``agent.empty_answers``): its own line for the person.
_EMPTY_ANSWER = "empty_answer"
#: Why the call failed, in the log line, by error code when the code says more than the kind.
_WHY_CODE = {_EMPTY_CHOICES: "its answer held no choices", _EMPTY_ANSWER: "its answer was empty, twice"}
#: A 400 refusing the conversation's history, not the call's settings: OpenAI's "An assistant
#: message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'"
#: (or a tool message answering no call), Anthropic's "`tool_use` ids were found without
#: `tool_result` blocks". Matched on the message, never logged (it may hold a half-masked key);
#: not on a setting's name such as ``parallel_tool_calls``.
_HISTORY_REFUSED = re.compile(r"(?<!\w)tool_(?:call|use|result)")
#: Statuses worth another try later (timeout, conflict, rate limit, and 5xx beside).
_TRANSIENT_STATUSES = {408, 409, 429}
_SDKS = ("openai", "anthropic")


@dataclass(frozen=True)
class ModelFailure:
    """What a provider said, without its message text (it may hold a half-masked key)."""

    provider: str
    status: int | None
    code: str | None
    kind: Kind
    error: str  # the exception's class: what failed when no status came (``APITimeoutError``)

    def describe(self) -> str:
        """``openai 401 invalid_api_key``; ``openai APIConnectionError`` without a status."""
        said = " ".join(str(part) for part in (self.status, self.code) if part)
        return f"{self.provider} {said or self.error}"


def failure_notice(exc: BaseException, thread_id: str) -> str:
    """Log why a run failed and give the catalog key of what the person reads: a provider's
    failure on one line (ERROR when the operator must act, WARNING when it passes or is the
    conversation's length), anything else with its traceback as a bug of ours."""
    failure = model_failure(exc)
    if failure is None:
        run_id = getattr(exc, "run_id", None)
        log.error(
            "agent run failed on thread %s%s",
            thread_id,
            f" (run {run_id})" if run_id else "",
            exc_info=exc,
        )
        return "run_failed"
    level = logging.ERROR if failure.kind in ("history", "permanent", "quota") else logging.WARNING
    why = _WHY_CODE.get(failure.code or "", _WHY[failure.kind])
    log.log(level, "model call failed on thread %s: %s (%s)", thread_id, failure.describe(), why)
    return "model_answer_empty" if failure.code == _EMPTY_ANSWER else NOTICES[failure.kind]


def model_failure(exc: BaseException) -> ModelFailure | None:
    """The provider failure ``exc`` is or was raised from, None for anything else."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        found = _classify(current)
        if found is not None:
            return found
        current = current.__cause__ or current.__context__
    return None


def _classify(exc: BaseException) -> ModelFailure | None:
    from langchain_core.exceptions import ContextOverflowError, ModelError, ModelRefusalError

    is_model_error = isinstance(exc, ModelError) and not isinstance(exc, ModelRefusalError)
    if not is_model_error and not _is_sdk_error(exc):
        return None
    status = getattr(exc, "status_code", None)
    code = _code(exc)
    if isinstance(exc, ContextOverflowError) or code == "context_length_exceeded":
        kind: Kind = "context"
    elif status == 400 and code == "invalid_request_error" and _refuses_history(exc):
        kind = "history"  # every later call fails the same way, until /new
    elif code == "insufficient_quota":  # a 429 that waiting does not cure (not retried)
        kind = "quota"
    elif isinstance(exc, ModelError):
        kind = "transient" if exc.is_retryable else "permanent"
    elif status is None or status in _TRANSIENT_STATUSES or status >= 500:  # no status: no answer
        kind = "transient"
    else:
        kind = "permanent"
    status = status if isinstance(status, int) else None
    return ModelFailure(_provider(exc), status, code, kind, type(exc).__name__)


def _is_sdk_error(exc: BaseException) -> bool:
    """An ``openai.APIError`` or ``anthropic.APIError`` (only looked up when already loaded)."""
    for name in _SDKS:
        sdk = sys.modules.get(name)
        base = getattr(sdk, "APIError", None)
        if isinstance(base, type) and isinstance(exc, base):
            return True
    return False


def _refuses_history(exc: BaseException) -> bool:
    """Whether the provider's message says the history's tool calls and results do not pair up."""
    message = getattr(exc, "message", None)
    return bool(_HISTORY_REFUSED.search(message if isinstance(message, str) else str(exc)))


def refuses_history(said: str) -> bool:
    """Whether ``said`` (a failed server run's error text: the SDK's ``Error code: 400 - {...}``)
    is the provider refusing the conversation's history, as ``_classify`` tells in process."""
    return "400" in said and "invalid_request_error" in said and bool(_HISTORY_REFUSED.search(said))


def _code(exc: BaseException) -> str | None:
    """The provider's error code: OpenAI's ``code`` (else its ``type``), Anthropic's error type."""
    code = getattr(exc, "code", None)
    if isinstance(code, str) and code:
        return code
    body = getattr(exc, "body", None)
    error = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(error, dict):
        found = error.get("code") or error.get("type")
        return found if isinstance(found, str) and found else None
    return None


def _provider(exc: BaseException) -> str:
    """``openai`` for the SDK's errors and ``langchain_openai``'s alike, or the one it names."""
    named = getattr(exc, "provider", None)
    if isinstance(named, str) and named:
        return named
    package = type(exc).__module__.partition(".")[0]
    return package.removeprefix("langchain_") if package != "langchain_core" else "model"
