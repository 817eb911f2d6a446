"""How the agent's model reaches its provider: a bare model name gets the call limits of its
provider's prefixed form, and the OpenAI SDK clients' connections keep TCP keepalive on. No
network: the models are only built, and the connections go to a server on loopback."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from clarigate.agent import models
from clarigate.agent.models.provider_answers import quota_clients

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


def test_a_bare_claude_name_gets_the_limits_of_anthropic_prefixed(monkeypatch: pytest.MonkeyPatch) -> None:
    """``claude-…`` (LangChain infers Anthropic): retried twice, each call given 60 s."""
    pytest.importorskip(
        "langchain_anthropic",
        reason="the optional `anthropic` extra (langchain-anthropic) is not installed; the fake-model test "
        "below checks the same choice of limits",
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-key")
    for spec in ("claude-3-5-sonnet-latest", "anthropic:claude-3-5-sonnet-latest"):
        model: Any = models.build_chat_model(spec)
        assert (model.max_retries, model.default_request_timeout) == (2, 60.0), spec


class _AnthropicLike(FakeListChatModel):
    """What ``init_chat_model`` builds for a bare ``claude-…``, told by its ``_llm_type``."""

    @property
    def _llm_type(self) -> str:
        return "anthropic-chat"


def test_a_model_class_that_takes_limits_is_built_with_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """Decided on the class built, not the name: without langchain-anthropic installed too."""
    built: list[dict[str, Any]] = []

    def init_chat_model(spec: str, **kwargs: Any) -> Any:
        built.append(kwargs)
        return _AnthropicLike(responses=["hi"])

    monkeypatch.setattr("langchain.chat_models.init_chat_model", init_chat_model)
    models.build_chat_model("claude-sonnet-4-5")
    assert built[-1]["max_retries"] == 2 and built[-1]["timeout"] == 60.0
    built.clear()
    models.build_chat_model("anthropic:claude-sonnet-4-5")
    assert len(built) == 1 and built[0]["timeout"] == 60.0  # named: limits at once, built once


def test_bare_openai_names_get_the_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    for spec in ("gpt-4o", "o3-mini", "openai:gpt-4o"):
        model: Any = models.build_chat_model(spec)
        assert (model.max_retries, model.request_timeout) == (2, 60.0), spec


class _Ok(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def local_url(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    for name in (*PROXY_VARIABLES, "OPENAI_PROXY"):
        monkeypatch.delenv(name, raising=False)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _keepalive(stream: Any) -> tuple[int, ...]:
    sock = stream.get_extra_info("socket")
    options = [(socket.SOL_SOCKET, socket.SO_KEEPALIVE)]
    options += [
        (socket.IPPROTO_TCP, getattr(socket, n))
        for n in ("TCP_KEEPIDLE", "TCP_KEEPCNT")
        if hasattr(socket, n)
    ]
    return tuple(sock.getsockopt(level, name) for level, name in options)


def test_the_openai_clients_connections_have_tcp_keepalive(local_url: str) -> None:
    """A connection a NAT dropped is found by keepalive probes, not only by the 60 s timeout."""
    expected = (1, 15, 3)[: 1 + sum(hasattr(socket, n) for n in ("TCP_KEEPIDLE", "TCP_KEEPCNT"))]
    clients = quota_clients()
    with clients["http_client"].stream("GET", local_url) as response:
        assert _keepalive(response.extensions["network_stream"]) == expected

    async def fetch() -> tuple[int, ...]:
        async with clients["http_async_client"].stream("GET", local_url) as response:
            return _keepalive(response.extensions["network_stream"])

    import asyncio

    assert asyncio.run(fetch()) == expected


def test_a_proxy_from_the_environment_is_still_taken(local_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``HTTPS_PROXY``: the clients go through it (a transport of ours would turn it off)."""
    monkeypatch.setenv("HTTP_PROXY", local_url)  # the loopback server answers as the proxy
    with quota_clients()["http_client"] as client:
        assert client.get("http://api.openai.invalid/v1/models").text == "ok"


def test_openai_proxy_connections_have_tcp_keepalive(local_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_PROXY", local_url)
    with quota_clients()["http_client"].stream("GET", "http://api.openai.invalid/v1/models") as response:
        assert _keepalive(response.extensions["network_stream"])[0] == 1  # on the socket to the proxy
        assert response.read() == b"ok"
