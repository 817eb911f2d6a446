"""Turn the model's (often sloppy) ``ask_clarification`` arguments into a valid request."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .models import HumanInputRequest, Locale


def detect_locale(text: str) -> Locale:
    """``zh`` when the text contains CJK ideographs, else ``en``."""
    raise NotImplementedError


def normalize_request(args: Mapping[str, Any], tool_call_id: str) -> HumanInputRequest:
    """A valid request from raw tool arguments; never raises (see PROTOCOL.md)."""
    raise NotImplementedError
