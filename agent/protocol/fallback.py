"""The plain-text rendering of a request and the text of an answer."""

from __future__ import annotations

from .models import HumanInputRequest, HumanInputResponse


def render_text_fallback(request: HumanInputRequest) -> str:
    """The text fallback every client can show (PROTOCOL.md, "The text fallback")."""
    raise NotImplementedError


def answer_message_text(request: HumanInputRequest, response: HumanInputResponse) -> str:
    """The HumanMessage text: ``For your clarification "…", my answer is: …``."""
    raise NotImplementedError


def summarize_answer(request: HumanInputRequest, response: HumanInputResponse) -> str:
    """A short human summary of the answer ("Vue", or "Label: value; …" for forms)."""
    raise NotImplementedError
