"""Clarification requests and replies as Slack Block Kit (pure functions, no I/O).

Blocks are built with ``slack_sdk.models.blocks`` so Slack's limits are checked when
they are turned into dicts; whatever the model wrote is cut to fit first, and a
request that cannot be shown natively falls back to its text rendering.
"""

from __future__ import annotations

import re
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ConfirmObject,
    ContextBlock,
    MarkdownTextObject,
    Option,
    PlainTextObject,
    SectionBlock,
    StaticSelectElement,
)

from clarigate.adapters import labels
from clarigate.agent.protocol import HumanInputRequest, catalog, shown_as_text, summarize_answer, ui_text
from clarigate.agent.protocol.models import Locale
from clarigate.agent.protocol.risk import go_ahead_ids, option_roles
from clarigate.gateway.boundary.messages import Notice, PendingView, Sender
from clarigate.gateway.boundary.outbound_items import ClarificationOut

from .markup import cut, cut_escaped, escape_mrkdwn, markdown_to_mrkdwn, split_mrkdwn

ACTION_PREFIX = "clarigate:"
SELECT_ACTION = ACTION_PREFIX + "select"
OTHER_ACTION = ACTION_PREFIX + "other"
FORM_ACTION = ACTION_PREFIX + "form"
DECLINE_ACTION = ACTION_PREFIX + "decline"  # Cancel / Skip: the person dismisses the question

MAX_BLOCKS = 50
SECTION_LIMIT = 3000
LABEL_LIMIT = 75  # button text, option text
SELECT_OPTIONS_LIMIT = 100
MAX_BUTTONS = 5  # more options than this become a static_select
REPLY_CHUNK_LIMIT = 3900  # one message's text; Slack advises staying under 4000
ELLIPSIS_TEXT = "…"
_CUT_MARK = "\n" + ELLIPSIS_TEXT  # under the last section when text beyond it is dropped
_QUESTION_SECTIONS = 5
_CONTEXT_SECTIONS = 3
_OPTION_LIST_SECTIONS = 3


def button_value(token: str, action: str) -> str:
    """The short payload a control carries: the request token and what was chosen."""
    return f"{token}|{action}"


def parse_button_value(value: str | None) -> tuple[str, str] | None:
    """``(token, action)`` from a control's payload, or None when it is not one of ours."""
    if not value or "|" not in value:
        return None
    token, _, action = value.rpartition("|")
    return (token, action) if token and action else None


def option_action(index: int) -> str:
    """The action naming the option at 1-based ``index`` (``o3``)."""
    return f"o{index}"


def option_index(action: str) -> int | None:
    """The 1-based option index an ``o<n>`` action names, else None."""
    if action.startswith("o") and action[1:].isdigit():
        return int(action[1:])
    return None


def plain(text: str, limit: int) -> PlainTextObject:
    """A plain_text object cut to ``limit``; never empty (Slack rejects empty text)."""
    return PlainTextObject(text=cut(text.strip() or ELLIPSIS_TEXT, limit), emoji=True)


def text_sections(mrkdwn: str, max_sections: int) -> list[SectionBlock]:
    """Sections carrying ``mrkdwn`` (already escaped), split under the section limit; text
    beyond ``max_sections`` is dropped and the cut marked with an ellipsis.

    A chunk can fill the limit (a code block's piece between its fences): text needing more
    sections is split again with room for the mark, so the section ending with it fits too.
    """
    chunks = split_mrkdwn(mrkdwn, SECTION_LIMIT) or [ELLIPSIS_TEXT]
    if len(chunks) > max_sections:
        chunks = split_mrkdwn(mrkdwn, SECTION_LIMIT - len(_CUT_MARK))
    if len(chunks) > max_sections:
        chunks = [*chunks[: max_sections - 1], chunks[max_sections - 1] + _CUT_MARK]
    return [SectionBlock(text=MarkdownTextObject(text=chunk)) for chunk in chunks]


def question_mrkdwn(request: HumanInputRequest) -> str:
    """The question with its type's icon: bold when it is one plain line, else its Markdown
    converted (mrkdwn bold cannot span lines or wrap other emphasis)."""
    icon = catalog.icon(request.clarification_type)
    question = request.question.strip()
    if "\n" not in question and not re.search(r"[*_`~\[]", question):
        return f"{icon} *{escape_mrkdwn(question)}*"
    return f"{icon} {markdown_to_mrkdwn(question)}"


def question_blocks(
    request: HumanInputRequest,
    context_sections: int = _CONTEXT_SECTIONS,
    question_sections: int = _QUESTION_SECTIONS,
) -> list[Block]:
    """The context (if any) and the question, escaped and split or cut to at most the given
    number of sections each (a modal shows one of each: its fields need the room)."""
    blocks: list[Block] = []
    if request.context and request.context.strip():
        blocks += text_sections(markdown_to_mrkdwn(request.context.strip()), context_sections)
    return blocks + text_sections(question_mrkdwn(request), question_sections)


def _hint(text: str) -> ContextBlock:
    return ContextBlock(elements=[MarkdownTextObject(text=cut_escaped(text, SECTION_LIMIT))])


def _risk_confirm(locale: Locale, option: str | None = None) -> ConfirmObject:
    """The "Are you sure?" dialog (red confirm) in front of a risk confirmation's go-ahead choice,
    naming the option when the control is its own button (a select's dialog cannot know which)."""
    body = (
        ui_text("confirm_option", locale, option=option.strip())
        if option
        else ui_text("confirm_body", locale)
    )
    return ConfirmObject(
        title=plain(ui_text("confirm_title", locale), 100),
        text=plain(body or ui_text("confirm_body", locale), 300),  # plain text: the label is the model's
        confirm=plain(ui_text("confirm", locale), 30),
        deny=plain(ui_text("confirm_deny", locale), 30),
        style="danger",
    )


def labels_are_cut(request: HumanInputRequest) -> bool:
    """True when an option label is longer than Slack shows on a button or in a select."""
    return labels.labels_are_cut([option.label for option in request.options], LABEL_LIMIT)


def option_text(request: HumanInputRequest, index: int) -> PlainTextObject:
    """The text of the option at 1-based ``index`` on a button or in a select: the label, or
    "N. label…" keeping what tells it apart when some labels are cut (``clarigate.adapters.labels``;
    the full ones are listed, numbered, in the message)."""
    shown = labels.shown_labels([option.label for option in request.options], LABEL_LIMIT)
    return plain(shown[index - 1], LABEL_LIMIT)


def numbered_options_mrkdwn(request: HumanInputRequest) -> str:
    """The full option labels as a numbered list (escaped), for when buttons cannot show them."""
    return "\n".join(f"{n}. {escape_mrkdwn(option.label)}" for n, option in enumerate(request.options, 1))


def _decline_buttons(request: HumanInputRequest, token: str) -> list[ButtonElement]:
    """The way out (Cancel / Skip), which every question has."""
    button = ButtonElement(
        text=plain(labels.decline_label(request), LABEL_LIMIT),
        action_id=DECLINE_ACTION,
        value=button_value(token, "decline"),
    )
    return [button]


def _actions(buttons: list[ButtonElement]) -> list[Block]:
    """An actions block of ``buttons``; none when there are none (Slack refuses an empty one)."""
    return [ActionsBlock(elements=buttons)] if buttons else []


def _option_buttons(out: ClarificationOut) -> list[ButtonElement]:
    """One button per option; a risk confirmation's go-ahead options are red and ask first
    (``risk.option_roles``: decided from the request, not the position), the safe choice and an
    approval's Edit are plain buttons."""
    request = out.request
    roles = option_roles(request)
    buttons = []
    for index, option in enumerate(request.options, start=1):
        action = option_action(index)
        go_ahead = roles.get(option.id) == "go_ahead"
        buttons.append(
            ButtonElement(
                text=option_text(request, index),
                action_id=ACTION_PREFIX + action,
                value=button_value(out.token, action),
                style="danger" if go_ahead else None,
                confirm=_risk_confirm(request.locale, option.label) if go_ahead else None,
            )
        )
    return buttons


def _other_button(out: ClarificationOut) -> ButtonElement:
    return ButtonElement(
        text=plain(ui_text("other", out.request.locale), LABEL_LIMIT),
        action_id=OTHER_ACTION,
        value=button_value(out.token, "other"),
    )


def _controls(out: ClarificationOut) -> list[Block] | None:
    """The interactive part of the message, always with a way out (Cancel / Skip); None when
    Slack cannot show it natively."""
    request, locale = out.request, out.request.locale
    decline = _decline_buttons(request, out.token)
    if request.input_mode == "form" and request.fields:
        fill_in = ButtonElement(
            text=plain(ui_text("fill_in", locale), LABEL_LIMIT),
            action_id=FORM_ACTION,
            value=button_value(out.token, "form"),
            style="primary",
        )
        return [ActionsBlock(elements=[fill_in, *decline])]
    if not request.options:
        return [_hint(ui_text("type_answer", locale)), *_actions(decline)]
    if len(request.options) > SELECT_OPTIONS_LIMIT:
        return None
    listed: list[Block] = []
    if labels_are_cut(request):
        listed = [*text_sections(numbered_options_mrkdwn(request), _OPTION_LIST_SECTIONS)]
    risky = request.clarification_type == "risk_confirmation"
    if risky and len(request.options) <= MAX_BUTTONS:
        return [*listed, ActionsBlock(elements=[*_option_buttons(out), *decline])]
    if len(request.options) <= MAX_BUTTONS:
        return [*listed, ActionsBlock(elements=[*_option_buttons(out), _other_button(out), *decline])]
    select = StaticSelectElement(
        action_id=SELECT_ACTION,
        placeholder=plain(ui_text("choose", locale), LABEL_LIMIT),
        options=[
            Option(text=option_text(request, i), value=button_value(out.token, option_action(i)))
            for i in range(1, len(request.options) + 1)
        ],
        # A go-ahead choice is never one click away, however many options it has.
        confirm=_risk_confirm(locale) if go_ahead_ids(request) else None,
    )
    others = decline if risky else [_other_button(out), *decline]
    return [*listed, ActionsBlock(elements=[select, *others])]


def decline_blocks(token: str, request: HumanInputRequest) -> list[dict[str, Any]]:
    """An actions block with only the Cancel / Skip button (under a question shown as text)."""
    return [block.to_dict() for block in _actions(_decline_buttons(request, token))]


def fallback_blocks(fallback_text: str) -> list[dict[str, Any]]:
    """The request's text rendering as plain sections (when no native rendering fits)."""
    return [block.to_dict() for block in text_sections(escape_mrkdwn(fallback_text), MAX_BLOCKS)]


def _fits(block_dicts: list[dict[str, Any]]) -> bool:
    """Slack's message limits that ``to_dict()`` does not check itself."""
    if len(block_dicts) > MAX_BLOCKS:
        return False
    for block in block_dicts:
        for element in block.get("elements", []):
            if (
                element.get("type") in ("checkboxes", "radio_buttons")
                and len(element.get("options", [])) > 10
            ):
                return False
    return True


def render_clarification(out: ClarificationOut) -> list[dict[str, Any]]:
    """Block Kit blocks for a clarification request (text fallback when native is impossible)."""
    controls = _controls(out)
    text = shown_as_text(out.request, out.fallback_text)
    text_only = fallback_blocks(text)[: MAX_BLOCKS - 1] + decline_blocks(out.token, out.request)
    if controls is None:
        return text_only
    try:
        blocks = [block.to_dict() for block in [*question_blocks(out.request), *controls]]
    except Exception:  # a limit the cutting above missed: the text always fits
        return text_only
    return blocks if _fits(blocks) else text_only


def render_answered(request: HumanInputRequest, answered_mrkdwn: str) -> list[dict[str, Any]]:
    """The clarification once answered: the question stays, controls give way to who answered."""
    closing = ContextBlock(elements=[MarkdownTextObject(text=cut(answered_mrkdwn, SECTION_LIMIT))])
    return [block.to_dict() for block in [*question_blocks(request), closing]]


#: Sections the answer above a question takes in its message (a reply's first part: 3,900 characters).
LEAD_SECTIONS = 2


def render_closed(view: PendingView, answered_mrkdwn: str) -> list[dict[str, Any]]:
    """An answered question's message (``render_answered``), under the answer its stream showed
    when the question ended that stream (``MessageRef.extra["lead"]``): an update replaces the
    message whole, and the answer must stay."""
    ref = view.message_ref
    lead = ref.extra.get("lead") if ref is not None else None
    above = [block.to_dict() for block in text_sections(render_reply(lead)[0], LEAD_SECTIONS)] if lead else []
    answered = render_answered(view.request, answered_mrkdwn)
    return above[: max(MAX_BLOCKS - len(answered), 0)] + answered


def render_reply(markdown: str) -> list[str]:
    """Agent Markdown as mrkdwn messages, each under one message's limit."""
    return split_mrkdwn(markdown_to_mrkdwn(markdown), REPLY_CHUNK_LIMIT) or [ELLIPSIS_TEXT]


def notification_text(text: str) -> str:
    """The ``text`` that goes with blocks: shown in notifications and by old clients."""
    return cut_escaped(text, SECTION_LIMIT)


_SLACK_USER_ID = re.compile(r"^[UW][A-Z0-9]+$")


def mention_users(mrkdwn: str, user_ids: list[str]) -> str:
    """Escaped text with bare Slack user ids (``U123``) shown as mentions (``<@U123>``)."""
    for user_id in {u for u in user_ids if _SLACK_USER_ID.match(u)}:
        mrkdwn = re.sub(rf"(?<![\w@]){re.escape(user_id)}(?!\w)", f"<@{user_id}>", mrkdwn)
    return mrkdwn


def answered_mrkdwn(view: PendingView | None, answered_line: str) -> str:
    """ "✅ Answered by <@user>: …" for the updated message, the answer escaped (a declined
    question keeps the core's own line, "Cancelled by …", people shown as mentions)."""
    declined = view is not None and view.response is not None and view.response.response_kind == "declined"
    if view is not None and view.answered_by is not None and view.response is not None and not declined:
        try:
            answer = summarize_answer(view.request, view.response)
        except Exception:  # noqa: BLE001 - the core's line below says the same in plainer words
            answer = None
        if answer is not None:
            who = f"<@{view.answered_by.user_id}>"
            return ui_text("answered_by", view.request.locale, who=who, answer=cut_escaped(answer, 2000))
    ids = [s.user_id for s in (view.answered_by, view.asked_by) if s is not None] if view else []
    return mention_users(escape_mrkdwn(answered_line), ids)


# A Slack user id in a notice the core wrote: U or W, capitals and digits, at least one digit
# (so that words such as "UK" stay words).
_BARE_USER_ID = re.compile(r"(?<![\w@])([UW](?=[A-Z]*\d)[A-Z0-9]+)(?!\w)")


def _mention(person: Sender) -> str | None:
    """``<@U123>`` for a Slack user (Slack shows their name); None for an id that is not one."""
    return f"<@{person.user_id}>" if _SLACK_USER_ID.match(person.user_id) else None


def named_mrkdwn(notice: Notice) -> str:
    """A notice from its parts: each person it names as a mention, every other word escaped."""
    return notice.render(escape_mrkdwn, _mention)


def private_notice_mrkdwn(text: str, notice: Notice | None = None) -> str:
    """A notice the core wrote for one person, people shown as mentions: from its parts when it
    has them, else escaped with the Slack user ids in it as mentions."""
    if notice is not None:
        return named_mrkdwn(notice)
    return mention_users(escape_mrkdwn(text), _BARE_USER_ID.findall(text))


def notice_mrkdwn(message: str, view: PendingView | None, notice: Notice | None = None) -> str:
    """A message from the core for one person (ephemeral), people shown as mentions (``notice``:
    the message's parts, when the core gave them)."""
    if notice is not None:
        return named_mrkdwn(notice)
    ids = [s.user_id for s in (view.answered_by, view.asked_by) if s is not None] if view else []
    return mention_users(escape_mrkdwn(message), ids)
