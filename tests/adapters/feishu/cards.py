"""Looking inside card JSON the way a person looks at the card."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from markdown_it import MarkdownIt


def walk(node: Any) -> Iterator[dict[str, Any]]:
    """Every component in a card (depth first), containers included."""
    if isinstance(node, dict):
        if "tag" in node:
            yield node
        for value in node.values():
            yield from walk(value)
    elif isinstance(node, list):
        for item in node:
            yield from walk(item)


def components(card: dict[str, Any], tag: str) -> list[dict[str, Any]]:
    """The components with this tag."""
    return [c for c in walk(card.get("body", card)) if c.get("tag") == tag]


def button(card: dict[str, Any], text: str) -> dict[str, Any]:
    """The button showing ``text``."""
    found = [b for b in components(card, "button") if b["text"]["content"] == text]
    assert found, f"no button {text!r} in {[b['text']['content'] for b in components(card, 'button')]}"
    return found[0]


def payload(component: dict[str, Any]) -> dict[str, Any]:
    """The callback value a click on ``component`` sends."""
    return component["behaviors"][0]["value"]


def without_feedback(body: dict[str, Any]) -> dict[str, Any]:
    """A card body without the 👍/👎 row at the foot of an answer (element_id ``feedback``)."""
    elements = [e for e in body.get("elements", []) if e.get("element_id") != "feedback"]
    return {**body, "elements": elements}


def feedback_buttons(card: dict[str, Any]) -> list[dict[str, Any]]:
    """The 👍/👎 buttons at the foot of an answer's card (none on other cards)."""
    rows = [e for e in card["body"].get("elements", []) if e.get("element_id") == "feedback"]
    return [c for row in rows for c in walk(row) if c.get("tag") == "button"]


def text_of(card: dict[str, Any]) -> str:
    """All markdown and plain text on the card, one piece a line (an answer's 👍/👎 left out)."""
    parts = []
    for c in walk(without_feedback(card["body"])):
        if c.get("tag") in ("markdown", "plain_text"):
            parts.append(c["content"])
    return "\n".join(parts)


def is_interactive(card: dict[str, Any]) -> bool:
    """True when the card still has something to click or fill in."""
    interactive = {
        "button",
        "select_static",
        "multi_select_static",
        "input",
        "checker",
        "date_picker",
        "form",
    }
    return any(c.get("tag") in interactive for c in walk(card["body"]))


def is_text_fallback(card: dict[str, Any]) -> bool:
    """True for a question asked as text (answered by a typed reply): nothing but Cancel to click."""
    labels = {b["text"]["content"] for b in components(card, "button")}
    others = [c for c in walk(card["body"]) if c.get("tag") in ("form", "select_static", "input", "checker")]
    return not others and labels <= {"Cancel", "取消"}


def _feishu_reader(indented_code: bool, tables: bool) -> MarkdownIt:
    """Card markdown as Feishu's guide (rich text, JSON 2.0) says it is read: CommonMark but its
    HTML blocks, with inline HTML (tags such as ``<at id=all></at>``), strikethrough and tables;
    indented code read or not (the link check reads both ways)."""
    md = MarkdownIt("commonmark", {"html": True}).enable("strikethrough").disable("html_block")
    if tables:
        md.enable("table")
    return md if indented_code else md.disable("code")


_FEISHU_READERS = [_feishu_reader(i, t) for i in (False, True) for t in (False, True)]


def tags_read(markdown: str) -> list[str]:
    """Every tag or ``<…>`` autolink any of those readings takes from card markdown (not code)."""
    found = []
    for reader in _FEISHU_READERS:
        for token in reader.parse(markdown):
            for child in token.children or []:
                if child.type == "html_inline" or (child.type == "link_open" and child.markup == "autolink"):
                    found.append(child.content or str(child.attrs.get("href")))
    return found


def code_read(markdown: str) -> list[str]:
    """What card markdown shows as code, each span or block as it holds it (CommonMark, tables)."""
    code = []
    for token in _FEISHU_READERS[3].parse(markdown):
        if token.type in ("fence", "code_block"):
            code.append(token.content)
        code += [c.content for c in token.children or [] if c.type == "code_inline"]
    return code
