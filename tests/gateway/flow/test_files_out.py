"""Files the agent sends, as the core makes them items: fetched from a URL by the gateway (only
http/https, capped while downloading, internal addresses only when allowed), refused with a
line where the platform cannot take them, recorded with their bytes before the first send."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from clarigate.adapters.testing import ScriptedRunner, TestAdapter
from clarigate.agent.harness import TurnOutput
from clarigate.agent.outgoing_files import OutgoingFile
from clarigate.gateway.boundary.messages import Conversation, MessageRef
from clarigate.gateway.boundary.outbound_items import FileReply
from clarigate.gateway.boundary.port import DeliveryFailed
from clarigate.gateway.flow.delivery import DeliveryPlan, new_plan
from clarigate.gateway.store.base import Store

CSV = b"region,sales\neu,120\n"


class FilesPlatform(TestAdapter):
    """The test platform, taking files up to 1 KB."""

    def file_limit(self, conversation: Conversation, item: FileReply) -> int:
        return 1024

    async def send_file(self, conversation: Conversation, item: FileReply) -> MessageRef | None:
        self.sent.append((conversation, item))
        return None


def files_of(adapter: TestAdapter) -> list[tuple[str, str, bytes]]:
    return [(i.name, i.mime_type, i.data) for _, i in adapter.sent if isinstance(i, FileReply)]


@pytest.fixture
async def file_server() -> AsyncIterator[str]:
    """An HTTP server on 127.0.0.1: ``/report.csv``, ``/big`` (2 KB, chunked, no length), a redirect."""

    async def report(request: web.Request) -> web.Response:
        return web.Response(body=CSV, content_type="text/csv")

    async def big(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        response.enable_chunked_encoding()
        await response.prepare(request)
        for _ in range(8):
            await response.write(b"x" * 256)
        return response

    async def moved(request: web.Request) -> web.Response:
        raise web.HTTPFound("/report.csv")

    async def download(request: web.Request) -> web.Response:  # a name without an extension
        return web.Response(body=b"%PDF-1.4\n", content_type="application/pdf")

    app = web.Application()
    app.router.add_get("/download", download)
    app.router.add_get("/report.csv", report)
    app.router.add_get("/big", big)
    app.router.add_get("/moved", moved)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    yield f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"  # type: ignore[union-attr]
    await runner.cleanup()


def sending(*files: OutgoingFile) -> ScriptedRunner:
    return ScriptedRunner(lambda turn: TurnOutput(replies=["Here it is."], files=list(files)))


async def run(store: Store, make_gateway: Any, runner: ScriptedRunner, **config: Any) -> TestAdapter:
    gateway, chat = await make_gateway(store, runner, adapter_class=FilesPlatform, **config)
    await chat.say("the report please")
    await gateway.drain()
    return chat


async def test_a_file_by_url_is_fetched_by_the_gateway_when_local_addresses_are_allowed(
    store: Store, make_gateway: Any, file_server: str
):
    runner = sending(OutgoingFile("report.csv", url=f"{file_server}/moved"))  # redirected to the file
    chat = await run(store, make_gateway, runner, files_out={"allow_private_urls": True})
    assert files_of(chat) == [("report.csv", "text/csv", CSV)]
    assert chat.texts() == ["Here it is."]


async def test_a_loopback_url_is_not_fetched_unless_the_operator_allows_it(
    store: Store, make_gateway: Any, file_server: str
):
    chat = await run(
        store, make_gateway, sending(OutgoingFile("report.csv", url=f"{file_server}/report.csv"))
    )
    assert files_of(chat) == []
    assert chat.texts() == ["Here it is.", "I could not get report.csv to send it."]


async def test_a_download_past_the_cap_is_cut_off_and_refused_with_a_line(
    store: Store, make_gateway: Any, file_server: str
):
    runner = sending(OutgoingFile("big.bin", url=f"{file_server}/big"))  # 2 KB, its size unsaid
    chat = await run(store, make_gateway, runner, files_out={"allow_private_urls": True})
    assert files_of(chat) == []
    assert chat.texts()[-1] == "I cannot send big.bin (> 1 KB): files over 1 KB cannot be sent here."


async def test_only_http_and_https_urls_are_fetched(store: Store, make_gateway: Any):
    runner = sending(OutgoingFile("passwd", url="file:///etc/passwd"))
    chat = await run(store, make_gateway, runner, files_out={"allow_private_urls": True})
    assert files_of(chat) == [] and chat.texts()[-1] == "I could not get passwd to send it."


async def test_a_platform_that_cannot_send_files_says_so(store: Store, make_gateway: Any):
    gateway, chat = await make_gateway(store, sending(OutgoingFile("report.csv", "text/csv", data=CSV)))
    await chat.say("the report please")
    await gateway.drain()
    assert chat.texts() == ["Here it is.", "I cannot send report.csv: files cannot be sent here."]


async def test_a_file_is_recorded_with_its_bytes_before_it_is_sent(store: Store, make_gateway: Any):
    seen: list[Any] = []

    class Recording(FilesPlatform):
        async def send_file(self, conversation: Conversation, item: FileReply) -> MessageRef | None:
            seen.append(await store.delivery_record("test:rec-file"))
            return await super().send_file(conversation, item)

    runner = sending(OutgoingFile("report.csv", "text/csv", data=CSV))
    gateway, chat = await make_gateway(store, runner, adapter_class=Recording)
    await chat.say("the report please", event_id="rec-file")
    await gateway.drain()

    [record] = seen
    plan = DeliveryPlan.model_validate_json(record.plan)
    assert [(i.kind, getattr(i, "data", None)) for i in plan.items] == [("text", None), ("file", CSV)]
    assert files_of(chat) == [("report.csv", "text/csv", CSV)]


async def test_a_file_by_url_without_an_extension_gets_the_one_of_its_served_type(
    store: Store, make_gateway: Any, file_server: str
):
    runner = sending(OutgoingFile("download", url=f"{file_server}/download?id=5"))
    chat = await run(store, make_gateway, runner, files_out={"allow_private_urls": True})
    assert files_of(chat) == [("download.pdf", "application/pdf", b"%PDF-1.4\n")]


async def test_an_empty_file_is_not_sent_and_a_line_says_so(store: Store, make_gateway: Any):
    empty = OutgoingFile("empty.txt", "text/plain", data=b"")
    pdf = OutgoingFile("report.pdf", "application/pdf", data=b"%PDF-1.4\n")
    chat = await run(store, make_gateway, sending(empty, pdf))
    assert files_of(chat) == [("report.pdf", "application/pdf", b"%PDF-1.4\n")]
    assert chat.texts() == ["Here it is.", "I cannot send empty.txt: the file is empty."]


class RefusingPlatform(FilesPlatform):
    """Refuses every PDF for good (as a platform refuses a payload it will never take)."""

    async def send_file(self, conversation: Conversation, item: FileReply) -> MessageRef | None:
        if item.name.endswith(".pdf"):
            self.refused = getattr(self, "refused", 0) + 1
            raise DeliveryFailed("file refused", permanent=True, code="234010")
        return await super().send_file(conversation, item)


@pytest.mark.parametrize(
    ("said", "line"),
    [
        ("the report please", "I could not send report.pdf: it was not accepted here."),
        ("请给我报告", "未能发送 report.pdf：此处不接受该文件。"),
    ],
)
async def test_a_file_the_platform_refuses_is_said_once_and_the_rest_still_sent(
    store: Store, make_gateway: Any, said: str, line: str
):
    pdf = OutgoingFile("report.pdf", "application/pdf", data=b"%PDF-1.4\n")
    csv = OutgoingFile("report.csv", "text/csv", data=CSV)
    gateway, chat = await make_gateway(store, sending(pdf, csv), adapter_class=RefusingPlatform)
    await chat.say(said)
    await gateway.drain()
    assert files_of(chat) == [("report.csv", "text/csv", CSV)]
    assert chat.texts() == ["Here it is.", line]
    assert chat.refused == 1  # not retried, the agent not run again


async def test_a_file_recorded_without_its_line_is_still_named_in_the_persons_language(
    redis_stores: Any, make_gateway: Any
):
    # an older replica recorded the job's plan (its file item without ``fallback_text``) and
    # stopped before sending it; this one delivers that plan: the line is in the message's language
    store = redis_stores()
    gateway, chat = await make_gateway(store, sending(), adapter_class=RefusingPlatform)
    pdf = FileReply(name="report.pdf", mime_type="application/pdf", data=b"%PDF-1.4\n")
    plan = new_plan("test:old-plan", chat.conversation(), [pdf])
    old = plan.model_dump_json(exclude={"items": {0: {"fallback_text"}}})
    assert "fallback_text" not in old
    await store.record_delivery("test:old-plan", old, 3600)
    await chat.say("请给我报告", event_id="old-plan")
    await gateway.drain()
    assert chat.texts() == ["未能发送 report.pdf：此处不接受该文件。"]
