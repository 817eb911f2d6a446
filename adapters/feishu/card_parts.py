"""The parts every Feishu card is built of (pure): text objects, markdown, buttons, callbacks,
select options and the full list of options shown cut, shared by ``render`` and ``form_card``.

Model text goes through ``escape_markdown`` (markdown) or ``plain`` (plain_text, which Feishu
shows literally). Interactive parts carry a callback value ``{"t": token, "a": action, "l":
locale}`` (see ``actions.py``), never option text.
"""

from __future__ import annotations

from typing import Any

from clarigate.adapters.labels import labels_are_cut, shown_labels
from clarigate.agent.protocol import Option, ui_text
from clarigate.agent.protocol.models import Locale

from .actions import option_action
from .markup import cut, escape_markdown, preview

BUTTON_TEXT_CHARS = 60
PLAIN_TEXT_CHARS = 100

Card = dict[str, Any]


def plain(text: str, limit: int = PLAIN_TEXT_CHARS) -> dict[str, str]:
    """A ``plain_text`` object (shown literally, so no escaping is needed), cut to ``limit``."""
    return {"tag": "plain_text", "content": cut(text, limit)}


def markdown(text: str) -> dict[str, str]:
    """A markdown element for untrusted text: tags neutralized."""
    return {"tag": "markdown", "content": escape_markdown(text)}


def note(text: str) -> dict[str, str]:
    """A small markdown line for untrusted text (a hint, a default shown in full), tags neutralized."""
    return markdown(text) | {"text_size": "notation"}


def make_card(elements: list[dict[str, Any]], summary: str = "") -> Card:
    """A JSON 2.0 card shared by everyone in the chat (``update_multi``)."""
    config: dict[str, Any] = {"update_multi": True}
    if summary:
        config["summary"] = {"content": cut(preview(summary), PLAIN_TEXT_CHARS)}
    return {"schema": "2.0", "config": config, "body": {"elements": elements}}


def callback(token: str, action: str, locale: Locale = "en") -> list[dict[str, Any]]:
    """The ``behaviors`` of an interactive component: a callback with a short payload.

    The locale travels along so that a click on a card nobody knows any more (expired,
    or from another deployment) is still answered in the card's language.
    """
    return [{"type": "callback", "value": {"t": token, "a": action, "l": locale}}]


def button(
    text: str,
    token: str,
    action: str,
    style: str = "default",
    confirm: dict[str, Any] | None = None,
    locale: Locale = "en",
) -> dict[str, Any]:
    """A callback button."""
    element: dict[str, Any] = {
        "tag": "button",
        "text": plain(text, BUTTON_TEXT_CHARS),
        "type": style,
        "behaviors": callback(token, action, locale),
    }
    if confirm:
        element["confirm"] = confirm
    return element


def button_row(buttons: list[dict[str, Any]]) -> dict[str, Any]:
    """Buttons side by side, wrapping on narrow screens."""
    return {
        "tag": "column_set",
        "flex_mode": "flow",
        "horizontal_spacing": "small",
        "columns": [{"tag": "column", "width": "auto", "elements": [b]} for b in buttons],
    }


def select_options(options: list[Option]) -> list[dict[str, Any]]:
    """Select menu options valued by position (``o1`` …), labelled in plain text (numbered,
    what tells them apart kept, when some are cut: ``clarigate.adapters.labels``)."""
    texts = shown_labels([o.label for o in options], PLAIN_TEXT_CHARS)
    return [{"text": plain(text), "value": option_action(i)} for i, text in enumerate(texts, 1)]


def option_list(options: list[Option], limit: int) -> list[dict[str, Any]]:
    """The options in full, numbered, when their buttons or entries show them cut (else nothing)."""
    if not labels_are_cut([o.label for o in options], limit):
        return []
    lines = [f"{n}. {o.label.strip()}" for n, o in enumerate(options, 1)]
    return [markdown("\n".join(lines))]


def confirm_dialog(locale: Locale, option: str | None = None) -> dict[str, Any]:
    """The "Are you sure?" before a go-ahead button's click (or a risk form's Submit) counts."""
    text = ui_text("confirm_option" if option else "confirm_body", locale, option=(option or "").strip())
    return {"title": plain(ui_text("confirm_title", locale)), "text": plain(text, PLAIN_TEXT_CHARS * 3)}
