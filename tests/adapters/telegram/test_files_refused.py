"""A file Telegram refuses for good: the person gets its line instead, and an operator sees one
outcome for it, at the right level (a fallback, the recipient gone, or a delivery given up).

PTB sends to the fake Bot API, which answers the refusals as Telegram does (``ok: false``,
``error_code``, ``description``).
"""

from __future__ import annotations

import logging
from dataclasses import replace

import pytest
from prometheus_client.parser import text_string_to_metric_families

from clarigate.adapters.testing import ScriptedRunner, asking, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.agent.outgoing_files import OutgoingFile
from clarigate.gateway.runtime.ops import exposition

from .harness import ALICE, GROUP, mention_update, message_update

PDF = b"%PDF-1.4\n"
REFUSED = "Bad Request: DOCUMENT_INVALID"  # a payload Telegram will never take (not the chat)
LINE = "I could not send report.pdf: it was not accepted here."


def series(name: str, **labels: str) -> float:
    """Counter ``name`` with ``labels`` as the metrics endpoint shows it (0 when absent)."""
    for family in text_string_to_metric_families(exposition("test-bot").decode()):
        for sample in family.samples:
            if sample.name == name and labels.items() <= sample.labels.items():
                return sample.value
    return 0.0


def outcomes() -> tuple[float, float, float, float]:
    """Delivered as sent, delivered as a fallback, given up, recipient gone (telegram)."""
    return (
        series("clarigate_deliveries_total", outcome="sent"),
        series("clarigate_deliveries_total", outcome="fallback"),
        series("clarigate_deliveries_given_up_total", platform="telegram"),
        series("clarigate_deliveries_recipient_gone_total", platform="telegram"),
    )


def counted_since(before: tuple[float, ...]) -> tuple[float, ...]:
    return tuple(now - then for now, then in zip(outcomes(), before, strict=True))


def delivery_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "clarigate.gateway.flow.delivery"]


def pdf_turn(output: TurnOutput) -> ScriptedRunner:
    pdf = OutgoingFile("report.pdf", "application/pdf", data=PDF)
    return ScriptedRunner(lambda turn: replace(output, files=[pdf]))


async def test_a_refused_file_is_replaced_by_its_line_and_counted_once_as_a_fallback(bench, caplog):
    tg = await bench(pdf_turn(TurnOutput(replies=["Here it is."])))
    tg.api.fail_next("sendDocument", 400, description=REFUSED)
    before = outcomes()
    with caplog.at_level(logging.INFO):
        await tg.deliver(message_update("the report please"))
    assert [c.params["text"] for c in tg.api.of("sendMessage")] == ["Here it is.", LINE]
    assert counted_since(before) == (1, 1, 0, 0)  # the reply sent, the file fallen back to its line
    [line] = delivery_lines(caplog)  # the core's one line for the item: refused, replaced by its line
    assert (
        line.levelno == logging.WARNING and "report.pdf" in line.getMessage() and "(400)" in line.getMessage()
    )
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_a_line_the_chat_refuses_too_ends_the_delivery_once_without_an_error(bench, caplog):
    # the PDF refused as a payload, then its line refused by the group, which removed the bot
    # meanwhile: the recipient is gone (once per item, no ERROR), the question after it is not
    # tried and closes unseen
    request = choice_request("Which region?", ["eu", "us"])
    tg = await bench(pdf_turn(asking(request)))
    tg.api.fail_next("sendDocument", 400, description=REFUSED)
    tg.api.fail_next("sendMessage", 403, description="Forbidden: bot was kicked from the group chat")
    before = outcomes()
    with caplog.at_level(logging.INFO):
        await tg.deliver(mention_update("the report please"))
    assert [c.params["text"] for c in tg.api.of("sendMessage")] == [LINE]  # refused; nothing after it
    assert counted_since(before) == (0, 0, 0, 2)  # the file (as its line) and the question
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert [r.levelno for r in delivery_lines(caplog) if "recipient gone" in r.getMessage()] == [
        logging.WARNING,
        logging.INFO,
    ]
    pending = await tg.gateway.store.get_pending(request.request_id)
    assert pending is not None and pending.status != "pending"  # a later line is a new request
    assert str(GROUP["id"]) in {c.params["chat_id"] for c in tg.api.of("sendDocument")}


async def test_a_file_whose_line_is_refused_as_well_is_one_delivery_given_up(bench, caplog):
    tg = await bench(pdf_turn(TurnOutput()))
    tg.api.fail_next("sendDocument", 400, description=REFUSED)
    tg.api.fail_next("sendMessage", 400, description="Bad Request: chat not found")
    before = outcomes()
    with caplog.at_level(logging.INFO):
        await tg.deliver(message_update("the report please"))
    assert [c.params["text"] for c in tg.api.of("sendMessage")] == [LINE]  # refused
    assert counted_since(before) == (0, 0, 1, 0)  # one item, given up once
    [error] = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert error.getMessage().startswith("delivery abandoned")


async def test_a_file_to_a_chat_that_blocked_the_bot_is_one_warning_and_one_recipient_gone(bench, caplog):
    tg = await bench(pdf_turn(TurnOutput()))
    tg.api.block(ALICE["id"])
    before = outcomes()
    with caplog.at_level(logging.INFO):
        await tg.deliver(message_update("the report please"))
    assert tg.api.of("sendMessage") == []  # no line: the chat takes nothing from the bot
    assert counted_since(before) == (0, 0, 0, 1)
    [warning] = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert warning.getMessage().startswith("recipient gone") and "blocked" in warning.getMessage()
