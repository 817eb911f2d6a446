"""The Feishu card JSON 2.0 rules our cards must follow, written down from Feishu's component docs.

A real Feishu refuses a card with an unknown property or a component where it may
not be (code 200621 / 230099 "card content invalid"); the fake open API accepts
anything, so the tests hold every card we send to these rules instead:

- every component's properties are among the documented ones for its tag;
- a ``form`` sits directly in ``body.elements`` (never nested, never in a form);
- inside a form every input component and button has a ``name``, unique in the
  whole card, and the form has exactly one submit button;
- ``required`` and ``form_action_type`` only inside a form;
- text objects are ``plain_text`` with non-empty content; callbacks carry objects;
- enumerated properties take documented values;
- at most 200 elements and components, counted as Feishu documents it ("单个卡片最多支持
  200 个元素（如 tag 为 plain_text 的元素）或组件"): every object with a ``tag``, text
  objects included (option texts, placeholders, button texts);
- markdown: a bare URL is followed by a space, not by CJK text (Feishu's card FAQ: the
  link would swallow the text; a real Feishu does not refuse it, it shows a broken link);
- markdown: an image's target is the key of an image the app uploaded (``img_…``; else
  "ErrCode: 200570; ErrMsg: card contains invalid image keys", Feishu's card error codes);
  at most 4 tables a markdown component (Lark CLI's card markdown guide), at most 5 table
  components a card (the table component guide; else "ErrCode: 11310; ErrMsg: card table
  number over limit"). Images and tables are what markdown-it (GFM tables on) finds.
"""

from __future__ import annotations

import re
from typing import Any

from markdown_it import MarkdownIt

ROOT_KEYS = {"schema", "config", "header", "body", "card_link"}
CONFIG_KEYS = {
    "update_multi", "summary", "width_mode", "streaming_mode", "streaming_config", "enable_forward",
    "locales", "style",
}  # fmt: skip
#: ``config.streaming_config`` (streaming cards): per-client print speed and strategy.
STREAMING_CONFIG_KEYS = {"print_frequency_ms", "print_step", "print_strategy"}
CLIENTS = {"default", "android", "ios", "pc"}

#: Documented properties per tag (JSON 2.0), limited to the ones a clarification card may use.
PROPERTIES: dict[str, set[str]] = {
    "markdown": {"tag", "element_id", "content", "text_align", "text_size", "margin", "icon"},
    "hr": {"tag", "element_id", "margin"},
    "button": {
        "tag", "element_id", "type", "size", "width", "text", "icon", "hover_tips", "disabled",
        "disabled_tips", "confirm", "behaviors", "name", "form_action_type", "margin",
    },
    "column_set": {
        "tag", "element_id", "flex_mode", "horizontal_spacing", "horizontal_align", "margin",
        "background_style", "columns", "action",
    },
    "column": {
        "tag", "element_id", "width", "weight", "elements", "vertical_align", "vertical_spacing",
        "horizontal_align", "horizontal_spacing", "direction", "padding", "margin", "background_style",
    },
    "form": {
        "tag", "element_id", "name", "elements", "direction", "horizontal_spacing", "vertical_spacing",
        "horizontal_align", "vertical_align", "padding", "margin",
    },
    "input": {
        "tag", "element_id", "name", "required", "disabled", "disabled_tips", "placeholder",
        "default_value", "width", "max_length", "input_type", "rows", "auto_resize", "max_rows",
        "show_icon", "label", "label_position", "behaviors", "confirm", "margin",
    },
    "select_static": {
        "tag", "element_id", "type", "name", "required", "disabled", "placeholder", "width",
        "initial_option", "initial_index", "options", "behaviors", "confirm", "margin",
    },
    "multi_select_static": {
        "tag", "element_id", "type", "name", "required", "disabled", "placeholder", "width",
        "selected_values", "options", "behaviors", "confirm", "margin",
    },
    "checker": {
        "tag", "element_id", "name", "checked", "text", "overall_checkable", "button_area",
        "checked_style", "disabled", "disabled_tips", "hover_tips", "behaviors", "confirm",
        "padding", "margin",
    },
    "date_picker": {
        "tag", "element_id", "name", "required", "disabled", "placeholder", "width", "initial_date",
        "behaviors", "confirm", "margin",
    },
}  # fmt: skip
FORM_INPUTS = {"input", "select_static", "multi_select_static", "checker", "date_picker"}
ONLY_IN_FORM = {"required", "form_action_type"}
BUTTON_TYPES = {
    "default", "primary", "danger", "text", "primary_text", "danger_text", "primary_filled",
    "danger_filled", "laser",
}  # fmt: skip
FLEX_MODES = {"none", "stretch", "flow", "bisect", "trisect"}
INPUT_TYPES = {"text", "multiline_text", "password"}
MAX_ELEMENTS = 200
#: A bare URL running into CJK text: CJK punctuation glued to it, or CJK text right after a letter,
#: digit or closing mark that does not go on as an address (after "/", "=", "?", … it is a part
#: of the address, as in https://zh.wikipedia.org/wiki/中文 or ?q=中文&x=1).
_URL_THEN_CJK = re.compile(
    r"https?://[^\s<>]*?(?:[\u3000-\u303f\uff00-\uffef]"
    r"|[A-Za-z0-9.,;:!'\")\]}*][\u2e80-\u2fff\u3040-\u9fff\uac00-\ud7af\uf900-\ufaff]+(?![/?#&=]|\.\w))"
)


#: Card markdown as the fake reads it for images and tables.
_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
TABLES_PER_MARKDOWN = 4
TABLES_PER_CARD = 5


class CardRuleBroken(AssertionError):
    """A card Feishu would refuse."""


def check_card(card: dict[str, Any]) -> None:
    """Raise ``CardRuleBroken`` naming the first rule ``card`` breaks."""
    _expect(card.get("schema") == "2.0", "schema must be 2.0")
    _expect(set(card) <= ROOT_KEYS, f"unknown card keys {set(card) - ROOT_KEYS}")
    config = card.get("config", {})
    _expect(set(config) <= CONFIG_KEYS, f"unknown config keys {set(config) - CONFIG_KEYS}")
    if "summary" in config:
        _expect(set(config["summary"]) == {"content"}, "summary takes only content")
    if "streaming_config" in config:
        streaming = config["streaming_config"]
        _expect(set(streaming) <= STREAMING_CONFIG_KEYS, f"unknown streaming_config keys {set(streaming)}")
        for key in ("print_frequency_ms", "print_step"):
            if key not in streaming:
                continue
            per_client = streaming[key]
            _expect(
                set(per_client) <= CLIENTS and "default" in per_client, f"{key} names clients, default first"
            )
            _expect(all(isinstance(v, int) and v > 0 for v in per_client.values()), f"{key} values are ints")
        _expect(streaming.get("print_strategy", "fast") in ("fast", "delay"), "print_strategy fast or delay")
    elements = card["body"]["elements"]
    _expect(set(card["body"]) <= {"elements", "direction", "padding"}, "unknown body keys")
    names: list[str] = []
    for element in elements:
        _check(element, in_form=False, at_root=True, names=names, depth=1)
    tables = sum(_markdown_tables(e["content"]) for e in _markdowns(card["body"]))
    _expect(tables <= TABLES_PER_CARD, f"ErrCode: 11310; ErrMsg: card table number over limit ({tables})")
    count = element_count(card["body"])
    _expect(count <= MAX_ELEMENTS, f"{count} elements and components (max {MAX_ELEMENTS})")
    _expect(len(names) == len(set(names)), f"component names repeat: {sorted(names)}")


def _check(c: dict[str, Any], in_form: bool, at_root: bool, names: list[str], depth: int) -> int:
    tag = c.get("tag")
    _expect(tag in PROPERTIES, f"unknown component tag {tag!r}")
    unknown = set(c) - PROPERTIES[tag]
    _expect(not unknown, f"{tag} has unknown properties {unknown}")
    _expect(depth <= 5 or tag not in ("form", "column_set", "column"), "containers nest at most 5 deep")
    if not in_form:
        _expect(not (ONLY_IN_FORM & set(c)), f"{tag} outside a form has {ONLY_IN_FORM & set(c)}")
    if "name" in c:
        _expect(isinstance(c["name"], str) and c["name"], f"{tag} name must be a non-empty string")
        names.append(c["name"])
    if "required" in c:
        _expect(isinstance(c["required"], bool), "required must be a boolean")
    for key in ("text", "placeholder", "label"):
        if key in c:
            _check_plain(c[key], f"{tag}.{key}")
    if "confirm" in c:
        _expect(set(c["confirm"]) == {"title", "text"}, "confirm takes title and text")
        _check_plain(c["confirm"]["title"], "confirm.title")
        _check_plain(c["confirm"]["text"], "confirm.text")
    if "behaviors" in c:
        for behavior in c["behaviors"]:
            callback = behavior.get("type") == "callback" and isinstance(behavior.get("value"), dict)
            _expect(callback, "behaviors are callbacks carrying an object")
    if tag == "markdown":
        _expect(isinstance(c["content"], str) and c["content"].strip(), "markdown content must not be blank")
        glued = _URL_THEN_CJK.search(c["content"])
        _expect(glued is None, f"a bare URL runs into CJK text: {glued.group(0) if glued else ''!r}")
        tables = _markdown_tables(c["content"])
        _expect(
            tables <= TABLES_PER_MARKDOWN, f"ErrCode: 11310; ErrMsg: card table number over limit ({tables})"
        )
        for key in _image_keys(c["content"]):
            _expect(
                key.startswith("img_"), f"ErrCode: 200570; ErrMsg: card contains invalid image keys; {key!r}"
            )
    if tag == "button":
        _expect(c.get("type", "default") in BUTTON_TYPES, f"button type {c.get('type')!r}")
        if in_form:
            _expect("name" in c, "a button in a form needs a name")
        if "form_action_type" in c:
            _expect(c["form_action_type"] in ("submit", "reset"), "form_action_type is submit or reset")
    if tag in FORM_INPUTS and in_form:
        _expect("name" in c, f"{tag} in a form needs a name")
    if tag in ("select_static", "multi_select_static"):
        values = []
        for option in c["options"]:
            _expect(set(option) <= {"text", "value", "icon"}, "select options take text, value, icon")
            _check_plain(option["text"], "option.text")
            _expect(isinstance(option["value"], str) and option["value"], "option value must be a string")
            values.append(option["value"])
        _expect(len(values) == len(set(values)), "option values repeat")
    if tag == "input" and "input_type" in c:
        _expect(c["input_type"] in INPUT_TYPES, f"input_type {c['input_type']!r}")
    if tag == "input" and "max_length" in c:  # documented: a number of characters, 1 to 1,000
        size = c["max_length"]
        _expect(
            isinstance(size, int) and not isinstance(size, bool) and 1 <= size <= 1000, "max_length 1-1000"
        )
    if tag == "column_set":
        _expect(c.get("flex_mode", "none") in FLEX_MODES, f"flex_mode {c.get('flex_mode')!r}")
        _expect(all(col.get("tag") == "column" for col in c["columns"]), "column_set holds columns")
    if tag == "column":
        width = str(c.get("width", "auto"))
        _expect(width in ("auto", "weighted") or width.endswith("px"), f"column width {width!r}")
    count = 1
    if tag == "form":
        _expect(at_root and not in_form, "a form may only sit directly in body.elements")
        form_names: list[str] = []
        for child in c["elements"]:
            count += _check(child, in_form=True, at_root=False, names=form_names, depth=depth + 1)
        names.extend(form_names)
        submits = [b for b in _buttons(c["elements"]) if b.get("form_action_type") == "submit"]
        _expect(len(submits) == 1, f"a form needs one submit button, has {len(submits)}")
    for child in c.get("columns", []) + (c.get("elements", []) if tag == "column" else []):
        count += _check(child, in_form=in_form, at_root=False, names=names, depth=depth + 1)
    return count


def element_count(node: Any) -> int:
    """Every object with a ``tag`` under ``node``: components and text objects alike."""
    if isinstance(node, dict):
        return ("tag" in node) + sum(element_count(v) for v in node.values())
    if isinstance(node, list):
        return sum(element_count(v) for v in node)
    return 0


def _buttons(elements: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found = []
    for e in elements:
        if e.get("tag") == "button":
            found.append(e)
        for key in ("columns", "elements"):
            found.extend(_buttons(e.get(key, [])))
    return found


def _check_plain(text: Any, where: str) -> None:
    _expect(isinstance(text, dict) and text.get("tag") == "plain_text", f"{where} must be plain_text")
    _expect(set(text) <= {"tag", "content", "text_size", "text_color", "text_align", "lines"}, where)
    _expect(isinstance(text.get("content"), str) and text["content"].strip(), f"{where} must not be blank")


def _expect(ok: bool, rule: str) -> None:
    if not ok:
        raise CardRuleBroken(rule)


def _markdowns(node: Any) -> list[dict[str, Any]]:
    """Every markdown component in ``node``, however nested."""
    if isinstance(node, list):
        return [found for item in node for found in _markdowns(item)]
    if not isinstance(node, dict):
        return []
    own = [node] if node.get("tag") == "markdown" and isinstance(node.get("content"), str) else []
    return own + [found for value in node.values() for found in _markdowns(value)]


def _markdown_tables(content: str) -> int:
    return sum(token.type == "table_open" for token in _MARKDOWN.parse(content))


def _image_keys(content: str) -> list[str]:
    """The targets of the images in card markdown ``content``."""
    keys = []
    for token in _MARKDOWN.parse(content):
        for child in token.children or []:
            if child.type == "image":
                keys.append(str(child.attrs.get("src", "")))
    return keys
