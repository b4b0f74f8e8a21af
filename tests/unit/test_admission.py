"""The gate's bookkeeping: places in flight with a share per holder, and failed admin attempts
in a sliding window (pure, with a test clock)."""

from __future__ import annotations

import pytest

from kenning import Overloaded, RateLimited
from kenning.server.limits import FailedAttempts, Places


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_places_keep_a_share_per_holder_and_a_total() -> None:
    places = Places(4, 2, what="requests in flight")
    places.take("acme")
    places.take("acme")
    with pytest.raises(RateLimited) as share:
        places.take("acme")
    assert share.value.retry_after == 1.0 and "acme" in share.value.message
    places.take("globex")
    places.take("globex")
    with pytest.raises(Overloaded):
        places.take("initech")  # all four held
    places.give("acme")
    places.take("initech")
    assert (places.held(), places.held("acme"), places.held("initech")) == (4, 1, 1)
    for holder in ("acme", "globex", "globex", "initech"):
        places.give(holder)
    assert places.held() == 0 and places.held("globex") == 0


def test_failed_attempts_refuse_a_client_until_its_oldest_leaves_the_window() -> None:
    clock = Clock()
    failures = FailedAttempts(3, 60.0, clock=clock)
    for at in (0.0, 10.0, 20.0):
        clock.now = at
        failures.check("10.0.0.1")
        failures.failed("10.0.0.1")
    with pytest.raises(RateLimited) as err:
        failures.check("10.0.0.1")
    assert err.value.retry_after == 40.0  # the failure at 0 s leaves the window at 60 s
    failures.check("10.0.0.2")  # another address is not refused
    clock.now = 60.0
    failures.check("10.0.0.1")
