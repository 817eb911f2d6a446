"""Forms as a step-by-step wizard in one message, through the real gateway."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, form_request
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import FormField, Option
from clarigate.gateway.boundary.messages import InboundAnswer, Sender

from .conftest import redis_store
from .harness import BOB, GROUP, bot_message, callback_update, mention_update, message_update, open_bench


def opts(name: str, *labels: str) -> list[Option]:
    return [Option(id=f"{name}-option-{i}", label=label, value=label) for i, label in enumerate(labels, 1)]


FORM = form_request(
    "Set up the deployment",
    [
        FormField(
            name="framework",
            label="Framework",
            type="select",
            required=True,
            options=opts("framework", "React", "Vue"),
        ),
        FormField(
            name="features",
            label="Features",
            type="multi_select",
            options=opts("features", "Auth", "Cache", "Queue"),
        ),
        FormField(name="init_git", label="Init git", type="checkbox"),
        FormField(name="replicas", label="Replicas", type="number", required=True),
        FormField(name="deadline", label="Deadline", type="date", required=True),
        FormField(name="notes", label="Notes", type="text"),
    ],
    request_id="clarification:form-1",
)


def script(turn: Turn) -> TurnOutput:
    if turn.response is None and turn.text == "deploy":
        return asking(FORM)
    if turn.response is None:
        return TurnOutput(replies=[f"You said: {turn.text}"])
    return TurnOutput(replies=[f"Configured: {turn.response.values}"])


class Wizard:
    """Taps and typing on the form message, reading back what Telegram would show."""

    def __init__(self, tg, message_id: int = 1000) -> None:
        self.tg = tg
        self.message_id = message_id
        fill_in = next(c for c in tg.api.of("sendMessage") if c.markup).buttons[0][0]
        self.token = fill_in["callback_data"].split("|")[0]

    async def tap(self, action: str) -> None:
        await self.tg.deliver(callback_update(f"{self.token}|{action}", self.message_id))

    async def type(self, text: str) -> None:
        await self.tg.deliver(message_update(text))

    @property
    def shown(self):
        return self.tg.api.of("editMessageText")[-1]

    @property
    def labels(self) -> list[str]:
        return [b["text"] for row in self.shown.buttons for b in row]


async def test_full_form_wizard(bench):
    runner = ScriptedRunner(script)
    tg = await bench(runner)
    await tg.deliver(message_update("deploy"))
    fill_in = next(c for c in tg.api.of("sendMessage") if c.markup)
    assert [b["text"] for row in fill_in.buttons for b in row] == ["📝 Fill in", "✖ Cancel"]

    w = Wizard(tg)
    await w.tap("form")
    assert "1/6 · Framework" in w.shown.params["text"] and w.labels[:2] == ["React", "Vue"]
    assert "Skip ▶" not in w.labels  # required

    await w.tap("s2")
    assert "2/6 · Features" in w.shown.params["text"]
    await w.tap("t1")
    await w.tap("t3")
    await w.tap("t1")
    assert w.labels[:3] == ["Auth", "Cache", "✓ Queue"] and "Done ✔" in w.labels
    await w.tap("d")

    assert "3/6 · Init git" in w.shown.params["text"]
    await w.tap("y")

    assert "4/6 · Replicas" in w.shown.params["text"]
    await w.type("lots")
    assert "4/6 · Replicas" in w.shown.params["text"] and "⚠️ Enter a number" in w.shown.params["text"]
    await w.type("3")

    assert "5/6 · Deadline" in w.shown.params["text"]
    await w.type("2026-12-01")
    assert "6/6 · Notes" in w.shown.params["text"] and "Skip ▶" in w.labels
    await w.tap("b")
    assert "5/6 · Deadline" in w.shown.params["text"] and "→ 2026-12-01" in w.shown.params["text"]
    await w.type("2026-12-02")
    await w.tap("k")

    summary = w.shown.params["text"]
    assert "Please check your answers:" in summary
    for line in (
        "Framework: Vue",
        "Features: Queue",
        "Init git: Yes",
        "Replicas: 3",
        "Deadline: 2026-12-02",
        "Notes: —",
    ):
        assert line in summary
    assert w.labels == ["✅ Submit", "✏️ Edit", "◀ Back", "✖ Cancel"]
    assert runner.calls[-1].response is None  # nothing submitted yet

    await w.tap("S")
    response = runner.calls[-1].response
    assert response is not None and response.response_kind == "form"
    assert response.values == {
        "framework": "Vue",
        "features": ["Queue"],
        "init_git": True,
        "replicas": 3,
        "deadline": "2026-12-02",
    }
    assert "✅ Answered by Alice" in w.shown.params["text"] and "reply_markup" not in w.shown.params
    assert tg.api.of("sendMessage")[-1].params["text"].startswith("Configured:")

    # The wizard is over: typing goes to the agent again, a stale tap changes nothing.
    await w.type("thanks")
    assert runner.calls[-1].text == "thanks"
    edits = len(tg.api.of("editMessageText"))
    await w.tap("S")
    assert len(tg.api.of("editMessageText")) == edits
    assert tg.api.of("answerCallbackQuery")[-1].params["text"] == "You already answered this question."


async def test_edit_from_summary_and_required_fields_cannot_be_skipped(bench):
    tg = await bench(ScriptedRunner(script))
    await tg.deliver(message_update("deploy"))
    w = Wizard(tg)
    await w.tap("form")
    await w.tap("k")
    assert "1/6" in w.shown.params["text"] and "⚠️ Framework: required" in w.shown.params["text"]
    assert tg.api.of("answerCallbackQuery")[-1].params["text"] == "Framework: required"


async def test_wizard_continues_after_a_gateway_restart(bot_api, redis_prefix):
    runner = ScriptedRunner(script)
    store = redis_store(redis_prefix)
    first = await open_bench(bot_api, store, runner)
    await first.deliver(message_update("deploy"))
    w = Wizard(first)
    await w.tap("form")
    await w.tap("s1")
    await w.tap("t2")
    await first.close()
    await store.close()

    store = redis_store(redis_prefix)
    second = await open_bench(bot_api, store, runner)
    try:
        w.tg = second
        await w.tap("d")
        assert "3/6 · Init git" in w.shown.params["text"]
        await w.tap("n")
        await w.type("2")
        await w.type("2027-01-31")
        await w.type("ship it")
        await w.tap("S")
        assert runner.calls[-1].response.values == {
            "framework": "React",
            "features": ["Cache"],
            "init_git": False,
            "replicas": 2,
            "deadline": "2027-01-31",
            "notes": "ship it",
        }
    finally:
        await second.close()
        await store.close()


async def test_a_stale_wizard_tap_after_the_question_was_answered_changes_nothing(bench):
    runner = ScriptedRunner(script)
    tg = await bench(runner)
    await tg.deliver(message_update("deploy"))
    w = Wizard(tg)
    await w.tap("form")
    # Answered meanwhile another way (here: straight through the gateway, as a typed
    # reply on another replica would), then the message is closed.
    values = {"framework": "Vue", "replicas": "3", "deadline": "2026-01-01"}
    answer = InboundAnswer(sender=Sender(user_id="111", display_name="Alice"), event_id="x", token=w.token)
    outcome = await tg.gateway.submit_answer(answer.model_copy(update={"values": values}))
    assert outcome.accepted and runner.calls[-1].response is None
    await tg.gateway.drain()
    assert runner.calls[-1].response.values["framework"] == "Vue"

    edits = len(tg.api.of("editMessageText"))
    await w.tap("s1")  # a tap the phone sent before it saw the question answered
    assert len(tg.api.of("editMessageText")) == edits  # the wizard does not come back
    notice = tg.api.of("answerCallbackQuery")[-1].params
    assert notice["text"] == "You already answered this question." and notice["show_alert"] == "true"


async def test_redelivered_taps_and_messages_are_applied_once_even_after_other_input(bench):
    tg = await bench(ScriptedRunner(script))
    await tg.deliver(message_update("deploy"))
    w = Wizard(tg)
    await w.tap("form")
    await w.tap("s1")
    auth = callback_update(f"{w.token}|t1", w.message_id)
    await tg.deliver(auth)
    await w.tap("t2")
    await tg.deliver(auth)  # Telegram delivers the first toggle again (its 200 was lost)
    assert w.labels[:3] == ["✓ Auth", "✓ Cache", "Queue"]
    await w.tap("d")
    await w.tap("n")
    replicas = message_update("3")
    await tg.deliver(replicas)
    await w.type("2026-12-01")
    await tg.deliver(replicas)  # "3" again must not be taken as the notes
    await w.tap("k")
    assert "Notes: —" in w.shown.params["text"] and "Replicas: 3" in w.shown.params["text"]


async def test_in_a_forum_topic_the_wizard_takes_replies_to_it_only(bench):
    runner = ScriptedRunner(script)
    tg = await bench(runner)
    await tg.deliver(mention_update("deploy", thread_id=77))
    w = Wizard(tg)

    async def tap(action: str) -> None:
        await tg.deliver(callback_update(f"{w.token}|{action}", w.message_id, chat=GROUP, thread_id=77))

    await tap("form")
    await tap("s1")
    await tap("d")
    await tap("y")
    assert "4/6 · Replicas" in w.shown.params["text"]
    await tg.deliver(message_update("3", chat=GROUP, thread_id=77))  # not a reply: talk in the topic
    assert "4/6 · Replicas" in w.shown.params["text"]
    form = bot_message(w.message_id, GROUP)
    await tg.deliver(message_update("3", chat=GROUP, thread_id=77, reply_to=form))
    assert "5/6 · Deadline" in w.shown.params["text"]
    await tg.deliver(mention_update("status of the build?", thread_id=78))  # another topic
    assert "5/6 · Deadline" in w.shown.params["text"]
    assert [c.text for c in runner.calls] == ["deploy", "status of the build?"]
    assert all("required" not in c.params["text"] for c in tg.api.of("sendMessage"))


async def test_a_choice_step_also_takes_a_typed_answer_and_commands_pass_the_wizard(bench):
    runner = ScriptedRunner(script)
    tg = await bench(runner)
    await tg.deliver(message_update("deploy"))
    w = Wizard(tg)
    await w.tap("form")
    await w.type("Svelte")
    assert "1/6 · Framework" in w.shown.params["text"]
    assert "⚠️ Choose one of: React, Vue" in w.shown.params["text"]
    await w.type("vue")
    assert "2/6 · Features" in w.shown.params["text"]
    await w.type("auth, queue")
    assert "3/6 · Init git" in w.shown.params["text"]
    await w.type("no")
    assert "4/6 · Replicas" in w.shown.params["text"]

    await w.tap("b")
    assert "→ No" in w.shown.params["text"]
    await w.tap("b")
    assert w.labels[:3] == ["✓ Auth", "Cache", "✓ Queue"]

    edits, sends = len(tg.api.of("editMessageText")), len(tg.api.of("sendMessage"))
    command = message_update("/new", entities=[{"type": "bot_command", "offset": 0, "length": 4}])
    await tg.deliver(command)  # a command is for the gateway, never a field value
    assert tg.api.of("sendMessage")[sends:][-1].params["text"].startswith("Started a new conversation")
    # /new closes the open form for everyone (its message ends as closed), and nothing was answered
    assert len(tg.api.of("editMessageText")) > edits
    assert "✖ Closed: " in tg.api.of("editMessageText")[-1].params["text"]
    assert [c.response for c in runner.calls] == [None]

    await w.type("auth")  # typing is no longer a form value: it is a new message
    assert [c.text for c in runner.calls][-1] == "auth"


async def test_someone_else_cannot_open_or_drive_the_askers_form(bench):
    runner = ScriptedRunner(script)
    tg = await bench(runner)  # the default policy: only the person who asked answers
    await tg.deliver(mention_update("deploy"))
    w = Wizard(tg)
    await tg.deliver(callback_update(f"{w.token}|form", w.message_id, chat=GROUP))
    opened = len(tg.api.of("editMessageText"))
    for action in ("form", "s1", "S"):
        await tg.deliver(callback_update(f"{w.token}|{action}", w.message_id, user=BOB, chat=GROUP))
        notice = tg.api.of("answerCallbackQuery")[-1].params
        assert notice["text"] == "Only Alice can answer this question." and notice["show_alert"] == "true"
    assert len(tg.api.of("editMessageText")) == opened and "1/6 · Framework" in w.shown.params["text"]
    assert [c.response for c in runner.calls] == [None]
