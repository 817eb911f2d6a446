"""An approval shows its calls literally on every platform: an argument's Markdown is no bold,
no italics and no link hiding its address; the review's description stays Markdown."""

from __future__ import annotations

import json

from clarigate.adapters.feishu.render import render_clarification as feishu_card
from clarigate.adapters.slack.render import render_clarification as slack_blocks
from clarigate.adapters.telegram.render import render_clarification as telegram_message
from clarigate.agent.interrupts import actions_of, approval_request
from clarigate.gateway.boundary.outbound_items import ClarificationOut
from tests.adapters.feishu.card_schema import check_card

TEXT = "**rm -rf /** _now_ [x](https://evil.example) `tick`"


def _approval(description: str = "") -> ClarificationOut:
    value = {"type": "tool_approval", "name": "post", "args": {"text": TEXT}, "description": description}
    request = approval_request("i1", actions_of(value), "en")
    return ClarificationOut(request=request, fallback_text="fb", token="tok12345")


def _slack_text(out: ClarificationOut) -> str:
    blocks = slack_blocks(out)
    return "\n".join(b["text"]["text"] for b in blocks if b["type"] == "section")


def test_slack_shows_the_call_as_written_and_the_description_as_markdown() -> None:
    shown = _slack_text(_approval("**Careful**: this posts publicly"))
    assert "*Careful*: this posts publicly" in shown
    call = 'post(text="**rm -rf /** _now_ [x](https://evil.example) \\u0060tick\\u0060")'
    assert f"`{call}`" in shown
    assert "<https://evil.example" not in shown


def test_feishu_shows_the_call_in_a_code_span() -> None:
    out = _approval()
    card = feishu_card(out.request, out.token, "fb")
    check_card(card)
    texts = [e["content"] for e in card["body"]["elements"] if e.get("tag") == "markdown"]
    assert any(
        t.startswith("`post(text=") and t.endswith(")`") and "[x](https://evil.example)" in t for t in texts
    )
    assert json.dumps(TEXT)[1:-1].replace("`", "\\u0060") in "".join(texts)


def test_telegram_shows_the_call_as_plain_text() -> None:
    message = telegram_message(_approval())
    assert "[x](https://evil.example)" in message.text and "<a " not in message.text
