"""What the terminal prints for each outbound item: pure functions from the core's items to text.

Replies are prefixed ``bot> ``, errors and refusals ``  ! ``; a question is its text fallback
(numbered options, approvals' Approve / Reject) between blank lines. A form is asked field by
field (``field_prompt``), since a terminal has no form widget. Untrusted model text is printed
as it is, minus the control characters that would move the cursor or recolour the terminal.
"""

from __future__ import annotations

import re

from clarigate.agent.protocol import (
    FormField,
    HumanInputRequest,
    catalog,
    current_text,
    render_text_fallback,
    ui_text,
)
from clarigate.agent.protocol.models import SOURCE, Locale
from clarigate.agent.protocol.risk import APPROVAL_SOURCE
from clarigate.gateway.boundary.outbound_items import (
    ClarificationClosed,
    ClarificationOut,
    ErrorReply,
    Outbound,
    ProgressUpdate,
    TextReply,
)

PROMPT = "you> "
BOT = "bot> "
PROBLEM = "  ! "
STATUS = "  "  # before a step of a run shown live ("🔧 Searching the docs…")
HINT = "  · "  # before a form field's hint (its description, its range), on the line above its prompt
EXAMPLE = "  "  # before a form field's example (the agent's placeholder: ``e.g. my-project``), as above
QUIT = "/quit"

# ESC, CSI and the other C0/C1 controls except tab and newline: model text must not drive the terminal
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def words(key: str, locale: Locale = "en", **fields: str) -> str:
    """The terminal's own line ``key`` in ``locale`` (the catalog's ``chat_<key>``), its ``fields`` filled."""
    return catalog.text(f"chat_{key}", locale, **fields)


def inert(text: str) -> str:
    """``text`` without control characters (escape sequences print as plain text, not commands)."""
    return _CONTROLS.sub("", text)


def render(item: Outbound) -> str | None:
    """The terminal text of one outbound item; None when it shows nothing.

    A reply that finishes a live message is not rendered here (the adapter prints what the live
    message has not shown yet).
    """
    if isinstance(item, TextReply):
        return BOT + inert(item.text)
    if isinstance(item, ErrorReply):
        return PROBLEM + inert(item.text)
    if isinstance(item, ClarificationOut):
        return render_question(item.request)
    if isinstance(item, ClarificationClosed):
        return render_closed(item)
    if isinstance(item, ProgressUpdate) and item.state == "started":
        return STATUS + "⏳ " + ui_text("working", item.locale)
    return None  # a finished "working…", a live message's end: nothing to print


def render_question(request: HumanInputRequest) -> str:
    """A question as the terminal shows it: its text fallback between blank lines.

    A form's fallback ends by asking for ``name: value`` lines; the terminal asks its fields one
    by one instead, so that line is left out. A choice's ends by inviting a number "or your own
    answer": the terminal has no "Other…" to choose first, so text that is no option's number or
    label is a new request (``looks_like_answer``), and its last line says what it takes. A
    question's last line also says ``/cancel`` dismisses it (the form's intro says it for a form).
    """
    text, locale = render_text_fallback(request), request.locale
    if request.input_mode == "form" and request.fields:
        text = text.removesuffix(ui_text("reply_form", locale)).rstrip()
    elif request.input_mode == "choice_with_other" and request.options:
        text = text.removesuffix(ui_text("reply_choice", locale)) + words("reply_choice", locale)
    else:  # an open question: the terminal has no Cancel button, so its last line names /cancel
        text = text.removesuffix(ui_text("type_answer", locale)) + words("type_answer", locale)
    return "\n" + inert(text) + "\n"


def render_closed(item: ClarificationClosed) -> str | None:
    """What a closed question prints: a word only when a new message closed it (it goes to the
    agent as a request); an answer the person typed, or a /cancel or /new the core answers
    itself, needs no line of its own."""
    response = item.view.response
    if response is not None and response.response_kind == "declined" and response.reason == "superseded":
        return words("superseded", item.view.request.locale)
    return None


def field_prompt(field: FormField, locale: Locale = "en") -> str:
    """``Label (required) [1) a  2) b]: `` for one form field, in ``locale`` (``项目名称（必填）：``:
    a full-width colon in Chinese); a field with a current value (its default) says it and that
    Enter keeps it."""
    note = ui_text("field_required", locale) if field.required else ""
    if field.options:
        choices = "  ".join(f"{n}) {o.label}" for n, o in enumerate(field.options, 1))
        many = words("several", locale) if field.type == "multi_select" else ""
        hint = f" [{choices}{many}]"
    else:
        hint = words(field.type, locale) if field.type in ("checkbox", "number", "date") else ""
    if field.default is not None:
        shown = " ⏎ ".join(current_text(field, locale).splitlines())
        hint += catalog.text("chat_current", locale, value=shown)
    return f"  {inert(field.label)}{note}{inert(hint)}" + words("field_end", locale)


def field_hint(field: FormField, request: HumanInputRequest) -> str | None:
    """The line shown above a form field's first prompt: its hint (``placeholder``), on one line;
    None when it has none, when the prompt already says it (``YYYY-MM-DD``), or for an approval's
    Edit (it repeats the argument, which the prompt shows as the current value).

    The agent's placeholder (``ask_clarification``) is an example, never a value Enter takes, and
    says so (``e.g. my-project``); a graph's (a schema field's description and range) is what the
    field is, after a dot. A field's default is its prompt's (``field_prompt``: Enter keeps it)."""
    hint = " ".join((field.placeholder or "").split())
    if not hint or request.source == APPROVAL_SOURCE or hint in field_prompt(field, request.locale):
        return None
    if request.source != SOURCE:
        return HINT + inert(hint)
    said = tuple(words("example", locale, hint="").strip().casefold() for locale in ("en", "zh"))
    example = hint if hint.casefold().startswith(said) else words("example", request.locale, hint=hint)
    return EXAMPLE + inert(example)


def live_delta(printed: str, text: str) -> tuple[str, bool]:
    """What to print so a live line that shows ``printed`` shows ``text``: the new tail, and
    False; or, when ``text`` does not continue what is shown, the whole of it on a new line, and
    True (the model's text changed under us, e.g. a reply that differs from its stream)."""
    if text.startswith(printed):
        return inert(text[len(printed) :]), False
    return inert(text), True
