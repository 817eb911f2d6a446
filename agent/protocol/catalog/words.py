"""The catalog's lines, by key, in every locale (``clarigate.agent.protocol.catalog.text``).

A key names one line people read; lines only Telegram shows are in ``telegram_words``.
"""

from __future__ import annotations

from ..models import Locale
from .approval_words import APPROVAL_WORDS
from .closed_words import CLOSED_WORDS
from .command_words import COMMAND_WORDS
from .confirm_words import CONFIRM_WORDS
from .feedback_words import FEEDBACK_WORDS
from .file_words import FILE_WORDS
from .graph_words import GRAPH_WORDS
from .mark_words import MARK_WORDS
from .model_words import MODEL_WORDS
from .shown_words import SHOWN_WORDS
from .slack_words import SLACK_WORDS
from .telegram_words import TELEGRAM_WORDS
from .tool_words import TOOL_WORDS
from .typed_words import TYPED_WORDS

WORDS: dict[str, dict[Locale, str]] = {
    # --- questions, answers and forms (every renderer) ------------------------------------------
    "other": {"en": "Other…", "zh": "其他…"},
    "fill_in": {"en": "Fill in", "zh": "填写"},
    "submit": {"en": "Submit", "zh": "提交"},
    "cancel": {"en": "Cancel", "zh": "取消"},
    "confirm": {"en": "Confirm", "zh": "确认"},
    "edit": {"en": "Edit", "zh": "修改"},
    "done": {"en": "Done", "zh": "完成"},
    "back": {"en": "Back", "zh": "上一步"},
    "skip": {"en": "Skip", "zh": "跳过"},
    "next": {"en": "Next", "zh": "下一步"},
    "clear": {"en": "Clear", "zh": "清除"},
    "keep": {"en": "Keep", "zh": "保持"},
    "field_current": {"en": " (current: {value})", "zh": "（当前：{value}）"},
    "form_closed": {"en": "That form is closed.", "zh": "该表单已关闭。"},
    "form_reopen": {"en": "Tap “Fill in” on it to open it again.", "zh": "点击其中的「填写」可重新打开。"},
    "required": {"en": "required", "zh": "必填"},
    "optional": {"en": "optional", "zh": "选填"},
    "yes": {"en": "Yes", "zh": "是"},
    "no": {"en": "No", "zh": "否"},
    "choose": {"en": "Choose…", "zh": "请选择…"},
    "your_answer": {"en": "Your answer", "zh": "您的回答"},
    "type_answer": {"en": "Type your answer as a reply.", "zh": "请直接回复您的答案。"},
    "answered_by": {"en": "✅ Answered by {who}: {answer}", "zh": "✅ {who} 已回答：{answer}"},
    "already_answered": {"en": "Already answered by {who}.", "zh": "{who} 已经回答过了。"},
    "already_answered_you": {"en": "You already answered this question.", "zh": "您已经回答过这个问题了。"},
    "expired": {
        "en": "This question has expired; send your request again.",
        "zh": "该问题已过期，请重新发送请求。",
    },
    "not_allowed": {"en": "Only {who} can answer this question.", "zh": "只有 {who} 可以回答这个问题。"},
    "answer_received": {"en": "Answer received.", "zh": "已收到回答。"},
    # a click the core has not finished with when the platform wants its answer (Feishu's 3 s)
    "click_pending": {"en": "Received: still being handled, one moment…", "zh": "已收到，正在处理，请稍候…"},
    # a click the platform did not say who made (Feishu's callback without operator.open_id)
    "click_unattributed": {
        "en": "This click could not be linked to you, so it was not counted. Please try again.",
        "zh": "无法确认这次点击的操作者，因此未被记录。请重试。",
    },
    # A question closed without an answer (response_kind "declined"): the value and the text the
    # agent reads (the line on its message and the verdict for a late click: ``closed_words``).
    "declined_value": {"en": "(declined to answer)", "zh": "（未回答，已取消）"},
    "declined_text": {
        "en": 'For your clarification "{question}", I declined to answer. '
        "Go on without it if you can, or ask again only if you truly cannot.",
        "zh": "对于您的澄清问题「{question}」，我选择不回答。"
        "如果可以，请在没有这个信息的情况下继续；确实无法继续时再问。",
    },
    "invalid_values": {"en": "Some values need fixing.", "zh": "部分内容需要修改。"},
    "working": {"en": "Working…", "zh": "处理中…"},
    # An image the agent cannot see (gateway/flow/attachments.py): the person is told, not left guessing.
    "image_too_big": {
        "en": "I cannot look at {name}: images over {cap} are not read.",
        "zh": "无法查看 {name}：超过 {cap} 的图片不会被读取。",
    },
    "image_unreadable": {
        "en": "I cannot look at {name}: its image format is unknown.",
        "zh": "无法查看 {name}：无法识别其图片格式。",
    },
    # Slack: a bare mention, and a form or "Other…" box Slack would not open in time.
    "mention_prompt": {
        "en": "Yes? Tell me what you need in this thread.",
        "zh": "在的，请在这个话题里告诉我您需要什么。",
    },
    "modal_failed": {"en": "The answer box could not be opened.", "zh": "无法打开回答窗口。"},
    "summary": {"en": "Please check your answers:", "zh": "请确认您的回答："},
    # The text fallback and typed replies (agent/protocol/fallback.py, answers.py).
    "default_question": {
        "en": "Could you tell me more about what you need?",
        "zh": "能再具体说明一下您的需求吗？",
    },
    "reply_choice": {"en": "Reply with a number or your own answer.", "zh": "请回复编号或直接输入您的答案。"},
    "reply_form": {
        "en": "Reply with one `name: value` line per field.",
        "zh": "请每行回复一个字段，格式为「名称: 值」。",
    },
    "field_required": {"en": " (required)", "zh": "（必填）"},
    "field_options": {"en": " — options: {choices}", "zh": " — 选项：{choices}"},
    "field_multiple": {"en": " (multiple allowed)", "zh": "（可多选）"},
    "field_yes_no": {"en": " — yes / no", "zh": " — 是 / 否"},
    "field_number": {"en": " — a number", "zh": " — 数字"},
    "field_date": {"en": " — a date like 2026-12-01", "zh": " — 日期，如 2026-12-01"},
    "answer_text": {
        "en": 'For your clarification "{question}", my answer is: {answer}',
        "zh": "关于您的澄清问题「{question}」，我的回答是：{answer}",
    },
    "answer_values": {
        "en": "Values as JSON (by field name): {values}",
        "zh": "各字段的值（JSON，按字段名）：{values}",
    },
    "answer_yes": {"en": "yes", "zh": "是"},
    "answer_no": {"en": "no", "zh": "否"},
    "answer_empty": {"en": "(nothing filled in)", "zh": "（未填写）"},
    "err_required": {"en": "This field is required", "zh": "此项为必填"},
    "err_number": {"en": "Enter a number", "zh": "请输入数字"},
    "err_yes_no": {"en": "Answer yes or no", "zh": "请回答是或否"},
    "err_choose_one": {"en": "Choose one of: {choices}", "zh": "请从以下选项中选择一个：{choices}"},
    "err_choose_from": {"en": "Choose from: {choices}", "zh": "请从以下选项中选择：{choices}"},
    "err_date": {"en": "Use a date like 2026-12-01", "zh": "请使用 2026-12-01 这样的日期格式"},
    # --- the gateway's own notices (gateway/flow) -------------------------------------------------
    "new_thread": {
        "en": "Started a new conversation. What can I do for you?",
        "zh": "已开始新的对话。有什么可以帮您？",
    },
    "run_failed": {
        "en": "Sorry, I could not finish that: something went wrong on my side. Please try again.",
        "zh": "抱歉，我这边出了问题，没能完成。请再试一次。",
    },
    "agent_unavailable": {
        "en": "The agent is unreachable right now. Your message is kept: I will answer once it is back.",
        "zh": "智能体暂时无法连接。您的消息已保留，恢复后我会立即回复。",
    },
    "store_unavailable": {
        "en": "I cannot reach my storage right now. Your message is kept: I will answer once it is back.",
        "zh": "我暂时无法连接存储。您的消息已保留，恢复后我会立即回复。",
    },
    "run_too_long": {
        "en": "Sorry, that took too long and I stopped. Please try again, perhaps with a smaller request.",
        "zh": "抱歉，处理时间过长，我已停止。请再试一次，或把请求拆小一些。",
    },
    # a run someone stopped on the LangGraph server (Studio's Cancel): gateway/runners/server_stops.py
    "run_cancelled": {
        "en": "This request was stopped on the agent's server before it finished. "
        "Write a new message to start again.",
        "zh": "这个请求在智能体的服务器上被中止了，没有完成。发送新消息即可重新开始。",
    },
    # an answer to a question whose thread the LangGraph server lost (a restart without saving it,
    # or the thread deleted there: the gateway cannot tell which): gateway/runners/server_stops.py
    "server_lost_thread": {
        "en": "The agent's server lost this conversation (it restarted without saving it, or the "
        "conversation was deleted there): please send your request again.",
        "zh": "智能体的服务器丢失了这段对话（它重启时没有保存，或对话在服务器上被删除了）："
        "请重新发送您的请求。",
    },
    "refused": {
        "en": "Sorry, I am not set up to work with you here. Ask the bot's administrator for access.",
        "zh": "抱歉，我在这里无法为您服务。请联系机器人的管理员开通权限。",
    },
    # --- live progress (gateway/flow/live.py) ---------------------------------------------------
    "tool_running": {"en": "🔧 {what}…", "zh": "🔧 {what}…"},
    "using_tool": {"en": "Using {tool}", "zh": "正在使用 {tool}"},
    "working_status": {"en": "⏳ Working…", "zh": "⏳ 处理中…"},
    "progress_line": {"en": "🔄 {what}", "zh": "🔄 {what}"},
    # --- conversation control (gateway/flow/commands.py) ---------------------------------------------
    "greeting": {
        "en": "👋 Hi! I am an assistant that asks before it guesses. Tell me what you need.",
        "zh": "👋 您好！我是一个先问清楚再动手的助手。请告诉我您需要什么。",
    },
    "help": {
        "en": "Just write what you need. When I need more to go on I ask a question: answer with its "
        "buttons, or type the answer (an option's number or label, or `name: value` lines for a "
        "form). A message that is not an answer to the open question closes it and I take it as "
        "a new request.",
        "zh": "直接告诉我您需要什么。需要更多信息时我会提问：点按钮回答，或直接输入答案（选项编号或"
        "名称，表单则每行一个「名称: 值」）。不是回答当前问题的消息会关闭该问题，并作为新的请求处理。",
    },
    "commands": {"en": "Commands:", "zh": "命令："},
    "cmd_new": {
        "en": "start a new conversation (closes the open question)",
        "zh": "开始新的对话（关闭当前问题）",
    },
    # ``/cancel``: the open question, else the request in progress (``flow.stops``)
    "cmd_cancel": {
        "en": "dismiss the open question, or stop the request in progress",
        "zh": "取消待回答的问题，或停止进行中的请求",
    },
    "cmd_status": {"en": "what I am doing in this chat", "zh": "查看我在这个对话里的进展"},
    "cmd_help": {"en": "how to talk to me, and the commands", "zh": "如何与我交谈，以及可用的命令"},
    "cmd_ask": {"en": "ask me something (in groups: {ask} …)", "zh": "向我提问（群组中：{ask} …）"},
    "cmd_quit": {"en": "leave the chat", "zh": "退出"},
    "cancelled": {
        "en": "✖ Cancelled the question “{question}”. I will go on without the answer.",
        "zh": "✖ 已取消问题「{question}」，我会在没有答案的情况下继续。",
    },
    # ``/cancel`` of a graph's own interrupt: its schema may refuse the declined answer, so no promise
    "cancelled_interrupt": {
        "en": "✖ Cancelled the question “{question}”.",
        "zh": "✖ 已取消问题「{question}」。",
    },
    # after a dismissed question (Cancel, ``/cancel``) whose graph refused the declined answer
    "task_stopped": {
        "en": "The task this question was part of has stopped: it cannot go on without an answer. "
        "Send a new message to start again.",
        "zh": "这个问题所属的任务已停止：没有答案无法继续。如需重新开始，请发送新消息。",
    },
    "cancel_not_yours": {
        "en": "Only {who} can cancel this question; it stays open. Your own requests still go ahead.",
        "zh": "只有 {who} 可以取消这个问题，它仍然保留。您自己的请求照常处理。",
    },
    # what the agent reads before a message from someone else while a question it asked is open
    "run_from_other": {
        "en": "[From {who}, another person in this conversation. Your open question to {asker} "
        "stays open: this message is not its answer.]",
        "zh": "[来自本对话中的另一位成员 {who}。您向 {asker} 提出的问题仍在等待回答：这条消息不是它的答案。]",
    },
    "nothing_to_cancel": {"en": "There is no open question to cancel.", "zh": "当前没有可以取消的问题。"},
    # a ``/cancel`` written before the open question was asked (it reached the bot late): not its to close
    "cancel_came_late": {
        "en": "Your {cancel} came late: you sent it before I asked “{question}”, so that question "
        "stays open. Send {cancel} again to cancel it.",
        "zh": "您的 {cancel} 到达较晚：它是在我提问「{question}」之前发出的，所以这个问题仍然保留。"
        "如需取消，请再次发送 {cancel}。",
    },
    "still_working": {
        "en": "I am still working on your message; the answer will come here.",
        "zh": "我还在处理您的消息，结果会发到这里。",
    },
    # ``/cancel`` with no question open while the person's request runs: it stops (``flow.stops``)
    "run_stopped": {
        "en": "■ Stopped. What was already done stays done.",
        "zh": "■ 已停止。已经完成的部分保持不变。",
    },
    # ``/cancel`` with no question open and no run of the person's: their waiting messages are
    # withdrawn, not answered (``flow.withdrawals``)
    "withdrawn_one": {
        "en": "✖ Withdrawn: your waiting message “{text}” will not be answered.",
        "zh": "✖ 已撤回：您等待中的消息「{text}」不会再被处理。",
    },
    "withdrawn_many": {
        "en": "✖ Withdrawn: your {count} waiting messages will not be answered.",
        "zh": "✖ 已撤回：您等待中的 {count} 条消息不会再被处理。",
    },
    "stop_not_yours": {
        "en": "Only {who} can stop the request in progress; it goes on. Your own requests still go ahead.",
        "zh": "只有 {who} 可以停止进行中的请求，它会继续。您自己的请求照常处理。",
    },
    # ``/cancel`` refused for both someone else's open question and someone else's run
    "cancel_neither_yours": {
        "en": "Only {asker} can cancel this question, and only {runner} can stop the request in "
        "progress; both go on. Your own requests still go ahead.",
        "zh": "只有 {asker} 可以取消这个问题，只有 {runner} 可以停止进行中的请求，两者都会继续。"
        "您自己的请求照常处理。",
    },
    "status_title": {"en": "Where this conversation stands:", "zh": "当前对话状态："},
    "status_question": {
        "en": "• Waiting for an answer to “{question}” (asked {age} ago).",
        "zh": "• 等待回答：「{question}」（{age}前提问）。",
    },
    "status_question_of": {
        "en": "• Waiting for {who} to answer “{question}” (asked {age} ago).",
        "zh": "• 等待 {who} 回答：「{question}」（{age}前提问）。",
    },
    "status_question_now": {
        "en": "• Waiting for an answer to “{question}”",
        "zh": "• 等待回答：「{question}」",
    },
    "status_no_question": {"en": "• No open question.", "zh": "• 没有待回答的问题。"},
    "status_waiting": {
        "en": "• Messages being worked on or waiting: {count}.",
        "zh": "• 正在处理或排队的消息：{count} 条。",
    },
    "status_idle": {"en": "• Nothing running or waiting.", "zh": "• 没有正在处理或排队的消息。"},
    "status_thread": {
        "en": "• This conversation started {age} ago; {new} starts a fresh one.",
        "zh": "• 本次对话开始于 {age}前；{new} 可开始新的对话。",
    },
    "status_thread_unknown_age": {
        "en": "• A conversation is going on; {new} starts a fresh one.",
        "zh": "• 对话进行中；{new} 可开始新的对话。",
    },
    "status_agent": {"en": "• Answered by: {agent} ({what}).", "zh": "• 由 {agent} 回答（{what}）。"},
    # ``{what}`` above: what the agent is (gateway/runtime/routes.py ``describe``), no URL, no secret
    "agent_server": {
        "en": "assistant {assistant} on the LangGraph server",
        "zh": "LangGraph 服务器上的助手 {assistant}",
    },
    "agent_graph": {"en": "graph {graph}", "zh": "图 {graph}"},
    "agent_model": {"en": "model {model}", "zh": "模型 {model}"},
    "status_no_thread": {
        "en": "• No conversation yet: send a message to start one.",
        "zh": "• 还没有对话：发一条消息即可开始。",
    },
    "answer_after_restart": {
        "en": "That answer was for the conversation before it was restarted, so I did not pass it on.",
        "zh": "该回答属于重新开始之前的对话，因此没有转交。",
    },
    # --- how long ago (``age_text``) ------------------------------------------------------------
    "age_day": {"en": "{count} day", "zh": "{count} 天"},
    "age_days": {"en": "{count} days", "zh": "{count} 天"},
    "age_hour": {"en": "{count} hour", "zh": "{count} 小时"},
    "age_hours": {"en": "{count} hours", "zh": "{count} 小时"},
    "age_minute": {"en": "{count} minute", "zh": "{count} 分钟"},
    "age_minutes": {"en": "{count} minutes", "zh": "{count} 分钟"},
    "age_second": {"en": "{count} second", "zh": "{count} 秒"},
    "age_seconds": {"en": "{count} seconds", "zh": "{count} 秒"},
    # --- tool approvals (agent/interrupts.py) ------------------------------------------------------
    "approve": {"en": "Approve", "zh": "批准"},
    "reject": {"en": "Reject", "zh": "拒绝"},
    "approval_question_one": {"en": "Approve running {name}?", "zh": "是否批准执行 {name}？"},
    "approval_question_many": {"en": "Approve these {n} actions?", "zh": "是否批准以下 {n} 个操作？"},
    "approval_edit_question": {"en": "Edit the arguments of {name}", "zh": "修改 {name} 的参数"},
    "approval_edit_context": {
        "en": "Each field shows the current value; change only what should change.",
        "zh": "每项显示当前值；只改需要改的。",
    },
    "approval_edit_bad_json": {
        "en": "{field}: not valid JSON ({error}). Fix it, or put back the current value.",
        "zh": "{field}：不是有效的 JSON（{error}）。请改正，或恢复为当前值。",
    },
    "approval_declined": {"en": "The person declined this action.", "zh": "用户拒绝了此操作。"},
    # What the model is told about a call nobody answered (agent/interrupts.py, history.py, takeover.py).
    "approval_superseded": {
        "en": "The person did not answer this approval: they wrote something else instead. "
        "The tool was not run; do not run it unless they ask for it again.",
        "zh": "用户没有回应这个审批，而是发送了其他消息。该工具没有执行；除非用户再次要求，否则不要执行。",
    },
    # --- a graph paused on a static breakpoint (agent/breakpoints.py) ---------------------------
    "continue": {"en": "Continue", "zh": "继续"},
    "stop": {"en": "Stop", "zh": "停止"},
    "breakpoint_question": {
        "en": "The graph paused before {steps}. Continue?",
        "zh": "流程在 {steps} 之前暂停了。是否继续？",
    },
    "breakpoint_stopped": {
        "en": "Stopped before {steps}. Write a new message to start again.",
        "zh": "已在 {steps} 之前停止。发送新消息即可重新开始。",
    },
    # --- run limits (agent/limits.py) -------------------------------------------------------------
    "limit_model_calls": {
        "en": "I stopped here: this request needed more steps than I may take in one go. "
        "Tell me how to go on, or ask for a smaller part.",
        "zh": "我先停在这里：这个请求需要的步骤超出了单次允许的上限。请告诉我如何继续，或把请求拆小一些。",
    },
    "limit_tool_calls": {
        "en": "I stopped here: this request needed more tool calls than I may make in one go. "
        "Tell me how to go on, or ask for a smaller part.",
        "zh": "我先停在这里：这个请求需要的工具调用超出了单次允许的上限。"
        "请告诉我如何继续，或把请求拆小一些。",
    },
    # --- the terminal (the console platform, adapters/console) -------------------------------------
    "chat_form_intro": {
        "en": "(one field at a time, or name: value lines; Enter skips an optional field; "
        "/cancel dismisses the form)",
        "zh": "（逐项填写，也可输入“名称: 值”；选填项直接回车即可跳过；/取消 可关闭表单）",
    },
    "chat_help": {
        "en": "Just write what you need. When I need more to go on I ask a question: type an option's "
        "number or label, or any text for an open question; a form is asked field by field. A message "
        "that is not an answer to the open question closes it and I take it as a new request.",
        "zh": "直接告诉我您需要什么。需要更多信息时我会提问：输入选项编号或名称，开放式问题直接输入答案；"
        "表单会逐项询问。不是回答当前问题的消息会关闭该问题，并作为新的请求处理。",
    },
    "chat_several": {"en": ", several allowed", "zh": "，可多选"},
    "chat_current": {"en": " (now {value}; Enter keeps it)", "zh": "（当前：{value}；回车保持不变）"},
    "chat_checkbox": {"en": " [yes/no]", "zh": " [是/否]"},
    "chat_number": {"en": " [a number]", "zh": " [数字]"},
    "chat_date": {"en": " [YYYY-MM-DD]", "zh": " [YYYY-MM-DD]"},
    "chat_banner": {
        "en": "clarigate chat: /help lists the commands, /new starts a new conversation, /quit exits.",
        "zh": "clarigate chat：/help 列出命令，/new 开始新的对话，/quit 退出。",
    },
    "chat_continuing": {
        "en": "(continuing: this question is still open)",
        "zh": "（继续：这个问题仍在等待回答）",
    },
    "chat_superseded": {
        "en": "(the open question is closed: this goes to the agent as a new request)",
        "zh": "（当前问题已关闭：这条消息作为新的请求发给助手）",
    },
    # --- Slack: a slash command typed in a channel (adapters/slack/commands.py) ---------------------
    "commands_in_thread": {
        "en": "In a channel, write to me in the conversation's thread: {new}, {cancel}, {status} or "
        "{help}. Every question also has its own Cancel button.",
        "zh": "在频道中，请在对话的话题里给我发消息：{new}、{cancel}、{status} 或 {help}。"
        "每个问题也都有自己的「取消」按钮。",
    },
}
for _part in (TELEGRAM_WORDS, SLACK_WORDS, TYPED_WORDS, FILE_WORDS, FEEDBACK_WORDS, CONFIRM_WORDS):
    WORDS.update(_part)
for _part in (CLOSED_WORDS, SHOWN_WORDS, GRAPH_WORDS, TOOL_WORDS, APPROVAL_WORDS, MODEL_WORDS, MARK_WORDS):
    WORDS.update(_part)
WORDS.update(COMMAND_WORDS)
