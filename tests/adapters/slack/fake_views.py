"""The fake Slack's modals (``views.open`` / ``views.push`` / ``views.update``) and the Block Kit
checks Slack makes that ``slack_sdk``'s models do not (see ``fake_slack.py``).

A view is checked as Slack documents it (https://docs.slack.dev/reference/views/modal-views):
``type`` ``modal``, ``title`` (plain_text, at most 24 characters) and ``blocks`` (1 to 100)
required, ``submit`` required once an input block is in them, ``submit`` / ``close`` at most 24
characters, ``private_metadata`` 3,000, ``callback_id`` and ``external_id`` 255, no property a
view does not have; its blocks by ``slack_sdk``'s models (their documented limits: block_id 255,
input label and hint 2,000, placeholder 150, section text 3,000, 100 options in a static select,
…) and by ``kit_problems`` for what the models let through when they parse a dict: option text
75 and value 150 characters in every element (the models check neither in a static select or
radio buttons), 10 checkboxes or radio buttons, plain_text_input ``max_length`` 1 to 3,000 and
``min_length`` 0 to 3,000, number_input ``initial_value`` / ``min_value`` / ``max_value`` strings
of numbers (whole ones, no decimal point, unless ``is_decimal_allowed``; the minimum not over the
maximum), ``initial_option(s)`` one of the ``options``, text objects neither
empty nor over 3,000 characters, block ids unique, action ids unique in their block, known
element types. A refused view is answered as Slack answers it: HTTP 200, ``invalid_arguments``
and each problem as ``[ERROR] … [json-pointer:/view/…]`` in ``response_metadata.messages``.

``views.open`` and ``views.push`` spend a trigger id (once: ``exchanged_trigger_id``; all expired:
``expired_trigger_id``); ``views.update`` takes ``view_id`` or ``external_id`` of a view it
opened (else ``not_found``; both: ``invalid_arguments``) and a ``hash``, when given, that is
the view's current one (else ``hash_conflict``).
"""

from __future__ import annotations

import itertools
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from slack_sdk.models.blocks import Block, BlockElement
from slack_sdk.models.views import View

from .fake_agent import invalid

VIEW_METHODS = {"views.open", "views.push", "views.update"}
MAX_VIEW_BLOCKS = 100
TEXT_MAX = (
    3000  # any text object (https://docs.slack.dev/reference/block-kit/composition-objects/text-object)
)
ID_MAX = 255  # callback_id, external_id
OPTION_TEXT_MAX = 75
OPTION_VALUE_MAX = 150
INPUT_LENGTH_MAX = 3000  # plain_text_input min_length and max_length
#: Most options an element takes (select menus, checkboxes, radio buttons, overflow menus)
OPTIONS_MAX = {
    "static_select": 100,
    "multi_static_select": 100,
    "checkboxes": 10,
    "radio_buttons": 10,
    "overflow": 5,
}
PLAIN_ONLY = ("title", "submit", "close")


def _at(problem: str, pointer: str) -> str:
    return f"{problem} [json-pointer:{pointer}]"


def _text_problems(value: Any, pointer: str) -> list[str]:
    """Text objects anywhere under ``value`` that are empty or longer than Slack takes."""
    problems: list[str] = []
    if isinstance(value, list):
        for index, item in enumerate(value):
            problems += _text_problems(item, f"{pointer}/{index}")
        return problems
    if not isinstance(value, dict):
        return problems
    if value.get("type") in ("plain_text", "mrkdwn") and isinstance(value.get("text"), str):
        if not value["text"]:
            problems.append(_at("must be more than 0 characters", f"{pointer}/text"))
        elif len(value["text"]) > TEXT_MAX:
            problems.append(_at(f"must be less than {TEXT_MAX + 1} characters", f"{pointer}/text"))
    for key, item in value.items():
        problems += _text_problems(item, f"{pointer}/{key}")
    return problems


def _option_problems(element: dict[str, Any], pointer: str) -> list[str]:
    """The element's options: how many, each one's text and value, the initial ones among them."""
    options = element.get("options") or []
    problems: list[str] = []
    limit = OPTIONS_MAX.get(str(element.get("type")))
    if limit is not None and len(options) > limit:
        problems.append(_at(f"no more than {limit} items allowed", f"{pointer}/options"))
    for index, option in enumerate(options):
        at = f"{pointer}/options/{index}"
        text = ((option or {}).get("text") or {}).get("text")
        if isinstance(text, str) and len(text) > OPTION_TEXT_MAX:
            problems.append(_at(f"must be less than {OPTION_TEXT_MAX + 1} characters", f"{at}/text/text"))
        value = (option or {}).get("value")
        if isinstance(value, str) and len(value) > OPTION_VALUE_MAX:
            problems.append(_at(f"must be less than {OPTION_VALUE_MAX + 1} characters", f"{at}/value"))
    initial = element.get("initial_options") or []
    initial = [*initial, element["initial_option"]] if element.get("initial_option") else initial
    if options and any(picked not in options for picked in initial):
        problems.append(_at("initial option must exactly match one of the options", pointer))
    return problems


def _element_types(model: type) -> set[str]:
    """The element types ``slack_sdk`` has a model of (``model`` and its subclasses)."""
    kinds = {model.type} if isinstance(getattr(model, "type", None), str) else set()
    for subclass in model.__subclasses__():
        kinds |= _element_types(subclass)
    return kinds


def _element_problems(element: Any, pointer: str) -> list[str]:
    """What Slack refuses in one element that its model lets through."""
    if not isinstance(element, dict):
        return []
    kind = element.get("type")
    if kind in ("plain_text", "mrkdwn", "image"):  # a context block's texts and images
        return []
    if kind not in _element_types(BlockElement):
        return [_at(f"unknown element type {kind!r}", f"{pointer}/type")]
    problems = _option_problems(element, pointer)
    if kind == "plain_text_input":
        for name, low in (("min_length", 0), ("max_length", 1)):
            size = element.get(name)
            if size is not None and not (isinstance(size, int) and low <= size <= INPUT_LENGTH_MAX):
                problems.append(_at(f"must be between {low} and {INPUT_LENGTH_MAX}", f"{pointer}/{name}"))
    if kind == "number_input":
        problems += _number_input_problems(element, pointer)
    return problems


def _number_input_problems(element: dict[str, Any], pointer: str) -> list[str]:
    """``is_decimal_allowed`` required; ``initial_value`` / ``min_value`` / ``max_value`` strings
    of numbers (of whole ones, no decimal point, unless decimals are allowed: "3.0" is refused as
    "2.5" is), ``min_value`` not greater than ``max_value``."""
    if not isinstance(element.get("is_decimal_allowed"), bool):
        return [_at("is_decimal_allowed is required", f"{pointer}/is_decimal_allowed")]
    problems: list[str] = []
    found: dict[str, float] = {}
    for name in ("initial_value", "min_value", "max_value"):
        value = element.get(name)
        if value is None:
            continue
        found[name] = _number(value, decimal=element["is_decimal_allowed"])
        if math.isnan(found[name]):
            problems.append(_at("must be a string of a number", f"{pointer}/{name}"))
    if not problems and found.get("min_value", -math.inf) > found.get("max_value", math.inf):
        problems.append(_at("min_value cannot be greater than max_value", f"{pointer}/min_value"))
    return problems


def _number(value: Any, *, decimal: bool) -> float:
    """The number a string gives (a whole number's digits only, unless ``decimal``); NaN else."""
    if not isinstance(value, str) or not re.fullmatch(r"-?\d+(\.\d+)?" if decimal else r"-?\d+", value):
        return math.nan
    return float(value)


def _block_elements(block: dict[str, Any]) -> list[tuple[str, Any]]:
    """The block's elements with their keys (``element``, ``accessory``, ``elements/<n>``)."""
    found = [(key, block[key]) for key in ("element", "accessory") if key in block]
    elements = block.get("elements")
    if block.get("type") in ("actions", "context") and isinstance(elements, list):
        found += [(f"elements/{i}", element) for i, element in enumerate(elements)]
    return found


def _one_block_problems(block: Any, pointer: str) -> list[str]:
    try:
        parsed = Block.parse(block)
        if parsed is None or type(parsed) is Block:
            raise ValueError("unknown block type")
        parsed.to_dict()  # slack_sdk's models check Slack's documented limits
    except Exception as error:  # noqa: BLE001 - any refusal is a message for the caller
        return [_at(str(error), pointer)]
    problems = _text_problems(block, pointer)
    action_ids: list[Any] = []
    for key, element in _block_elements(block):
        problems += _element_problems(element, f"{pointer}/{key}")
        if isinstance(element, dict) and element.get("action_id") is not None:
            action_ids.append(element["action_id"])
    if len(action_ids) != len(set(action_ids)):
        problems.append(_at("action_id must be unique in its block", pointer))
    return problems


def kit_problems(blocks: list[Any], pointer: str) -> list[str]:
    """Why Slack would refuse these blocks (at ``pointer``, e.g. ``/blocks``, ``/view/blocks``)."""
    problems: list[str] = []
    seen: set[str] = set()
    for index, block in enumerate(blocks):
        at = f"{pointer}/{index}"
        problems += _one_block_problems(block, at)
        block_id = block.get("block_id") if isinstance(block, dict) else None
        if block_id is not None and block_id in seen:
            problems.append(_at(f"duplicate block_id {block_id!r}", f"{at}/block_id"))
        if block_id is not None:
            seen.add(block_id)
    return problems


def view_problems(view: Any, types: tuple[str, ...] = ("modal",)) -> list[str]:
    """Why Slack would refuse ``view`` (as ``views.open`` and ``views.push`` take it: a modal;
    ``views.update`` also takes a Home tab, ``types`` ``("modal", "home")``)."""
    if not isinstance(view, dict):
        return [_at("must be an object", "/view")]
    extra = sorted(set(view) - set(View.attributes))
    problems = [_at(f"invalid additional property: {key}", "/view") for key in extra]
    if view.get("type") not in types:
        return [*problems, _at(f"type must be one of {', '.join(types)}", "/view/type")]
    required = ("title", "blocks") if view["type"] == "modal" else ("blocks",)
    problems += [_at(f"missing required field: {key}", "/view") for key in required if key not in view]
    for key in PLAIN_ONLY:
        if key in view and (view[key] or {}).get("type") != "plain_text":
            problems.append(_at("must be a plain_text text object", f"/view/{key}"))
    blocks = view.get("blocks")
    if not isinstance(blocks, list) or not blocks:
        return [*problems, _at("must be a non-empty array", "/view/blocks")]
    if len(blocks) > MAX_VIEW_BLOCKS:
        return [*problems, _at(f"no more than {MAX_VIEW_BLOCKS} items allowed", "/view/blocks")]
    if len(str(view.get("external_id") or "")) > ID_MAX:
        problems.append(_at(f"must be less than {ID_MAX + 1} characters", "/view/external_id"))
    inputs = any(isinstance(b, dict) and b.get("type") == "input" for b in blocks)
    if view["type"] == "modal" and inputs and "submit" not in view:
        problems.append(_at("submit is required when an input block is within the blocks array", "/view"))
    try:
        View(**view).validate_json()  # title, submit, close 24; private_metadata 3,000; callback_id 255
    except Exception as error:  # noqa: BLE001 - any refusal is a message for the caller
        problems.append(_at(str(error), "/view"))
    return (
        problems
        + _text_problems({k: v for k, v in view.items() if k in PLAIN_ONLY}, "/view")
        + (kit_problems(blocks, "/view/blocks"))
    )


@dataclass
class SlackViews:
    """The modals the fake opened, by view id, and the trigger ids spent."""

    shown: dict[str, dict[str, Any]] = field(default_factory=dict)  # view id -> the view Slack holds
    used_triggers: set[str] = field(default_factory=set)
    _ids: itertools.count = field(default_factory=lambda: itertools.count(1))

    def answer(self, method: str, params: dict[str, Any], team_id: str, expired: bool) -> dict[str, Any]:
        """``views.open`` / ``push`` / ``update`` as Slack answers them; ``expired``: every trigger is."""
        view = params.get("view")
        if isinstance(view, str):
            try:
                view = json.loads(view)
            except ValueError:
                return invalid("[ERROR] invalid json [json-pointer:/view]")
        if view is None:
            return invalid("[ERROR] missing required field: view")
        problems = view_problems(view, ("modal", "home") if method == "views.update" else ("modal",))
        if problems:
            return invalid(*(f"[ERROR] {problem}" for problem in problems))
        if method == "views.update":
            return self._update(params, view)
        trigger = str(params.get("trigger_id") or "")
        if not trigger:
            return invalid("[ERROR] missing required field: trigger_id")
        if expired:
            return {"ok": False, "error": "expired_trigger_id"}
        if trigger in self.used_triggers:
            return {"ok": False, "error": "exchanged_trigger_id"}
        self.used_triggers.add(trigger)
        view_id = f"V{next(self._ids):06d}"
        self.shown[view_id] = {**view, "id": view_id, "hash": f"{view_id}.1", "team_id": team_id}
        return {"ok": True, "view": self.shown[view_id]}

    def _update(self, params: dict[str, Any], view: dict[str, Any]) -> dict[str, Any]:
        view_id, external_id = params.get("view_id"), params.get("external_id")
        if view_id and external_id:
            return invalid("[ERROR] Cannot provide both `view_id` and `external_id`")
        if not view_id:
            found = [k for k, v in self.shown.items() if external_id and v.get("external_id") == external_id]
            view_id = found[0] if found else None
        current = self.shown.get(str(view_id))
        if current is None:
            return {"ok": False, "error": "not_found"}
        if params.get("hash") and params["hash"] != current["hash"]:
            return {"ok": False, "error": "hash_conflict"}
        version = int(current["hash"].rsplit(".", 1)[1]) + 1
        self.shown[current["id"]] = {**view, **{k: current[k] for k in ("id", "team_id")}}
        self.shown[current["id"]]["hash"] = f"{current['id']}.{version}"
        return {"ok": True, "view": self.shown[current["id"]]}
