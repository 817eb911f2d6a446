"""lark-oapi, loaded once, and its requests through each client's keep-alive connection pool.

lark-oapi fetches the tenant token and sends requests with blocking ``requests``,
so every call runs in a worker thread. lark-oapi 1.7.5 sends each request with
``requests.request`` (its async ``a*`` methods open an ``httpx.AsyncClient`` per call
and fetch the token with blocking ``requests`` all the same): a new TCP connection and
TLS handshake per call, and it has no setting for a session. So the ``requests`` its
transport module uses is replaced, once, by a stand-in whose ``request`` goes through the
keep-alive ``requests.Session`` of the client making the call (a context variable set for
that call only) and through requests' one-off session otherwise, exactly as before. Each
client owns its session for its life (``close``).
"""

from __future__ import annotations

import logging
import os
import threading
from contextvars import ContextVar
from typing import Any

import requests
from requests.adapters import HTTPAdapter

from clarigate.gateway.runtime.logs import guard_handlers

# The logger these lines have always been written under (operators' filters name it).
log = logging.getLogger("clarigate.adapters.feishu.send")

#: Connections kept open per host: as many as calls can run at once (asyncio's default thread pool).
POOL_SIZE = 32

# --- one keep-alive connection pool per client -------------------------------------------------

#: The session of the client whose call runs in this thread (set around each call).
_SESSION: ContextVar[requests.Session | None] = ContextVar("feishu_session", default=None)


class _PooledRequests:
    """What lark-oapi's transport module sees as ``requests``: ``request`` goes through the session
    of the client making the call, else through requests' one-off session as lark-oapi does."""

    def __getattr__(self, name: str) -> Any:
        return getattr(requests, name)

    @staticmethod
    def request(method: str, url: str, **kwargs: Any) -> requests.Response:
        session = _SESSION.get()
        if session is None:
            return requests.request(method, url, **kwargs)
        return session.request(method, url, **kwargs)


def _install_pool() -> bool:
    """Put ``_PooledRequests`` in lark-oapi's transport (once); False when its transport changed."""
    from lark_oapi.core.http import transport as lark_transport

    current = getattr(lark_transport, "requests", None)
    if isinstance(current, _PooledRequests):
        return True
    if current is not requests:
        log.warning("feishu: lark-oapi's transport changed; API calls open a connection each")
        return False
    lark_transport.requests = _PooledRequests()  # type: ignore[assignment]
    return True


def new_session(pool_size: int = POOL_SIZE, domain: str | None = None) -> requests.Session:
    """A keep-alive session holding up to ``pool_size`` connections per host.

    With ``domain`` (the open API's origin, where every call goes), the environment's proxy
    (``HTTPS_PROXY``, ``NO_PROXY``…) and CA bundle (``REQUESTS_CA_BUNDLE``) are read once here,
    not by requests on every call: it scans the whole environment and looks for a ``.netrc``
    each time, about a fifth of a call's CPU (a live card is updated every second).
    """
    session = requests.Session()
    adapter = HTTPAdapter(pool_connections=4, pool_maxsize=pool_size)
    session.mount("https://", adapter)
    session.mount("http://", adapter)
    if domain:
        session.proxies.update(requests.utils.get_environ_proxies(domain))
        bundle = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE")
        if bundle:
            session.verify = bundle
        session.trust_env = False
    return session


#: Whether lark-oapi was imported and set up here (``build_client``); the lock makes it once.
_sdk_ready = False
_SDK_LOCK = threading.Lock()


def load_sdk() -> None:
    """Import lark-oapi (seconds of CPU the first time: call it in a worker thread) and set it up
    once: its requests through our pools, the stdout handler it installs on import under ours."""
    global _sdk_ready
    import lark_oapi  # noqa: F401

    with _SDK_LOCK:
        if not _sdk_ready:
            _install_pool()
            guard_handlers()
            _sdk_ready = True
