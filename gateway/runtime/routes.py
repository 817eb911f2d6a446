"""Routes: which agent answers which conversation (the bot's ``routes:``).

Each route matches conversations by platform, chat id and chat type (every key given must match;
a key takes one value or a list) and names the agent settings that differ there from the bot's
``agent:`` section: another graph (``graph``), another assistant or server (``assistant_id``,
``server_url``), the built-in agent with other ``instructions``, ``tools``, ``model``…
The first route that matches wins; a conversation no route matches gets the ``agent:`` section
itself (the route ``default``).

A route's agent is ``agent:`` with the route's settings on top. A route that moves the agent
elsewhere (sets ``graph``, ``server_url`` or ``assistant_id``) inherits only the settings of
``agent:`` that apply there (``clarigate.agent.placement``; a server's graph counts as another
graph than clarigate's until checked): the built-in agent's ``tools`` do not follow a chat sent
to an operator's graph. The route's own settings must apply where its agent runs, as
``agent:``'s must: ``serve`` and ``doctor`` name any that does not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from clarigate.agent import placement
from clarigate.agent.protocol.catalog import text
from clarigate.agent.protocol.models import Locale
from clarigate.agent.settings import AgentOptions
from clarigate.gateway.boundary.messages import Conversation
from clarigate.gateway.runtime.environment import did_you_mean

#: The name of the agent a conversation no route matches gets (the ``agent:`` section).
DEFAULT_ROUTE = "default"
#: Settings that choose where an agent runs.
WHERE = ("graph", "server_url", "assistant_id")


def _listed(value: Any) -> Any:
    """One value or a list of them (numbers, as Telegram chat ids are written, become strings)."""
    if value is None:
        return []
    items = value if isinstance(value, list | tuple) else [value]
    return [str(item) if isinstance(item, int | str) else item for item in items]


def _known(model: type[BaseModel], value: Any, kind: str) -> Any:
    """``value`` when it names only ``model``'s fields; else one line per other key, with the
    nearest valid name (as for the file's top-level keys)."""
    if isinstance(value, dict):
        fields = model.model_fields
        unknown = [f"{k} is not {kind}{did_you_mean(k, fields)}" for k in value if k not in fields]
        if unknown:
            raise ValueError("; ".join(unknown))
    return value


class RouteMatch(BaseModel):
    """Which conversations a route takes: each key given must match (one value or a list)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    platform: list[str] = Field(default_factory=list)
    chat: list[str] = Field(default_factory=list)  # chat ids as the platform gives them
    chat_type: list[Literal["private", "group", "channel"]] = Field(default_factory=list)

    _one_or_many = field_validator("platform", "chat", "chat_type", mode="before")(_listed)

    @model_validator(mode="before")
    @classmethod
    def _only_known(cls, value: Any) -> Any:
        return _known(cls, value, "a match key")

    def matches(self, platform: str, chat_id: str, chat_type: str | None) -> bool:
        """True when the conversation is one this route takes."""
        return (
            (not self.platform or platform in self.platform)
            and (not self.chat or chat_id in self.chat)
            and (not self.chat_type or chat_type in self.chat_type)
        )


class Route(BaseModel):
    """One route: its name (in ``/status``, logs and the run's speaker), what it matches, and the
    agent settings that differ there."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    match: RouteMatch
    agent: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _only_known(cls, value: Any) -> Any:
        return _known(cls, value, "a route setting")

    @field_validator("name")
    @classmethod
    def _not_default(cls, value: str) -> str:
        if value == DEFAULT_ROUTE:
            raise ValueError(f"{DEFAULT_ROUTE!r} is the agent: section's name; give the route another")
        return value

    @field_validator("agent")
    @classmethod
    def _agent_settings(cls, value: dict[str, Any]) -> dict[str, Any]:
        return _known(AgentOptions, value, "an agent setting")

    def options(self, base: AgentOptions) -> AgentOptions:
        """This route's agent settings: ``base`` (the ``agent:`` section) with the route's on top."""
        own = dict(self.agent)
        if not set(own) & set(WHERE):
            return AgentOptions.model_validate({**base.model_dump(), **own})
        where = AgentOptions.model_validate({**{k: getattr(base, k) for k in WHERE}, **own})
        place = placement.place_of(where, shipped=False)  # a server's graph: any graph until checked
        inherited = {
            name: value
            for name, value in placement.set_settings(base).items()
            if name not in own and place in placement.RULES[name].applies
        }
        return AgentOptions.model_validate({**inherited, **own})


def route_for(routes: Sequence[Route], platform: str, chat_id: str, chat_type: str | None) -> Route | None:
    """The first route that takes the conversation; None for the ``agent:`` section's."""
    return next((r for r in routes if r.match.matches(platform, chat_id, chat_type)), None)


def model_for(base: AgentOptions, routes: Sequence[Route], conversation: Conversation) -> str:
    """The model setting of the agent that answers ``conversation`` (its route's, else ``base``'s)."""
    c = conversation
    route = route_for(routes, c.platform, c.chat_id, c.chat_type) if routes else None
    return (route.options(base) if route is not None else base).model


def describe(options: AgentOptions, locale: Locale = "en") -> str:
    """What an agent is, in a few words and the catalog's ``locale`` (``/status`` in the person's
    language; ``doctor`` and logs in English, the default): no URL, no secret."""
    if options.server_url:
        return text("agent_server", locale, assistant=options.assistant_id)
    if options.graph:
        return text("agent_graph", locale, graph=options.graph)
    return text("agent_model", locale, model=options.model)


def route_problems(base: AgentOptions, routes: Sequence[Route]) -> list[str]:
    """One line per route setting that does not apply where the route's agent runs, each naming
    the route. A place a server has yet to tell (clarigate's graph or another) is checked when
    the bot starts."""
    lines: list[str] = []
    for route in routes:
        options = route.options(base)  # valid: checked when the configuration loaded
        place = placement.place_of(options)
        for line in placement.problems(options, place):
            lines.append(f"routes.{route.name}: {line}")
    return lines
