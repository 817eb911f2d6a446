"""Files people share: described to the core on receipt, downloaded later with the bot token.

The ``files`` entries are shaped as Slack's file objects
(https://api.slack.com/types/file); ``url_private_download`` needs the bot token.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from clarigate.adapters.slack import SlackAdapter
from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.boundary.messages import Attachment

from .conftest import MakeWorld, slack_settings
from .fake_slack import FakeSlack

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 200


async def test_shared_files_reach_the_core_as_attachments(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)
    accepted = []
    accept = world.gateway.accept

    async def spy(message):  # type: ignore[no-untyped-def]
        accepted.append(message)
        return await accept(message)

    world.gateway.accept = spy  # type: ignore[method-assign]
    image = world.fake.add_file("F0IMG", "chart.png", PNG, "image/png")
    report = world.fake.add_file("F0PDF", "report.pdf", b"%PDF-1.4 ...", "application/pdf")
    hidden = {"id": "F0HID", "mode": "hidden_by_limit"}  # a free workspace's old file
    await world.user.dm("what does this show?", subtype="file_share", files=[image, report, hidden])
    await world.settle()

    [message] = accepted
    assert [(a.kind, a.name, a.mime_type, a.size, a.ref) for a in message.attachments] == [
        ("image", "chart.png", "image/png", len(PNG), image["url_private_download"]),
        ("file", "report.pdf", "application/pdf", 12, report["url_private_download"]),
    ]
    assert "chart.png, image/png" in runner.calls[0].text  # what the agent is told today


@pytest.fixture
async def adapter(fake_slack: FakeSlack) -> AsyncIterator[SlackAdapter]:
    adapter = SlackAdapter(slack_settings(fake_slack), gateway=None)  # type: ignore[arg-type]
    yield adapter
    await adapter.stop()


def attachment_of(file: dict, **changes: object) -> Attachment:
    values = {
        "kind": "image",
        "name": file["name"],
        "mime_type": file["mimetype"],
        "size": file["size"],
        "ref": file["url_private_download"],
    }
    return Attachment(**{**values, **changes})  # type: ignore[arg-type]


async def test_a_file_is_downloaded_with_the_bot_token(adapter: SlackAdapter, fake_slack: FakeSlack):
    file = fake_slack.add_file("F0IMG", "chart.png", PNG, "image/png")
    assert await adapter.fetch_attachment(attachment_of(file), max_bytes=10_000) == PNG
    assert fake_slack.arrived("files-pri") == 1


async def test_a_file_over_the_cap_is_not_downloaded(adapter: SlackAdapter, fake_slack: FakeSlack):
    file = fake_slack.add_file("F0IMG", "chart.png", PNG, "image/png")
    assert await adapter.fetch_attachment(attachment_of(file), max_bytes=100) is None
    unsized = attachment_of(file, size=None)  # the size is checked while reading too
    assert await adapter.fetch_attachment(unsized, max_bytes=100) is None


async def test_slacks_sign_in_page_is_not_taken_for_the_file(adapter: SlackAdapter, fake_slack: FakeSlack):
    file = fake_slack.add_file("F0IMG", "chart.png", PNG, "image/png")
    gone = attachment_of(file, ref=file["url_private_download"].replace("F0IMG", "F0GONE"))
    assert await adapter.fetch_attachment(gone, max_bytes=10_000) is None  # HTML served, not an image


async def test_the_token_goes_to_slack_hosts_only(adapter: SlackAdapter, fake_slack: FakeSlack):
    file = fake_slack.add_file("F0IMG", "chart.png", PNG, "image/png")
    elsewhere = attachment_of(file, ref="https://files.example.com/files-pri/T-F0IMG/download/chart.png")
    assert await adapter.fetch_attachment(elsewhere, max_bytes=10_000) is None
    assert fake_slack.arrived("files-pri") == 0


def test_addresses_that_may_see_the_bot_token():
    from clarigate.adapters.slack.files import may_send_token

    api = "https://slack.com/api/"
    assert may_send_token("https://files.slack.com/files-pri/T1-F1/download/a.png", api)
    assert not may_send_token("http://files.slack.com/files-pri/T1-F1/download/a.png", api)  # not TLS
    assert not may_send_token("https://files.slack.com.evil.example/a.png", api)
    assert not may_send_token("https://evilslack.com/a.png", api)


async def test_a_slack_connect_file_is_looked_up_with_files_info_and_reaches_the_agent(
    make_world: MakeWorld,
):
    runner = ScriptedRunner()
    world = await make_world(runner)
    shared = world.fake.add_connect_file("F0EXT", "chart.png", PNG, "image/png")  # from another org
    await world.user.dm("what does this show?", subtype="file_share", files=[shared])
    await world.settle()

    assert [c.params for c in world.fake.attempts("files.info")][:1] == [{"file": "F0EXT"}]
    [turn] = runner.calls
    assert "chart.png, image/png" in turn.text  # described as any file is
    assert [image.data for image in turn.images] == [PNG]  # and fetched from where files.info says


async def test_a_slack_connect_file_slack_will_not_describe_is_not_fetched(
    adapter: SlackAdapter, fake_slack: FakeSlack
):
    from clarigate.adapters.slack.receive import file_attachment

    gone = file_attachment({"id": "F0GONE", "mode": "file_access", "file_access": "check_file_info"})
    assert gone is not None  # kept, not dropped: the agent is told a file came
    assert await adapter.fetch_attachment(gone, max_bytes=10_000) is None
    assert [c.answer.get("error") for c in fake_slack.attempts("files.info")] == ["file_not_found"]
    assert fake_slack.arrived("files-pri") == 0


async def test_an_image_slack_will_not_hand_over_is_told_to_the_person_and_the_agent(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)
    image = world.fake.add_file("F0LOST", "chart.png", PNG, "image/png")
    world.fake.files.clear()  # gone by the time it is fetched: Slack answers with its sign-in page
    await world.user.dm("what does this show?", subtype="file_share", files=[image])
    await world.settle()

    [turn] = runner.calls
    assert turn.images == () and "chart.png, image/png, 208 bytes — could not be loaded" in turn.text
    told = [m.get("text", "") for m in world.fake.shown()]
    assert "I could not open chart.png you sent, so I have not seen it." in told
