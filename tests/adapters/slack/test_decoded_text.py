"""Text people type reaches the core as they typed it; what goes back out is escaped once.

Slack's encoding (https://api.slack.com/reference/surfaces/formatting#escaping):
``&``, ``<``, ``>`` as entities, links and mentions as ``<…>`` sequences.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from clarigate.adapters.slack.decode import decode_text
from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request

from .conftest import MakeWorld


def encode_typed(text: str) -> str:
    """What Slack sends for ``text`` typed without links or mentions: ``&``, ``<``, ``>`` escaped."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


@given(st.text())
def test_decoding_what_slack_sends_gives_back_what_was_typed(typed: str):
    assert decode_text(encode_typed(typed)) == typed


_words = st.text(alphabet=st.characters(blacklist_characters="|"), max_size=20)
_urls = st.from_regex(r"https://[a-z]{1,10}\.example/[a-z0-9&=?]{0,10}", fullmatch=True)


@given(st.lists(st.tuples(_words, _urls, _words), max_size=4))
def test_links_in_any_text_become_their_label_and_url(pieces: list[tuple[str, str, str]]):
    slack = "".join(f"{encode_typed(a)}<{encode_typed(url)}|{encode_typed(lab)}>" for a, url, lab in pieces)
    shown = {(url, lab): url if lab in ("", url) else f"{lab} ({url})" for _, url, lab in pieces}
    expected = "".join(f"{a}{shown[url, lab]}" for a, url, lab in pieces)
    assert decode_text(slack) == expected


def test_every_kind_of_slack_sequence_is_spelled_out():
    names = {"U123ABC": "alice"}
    assert decode_text("R&amp;D &lt;b&gt; &amp;lt;", names) == "R&D <b> &lt;"
    people = "ask <@U123ABC> or <@U999ZZZ> or <@W42|bob>"
    assert decode_text(people, names) == "ask @alice or @U999ZZZ or @bob"
    assert decode_text("in <#C01|general> and <#C02>") == "in #general and #C02"
    assert decode_text("<!here> <!channel> <!subteam^S1|@oncall>") == "@here @channel @oncall"
    assert decode_text("<!date^1392734382^{date}|Feb 18, 2014>") == "Feb 18, 2014"
    assert decode_text("see <https://x.example/a?b=1&amp;c=2>") == "see https://x.example/a?b=1&c=2"
    assert decode_text("<http://example.com|example.com>") == "example.com"  # linked by Slack itself
    assert decode_text("<https://x.example|the docs>") == "the docs (https://x.example)"
    assert decode_text("<mailto:a@b.example|a@b.example>") == "a@b.example"
    assert decode_text("<#C02|> <@U1|> <https://x.example|>") == "#C02 @U1 https://x.example"  # empty labels


def asks_department(turn: Turn):
    """Asks which department, then echoes."""
    if turn.response is None:
        return asking(choice_request("Which department?", ["R&D", "Sales <EU>"]))
    return ScriptedRunner().script(turn)


async def test_a_typed_label_with_an_ampersand_picks_its_option_and_is_escaped_once(make_world: MakeWorld):
    runner = ScriptedRunner(asks_department)
    world = await make_world(runner)
    await world.user.dm("file a ticket")
    await world.settle()
    question = world.fake.posted()

    await world.user.dm("r&amp;d")  # what Slack sends when "r&d" is typed
    await world.settle()

    assert [c.response.option_id for c in runner.calls if c.response] == ["option-1"]
    closed = world.fake.edits(question["ts"])[-1]
    assert "R&amp;D" in str(closed["blocks"]) and "&amp;amp;" not in str(closed["blocks"])


async def test_the_agent_reads_links_and_people_by_name(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)
    world.fake.add_user("U0ALICE", display_name="Alice", real_name="Alice Liddell")
    world.fake.add_user("U0BOB", real_name="Bob Builder")

    link = "<https://x.example/q?a=1&amp;b=2|the doc>"
    await world.user.dm(f"ask <@U0ALICE> and <@U0BOB> about {link} in <#C9|ops>")
    await world.user.dm("and <@U0GONE>")  # users.info: user_not_found
    await world.settle()

    assert [c.text for c in runner.calls] == [
        "ask @Alice and @Bob Builder about the doc (https://x.example/q?a=1&b=2) in #ops",
        "and @U0GONE",
    ]
    await world.user.dm("<@U0ALICE>, <@U0GONE>?")
    await world.settle()
    assert runner.calls[-1].text == "@Alice, @U0GONE?"
    asked = sorted(world.fake.people_asked())
    assert asked == ["U0ALICE", "U0BOB", "U0GONE", "U1"]  # each once (U1 wrote), then from the cache


async def test_the_agent_reads_a_user_group_by_its_handle(make_world: MakeWorld):
    # docs.slack.dev/messaging/formatting-message-text: <!subteam^ID>, older ones with a label after |
    runner = ScriptedRunner()
    world = await make_world(runner)
    world.fake.add_usergroup("S0614TZR7", handle="oncall", name="On-call engineers")
    await world.user.dm("ping <!subteam^S0614TZR7|@oncall> about the outage")
    await world.user.dm("ping <!subteam^S0614TZR7> about the outage")  # the handle: usergroups.list
    await world.settle()
    await world.user.dm("and <!subteam^S0614TZR7>, <!subteam^S0GONE>")  # known now; no such group
    await world.settle()
    assert [c.text for c in runner.calls] == [
        "ping @oncall about the outage",
        "ping @oncall about the outage",
        "and @oncall, @S0GONE",  # the group's id, stable, where Slack names no handle
    ]
    assert len(world.fake.attempts("usergroups.list")) == 2  # once a group, then from the cache


async def test_one_usergroups_list_names_every_group_a_message_mentions(make_world: MakeWorld):
    # usergroups.list (Tier 2, ~20 a minute) answers every group at once: one call, not one a group
    runner = ScriptedRunner()
    world = await make_world(runner)
    world.fake.add_usergroup("S0614TZR7", handle="oncall", name="On-call engineers")
    world.fake.add_usergroup("S0DESIGN1", handle="design", name="Design")
    world.fake.add_usergroup("S0SUPPORT", handle="support", name="Support")
    world.fake.add_usergroup("S0LEGAL01", handle="legal", name="Legal")
    await world.user.dm("ask <!subteam^S0614TZR7>, <!subteam^S0DESIGN1> and <!subteam^S0SUPPORT>")
    await world.settle()
    await world.user.dm("and <!subteam^S0LEGAL01> too")  # listed by that same call
    await world.settle()
    assert [c.text for c in runner.calls] == ["ask @oncall, @design and @support", "and @legal too"]
    assert len(world.fake.attempts("usergroups.list")) == 1


async def test_without_usergroups_read_a_user_group_is_its_id(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)
    world.fake.add_usergroup("S0614TZR7", handle="oncall", name="On-call engineers")
    world.fake.missing_scopes.add("usergroups:read")
    await world.user.dm("ping <!subteam^S0614TZR7> about the outage")
    await world.settle()
    assert [c.text for c in runner.calls] == ["ping @S0614TZR7 about the outage"]  # not "@subteam"


async def test_a_mention_in_a_channel_reaches_the_agent_decoded(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)
    await world.user.mention("compare A &amp; B &gt; C")
    await world.settle()
    assert [c.text for c in runner.calls] == ["compare A & B > C"]


async def test_a_mention_mid_sentence_leaves_the_sentence_whole(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)
    await world.user.event(
        {
            "type": "app_mention",
            "channel": "C1",
            "user": "U1",
            "text": "ask <@U0BOT> to deploy, <@U0BOT>",
            "ts": "1.2",
        }
    )
    await world.settle()
    assert [c.text for c in runner.calls] == ["ask to deploy,"]


async def test_a_me_message_is_read_as_text(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)
    await world.user.dm("waves &amp; asks for the report", subtype="me_message")  # "/me waves & asks…"
    await world.settle()
    assert [c.text for c in runner.calls] == ["waves & asks for the report"]


async def test_names_are_asked_for_after_the_ack(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)
    world.fake.add_user("U0ALICE", display_name="Alice")
    release = world.fake.hold("users.info")  # Slack is slow to say who U0ALICE is

    response, _ = await world.user.dm("ask <@U0ALICE>")
    assert response.status_code == 200  # acked while users.info is still unanswered
    assert not runner.calls
    release.set()
    await world.settle()

    assert [c.text for c in runner.calls] == ["ask @Alice"]  # the agent reads the name all the same
    assert sorted(world.fake.people_asked()) == ["U0ALICE", "U1"]  # and who wrote it


async def test_a_channel_sent_without_its_name_is_named_once_after_the_ack(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)
    world.fake.add_channel("C0123ABC", "general")

    await world.user.dm("post it in <#C0123ABC|>")  # as Slack now sends a channel mention
    await world.settle()
    await world.user.dm("and <#C0123ABC> too")  # no label at all
    await world.settle()

    assert [c.text for c in runner.calls] == ["post it in #general", "and #general too"]
    assert len(world.fake.attempts("conversations.info")) == 1  # the second is named from the cache


async def test_without_channels_read_the_channel_id_stands_and_the_reply_comes(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)
    world.fake.add_channel("C0123ABC", "general")
    world.fake.missing_scopes.add("channels:read")  # the app was installed before it asked for it

    await world.user.dm("post it in <#C0123ABC|>")
    await world.settle()

    assert [c.text for c in runner.calls] == ["post it in #C0123ABC"]
    assert world.fake.posted()["text"]  # the reply comes all the same


async def test_a_private_channel_without_groups_read_keeps_its_id_a_public_one_is_named(
    make_world: MakeWorld,
):
    runner = ScriptedRunner()
    world = await make_world(runner)
    world.fake.add_channel("C0123ABC", "general")
    world.fake.add_channel("G0SECRET1", "plans", private=True)
    world.fake.missing_scopes.add("groups:read")

    await world.user.dm("from <#G0SECRET1|> to <#C0123ABC|>")
    await world.settle()

    assert [c.text for c in runner.calls] == ["from #G0SECRET1 to #general"]


def test_a_channel_without_its_name_is_named_from_the_names_given():
    assert decode_text("in <#C02|> and <#C03>", {"C02": "ops"}) == "in #ops and #C03"
