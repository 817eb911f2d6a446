"""What a person sent on Feishu without a name is named in their language where they read it
(``语音消息（3 秒）``); the agent reads the English name, as before."""

from __future__ import annotations

from clarigate.adapters.feishu.content import other_content, post_content
from clarigate.gateway.flow.attachments import shown_names


def test_unnamed_feishu_attachments_are_named_in_the_persons_language() -> None:
    sent = [
        *other_content("audio", {"file_key": "f1", "duration": 3000}, "m1").attachments,
        *other_content("image", {"image_key": "i1"}, "m1").attachments,
        *other_content("media", {"file_key": "f2"}, "m1").attachments,
        *other_content("file", {"file_key": "f3"}, "m1").attachments,
        *other_content("sticker", {"file_key": "s1"}, "m1").attachments,
        *post_content({"content": [[{"tag": "img", "image_key": "i2"}]]}, "m1").attachments,
        *other_content("file", {"file_key": "f4", "file_name": "plan.pdf"}, "m1").attachments,
    ]
    assert shown_names(sent, "zh") == "语音消息（3 秒），图片，视频，文件，表情贴纸，图片，plan.pdf"
    assert shown_names(sent, "en") == "voice message (3 s), image, video, file, sticker, image, plan.pdf"
    assert [a.name for a in sent][:2] == ["voice message (3 s)", "image"]  # what the agent reads
