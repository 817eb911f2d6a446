"""Which files a turn sends: the image and file blocks of its final messages and of its tools'
artifacts, in LangChain's standard shapes (and the older ones), read into ``TurnOutput.files``."""

from __future__ import annotations

import base64

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.messages.content import create_file_block, create_image_block

from clarigate.agent.outgoing_files import MAX_FILES, file_of
from clarigate.agent.turn_output import turn_output

CSV = b"a,b\n1,2\n"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 20
B64 = base64.b64encode(PNG).decode()


def test_the_final_messages_image_and_file_blocks_are_the_turns_files():
    final = AIMessage(
        content=[
            {"type": "text", "text": "Here is the chart."},
            create_image_block(base64=B64, mime_type="image/png", filename="chart.png"),
            create_file_block(url="https://example.com/files/report.pdf?sig=1", mime_type="application/pdf"),
        ]
    )
    output = turn_output([HumanMessage("chart", id="h1"), final], [])  # a new thread
    assert output.replies == ["Here is the chart."]
    assert [(f.name, f.mime_type, f.data, f.url, f.image) for f in output.files] == [
        ("chart.png", "image/png", PNG, None, True),
        ("report.pdf", "application/pdf", None, "https://example.com/files/report.pdf?sig=1", False),
    ]


def test_a_tools_artifact_blocks_are_sent_and_earlier_turns_files_are_not():
    earlier = ToolMessage(
        "old", tool_call_id="t0", artifact=[create_file_block(base64=B64, mime_type="image/png")]
    )
    call = AIMessage("", tool_calls=[{"name": "report", "args": {}, "id": "t1"}])
    csv = create_file_block(base64=base64.b64encode(CSV).decode(), mime_type="text/csv", filename="r.csv")
    messages = [
        earlier,
        HumanMessage("report", id="h2"),
        call,
        ToolMessage("Made r.csv", tool_call_id="t1", artifact={"files": [csv]}),
        AIMessage("Done."),
    ]
    output = turn_output(messages, messages[:1])  # the earlier turn was there before
    assert [(f.name, f.data) for f in output.files] == [("r.csv", CSV)]


def test_older_block_shapes_and_data_urls_are_read():
    legacy = {"type": "image", "source_type": "base64", "data": B64, "mime_type": "image/png"}
    openai = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{B64}"}}
    named = {"type": "file", "base64": base64.b64encode(CSV).decode(), "extras": {"filename": "x.csv"}}
    assert (file_of(legacy).data, file_of(legacy).name) == (PNG, "image-1.png")  # type: ignore[union-attr]
    assert (file_of(openai).data, file_of(openai).mime_type) == (PNG, "image/png")  # type: ignore[union-attr]
    assert (file_of(named).name, file_of(named).mime_type) == ("x.csv", "text/csv")  # type: ignore[union-attr]


def test_blocks_with_nothing_to_send_are_left_out():
    assert file_of({"type": "file", "file_id": "file-abc"}) is None  # a provider's file store only
    assert file_of({"type": "image", "base64": "not base64!", "mime_type": "image/png"}) is None
    assert file_of({"type": "text", "text": "hi"}) is None
    assert file_of("a string") is None


def test_a_name_from_the_model_cannot_name_a_path():
    block = create_file_block(base64=B64, mime_type="image/png", filename="../../etc/passwd")
    assert "/" not in file_of(block).name  # type: ignore[union-attr]


def test_a_turn_sends_a_bounded_number_of_files():
    blocks = [create_file_block(base64=B64, mime_type="image/png") for _ in range(MAX_FILES + 5)]
    output = turn_output([HumanMessage("many", id="h"), AIMessage(content=blocks)], [])
    assert len(output.files) == MAX_FILES


def test_a_long_name_is_shortened_and_keeps_its_extension():
    block = create_file_block(base64=B64, mime_type="application/pdf", filename="q" * 296 + ".pdf")
    name = file_of(block).name  # type: ignore[union-attr]
    assert name == "q" * 196 + ".pdf"


def test_a_urls_name_is_decoded_and_its_path_separators_kept_out():
    pdf = {"type": "file", "url": "https://files.example.com/d/%E6%8A%A5%E5%91%8A.pdf?sig=abc"}
    assert file_of(pdf).name == "报告.pdf"  # type: ignore[union-attr]
    sneaky = {"type": "file", "url": "https://files.example.com/d/..%2F..%2Fetc%2Fpasswd"}
    assert "/" not in file_of(sneaky).name  # type: ignore[union-attr]


def test_a_urls_name_without_an_extension_gets_the_one_of_its_type():
    block = {"type": "file", "url": "https://files.example.com/download?id=5", "mime_type": "application/pdf"}
    assert file_of(block).name == "download.pdf"  # type: ignore[union-attr]
