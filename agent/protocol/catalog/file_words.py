"""The catalog's lines about files: the ones the agent sends, and what a person sends that the agent
cannot read (part of ``WORDS``, kept apart to keep modules small)."""

from __future__ import annotations

from ..models import Locale

FILE_WORDS: dict[str, dict[Locale, str]] = {
    # A file the agent made that cannot be sent (gateway/flow/files_out.py): said, never dropped.
    "file_too_big": {
        "en": "I cannot send {name} ({size}): files over {cap} cannot be sent here.",
        "zh": "无法发送 {name}（{size}）：此处无法发送超过 {cap} 的文件。",
    },
    "files_unsupported": {
        "en": "I cannot send {name}: files cannot be sent here.",
        "zh": "无法发送 {name}：此处无法发送文件。",
    },
    "file_unavailable": {
        "en": "I could not get {name} to send it.",
        "zh": "无法获取 {name}，因此未能发送。",
    },
    "file_empty": {
        "en": "I cannot send {name}: the file is empty.",
        "zh": "无法发送 {name}：文件为空。",
    },
    # A file the platform refused for good (gateway/flow/delivery.py): said after it, once.
    "file_refused": {
        "en": "I could not send {name}: it was not accepted here.",
        "zh": "未能发送 {name}：此处不接受该文件。",
    },
    # A photo or file sent with an answer to a graph that cannot be given it (agent/answer_attachments.py).
    "attachment_not_passed": {
        "en": "Your answer was passed on, but the photo or file sent with it could not be: "
        "this agent does not take them with an answer. Send it again as a new message.",
        "zh": "您的回答已转交，但随回答发送的图片或文件未能转交："
        "此智能体不随回答接收它们。请将其作为新消息重新发送。",
    },
    # A photo or file sent with an answer that settled nothing (the question asked again, or
    # another asked instead: Edit's form): not kept for the next answer, so the person is told.
    "attachment_asked_again": {
        "en": "The photo or file sent with your answer was not passed on: the question is asked again. "
        "Send it again with your answer.",
        "zh": "随回答发送的图片或文件未转交：该问题需要重新回答。请在回答时重新发送。",
    },
    # A photo or file sent with an answer that did not go through (gateway/flow/typed.py: a typed
    # form's problems; adapters/telegram/form_notes.py: a form submitted once its question closed):
    # nothing ran with it, so the person is told, as when the question is asked again.
    "attachment_not_used": {
        "en": "The photo or file sent with your answer was not used: the answer did not go through. "
        "Send it again if it is still needed.",
        "zh": "随回答发送的图片或文件未被使用：该回答未被采纳。如仍需要，请重新发送。",
    },
    # The images of one message past the ones the model is shown (gateway/flow/attachments.py).
    "images_over_count": {
        "en": "Only the first {count} images of a message are read; not read: {names}.",
        "zh": "每条消息只读取前 {count} 张图片；未读取：{names}。",
    },
    # An image the platform would not give (refused, gone, a network error; gateway/flow/attachments.py):
    # the agent runs without it, so the person is told, once for the message.
    "images_not_fetched": {
        "en": "I could not open {names} you sent, so I have not seen it.",
        "zh": "无法打开您发送的 {names}，因此我没有看到它。",
    },
    # A sticker, a place, a contact… sent alone over the writer's open question (gateway/flow/turn.py):
    # it neither answers nor closes the question, and nothing runs.
    "unreadable_question_open": {
        "en": "The question “{question}” is still open, so I set that message aside: please answer it first.",
        "zh": "问题「{question}」仍在等待回答，因此这条消息未作处理：请先回答该问题。",
    },
    # A photo or file sent under a command other than /new (gateway/flow/commands.py): the command
    # answers and passes nothing on, as it passes on no words after it; the person is told.
    "attachments_not_sent": {
        "en": "I did not pass on {names}: a command takes nothing with it. Send it again with your request.",
        "zh": "未转交 {names}：命令不会附带转交任何内容。请连同您的请求重新发送。",
    },
    # What the model is told when a tool's image or file moves out of its result (agent/tool_parts.py).
    "tool_parts_moved": {
        "en": "(image or file returned: see the next message)",
        "zh": "（返回了图片或文件：见下一条消息）",
    },
    # ... and a part no message can carry to the model (a link to a file): its link, as text.
    "tool_part_not_shown": {
        "en": "(returned, but not shown to you: {what})",
        "zh": "（已返回，但无法向你展示：{what}）",
    },
    "tool_parts_follow": {
        "en": "(Not written by the person: the images or files returned by the tool calls above.)",
        "zh": "（并非用户所写：上面的工具调用返回的图片或文件。）",
    },
}
