"""Per-tenant request rates (pure bookkeeping, thread-safe).

The rate is a token bucket per tenant in each worker process: with ``--workers N`` a tenant
may reach up to N times the rate when its requests spread over every process. Storage quotas
are not kept here: the store checks them in the transaction that writes a batch
(:class:`~kenning.records.Quota`), so every process and thread shares one count.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

from kenning.errors import RateLimited

__all__ = ["RateLimiter"]


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
