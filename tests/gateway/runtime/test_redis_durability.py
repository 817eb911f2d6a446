"""At start, ``serve`` says in one line when Redis' persistence can lose the marks of replies
already sent (``CONFIG GET appendonly/appendfsync``), and once when it may not read them (ACL).

Against Redis servers of the test's own on free ports (skipped without a redis-server binary).
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from redis.asyncio import Redis

from clarigate.gateway.runtime.preflight import wait_for_redis
from tests.deploy.test_references import REPO, cited_sections, sections

from ..store.test_store_connection import free_port, listening, plain, redis_server

LOGGER = "clarigate.gateway.runtime.serve"


async def started_with(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    *extra: str,
    url: str = "redis://127.0.0.1:{port}/0",
    acl: str = "",
) -> list:
    """The lines about persistence when the store check meets a Redis started with ``extra``
    (and the ACL user ``acl`` made on it)."""
    port = free_port()
    args = plain(port, tmp_path, *extra)
    with redis_server(args, lambda: listening(port)):
        if acl:
            admin = Redis(port=port)
            await admin.execute_command("ACL", "SETUSER", *acl.split())
            await admin.aclose()
        caplog.clear()
        with caplog.at_level(logging.INFO, logger=LOGGER):
            await wait_for_redis(url.format(port=port), 5, durability=True)
    return [r for r in caplog.records if r.name == LOGGER and "append" in r.getMessage()]


async def test_no_append_only_file_is_a_warning(tmp_path, caplog):
    (line,) = await started_with(tmp_path, caplog)  # plain(): --appendonly no
    assert line.levelno == logging.WARNING
    assert "appendonly no" in line.getMessage() and "Telegram" in line.getMessage()


async def test_the_warning_sends_the_operator_to_a_section_that_exists(tmp_path, caplog):
    (line,) = await started_with(tmp_path, caplog)
    ((document, section),) = cited_sections(line.getMessage())
    assert document == "deploy/README.md" and section == "Redis settings delivery needs"
    assert section in sections(REPO / document)


async def test_everysec_says_what_it_leaves(tmp_path, caplog):
    (line,) = await started_with(tmp_path, caplog, "--appendonly", "yes", "--appendfsync", "everysec")
    assert line.levelno == logging.INFO
    assert "last second" in line.getMessage()


async def test_appendfsync_no_is_a_warning(tmp_path, caplog):
    (line,) = await started_with(tmp_path, caplog, "--appendonly", "yes", "--appendfsync", "no")
    assert line.levelno == logging.WARNING


async def test_always_says_nothing(tmp_path, caplog):
    assert await started_with(tmp_path, caplog, "--appendonly", "yes", "--appendfsync", "always") == []


async def test_config_refused_by_an_acl_is_said_once_and_the_start_goes_on(tmp_path, caplog):
    url = "redis://gw:pw@127.0.0.1:{port}/0"
    (line,) = await started_with(tmp_path, caplog, url=url, acl="gw on >pw ~* &* +@all -config")
    assert line.levelno == logging.INFO
    assert "cannot be read" in line.getMessage() and "appendonly yes" in line.getMessage()
