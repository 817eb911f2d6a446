"""An album (photos sent together: one update per item, one ``media_group_id``) sent at a step of the
step-by-step form: its caption fills no step, even one that is the step's value; the album is a new
message, as a file sent alone is, and the person is told once that their form closed without its
values being sent, and how to send a file with a step's value."""

from __future__ import annotations

from .test_albums import PNG, album, post_all
from .test_wizard_files import DROPPED, at_replicas

ALBUM = "photos or files sent together (an album) are a new message"


async def test_an_album_at_a_step_is_a_new_message_and_says_the_form_closed_once(bench):
    runner, tg, w = await at_replicas(bench)
    for n in range(2):
        tg.api.add_file(f"9101-{n}", PNG)
    tg.new_calls()
    await post_all(tg, album("9101", 2, "3"))  # captioned with a value the step takes

    request = runner.calls[-1]
    assert request.response is None and len(request.images) == 2  # a new message, every photo
    said = [c.params["text"] for c in tg.new_calls() if c.method == "sendMessage"]
    notes = [text for text in said if DROPPED in text]
    assert len(notes) == 1 and ALBUM in notes[0], said
    # the form takes no more values: typing goes to the agent
    await w.type("3")
    assert runner.calls[-1].text == "3" and runner.calls[-1].response is None
