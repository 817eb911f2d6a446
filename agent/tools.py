"""The ``ask_clarification`` tool the model sees.

The tool has no real body: ``ClarificationMiddleware`` answers every call before the
tool node would run it. The body only runs when clarification is disabled, and then
tells the model to proceed on its own.
"""

from __future__ import annotations

from typing import Literal

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from clarigate.agent.prompts import PROCEED_WITHOUT_ANSWER

ASK_CLARIFICATION = "ask_clarification"


class ClarificationField(BaseModel):
    """One form field the model asks for."""

    name: str = Field(description="Machine name of the value, e.g. 'deadline'.")
    label: str | None = Field(default=None, description="What the person sees.")
    type: Literal["text", "textarea", "number", "select", "multi_select", "checkbox", "date"] = "text"
    required: bool = False
    options: list[str] | None = Field(default=None, description="Choices for select and multi_select.")
    placeholder: str | None = None
    default: str | bool | float | list[str] | None = Field(
        default=None,
        description="The current or suggested value, shown filled in (checkbox true/false, date "
        "YYYY-MM-DD, select an option); a field the person leaves as it is keeps it.",
    )


class AskClarificationArgs(BaseModel):
    """Arguments of ``ask_clarification``."""

    question: str = Field(description="The one question to ask, in the person's language.")
    clarification_type: Literal[
        "missing_info", "ambiguous_requirement", "approach_choice", "risk_confirmation", "suggestion"
    ] = Field(description="Why you ask; use risk_confirmation before anything irreversible.")
    context: str | None = Field(default=None, description="One or two sentences on why you ask.")
    options: list[str] | None = Field(
        default=None,
        description="A few likely answers, if there are any. For risk_confirmation: the go-ahead "
        "choice(s) and one safe choice worded Cancel / Keep … / No, … (the others ask to confirm).",
    )
    fields: list[ClarificationField] | None = Field(
        default=None, description="A small form, when you need several values at once."
    )


def _proceed_without_answer(**_: object) -> str:
    return PROCEED_WITHOUT_ANSWER


def build_ask_clarification_tool() -> BaseTool:
    """The tool definition bound to the model (answered by the middleware, never run while enabled)."""
    return StructuredTool.from_function(
        func=_proceed_without_answer,
        name=ASK_CLARIFICATION,
        description=(
            "Ask the person a clarifying question and stop until they answer. Use it when information "
            "is missing, the request is ambiguous, there are several approaches to choose from, or "
            "before anything irreversible (clarification_type='risk_confirmation'). How a "
            "risk_confirmation's options are read: phrase the safe choice as Cancel, Keep …, "
            "No, … or Don't … (e.g. 'No, keep the data'); every other option is taken as going "
            "ahead and asks the person to confirm it once more before it counts."
        ),
        args_schema=AskClarificationArgs,
    )
