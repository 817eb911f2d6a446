"""Provider answers the SDK and LangChain would take the wrong way, set right where they come in.

``insufficient_quota``: OpenAI answers a used-up quota or unpaid plan with a 429
(https://platform.openai.com/docs/guides/error-codes), which the SDK retries like any rate
limit, though no wait cures it. A response hook marks that answer ``x-should-retry: false``, the
header the SDK obeys (``_should_retry``), so it fails at once; ``gateway/flow/model_failures.py``
tells the person it is the operator's quota. The hook is on HTTP clients of the model's own,
given to ``ChatOpenAI`` as its ``http_client`` and ``http_async_client`` (``quota_clients``):
the SDK's defaults, and ``OPENAI_PROXY`` when set, as ``langchain_openai`` would use; the
connection it shares between models of one address is left alone.

No choices: an OpenAI-compatible provider answering 200 with ``"choices": []`` leaves LangChain
with no generation, and the run failing on an ``IndexError`` that reads as a bug of ours. A
callback raises ``EmptyAnswerError`` (a ``ModelError``) at the model's end instead.

TCP keepalive: a connection a NAT dropped without a word during a long model call would hang
until the 60 s timeout; those clients' connections send keepalive probes after 15 s idle
(``keepalive_options``), which keep the NAT's mapping alive and find a dead peer in about 30 s.
Not when a proxy comes from the environment (``HTTPS_PROXY``): a transport of one's own turns
httpx's reading of it off, so those clients stay as httpx builds them.
"""

from __future__ import annotations

import os
import socket
import sys
import urllib.request
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.exceptions import ModelError
from langchain_core.outputs import LLMResult

QUOTA_CODE = "insufficient_quota"
#: ``EmptyAnswerError.code``, which ``model_failures`` names in the log line.
EMPTY_CHOICES = "empty_choices"
_NO_RETRY = "x-should-retry"
#: Keepalive probes after this idle time, this far apart, this many unanswered: the peer is gone.
KEEPALIVE = {"TCP_KEEPIDLE": 15, "TCP_KEEPINTVL": 5, "TCP_KEEPCNT": 3}


class EmptyAnswerError(ModelError):
    """The provider answered with no choice in it: its failure, which another try may not have."""

    is_retryable = True
    code = EMPTY_CHOICES

    def __init__(self, provider: str) -> None:
        self.provider = provider
        super().__init__(f"{provider} answered with no choices")


class RequireChoices(BaseCallbackHandler):
    """Raises ``EmptyAnswerError`` when a chat model's result holds no generation."""

    raise_error = True  # LangChain re-raises it rather than logging it
    run_inline = True

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        if response.generations and all(response.generations):
            return
        provider = (response.llm_output or {}).get("model_provider")
        raise EmptyAnswerError(provider if isinstance(provider, str) and provider else "model")


def _is_quota(response: Any) -> bool:
    try:
        error = response.json().get("error")
    except Exception:  # not JSON (a proxy's page): not OpenAI's quota answer
        return False
    return isinstance(error, dict) and error.get("code") == QUOTA_CODE


def _check_429(response: Any) -> None:
    if response.status_code == 429:
        response.read()  # a hook reads the body before the SDK does
        if _is_quota(response):
            response.headers[_NO_RETRY] = "false"


async def _acheck_429(response: Any) -> None:
    if response.status_code == 429:
        await response.aread()
        if _is_quota(response):
            response.headers[_NO_RETRY] = "false"


def keepalive_options() -> list[tuple[int, int, int]]:
    """Socket options for TCP keepalive (``KEEPALIVE``), those the platform names (macOS calls
    the idle time ``TCP_KEEPALIVE``; Windows may have only ``SO_KEEPALIVE``)."""
    options = [(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)]
    for name, value in KEEPALIVE.items():
        option = getattr(socket, name, None)
        if option is None and name == "TCP_KEEPIDLE":
            option = getattr(socket, "TCP_KEEPALIVE", None)
        if option is not None:
            options.append((socket.IPPROTO_TCP, option, value))
    return options


def _connecting(proxy: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """How each client (sync, async) connects: a transport with keepalive, through ``proxy``;
    only ``proxy`` when httpx would take a proxy from the environment, which a transport turns
    off (as does a client's own ``proxy`` beside a transport)."""
    if proxy is None and any(scheme != "no" for scheme in urllib.request.getproxies()):
        return {"proxy": proxy}, {"proxy": proxy}
    import openai

    # httpx, or httpx2 for openai>=3: the library the SDK's clients are built on
    httpx = sys.modules[openai.DefaultHttpxClient.__mro__[1].__module__.partition(".")[0]]
    # the SDK's pool size, which a client given a transport leaves to the transport
    limits = httpx.Limits(max_connections=1000, max_keepalive_connections=100)
    made: dict[str, Any] = {"proxy": proxy, "limits": limits, "socket_options": keepalive_options()}
    return {"transport": httpx.HTTPTransport(**made)}, {"transport": httpx.AsyncHTTPTransport(**made)}


def quota_clients() -> dict[str, Any]:
    """``ChatOpenAI``'s ``http_client`` and ``http_async_client``: the OpenAI SDK's default HTTP
    clients with the response hook that stops retries of an ``insufficient_quota`` 429.

    ``OPENAI_PROXY`` (which ``ChatOpenAI`` refuses beside clients of one's own) goes to the
    clients, and ``openai_proxy`` is given as unset; other proxies come from the environment,
    as httpx reads it. Their connections have TCP keepalive (``keepalive_options``) unless
    such a proxy is set."""
    import openai

    sync, asynchronous = _connecting(os.environ.get("OPENAI_PROXY") or None)
    return {
        "http_client": openai.DefaultHttpxClient(**sync, event_hooks={"response": [_check_429]}),
        "http_async_client": openai.DefaultAsyncHttpxClient(
            **asynchronous, event_hooks={"response": [_acheck_429]}
        ),
        "openai_proxy": None,
        "http_socket_options": (),  # langchain_openai's own keepalive is for clients it builds
    }
