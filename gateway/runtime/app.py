"""Build a whole bot from its configuration: store, runner, gateway and the enabled adapters."""

from __future__ import annotations

import gc
import logging
import os

from clarigate.agent.settings import AgentOptions
from clarigate.gateway.boundary.port import PlatformAdapter
from clarigate.gateway.boundary.registry import import_object as import_object  # re-exported
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runners.base import AgentRunner
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.runtime.redaction import without_secrets
from clarigate.gateway.store import Store, open_store

#: What ``serve``'s start-up line about the store adds when it is the embedded one.
EMBEDDED_STORE_WARNING = (
    "state is lost on restart and this process must be the only replica. "
    "Set REDIS_URL for anything beyond a trial."
)


def store_line(config: GatewayConfig) -> tuple[int, str]:
    """``serve``'s start-up line about the store, and its level: the embedded store is a warning,
    said once, with what it costs."""
    if config.redis_url:
        return logging.INFO, f"store: {store_description(config)}"
    return logging.WARNING, f"store: {store_description(config)}: {EMBEDDED_STORE_WARNING}"


def store_description(config: GatewayConfig) -> str:
    """Where state lives, for logs (the URL without its secrets)."""
    if not config.redis_url:
        return "embedded in-process store (no REDIS_URL)"
    return f"Redis at {without_secrets(config.redis_url)}, prefix {config.bot_id!r}"


def build_store(config: GatewayConfig) -> Store:
    """The Redis store when ``redis_url`` is set, else the embedded one (``serve``'s start-up
    line about the store warns of it)."""
    return open_store(config.redis_url, config.bot_id)


def build_adapter(platform: str, config: GatewayConfig, gateway: Gateway) -> PlatformAdapter:
    """The adapter of one platform of the registry, from its section (imported only when needed)."""
    known = config.known_platforms()
    section = config.platform(platform)
    if platform not in known or section is None:
        raise ValueError(f"unknown platform {platform!r}")
    return known[platform].build(section, gateway)


def build_runner(config: GatewayConfig) -> AgentRunner:
    """The agent's runner: a LangGraph server's when ``agent.server_url`` is set, else the
    in-process agent; with ``routes``, one per route besides (``runners.routed``)."""
    default = agent_runner(config, config.agent)
    if not config.routes:
        return default
    from clarigate.gateway.runners.routed import RoutedRunner

    return RoutedRunner(default, [(r, agent_runner(config, r.options(config.agent))) for r in config.routes])


def agent_runner(config: GatewayConfig, options: AgentOptions) -> AgentRunner:
    """The runner of one agent: on the LangGraph server ``options.server_url`` names, or in process."""
    if options.server_url:
        from clarigate.gateway.runners.server import LangGraphServerRunner

        return LangGraphServerRunner(
            options,
            api_key=os.environ.get("LANGGRAPH_API_KEY") or None,  # a secret: from the environment only
            bot_id=config.bot_id,
        )
    return LangGraphRunner(config.agent_settings(options))


def build_gateway(
    config: GatewayConfig, *, store: Store | None = None, runner: AgentRunner | None = None
) -> Gateway:
    """A gateway with every enabled platform's adapter registered (not started)."""
    store = store if store is not None else build_store(config)
    runner = runner if runner is not None else build_runner(config)
    gateway = Gateway(config, store, runner)
    for platform in config.enabled_platforms():
        gateway.register(build_adapter(platform, config, gateway))
    return gateway


async def close_gateway(gateway: Gateway) -> None:
    """Release what ``build_gateway`` opened (after ``gateway.stop``)."""
    try:
        await gateway.runner.aclose()
    finally:
        await gateway.store.close()


def freeze_startup_objects() -> None:
    """Keep what start-up built (modules, the agent's graph, SDK clients) out of the collector's sight.

    Those objects live as long as the process, yet every full collection would walk them all:
    ~240 ms with the three platform SDKs and LangChain loaded, a pause in which no event is
    acknowledged. Garbage made so far is collected first, so only live objects are frozen.
    """
    gc.collect()
    gc.freeze()
