"""Per-tenant request rates, places in flight and failed admin attempts (pure bookkeeping,
thread-safe).

The rate is a token bucket per tenant in each worker process: with ``--workers N`` a tenant
may reach up to N times the rate when its requests spread over every process. Storage quotas
are not kept here: the store checks them in the transaction that writes a batch
(:class:`~kenning.records.Quota`), so every process and thread shares one count.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable

from kenning.errors import Overloaded, RateLimited

__all__ = ["FailedAttempts", "Places", "RateLimiter"]


class RateLimiter:
    """A token bucket per tenant: *rate* tokens a second, at most *burst* saved up."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic):
        self._rate = rate
        self._burst = float(burst)
        self._clock = clock
        self._lock = threading.Lock()
        self._buckets: dict[str, tuple[float, float]] = {}

    def take(self, tenant: str) -> None:
        """Spend one token of *tenant*, or raise ``RateLimited`` with when one is back."""
        now = self._clock()
        with self._lock:
            tokens, last = self._buckets.get(tenant, (self._burst, now))
            tokens = min(self._burst, tokens + (now - last) * self._rate)
            if tokens < 1.0:
                self._buckets[tenant] = (tokens, now)
                wait = (1.0 - tokens) / self._rate
                raise RateLimited(
                    f"tenant {tenant!r} is over its rate of {self._rate:g} requests/s",
                    retry_after=float(max(1, math.ceil(wait))),
                )
            self._buckets[tenant] = (tokens - 1.0, now)


class Places:
    """At most *total* places held at once, and at most *each* by one holder (a tenant, a key):
    one holder cannot take every place. *what* names the places in refusals."""

    def __init__(self, total: int, each: int, *, what: str) -> None:
        self._total = total
        self._each = each
        self._what = what
        self._lock = threading.Lock()
        self._held = 0
        self._by: dict[str, int] = {}

    def take(self, holder: str) -> None:
        """Take a place for *holder*: ``Overloaded`` (503) when all are held, ``RateLimited``
        (429) when *holder* holds its share; both say to retry in a second."""
        with self._lock:
            mine = self._by.get(holder, 0)
            full = self._held >= self._total
            if not full and mine < self._each:
                self._held += 1
                self._by[holder] = mine + 1
                return
        if full:
            raise Overloaded(
                f"the server holds {self._total} {self._what}; retry soon", retry_after=1.0
            )
        raise RateLimited(
            f"{holder} holds {self._each} {self._what} at once, its most; retry when one ends",
            retry_after=1.0,
        )

    def give(self, holder: str) -> None:
        """Give back a place *holder* took."""
        with self._lock:
            self._held -= 1
            left = self._by.get(holder, 1) - 1
            if left > 0:
                self._by[holder] = left
            else:
                self._by.pop(holder, None)

    def held(self, holder: str | None = None) -> int:
        with self._lock:
            return self._held if holder is None else self._by.get(holder, 0)


class FailedAttempts:
    """Failed attempts per client in a sliding window: a client with *limit* failures in the
    last *window_s* seconds is refused (429) until the oldest leaves the window, right
    credential or not, so guessing runs at *limit* tries per window."""

    _MAX_CLIENTS = 10_000

    def __init__(
        self, limit: int, window_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._limit = limit
        self._window = window_s
        self._clock = clock
        self._lock = threading.Lock()
        self._failures: dict[str, deque[float]] = {}

    def check(self, client: str) -> None:
        """Raise ``RateLimited`` (with when to retry) if *client* failed too often lately."""
        now = self._clock()
        with self._lock:
            times = self._recent(client, now)
            if len(times) < self._limit:
                return
            wait = times[0] + self._window - now
        raise RateLimited(
            f"{self._limit} failed admin attempts from {client} in {self._window:g} s; "
            "retry later with the right credential",
            retry_after=float(max(1, math.ceil(wait))),
        )

    def failed(self, client: str) -> None:
        """Count a failed attempt of *client*."""
        now = self._clock()
        with self._lock:
            if len(self._failures) >= self._MAX_CLIENTS:
                for other in list(self._failures):
                    self._recent(other, now)
            self._failures.setdefault(client, deque()).append(now)

    def _recent(self, client: str, now: float) -> deque[float]:
        """*client*'s failures within the window (older ones dropped; caller holds the lock)."""
        times = self._failures.get(client, deque())
        while times and times[0] <= now - self._window:
            times.popleft()
        if not times:
            self._failures.pop(client, None)
        return times
