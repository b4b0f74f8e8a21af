"""The load generator of ``kenning bench load``: a separate process that plays many concurrent
sessions against a running server over HTTP and records what the server acknowledged.

Each session is a coroutine: at its own steady pace (all sessions together offer ``rps``
turns a second; start times are spread and jittered) a turn appends the user's message,
assembles the window, and appends the assistant's reply. Every appended event carries a
client id, and a request that failed in transit is retried once with the same id (so a
retry can never store an event twice). Latency is timed from sending to the answer.

Errors are counted by kind (``append:503``, ``assemble:ReadTimeout``...); a 429 or 503
that lacks its ``Retry-After`` is counted apart (``append:503 without Retry-After``).
Acknowledged events are also counted per wall-clock second (``acked_per_s``), so a run across
an outage shows when acknowledgements stopped and when they came back.

Run as ``python -m kenning.bench.load_driver CONFIG.json``; writes the JSON result file the
configuration names.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

__all__ = ["main"]

_TOPICS = (
    "I was charged twice for order {oid}; the second charge of {amt} EUR should be refunded.",
    "My parcel {oid} has been stuck in transit since {day}, can you check with the courier?",
    "Please change the delivery address of {oid} to 14 Harbour Street before it ships.",
    "The invoice for {oid} shows {amt} EUR but the quote said less; which one is right?",
    "I want to cancel subscription {oid} at the end of this month, not today.",
    "Can you confirm that the replacement for {oid} will arrive before {day}?",
)
_REPLIES = (
    "I have opened ticket T-{n} for {oid} and asked billing to review the {amt} EUR charge.",
    "Thanks, I checked {oid}: the courier scan from {day} is the latest, I escalated it.",
    "Done: {oid} now ships to the new address; you will get a confirmation email.",
)
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "March 3", "April 12")


@dataclass
class Stats:
    append_ms: list[float] = field(default_factory=list)
    assemble_ms: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    retries: int = 0
    late_turns: int = 0
    turns: int = 0
    acked: dict[str, list[str]] = field(default_factory=dict)
    #: Acknowledged events by the epoch second their answer came in.
    acked_per_s: dict[int, int] = field(default_factory=dict)

    def error(self, kind: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1

    def ack(self) -> None:
        second = int(time.time())
        self.acked_per_s[second] = self.acked_per_s.get(second, 0) + 1


def _refusal(kind: str, response: httpx.Response) -> str:
    """The error kind of a non-200 answer; "retry later" without saying when is its own."""
    status = response.status_code
    if status in (429, 503) and "retry-after" not in response.headers:
        return f"{kind}:{status} without Retry-After"
    return f"{kind}:{status}"


async def _post(
    client: httpx.AsyncClient, url: str, body: dict[str, Any], key: str, stats: Stats, kind: str
) -> tuple[float, dict[str, Any] | None]:
    """POST once, and once more if it failed in transit or was refused for now (429/503)."""
    for attempt in range(2):
        start = time.perf_counter()
        try:
            r = await client.post(url, json=body, headers={"Authorization": f"Bearer {key}"})
        except httpx.HTTPError as exc:
            stats.error(f"{kind}:{type(exc).__name__}")
        else:
            elapsed = (time.perf_counter() - start) * 1000
            if r.status_code == 200:
                return elapsed, r.json()
            stats.error(_refusal(kind, r))
            if r.status_code not in (429, 503):
                return elapsed, None
        if attempt == 0:
            stats.retries += 1
    return 0.0, None


async def _session(
    client: httpx.AsyncClient,
    cfg: dict[str, Any],
    index: int,
    stats: Stats,
    deadline: float,
    t0: float,
) -> None:
    rng = random.Random(index)
    tenant = index % cfg["tenants"]
    key = cfg["keys"][tenant]
    user = f"u{index // 2}"
    session = f"s{index}"
    label = f"t{tenant}/{user}/{session}"
    interval = cfg["sessions"] / cfg["rps"]
    acked = stats.acked.setdefault(label, [])
    base = cfg["url"]
    turn = 0
    next_at = t0 + rng.uniform(0, interval)

    async def append(role: str, event_id: str, content: str) -> bool:
        """Append one event; an acknowledged one is timed and its id kept."""
        ms, body = await _post(
            client, f"{base}/v1/sessions/{session}/events",
            {"user": user, "events": [{"role": role, "id": event_id, "content": content}]},
            key, stats, "append",
        )  # fmt: skip
        if body is not None:
            stats.append_ms.append(ms)
            acked.append(event_id)
            stats.ack()
        return body is not None

    while True:
        now = time.perf_counter()
        if next_at >= deadline:
            return
        if next_at > now:
            await asyncio.sleep(next_at - now)
        elif now - next_at > interval:
            stats.late_turns += 1
        fill = {
            "oid": f"A-{index}{turn:03d}", "amt": f"{rng.randint(5, 900)}.{rng.randint(10, 99)}",
            "day": rng.choice(_DAYS), "n": rng.randint(1000, 9999),
        }  # fmt: skip
        if await append("user", f"{session}-{turn}-u", rng.choice(_TOPICS).format(**fill)):
            ms, window = await _post(
                client, f"{base}/v1/sessions/{session}/assemble",
                {"user": user, "budget_tokens": cfg["budget"], "model": "gpt-4o",
                 "system": "You are a careful support agent. Never invent amounts or ids."},
                key, stats, "assemble",
            )  # fmt: skip
            if window is not None:
                stats.assemble_ms.append(ms)
            await append("assistant", f"{session}-{turn}-a", rng.choice(_REPLIES).format(**fill))
        stats.turns += 1
        turn += 1
        next_at += interval * rng.uniform(0.8, 1.2)


async def _run(cfg: dict[str, Any]) -> dict[str, Any]:
    stats = Stats()
    limits = httpx.Limits(
        max_connections=cfg.get("connections", 400), max_keepalive_connections=400
    )
    async with httpx.AsyncClient(limits=limits, timeout=60.0) as client:
        t0 = time.perf_counter()
        deadline = t0 + cfg["duration"]
        await asyncio.gather(
            *(_session(client, cfg, i, stats, deadline, t0) for i in range(cfg["sessions"]))
        )
        elapsed = time.perf_counter() - t0
    return {
        "elapsed_s": elapsed, "turns": stats.turns, "late_turns": stats.late_turns,
        "append_ms": stats.append_ms, "assemble_ms": stats.assemble_ms,
        "errors": stats.errors, "retries": stats.retries, "acked": stats.acked,
        "acked_per_s": {str(s): n for s, n in sorted(stats.acked_per_s.items())},
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    cfg = json.loads(Path(args[0]).read_text())
    result = asyncio.run(_run(cfg))
    Path(cfg["result"]).write_text(json.dumps(result))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
