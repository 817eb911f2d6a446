"""A served bot's metrics, on their own port, moving through one whole message; health that can fail."""

from __future__ import annotations

import httpx

from tests.deploy.test_sigterm import REPLY_KINDS, bot, free_port, records, wait_until  # noqa: F401 (fixture)
from tests.gateway.web.test_server import parse_metrics


def test_metrics_move_through_a_message_and_carry_the_bot_label(bot):  # noqa: F811
    prefix, sent, launch = bot
    metrics_port = free_port()
    proc, url = launch(CLARIGATE_METRICS_PORT=str(metrics_port))
    scrape = f"http://127.0.0.1:{metrics_port}/metrics"
    before = parse_metrics(httpx.get(scrape).text, bot=prefix)

    said = httpx.post(f"{url}/test/say", json={"chat": "c1", "text": "hello", "event_id": "m1"})
    assert said.json() == {"outcome": "accepted"}
    wait_until(lambda: [r for r in records(sent) if r["kind"] in REPLY_KINDS], 30, "the reply")
    after = parse_metrics(httpx.get(scrape).text, bot=prefix)

    def grew(name: str) -> float:
        return after.get(name, 0.0) - before.get(name, 0.0)

    assert grew('clarigate_runs_total{state="finished"}') == 1
    assert grew("clarigate_receive_to_reply_seconds_count") == 1
    assert grew('clarigate_http_responses_total{route="/test/say",status="200"}') == 1
    assert grew('clarigate_http_request_seconds_count{route="/test/say"}') == 1
    for gauge in (
        "clarigate_stream_backlog",
        "clarigate_stream_oldest_age_seconds",
        "clarigate_jobs_in_flight",
        'clarigate_pending_clarifications{age="gt_1d"}',
        'clarigate_worker_loop_up{loop="read-jobs"}',
    ):
        assert gauge in after, gauge
    assert after['clarigate_worker_loop_up{loop="read-jobs"}'] == 1
    assert httpx.get(f"{url}/metrics").status_code == 404  # on its own port only
    assert httpx.get(f"{url}/healthz").json() == {"status": "ok"}
