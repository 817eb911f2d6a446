"""Files the agent sends reach Slack as files shared in the thread, once each, retries included.

A real LangGraph agent (scripted model) whose tool returns a CSV and a PNG as content blocks;
the fake Slack answers the upload methods slack_sdk's ``files_upload_v2`` uses.
"""

from __future__ import annotations

from ..files_agent import CSV, PNG, files_runner
from .conftest import MakeWorld


def shared(world) -> list[tuple[str, bytes, str]]:  # type: ignore[no-untyped-def]
    return [(f.name, f.data, f.channel) for f in world.fake.uploads.shared]


async def test_a_tools_csv_and_png_are_shared_in_the_thread_once(make_world: MakeWorld):
    world = await make_world(await files_runner())
    _, ts = await world.user.mention("sales report for eu")
    await world.settle()

    assert shared(world) == [("report.csv", CSV, "C1"), ("chart.png", PNG, "C1")]
    assert {f.thread_ts for f in world.fake.uploads.shared} == {ts}  # in the conversation's thread
    assert any("Here is the report." in m.get("text", "") for m in world.fake.shown())


async def test_a_share_that_failed_once_is_retried_without_a_second_upload_or_share(make_world: MakeWorld):
    world = await make_world(await files_runner())
    world.fake.fail_next(1, status=500, methods={"files.completeUploadExternal"})
    world.fake.uploads.failing_uploads.append(503)  # and the first upload POST too
    await world.user.dm("sales report for eu")
    await world.settle()

    assert shared(world) == [("report.csv", CSV, "D1"), ("chart.png", PNG, "D1")]
    # the CSV: an upload refused (503) and one taken; its share failed once and was completed
    # with the same file id, not uploaded again
    assert len(world.fake.attempts("files.getUploadURLExternal")) == 3
    assert len(world.fake.attempts("files.completeUploadExternal")) == 3


async def test_a_file_over_the_limit_is_refused_with_a_line_saying_so(make_world: MakeWorld):
    world = await make_world(await files_runner(), files_out={"max_bytes": 40})
    await world.user.dm("sales report for eu")
    await world.settle()

    assert shared(world) == [("report.csv", CSV, "D1")]  # 27 bytes: sent
    texts = [m.get("text", "") for m in world.fake.shown()]
    refusal = "I cannot send chart.png (69 bytes): files over 40 bytes cannot be sent here."
    assert any(refusal in t for t in texts)


async def test_files_without_a_reply_leave_no_working_message_behind(make_world: MakeWorld):
    world = await make_world(await files_runner(reply=""), streaming="off")
    await world.user.dm("sales report for eu")
    await world.settle()

    assert [name for name, _, _ in shared(world)] == ["report.csv", "chart.png"]
    assert not any("Working" in m.get("text", "") for m in world.fake.shown())


async def test_a_share_whose_answer_was_lost_is_not_shared_again(make_world: MakeWorld):
    world = await make_world(await files_runner())
    world.fake.uploads.lose_completions = 1  # Slack shares the CSV, the answer says fatal_error
    await world.user.dm("sales report for eu")
    await world.settle()

    assert shared(world) == [("report.csv", CSV, "D1"), ("chart.png", PNG, "D1")]
    assert len(world.fake.attempts("files.getUploadURLExternal")) == 2  # one upload each
    assert [c.params["file"] for c in world.fake.attempts("files.info")] == ["F0UP0001"]  # checked once
