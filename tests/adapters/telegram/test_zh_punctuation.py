"""What a Chinese-writing person reads on Telegram is punctuated full-width (，：（）) and names what
they sent in Chinese; English is unchanged and the HTML stays escaped."""

from __future__ import annotations

from typing import Any

from clarigate.adapters.telegram.render import render_question, render_wizard
from clarigate.adapters.telegram.wizard import WizardState
from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.protocol import normalize_request

from .harness import message_update

VOICE = {"file_id": "v1", "file_unique_id": "uv1", "duration": 7, "mime_type": "audio/ogg"}
BIG = [{"file_id": "pic-1", "file_unique_id": "upic-1", "width": 800, "height": 600, "file_size": 30_000_000}]


def _form(question: str, labels: list[str], colors: list[str]) -> Any:
    name, qty, day, color = labels
    fields = [
        {"name": "name", "label": name, "required": True},
        {"name": "qty", "label": qty, "type": "number"},
        {"name": "day", "label": day, "type": "date"},
        {"name": "color", "label": color, "type": "multi_select", "options": colors},
    ]
    return normalize_request({"question": question, "fields": fields}, "call")


ZH = _form("请填写订单", ["名称", "数量", "日期", "颜色<&>"], ["红", "蓝"])
EN = _form("Fill in the order", ["Name", "Quantity", "Date", "Color<&>"], ["Red", "Blue"])


def _step(request: Any, step: int, values: dict[str, Any] | None = None) -> str:
    state = WizardState(request_id=request.request_id, token="t", user_id="1", chat_id="1", message_id="1")
    return render_wizard(request, state.model_copy(update={"step": step, "values": values or {}})).text


def test_a_form_question_lists_its_fields_in_the_persons_punctuation() -> None:
    assert "<i>名称，数量，日期，颜色&lt;&amp;&gt;</i>" in render_question(ZH, "t").text
    assert "<i>Name, Quantity, Date, Color&lt;&amp;&gt;</i>" in render_question(EN, "t").text


def test_a_steps_heading_and_date_hint_are_punctuated_in_its_language() -> None:
    assert "<b>1/4 · 名称</b>（必填）" in _step(ZH, 0)
    assert "<b>2/4 · 数量</b>（选填）" in _step(ZH, 1)
    assert "<i>请直接回复您的答案。（YYYY-MM-DD）</i>" in _step(ZH, 2)
    assert "<b>1/4 · Name</b> (required)" in _step(EN, 0)
    assert "<b>2/4 · Quantity</b> (optional)" in _step(EN, 1)
    assert "<i>Type your answer as a reply. (YYYY-MM-DD)</i>" in _step(EN, 2)


def test_the_summary_and_a_steps_values_are_punctuated_in_its_language() -> None:
    values = {"name": "小明", "color": ["红", "蓝"]}
    summary = _step(ZH, 4, values)
    assert "• 名称：小明" in summary and "• 颜色&lt;&amp;&gt;：红，蓝" in summary
    assert "→ 红，蓝" in _step(ZH, 3, values)
    summary = _step(EN, 4, {"name": "Bob", "color": ["Red", "Blue"]})
    assert "• Name: Bob" in summary and "• Color&lt;&amp;&gt;: Red, Blue" in summary


def captioned(caption: str, **media: Any) -> dict[str, Any]:
    command = caption.split(maxsplit=1)[0]
    entities = [{"type": "bot_command", "offset": 0, "length": len(command)}]
    return message_update(None, caption=caption, caption_entities=entities, **media)


async def test_a_voice_message_not_passed_on_is_named_in_the_persons_language(bench):
    tg = await bench(ScriptedRunner())
    for caption, note in (
        ("/help 这是什么？", "未转交 语音消息（7 秒）：命令不会附带转交任何内容。请连同您的请求重新发送。"),
        ("/help what is this?", "I did not pass on voice message (7 s): a command takes nothing with it."),
    ):
        tg.new_calls()
        await tg.deliver(captioned(caption, voice=VOICE))
        sent = [c.params["text"] for c in tg.new_calls() if c.method == "sendMessage"]
        assert sent[-1].startswith(note), sent


async def test_an_image_too_big_to_read_says_its_size_in_the_persons_punctuation(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    for caption, note in (
        ("看看这张图", "无法查看 photo.jpg（28.6 MB）："),
        ("look at this", "I cannot look at photo.jpg (28.6 MB):"),
    ):
        tg.new_calls()
        await tg.deliver(message_update(None, caption=caption, photo=BIG))
        sent = [c.params["text"] for c in tg.new_calls() if c.method == "sendMessage"]
        assert any(text.startswith(note) for text in sent), sent
