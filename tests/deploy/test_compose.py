"""deploy/compose.yaml: clarigate, Redis with persistence and PostgreSQL on one machine, started in order."""

from __future__ import annotations

import contextlib
import json
import re
import shlex
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import redis
import yaml
from redis.backoff import NoBackoff
from redis.retry import Retry

from clarigate.gateway.runtime.config import ENV_NAMES, SECRET_FIELDS
from tests.deploy.k8s_objects import DEPLOY, K8S, env_file_keys, load_docs

COMPOSE_TEXT = (DEPLOY / "compose.yaml").read_text()
COMPOSE: dict[str, Any] = yaml.safe_load(COMPOSE_TEXT)
SERVICES: dict[str, Any] = COMPOSE["services"]
ENV_EXAMPLE = env_file_keys(DEPLOY / ".env.example")


def environment(service: str) -> dict[str, str]:
    """A service's ``environment`` as a mapping (compose allows a list of KEY=value too)."""
    env = SERVICES[service].get("environment", {})
    return dict(item.split("=", 1) for item in env) if isinstance(env, list) else env


def interpolate(value: str) -> str:
    """Substitute ``${NAME…}`` from .env.example, as compose does with the operator's .env."""
    return re.sub(r"\$\{(\w+)[^}]*\}", lambda m: ENV_EXAMPLE[m.group(1)], value)


def compose_client() -> list[str] | None:
    """``docker compose`` (v2 plugin) or ``docker-compose`` (v1), whichever answers."""
    if shutil.which("docker"):
        probe = subprocess.run(["docker", "compose", "version"], capture_output=True, timeout=30)
        if probe.returncode == 0:
            return ["docker", "compose"]
    return ["docker-compose"] if shutil.which("docker-compose") else None


def test_three_services_restart_and_report_health() -> None:
    assert {n for n, s in SERVICES.items() if not s.get("profiles")} == {"clarigate", "redis", "postgres"}
    for name, service in SERVICES.items():
        assert service["restart"] in ("always", "unless-stopped"), name
        assert service["healthcheck"]["test"][0] in ("CMD", "CMD-SHELL"), name


def test_the_langgraph_profile_serves_the_example_graph_from_the_clarigate_image() -> None:
    service = SERVICES["langgraph"]
    assert service["profiles"] == ["langgraph"]  # off unless asked for
    dockerfile = (DEPLOY / "langgraph" / "Dockerfile").read_text()
    assert "FROM clarigate:0.1.0" in dockerfile and "langgraph-cli[inmem]" in dockerfile
    config = json.loads((DEPLOY / "langgraph" / "langgraph.json").read_text())
    assert config["graphs"] == {"agent": "clarigate.agent.server_graph:graph"}
    assert "LANGGRAPH_URL=http://langgraph:2024" in (DEPLOY / ".env.example").read_text()


def _exec_form(dockerfile: str, instruction: str) -> list[str] | None:
    """The last ``ENTRYPOINT`` or ``CMD`` of a Dockerfile in exec form (a JSON list), or None."""
    joined = dockerfile.replace("\\\n", " ")
    found = re.findall(rf"^{instruction}\s+(\[.*\])\s*$", joined, flags=re.MULTILINE)
    return json.loads(found[-1]) if found else None


def test_the_langgraph_image_runs_langgraph_not_the_clarigate_entrypoint_it_inherits() -> None:
    # a child image keeps its base's ENTRYPOINT (["clarigate"]) unless it sets its own: a CMD of
    # ["langgraph", "dev", …] alone would run `clarigate langgraph dev …`, which exits 2
    child = (DEPLOY / "langgraph" / "Dockerfile").read_text()
    base = _exec_form((DEPLOY / "Dockerfile").read_text(), "ENTRYPOINT")
    entrypoint = _exec_form(child, "ENTRYPOINT")
    command = (base if entrypoint is None else entrypoint) + (_exec_form(child, "CMD") or [])
    assert command[:2] == ["langgraph", "dev"], command
    assert "--config" in command and "/opt/clarigate/langgraph/langgraph.json" in command


def test_clarigate_starts_only_after_its_stores_are_healthy() -> None:
    depends = SERVICES["clarigate"]["depends_on"]
    assert depends == {
        "redis": {"condition": "service_healthy"},
        "postgres": {"condition": "service_healthy"},
    }


def redis_script() -> str:
    """The shell line compose runs for Redis (``sh -c …``)."""
    command = SERVICES["redis"]["command"]
    assert command[:2] == ["sh", "-c"]
    return str(command[2])


def redis_flags() -> list[str]:
    """The redis-server flags after its config file, as the shell would split them."""
    words = shlex.split(redis_script().rsplit("exec docker-entrypoint.sh redis-server", 1)[1])
    assert words[0] == "/tmp/redis-auth.conf"
    return words[1:]


def test_the_redis_password_is_never_on_a_command_line() -> None:
    script = redis_script()
    assert "--requirepass" not in script and "${REDIS_PASSWORD" not in script
    assert 'printf \'requirepass "%s"\\n\' "$$REDIS_PASSWORD" > /tmp/redis-auth.conf' in script
    assert "umask 077" in script.split("printf")[0], "the file is readable by its owner only"
    assert environment("redis")["REDIS_PASSWORD"].startswith("${REDIS_PASSWORD")


def test_redis_keeps_its_data_and_never_evicts_state() -> None:
    command = redis_flags()
    flags = dict(zip(command[0::2], command[1::2], strict=False))
    assert flags["--appendonly"] == "yes"
    assert flags["--maxmemory-policy"] == "noeviction"
    limit = redis_bytes(SERVICES["redis"]["mem_limit"].replace("m", "mb"))
    assert 0 < redis_bytes(flags["--maxmemory"]) <= 0.75 * limit, "maxmemory under the memory limit"
    assert any(v.endswith(":/data") for v in SERVICES["redis"]["volumes"])
    assert any(v.endswith(":/var/lib/postgresql/data") for v in SERVICES["postgres"]["volumes"])
    named = {
        v.split(":")[0] for s in SERVICES.values() for v in s.get("volumes", []) if not v.startswith(".")
    }
    assert named <= set(COMPOSE["volumes"]), "named volumes survive `docker compose down`"


def test_postgres_counts_as_healthy_only_once_it_takes_tcp_connections() -> None:
    """The image's first-start initialisation runs a socket-only server: a socket check passes too early."""
    k8s = load_docs(K8S / "stores" / "postgres.yaml")[1]["spec"]["template"]["spec"]["containers"][0]
    for check in (SERVICES["postgres"]["healthcheck"]["test"], k8s["readinessProbe"]["exec"]["command"]):
        assert "pg_isready" in check
        assert any(re.fullmatch(r"--host=(127\.0\.0\.1|localhost)", part) for part in check), check


def test_clarigate_reaches_the_stores_by_service_name() -> None:
    env = {key: interpolate(value) for key, value in environment("clarigate").items()}
    redis, postgres = urlsplit(env["REDIS_URL"]), urlsplit(env["CHECKPOINTER_URL"])
    assert (redis.hostname, redis.password) == ("redis", ENV_EXAMPLE["REDIS_PASSWORD"])
    assert postgres.hostname == "postgres"
    pg = environment("postgres")
    assert (postgres.username, postgres.password) == (pg["POSTGRES_USER"], ENV_EXAMPLE["POSTGRES_PASSWORD"])
    assert postgres.path.lstrip("/") == pg["POSTGRES_DB"]


def test_secrets_come_from_the_env_file_which_names_every_secret() -> None:
    assert SERVICES["clarigate"]["env_file"] in (".env", [".env"])
    for name in re.findall(r"\$\{(\w+)", COMPOSE_TEXT):
        assert name in ENV_EXAMPLE, f"compose.yaml uses ${{{name}}}, which .env.example does not define"
    secrets = {
        env for env, (section, field) in ENV_NAMES.items() if field in SECRET_FIELDS.get(section or "", ())
    }
    assert secrets <= set(ENV_EXAMPLE), f".env.example lacks {sorted(secrets - set(ENV_EXAMPLE))}"


def test_published_port_comes_from_the_env_file_and_stays_on_loopback() -> None:
    """Several copies of deploy/ on one machine differ by their .env alone (README, many bots)."""
    (published,) = SERVICES["clarigate"]["ports"]
    host, _, rest = published.partition(":")
    assert host == "127.0.0.1", "webhooks reach clarigate through a TLS proxy, not directly"
    host_port, _, container_port = rest.rpartition(":")
    assert re.fullmatch(r"\$\{(\w+)(:-\d+)?\}", host_port), f"{host_port} is not set from .env"
    assert container_port == environment("clarigate")["PORT"]
    assert interpolate(host_port).isdigit()


def test_the_data_directory_is_a_named_volume() -> None:
    """The image's data directory (SQLite checkpoints when CHECKPOINTER_URL is unset) survives a recreate."""
    env = " ".join(line for line in (DEPLOY / "Dockerfile").read_text().splitlines() if "=" in line)
    data_dir = environment("clarigate").get("CLARIGATE_DATA_DIR") or re.search(
        r"CLARIGATE_DATA_DIR=(\S+)", env
    ).group(1)  # type: ignore[union-attr]
    mounted = {v.split(":")[1]: v.split(":")[0] for v in SERVICES["clarigate"]["volumes"]}
    assert mounted.get(data_dir) in COMPOSE["volumes"], f"{data_dir} is not on a named volume"


def test_bot_config_mount_and_shutdown_window_match_the_image() -> None:
    clarigate = SERVICES["clarigate"]
    config_path = environment("clarigate")["CLARIGATE_CONFIG"]
    assert any(v.split(":")[1] == config_path for v in clarigate["volumes"])
    assert "/opt/clarigate/healthcheck.py" in clarigate["healthcheck"]["test"]
    assert "COPY deploy/healthcheck.py /opt/clarigate/healthcheck.py" in (DEPLOY / "Dockerfile").read_text()
    grace = yaml.safe_load((DEPLOY / "bot.example.yaml").read_text())["shutdown_grace_seconds"]
    assert int(clarigate["stop_grace_period"].rstrip("s")) > grace
    for name in ("redis", "postgres"):
        assert re.fullmatch(r"[\w.-]+:\d+\.\d+[\w.-]*", SERVICES[name]["image"]), "pin the store images"


def test_docker_compose_accepts_the_file(tmp_path: Path) -> None:
    client = compose_client()
    if client is None:
        pytest.skip("no Docker Compose client (docker compose / docker-compose) is installed")
    deploy = tmp_path / "deploy"
    deploy.mkdir()
    shutil.copy(DEPLOY / "compose.yaml", deploy)
    shutil.copy(DEPLOY / ".env.example", deploy / ".env")
    shutil.copy(DEPLOY / "bot.example.yaml", deploy / "bot.yaml")
    result = subprocess.run(
        [*client, "--project-directory", str(deploy), "-f", str(deploy / "compose.yaml"), "config"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    resolved = yaml.safe_load(result.stdout)["services"]
    assert resolved["clarigate"]["environment"]["REDIS_URL"].startswith(
        f"redis://:{ENV_EXAMPLE['REDIS_PASSWORD']}@redis:"
    )
    assert resolved["clarigate"]["depends_on"]["redis"]["condition"] == "service_healthy"


def redis_bytes(size: str) -> int:
    """A size as redis.conf reads it (``320mb`` = 320 MiB, ``1g`` = 10**9 bytes)."""
    match = re.fullmatch(r"(\d+)(b|k|kb|m|mb|g|gb)?", size.lower())
    assert match, size
    units = {"k": 10**3, "kb": 2**10, "m": 10**6, "mb": 2**20, "g": 10**9, "gb": 2**30}
    return int(match.group(1)) * units.get(match.group(2) or "b", 1)


def kubernetes_bytes(quantity: str) -> int:
    """A Kubernetes memory quantity in bytes (``512Mi``, ``1Gi``, ``500M``)."""
    match = re.fullmatch(r"(\d+)(Ki|Mi|Gi|K|M|G)?", quantity)
    assert match, quantity
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "K": 10**3, "M": 10**6, "G": 10**9}
    return int(match.group(1)) * units.get(match.group(2) or "", 1)


def test_in_cluster_redis_refuses_writes_before_it_is_oom_killed() -> None:
    """noeviction only refuses writes under a maxmemory; without one the kubelet kills Redis instead."""
    container = load_docs(K8S / "stores" / "redis.yaml")[1]["spec"]["template"]["spec"]["containers"][0]
    args = container["args"]
    assert args[args.index("--maxmemory-policy") + 1] == "noeviction"
    maxmemory = redis_bytes(args[args.index("--maxmemory") + 1])
    limit = kubernetes_bytes(container["resources"]["limits"]["memory"])
    # The rest is for the server itself and the copy-on-write of the fork that rewrites the files.
    assert 0 < maxmemory <= 0.75 * limit


def test_a_real_redis_runs_with_the_compose_flags_and_keeps_an_append_only_file(tmp_path: Path) -> None:
    """Compose and the cluster run Redis with the same flags (the password comes differently); a
    real redis-server accepts them and the password file the compose script writes."""
    server_binary = shutil.which("redis-server")
    if server_binary is None:
        pytest.skip("redis-server is not installed")
    k8s_args = load_docs(K8S / "stores" / "redis.yaml")[1]["spec"]["template"]["spec"]["containers"][0][
        "args"
    ]
    at = k8s_args.index("--requirepass")
    assert ["redis-server", *redis_flags()] == k8s_args[:at] + k8s_args[at + 2 :]
    # the compose script's first step, as the container's shell runs it
    script = redis_script().split(" && chown")[0].replace("$$", "$").replace("/tmp/", f"{tmp_path}/")
    env = {"REDIS_PASSWORD": ENV_EXAMPLE["REDIS_PASSWORD"], "PATH": "/usr/bin:/bin"}
    subprocess.run(["sh", "-c", script], env=env, check=True)
    conf = tmp_path / "redis-auth.conf"
    assert conf.stat().st_mode & 0o077 == 0
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    local = ["--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp_path), "--daemonize", "no"]
    server = subprocess.Popen([server_binary, str(conf), *redis_flags(), *local], stdout=subprocess.DEVNULL)
    # No retries: the refused password and SHUTDOWN's closed connection are what is expected here.
    no_retry = Retry(NoBackoff(), 0)
    client = redis.Redis(port=port, password=ENV_EXAMPLE["REDIS_PASSWORD"], socket_timeout=5, retry=no_retry)
    try:
        for _ in range(100):  # bounded: up to ~10 s for the server to listen
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.1)
        client.set("clarigate:probe", "kept")
        assert client.config_get("appendonly") == {"appendonly": "yes"}
        assert client.config_get("maxmemory-policy") == {"maxmemory-policy": "noeviction"}
        flags = redis_flags()
        assert int(client.config_get("maxmemory")["maxmemory"]) == redis_bytes(
            flags[flags.index("--maxmemory") + 1]
        )
        with pytest.raises(redis.AuthenticationError):
            redis.Redis(port=port, password="wrong", socket_timeout=5, retry=no_retry).ping()
        with contextlib.suppress(redis.ConnectionError):  # SHUTDOWN drops the connection it came on
            client.shutdown(save=True)
    finally:
        client.close()
        if server.poll() is None:
            server.terminate()
        server.wait(timeout=30)
    assert any((tmp_path / "appendonlydir").iterdir()), "no append-only file was written"
