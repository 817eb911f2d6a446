"""People on a platform, and the core's notices that name them.

A notice from the core that names someone ("Only Ada can answer this question.") comes with its
parts (``Notice``): the catalog's words and the people they name. An adapter whose platform shows
a person its own way (Slack's ``<@U123>``, which Slack shows as the person's current name) puts
the person there; the finished ``text`` is on the message as well, for adapters that show it as
it is. Names are what people chose for themselves: untrusted, escaped like any other text.
"""

from __future__ import annotations

from collections.abc import Callable
from string import Formatter

from pydantic import BaseModel, ConfigDict, Field

from clarigate.agent.protocol import catalog
from clarigate.agent.protocol.models import Locale


class Sender(BaseModel):
    """A person on a platform."""

    model_config = ConfigDict(frozen=True)

    user_id: str
    display_name: str | None = None
    #: The person's own team where the platform says and it may differ from the conversation's
    #: workspace (Slack Connect: someone from another organization's workspace); None: unknown,
    #: take the conversation's. Left out of the JSON when None: a sender reads as it always did.
    team: str | None = Field(default=None, exclude_if=lambda team: team is None)

    @property
    def label(self) -> str:
        """A name to show people: the display name, else the id."""
        return self.display_name or self.user_id


class Notice(BaseModel):
    """A notice as its parts: the catalog's line in the notice's language with its ``{fields}``
    left open, the person each ``people`` field names and the text of the other fields."""

    model_config = ConfigDict(frozen=True)

    words: str
    people: dict[str, Sender] = Field(default_factory=dict)
    values: dict[str, str] = Field(default_factory=dict)

    @classmethod
    def of(cls, key: str, locale: Locale, values: dict[str, str] | None = None, **people: Sender) -> Notice:
        """The catalog's notice ``key`` in ``locale`` naming ``people`` (``who=asker``)."""
        return cls(words=catalog.text(key, locale), people=people, values=values or {})

    @property
    def text(self) -> str:
        """The notice as plain text, each person by name (``Sender.label``)."""
        return self.words.format(**self.values, **{field: p.label for field, p in self.people.items()})

    def render(self, escape: Callable[[str], str], person: Callable[[Sender], str | None]) -> str:
        """The notice in a platform's markup: ``person`` gives the platform's form of a person
        (None: their name, as text); every other piece is text, passed through ``escape``. The
        text between two people is escaped in one piece, so no sequence the escaping breaks (a
        broadcast word, an entity) can be made of a name and the words around it."""
        shown: list[str] = []
        text = ""
        for literal, field, _, _ in Formatter().parse(self.words):
            text += literal
            if field is None:
                continue
            named = self.people.get(field)
            form = person(named) if named is not None else None
            if form is None:
                text += named.label if named is not None else self.values[field]
                continue
            shown += [escape(text), form]
            text = ""
        return "".join([*shown, escape(text)])
