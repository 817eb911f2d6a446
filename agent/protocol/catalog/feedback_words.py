"""The catalog's lines about feedback on an answer (part of ``WORDS``, kept apart to keep modules small)."""

from __future__ import annotations

from ..models import Locale

FEEDBACK_WORDS: dict[str, dict[Locale, str]] = {
    # the two buttons under a final answer (labels where a platform wants words besides the icon)
    "feedback_up": {"en": "Good answer", "zh": "回答有帮助"},
    "feedback_down": {"en": "Bad answer", "zh": "回答没帮助"},
    # what the person who clicked is told (a toast, an ephemeral line, a tap's answer)
    "feedback_thanks": {"en": "Thanks for the feedback.", "zh": "感谢您的反馈。"},
    "feedback_changed": {"en": "Feedback changed.", "zh": "已更新您的反馈。"},
    "feedback_expired": {
        "en": "This answer can no longer be rated.",
        "zh": "该回答已无法评价。",
    },
}
