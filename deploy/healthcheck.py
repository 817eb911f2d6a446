"""Container health probe: exit 0 when ``GET /healthz`` answers 2xx, 1 otherwise.

The slim base image has no curl or wget, so the image's ``HEALTHCHECK`` runs this
with the interpreter it already carries. The port comes from ``PORT`` (as for
``clarigate serve``); ``HEALTHCHECK_URL`` overrides the whole address.
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request


def health_url() -> str:
    """The address to probe: ``HEALTHCHECK_URL``, else ``/healthz`` on ``PORT`` (8080) of this host.

    An empty ``PORT`` means 8080, as for ``clarigate serve``.
    """
    port = os.environ.get("PORT") or "8080"
    return os.environ.get("HEALTHCHECK_URL") or f"http://127.0.0.1:{port}/healthz"


def probe(url: str, timeout: float = 4.0) -> int:
    """Exit status for Docker: 0 healthy, 1 unhealthy (error status, refused, timed out)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 (fixed local URL)
            return 0 if 200 <= response.status < 300 else 1
    except (urllib.error.URLError, OSError) as exc:
        print(f"unhealthy: {url}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(probe(health_url()))
