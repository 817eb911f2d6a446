"""The one comparison of a request's proof with ours: constant time, on bytes, never raising for
what a forger sends (``hmac.compare_digest`` raises ``TypeError`` on two non-ASCII ``str``)."""

from __future__ import annotations

import pytest

from clarigate.gateway.boundary.signing import same_secret


def test_the_same_secret_is_the_same():
    assert same_secret("v0=abc123", "v0=abc123")
    assert same_secret("秘密", "秘密")
    assert not same_secret("v0=abc124", "v0=abc123") and not same_secret("", "v0=abc123")


@pytest.mark.parametrize("given", ["\xe9" * 64, "v0=\xff", "签名", "\ud800", "\udcff\x00"])
def test_anything_a_request_carries_is_compared_not_raised_on(given: str):
    assert not same_secret(given, "0" * 64)
    assert same_secret(given, given)
