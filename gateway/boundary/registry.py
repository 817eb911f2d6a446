"""The platform registry: name -> platform, for the built-in ones and every installed one.

A platform is a ``PlatformAdapter`` subclass with a ``settings_model``. The built-in platforms
are named here by import path, so their settings are read without importing their SDKs (the
adapter itself is imported only when the platform is on). Any installed distribution adds one
with an entry point in the group ``clarigate.platforms`` whose value is the adapter class::

    [project.entry-points."clarigate.platforms"]
    parrot = "clarigate_parrot:ParrotAdapter"

``extra_adapters`` (``module:Class`` paths in the bot's configuration) adds platforms the same
way for one bot. A platform that cannot be loaded is an error at start, never a silent gap.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any

from .port import GatewayPort, PlatformAdapter
from .settings import PlatformSettings

#: The entry point group installed platforms are found in.
ENTRY_POINT_GROUP = "clarigate.platforms"

#: The built-in platforms: name -> (settings model, adapter class), as import paths.
BUILT_IN: dict[str, tuple[str, str]] = {
    "slack": ("clarigate.adapters.slack.settings:SlackSettings", "clarigate.adapters.slack:SlackAdapter"),
    "feishu": (
        "clarigate.adapters.feishu.settings:FeishuSettings",
        "clarigate.adapters.feishu:FeishuAdapter",
    ),
    "telegram": (
        "clarigate.adapters.telegram.settings:TelegramSettings",
        "clarigate.adapters.telegram:TelegramAdapter",
    ),
}

#: A name is a YAML key and the middle of ``CLARIGATE_<NAME>__<FIELD>``: no ``__``, no dashes.
_NAME = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")


class PlatformError(ValueError):
    """A platform cannot be loaded (a broken entry point, a wrong class, a name taken twice)."""


@dataclass(frozen=True)
class Platform:
    """One platform as the core sees it: its name, its settings model and how to get its adapter."""

    name: str
    settings_model: type[PlatformSettings]
    adapter: str | type[PlatformAdapter] = field(compare=False)  # an import path until needed
    origin: str = "built-in"  # where it came from, for messages

    def adapter_class(self) -> type[PlatformAdapter]:
        """The adapter class (imported now for a built-in platform)."""
        if isinstance(self.adapter, str):
            return _adapter_class(import_object(self.adapter), self.adapter)
        return self.adapter

    def build(self, settings: PlatformSettings, gateway: GatewayPort) -> PlatformAdapter:
        """The adapter of this platform, from its section."""
        return self.adapter_class().from_settings(settings, gateway)

    def env_name(self, field_name: str) -> str:
        """The environment name an operator sets ``field_name`` with (the well-known one if any)."""
        model = self.settings_model
        if field_name in model.env_fields and model.env_prefix():
            return f"{model.env_prefix()}{field_name}".upper()
        return f"CLARIGATE_{self.name}__{field_name}".upper()

    def well_known_env(self) -> dict[str, str]:
        """Well-known environment name -> field (``SLACK_BOT_TOKEN`` -> ``bot_token``)."""
        prefix = self.settings_model.env_prefix()
        if not prefix:
            return {}
        return {f"{prefix}{name}".upper(): name for name in self.settings_model.env_fields}

    def credential_hint(self) -> str:
        """What turns the platform on, for messages (the model's hint, else its secrets' names)."""
        model = self.settings_model
        return model.credential_hint or " and ".join(self.env_name(f) for f in model.secret_fields())


def import_object(path: str) -> Any:
    """The object named by ``module:attribute``; ``ValueError`` saying why it cannot be found."""
    module_name, _, attribute = path.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"{path!r} is not an import path of the form module:Class")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"cannot import {path!r}: {exc}") from exc
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise ValueError(f"cannot import {path!r}: {module_name} has no {attribute!r}") from None


def _adapter_class(value: Any, where: str) -> type[PlatformAdapter]:
    """``value`` when it is a platform adapter class with a usable name, else ``PlatformError``."""
    if not (isinstance(value, type) and issubclass(value, PlatformAdapter)):
        raise PlatformError(f"{where} is not a PlatformAdapter subclass")
    name = getattr(value, "platform", None)
    if not isinstance(name, str) or not _NAME.match(name):
        raise PlatformError(f"{where}: its platform name {name!r} must be lower-case letters, digits and _")
    settings = value.settings_model
    if not (isinstance(settings, type) and issubclass(settings, PlatformSettings)):
        raise PlatformError(f"{where}: its settings_model is not a PlatformSettings subclass")
    return value


def _from_class(adapter: type[PlatformAdapter], origin: str) -> Platform:
    return Platform(adapter.platform, adapter.settings_model, adapter, origin)


def _entry_point_platforms() -> list[Platform]:
    found = []
    for point in entry_points(group=ENTRY_POINT_GROUP):
        where = f"entry point {point.name} = {point.value!r} ({ENTRY_POINT_GROUP})"
        try:
            loaded = point.load()
        except Exception as exc:  # any import failure of a third party's code: say which and why
            raise PlatformError(f"{where} cannot be loaded: {type(exc).__name__}: {exc}") from exc
        adapter = _adapter_class(loaded, where)
        if adapter.platform != point.name:
            raise PlatformError(f"{where} names the platform {adapter.platform!r}, not {point.name!r}")
        found.append(_from_class(adapter, where))
    return sorted(found, key=lambda p: p.name)


@functools.cache
def built_in() -> dict[str, Platform]:
    """The built-in platforms, by name (their settings imported, their adapters not)."""
    return {
        name: Platform(name, import_object(settings_path), adapter_path)
        for name, (settings_path, adapter_path) in BUILT_IN.items()
    }


@functools.cache
def installed() -> dict[str, Platform]:
    """The built-in platforms, then the installed ones (entry points), by name.

    Raises ``PlatformError`` when an entry point cannot be loaded or takes a name twice.
    """
    platforms = dict(built_in())
    for platform in _entry_point_platforms():
        _add(platforms, platform)
    return platforms


def platforms(extra: Iterable[str] = ()) -> dict[str, Platform]:
    """The installed platforms and those named by ``extra`` (``module:Class`` paths), by name."""
    found = dict(installed())
    for path in extra:
        try:
            adapter = _adapter_class(import_object(path), f"extra_adapters {path!r}")
        except ValueError as exc:
            raise PlatformError(f"extra_adapters: {exc}") from exc
        _add(found, _from_class(adapter, f"extra_adapters {path!r}"))
    return found


def _add(platforms: dict[str, Platform], platform: Platform) -> None:
    taken = platforms.get(platform.name)
    if taken is not None and taken.adapter != platform.adapter:
        raise PlatformError(
            f"platform {platform.name!r} of {platform.origin} is already the one of {taken.origin}"
        )
    platforms[platform.name] = platform


def token_shapes(extra: Iterable[str] = ()) -> list[tuple[str | None, str, str]]:
    """Every platform's token shapes, for the log redactor."""
    return [shape for p in platforms(extra).values() for shape in p.settings_model.token_shapes]
