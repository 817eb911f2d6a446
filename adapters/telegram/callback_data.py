"""Button payloads: ``{token}|{action}``, short codes only (Telegram allows 64 bytes).

Option text never travels in a payload: the token is resolved by the core and the
action names an option by its position. A button drawn for one person's state carries whose
it is and, in a form, the step and the drawing it was drawn for:
``{token}|{action}:{owner}:{step}:{drawing}`` (a form step's button: ``s2:42:0:1765000000123``),
``{token}|{action}:{owner}`` (a pick's "⚠️ Yes: …"). A tap of it counts only for that person, on
that step as that drawing showed it (``wizard.WizardState.drawing``: a step shown again after Back,
Edit or the form opened anew is another drawing), ``forms.Forms.step``, ``interactions``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

MAX_CALLBACK_BYTES = 64

# Actions on a rendered clarification.
OTHER = "other"  # ask for a typed answer (ForceReply)
FORM = "form"  # open the step-by-step form
CONFIRM = "yes"  # risk confirmation without options
CANCEL = "no"
OPTION_PREFIX = "o"  # o3: the third option
DECLINE = "x"  # dismiss the question (✖ Cancel): the agent is told the person declined
CONFIRM_PREFIX = "Y"  # Y3: "⚠️ Yes: …" on the confirm keyboard of the third option (Y0: Confirm)
RESTORE = "R"  # "◀ Go back" on the confirm keyboard: the question's own keyboard again

# Feedback under a final answer: the token is the answer's (``FeedbackAsk.token``), not a question's.
VOTE_UP = "+1"
VOTE_DOWN = "-1"
VOTES: dict[str, Literal["up", "down"]] = {VOTE_UP: "up", VOTE_DOWN: "down"}

# Actions inside a form (one field per step).
STEP_SELECT = "s"  # s2: pick the second option of a select field
STEP_TOGGLE = "t"  # t2: toggle the second option of a multi_select field
STEP_DONE = "d"  # multi_select finished
STEP_YES = "y"  # checkbox on
STEP_NO = "n"  # checkbox off
STEP_BACK = "b"
STEP_SKIP = "k"  # Skip an optional empty field, or Next: keep the value the field has
STEP_CLEAR = "c"  # empty an optional field that has a value
STEP_KEEP = "K"  # Keep: the field's current value (its default), and go on
SUMMARY_SUBMIT = "S"
SUMMARY_EDIT = "E"


@dataclass(frozen=True)
class ButtonAction:
    """A decoded button payload: which request (by token) and what was asked."""

    token: str
    action: str
    owner: str | None = None  # the person whose form or pick the button was drawn for
    step: int | None = None  # the form step it was drawn for (None: a button drawn before steps were)
    drawing: int | None = None  # the drawing of that step (None: drawn before drawings were)

    @property
    def option_index(self) -> int | None:
        """The 1-based position carried by ``o3`` / ``s3`` / ``t3`` actions, else None."""
        digits = self.action[1:]
        return int(digits) if self.action[:1] in ("o", "s", "t", "Y") and digits.isdigit() else None


def encode(
    token: str, action: str, owner: str | None = None, step: int | None = None, drawing: int | None = None
) -> str:
    """The payload for a button (drawn for ``owner``'s pick or form step, as ``drawing`` showed it,
    if given); ``ValueError`` when it would exceed 64 bytes."""
    drawn = [owner] if owner is not None else []
    drawn += [str(step)] if owner is not None and step is not None else []
    drawn += [str(drawing)] if len(drawn) == 2 and drawing is not None else []
    data = ":".join([f"{token}|{action}", *drawn])
    if len(data.encode()) > MAX_CALLBACK_BYTES:
        raise ValueError(f"callback data over {MAX_CALLBACK_BYTES} bytes")
    return data


def decode(data: str | None) -> ButtonAction | None:
    """The action behind a payload, or None for a payload this adapter did not make."""
    if not data or "|" not in data:
        return None
    token, _, rest = data.rpartition("|")
    action, *drawn = rest.split(":")
    if not token or not action or len(drawn) > 3 or not all(part.isdigit() for part in drawn[1:]):
        return None
    owner = drawn[0] if drawn else None
    step, drawing = (int(drawn[i]) if len(drawn) > i else None for i in (1, 2))
    return ButtonAction(token, action, owner, step, drawing)
