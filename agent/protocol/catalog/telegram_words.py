"""The catalog's lines only Telegram shows (part of ``WORDS``, kept apart to keep modules small)."""

from __future__ import annotations

from ..models import Locale

TELEGRAM_WORDS: dict[str, dict[Locale, str]] = {
    # /help and /start in a group: privacy mode shows the bot only commands to it and replies to it
    "help_telegram_group": {
        "en": "In this group, start with `{ask} …` (for example `{ask} deploy the docs`) or reply to "
        "one of my messages: Telegram shows me nothing else written here. When I need more to go "
        "on I ask a question: answer with its buttons, or reply with the answer (an option's "
        "number or label, or `name: value` lines for a form). A reply that is not an answer to "
        "the open question closes it and I take it as a new request.",
        "zh": "在本群中，请用 `{ask} …` 开始（例如 `{ask} 部署文档`），或回复我的任意一条消息："
        "Telegram 不会让我看到群里的其他消息。需要更多信息时我会提问：点按钮回答，或回复答案（选项编号或"
        "名称，表单则每行一个「名称: 值」）。不是回答当前问题的回复会关闭该问题，并作为新的请求处理。",
    },
    # a message written while the form showed an earlier step, delivered once a later one showed
    # (adapters/telegram/wizard.py ``typed``): shown on the step, which it does not fill
    "wizard_written_earlier": {
        "en": "A message written before this step showed was not taken: send it again if it is "
        "meant for this step.",
        "zh": "在显示此步骤之前写的消息未被采用：如果它是此步骤的答案，请重新发送。",
    },
    # a tap on a form step's button (adapters/telegram/forms.py ``step``) drawn for a step the
    # person's form has left (a second tap, sent before the message changed): nothing is changed
    "wizard_step_gone": {
        "en": "That button belongs to a step your form has left: nothing was changed. Use the buttons "
        "it shows now.",
        "zh": "该按钮属于您的表单已离开的步骤：没有做任何更改。请使用表单现在显示的按钮。",
    },
    # a tap on a form step's button drawn for someone else's form (the message shows whoever's form
    # was drawn last): nothing is changed, and the message shows the tapper's own form
    "wizard_not_yours": {
        "en": "That showed someone else's form: your tap changed nothing. Your own form is shown now.",
        "zh": "刚才显示的是别人的表单：您的点击没有更改任何内容。现在显示的是您自己的表单。",
    },
    # a form's choice step with more options than a keyboard holds (Telegram: 100 buttons, the way
    # out included; adapters/telegram/render.py ``render_wizard``): the others are typed
    "wizard_more_options": {
        "en": "Buttons show {shown} of the {total} options: type the one you want (its name or number).",
        "zh": "按钮只显示了 {total} 个选项中的 {shown} 个：请输入您要的选项（名称或编号）。",
    },
    # a form's number step refusing a value with a comma ("3,5", adapters/telegram/wizard.py
    # ``type_value``): said after "Enter a number"; the comma is not guessed to be a decimal point
    "wizard_number_dot": {
        "en": "(a number is written with a dot, e.g. 3.5)",
        "zh": "（小数请用点号书写，例如 3.5）",
    },
    # a photo, file or voice note sent alone at a form's step (adapters/telegram/forms.py
    # ``on_typed``): a new message, which closes the question; the values given so far go nowhere
    "wizard_values_dropped": {
        "en": "Your form was closed and the values you filled in were not sent: a photo, file or "
        "voice message sent alone is a new message. To send a file with a step's value, type the "
        "value as its caption.",
        "zh": "您的表单已关闭，已填写的内容未发送：单独发送的图片、文件或语音是一条新消息。"
        "如要随某一步的值发送文件，请把该值写在文件的说明中。",
    },
    # an album (photos or files sent together) at a form's step (adapters/telegram/forms.py
    # ``on_typed``): a new message, which closes the question; its caption fills no step
    "wizard_album_dropped": {
        "en": "Your form was closed and the values you filled in were not sent: photos or files sent "
        "together (an album) are a new message. To send a file with a step's value, send it on its "
        "own with the value as its caption.",
        "zh": "您的表单已关闭，已填写的内容未发送：一起发送的多张图片或多个文件（相册）是一条新消息。"
        "如要随某一步的值发送文件，请单独发送该文件，并把该值写在文件的说明中。",
    },
}
