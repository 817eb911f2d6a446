"""The catalog's lines about answers an approval does not take as they are (part of ``WORDS``):
a typed Approve, asked again so that it goes through the confirmation a pick does, and an Edit
form that changed a call its review allows no edit of."""

from __future__ import annotations

from ..models import Locale

APPROVAL_WORDS: dict[str, dict[Locale, str]] = {
    # a typed approve that is not the question's own option (another language, "approve."): asked again
    "approval_typed_approve": {
        "en": "To approve, pick “{option}” (or type it) and confirm it.",
        "zh": "如要批准，请选择“{option}”（或输入它）并确认。",
    },
    # an Edit form that changed the arguments of a call whose review allows no edit
    "approval_not_editable": {
        "en": "{name} cannot be edited: put back its current values, or reject it.",
        "zh": "{name} 不允许修改：请恢复它的当前值，或拒绝它。",
    },
    # a tool reviewed more than once in one Edit form ("Edit the arguments of transfer (2 calls)")
    "approval_edit_calls": {"en": "{name} ({count} calls)", "zh": "{name}（{count} 次调用）"},
}
