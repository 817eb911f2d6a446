"""One change per ``clarigate admin`` command, as deploy/README.md writes them
(``backlog [--redrive ENTRY | --drop ENTRY]``, ``consumers [--remove NAME | --prune]``): given
both, the command refuses and changes nothing, where it did the first and dropped the second
unsaid (the operator believed the job dropped while it ran)."""

from __future__ import annotations

import asyncio

import pytest

from clarigate.gateway.cli.main import main
from clarigate.gateway.store.keys import GROUP
from tests.gateway.cli.test_admin_drop import accept, entries, redis  # noqa: F401 (the Redis client)


async def test_redrive_and_drop_together_are_refused_and_nothing_changes(
    redis_stores,
    cli,  # noqa: ARG001 (REDIS_URL set, no operator variables)
    redis,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    store = redis_stores()
    first, second = await accept(redis, store, "i-1"), await accept(redis, store, "i-2")
    await redis.xgroup_create(store.keys.jobs, GROUP, id="0")
    monkeypatch.setenv("CLARIGATE_BOT_ID", store.prefix)
    with pytest.raises(SystemExit) as refused:
        await asyncio.to_thread(main, ["admin", "backlog", "--redrive", first, "--drop", second, "--yes"])
    assert refused.value.code == 2
    assert "argument --drop: not allowed with argument --redrive" in capsys.readouterr().err
    assert await entries(redis, store) == [first, second] and not await store.is_done("i-2")


def test_remove_and_prune_together_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as refused:
        main(["admin", "consumers", "--remove", "vm-1-dead", "--prune"])
    assert refused.value.code == 2
    assert "argument --prune: not allowed with argument --remove" in capsys.readouterr().err
