"""The clarification protocol: a pure-pydantic leaf shared by agent, gateway and adapters."""

from .answers import (
    FormCheck,
    TypedReply,
    answer_declined,
    answer_with_form,
    answer_with_option,
    answer_with_text,
    check_form_values,
    looks_like_answer,
    named_line,
    parse_typed_reply,
)
from .catalog import icon, ui_text
from .fallback import (
    answer_message_text,
    closed_line,
    current_text,
    render_text_fallback,
    shown_as_text,
    summarize_answer,
)
from .field_values import number_text
from .models import (
    MAX_FIELDS,
    MAX_OPTIONS,
    MAX_SERIALIZED_BYTES,
    MAX_STRING,
    AnsweredBy,
    DeclineReason,
    FormField,
    HumanInputRequest,
    HumanInputResponse,
    Option,
)
from .normalize import detect_locale, normalize_request, normalize_with_omissions

__all__ = [
    "MAX_FIELDS",
    "MAX_OPTIONS",
    "MAX_SERIALIZED_BYTES",
    "MAX_STRING",
    "AnsweredBy",
    "DeclineReason",
    "FormCheck",
    "FormField",
    "HumanInputRequest",
    "HumanInputResponse",
    "Option",
    "TypedReply",
    "answer_declined",
    "answer_message_text",
    "answer_with_form",
    "answer_with_option",
    "answer_with_text",
    "check_form_values",
    "closed_line",
    "current_text",
    "detect_locale",
    "icon",
    "looks_like_answer",
    "named_line",
    "normalize_request",
    "normalize_with_omissions",
    "number_text",
    "parse_typed_reply",
    "render_text_fallback",
    "shown_as_text",
    "summarize_answer",
    "ui_text",
]
