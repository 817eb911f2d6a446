"""The platform registry: built-in platforms, entry points and extra_adapters, all alike; a
platform that cannot be loaded stops the bot with a line saying which and why."""

from __future__ import annotations

from importlib.metadata import EntryPoint
from typing import Any, ClassVar

import pytest

from clarigate.adapters.testing import ScriptedRunner, TestAdapter
from clarigate.gateway.boundary import registry
from clarigate.gateway.boundary.messages import AcceptOutcome
from clarigate.gateway.runtime.app import build_gateway
from clarigate.gateway.runtime.config import GatewayConfig, load_config
from clarigate.gateway.store.memory import MemoryStore


class DiscordLike(TestAdapter):
    """A fourth platform named by ``extra_adapters``."""

    platform: ClassVar[str] = "discord"


@pytest.fixture
def entry_points(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Replace the installed entry points with the given ones (the cache emptied around it)."""

    def install(*points: EntryPoint) -> None:
        monkeypatch.setattr(registry, "entry_points", lambda group: [p for p in points if p.group == group])
        registry.installed.cache_clear()

    yield install
    registry.installed.cache_clear()


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("no_such_module_here:Adapter", "cannot be loaded: ModuleNotFoundError"),
        ("clarigate.gateway.boundary.messages:Sender", "is not a PlatformAdapter subclass"),
        ("tests.gateway.boundary.test_registry:DiscordLike", "names the platform 'discord', not 'chat'"),
    ],
)
def test_a_broken_entry_point_stops_the_bot_saying_which(entry_points, value, says):
    entry_points(EntryPoint("chat", value, registry.ENTRY_POINT_GROUP))
    with pytest.raises(ValueError, match=f"entry point chat = '{value}'.*{says}"):
        load_config()


def test_an_entry_point_cannot_take_a_built_in_name(entry_points):
    entry_points(
        EntryPoint("slack", "tests.gateway.boundary.test_registry:Slackish", registry.ENTRY_POINT_GROUP)
    )
    with pytest.raises(
        ValueError, match="platform 'slack' of entry point slack .* is already the one of built-in"
    ):
        load_config()


class Slackish(TestAdapter):
    platform: ClassVar[str] = "slack"


async def test_an_extra_adapter_has_a_section_and_its_allow_list_holds(monkeypatch, tmp_path):
    path = tmp_path / "bot.yaml"
    path.write_text(
        "extra_adapters: ['tests.gateway.boundary.test_registry:DiscordLike']\n"
        "discord:\n  allowed_users: [boss]\n"
    )
    monkeypatch.setenv("CLARIGATE_DISCORD__ALLOWED_CHATS", "general")
    config = load_config(path)
    assert config.platform("discord").allowed_users == ["boss"]
    assert config.enabled_platforms() == ["discord"]  # no secrets to wait for: on

    gateway = build_gateway(config, store=MemoryStore("extra"), runner=ScriptedRunner())
    [adapter] = gateway.adapters
    assert isinstance(adapter, DiscordLike)
    await gateway.start()
    try:
        assert await adapter.say("hi", user="stranger", chat="general") is AcceptOutcome.REFUSED
        assert await adapter.say("hi", user="boss", chat="random") is AcceptOutcome.REFUSED
        assert await adapter.say("hi", user="boss", chat="general") is AcceptOutcome.ACCEPTED
    finally:
        await gateway.stop()


def test_a_platform_section_of_an_unknown_platform_is_refused(tmp_path):
    path = tmp_path / "bot.yaml"
    path.write_text("discord:\n  allowed_users: [boss]\n")
    with pytest.raises(ValueError, match="'discord' in the config file is not a setting"):
        load_config(path)


def test_platform_sections_can_be_given_as_arguments():
    config = GatewayConfig(telegram={"allowed_users": [42]}, feishu={"app_id": "cli_1", "app_secret": "s"})
    assert config.telegram.allowed_users == ["42"]
    assert config.enabled_platforms() == ["feishu"]
