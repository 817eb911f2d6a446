"""What the person is told about a photo the agent cannot see: in the conversation's language when
the photo comes with no words, and for each photo of an album past the ones the model is shown."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner, Turn, asking
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import HumanInputRequest
from clarigate.gateway.boundary.messages import Attachment
from clarigate.gateway.flow.attachments import MAX_IMAGES

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
BIG = Attachment(kind="image", name="photo.jpg", mime_type="image/jpeg", size=6_000_000, ref="big")

WHICH = HumanInputRequest(
    request_id="clarification:which",
    tool_call_id="which",
    question="哪张截图显示了错误？",
    input_mode="free_text",
    locale="zh",
)


def script(turn: Turn) -> TurnOutput:
    if turn.response is None and turn.text == "启动时崩溃了":
        return asking(WHICH)
    return TurnOutput(replies=["ok"])


async def test_a_big_photo_alone_over_a_chinese_question_is_told_in_chinese(store, make_gateway):
    gateway, chat = await make_gateway(store, ScriptedRunner(script))
    for said, attachments in (("启动时崩溃了", []), ("", [BIG])):
        await chat.say(said, attachments=attachments)
        await gateway.drain()

    told = chat.texts()
    assert "无法查看 photo.jpg（5.7 MB）：超过 5 MB 的图片不会被读取。" in told
    assert not any("I cannot look at" in text for text in told)


async def test_a_big_photo_alone_after_a_chinese_request_is_told_in_chinese(store, make_gateway):
    gateway, chat = await make_gateway(store, ScriptedRunner())  # no question open: the last request
    for said, attachments in (("帮我看看这个报错", []), ("", [BIG])):
        await chat.say(said, attachments=attachments)
        await gateway.drain()

    told = chat.texts()
    assert "无法查看 photo.jpg（5.7 MB）：超过 5 MB 的图片不会被读取。" in told
    assert not any("I cannot look at" in text for text in told)


def album(count: int) -> list[Attachment]:
    return [
        Attachment(kind="image", name=f"photo{n}.jpg", mime_type="image/jpeg", size=len(PNG), ref=f"p{n}")
        for n in range(1, count + 1)
    ]


async def test_an_album_past_the_limit_names_what_was_left_out_to_the_person_and_agent(store, make_gateway):
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(store, runner)
    photos = album(MAX_IMAGES + 1)
    for photo in photos:
        chat.files[photo.ref] = PNG
    await chat.say("what is wrong here?", attachments=photos)
    await gateway.drain()

    [request] = runner.calls
    assert len(request.images) == MAX_IMAGES
    assert "Only the first 4 images of a message are read; not read: photo5.jpg." in chat.texts()
    assert "(only the first 4 images are shown to you; not shown: photo5.jpg)" in request.text


async def test_an_album_past_the_limit_is_told_in_chinese(store, make_gateway):
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(store, runner)
    photos = album(MAX_IMAGES + 2)
    for photo in photos:
        chat.files[photo.ref] = PNG
    await chat.say("这些截图哪里有问题？", attachments=photos)
    await gateway.drain()

    assert "每条消息只读取前 4 张图片；未读取：photo5.jpg，photo6.jpg。" in chat.texts()
    assert "not shown: photo5.jpg, photo6.jpg" in runner.calls[-1].text


async def test_an_album_within_the_limit_says_nothing_of_it(store, make_gateway):
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(store, runner)
    photos = album(MAX_IMAGES)
    for photo in photos:
        chat.files[photo.ref] = PNG
    await chat.say("look", attachments=photos)
    await gateway.drain()

    assert len(runner.calls[-1].images) == MAX_IMAGES
    assert "not shown" not in runner.calls[-1].text
    assert not any("Only the first" in text for text in chat.texts())
