"""The server's settings: built at the edge (``kenning serve``) and passed in, never read from
the environment by the library. ``--workers N`` hands them to each worker process as JSON."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

from kenning.errors import InvalidInput

__all__ = ["ServerSettings"]


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """How ``kenning serve`` runs.

    Attributes:
        db: the store every worker opens: a SQLite file or a ``postgresql://`` URL.
        host, port, workers: where uvicorn listens and how many processes serve.
        admin_token: the credential of ``/v1/admin`` (key management); None disables it.
        rate_per_s, burst: each tenant's request rate (a token bucket per worker process).
        max_events, max_chars: each tenant's storage quota (None: unlimited); a write past it
            answers 507.
        max_body_bytes: the largest request body (413 above it).
        max_in_flight: requests one process works on at once; more answer 503 with
            ``Retry-After`` (backpressure instead of an unbounded queue).
        compaction_workers: background compaction threads per process.
        extraction_workers: background fact-extraction threads per process.
        embedder: ``minilm`` (the local model) or ``none`` (lexical search only).
        mcp: mount the MCP server (streamable HTTP) at ``/mcp``.
        json_logs: one JSON object per log line (with the request id).
        otel: trace each request and the memory operations under it (OpenTelemetry, exported
            over OTLP by ``kenning serve --otel``; needs ``kenning[otel]``).
    """

    db: str = "kenning.db"
    host: str = "127.0.0.1"
    port: int = 8080
    workers: int = 1
    admin_token: str | None = None
    rate_per_s: float = 100.0
    burst: int = 200
    max_events: int | None = None
    max_chars: int | None = None
    max_body_bytes: int = 8 * 1024 * 1024
    max_in_flight: int = 256
    compaction_workers: int = 2
    extraction_workers: int = 1
    embedder: Literal["minilm", "none"] = "minilm"
    mcp: bool = True
    json_logs: bool = True
    otel: bool = False

    def __post_init__(self) -> None:
        if not 1 <= self.workers <= 64:
            raise InvalidInput("workers must be between 1 and 64")
        if not 0 < self.rate_per_s <= 1_000_000 or not 1 <= self.burst <= 1_000_000:
            raise InvalidInput("rate_per_s must be positive and burst at least 1")
        for name in ("max_events", "max_chars"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise InvalidInput(f"{name} must be >= 0 or None")
        if self.max_body_bytes < 1024:
            raise InvalidInput("max_body_bytes must be at least 1024")
        if not 1 <= self.max_in_flight <= 100_000:
            raise InvalidInput("max_in_flight must be between 1 and 100,000")
        for name in ("compaction_workers", "extraction_workers"):
            if not 1 <= getattr(self, name) <= 64:
                raise InvalidInput(f"{name} must be between 1 and 64")
        if self.embedder not in ("minilm", "none"):
            raise InvalidInput("embedder must be 'minilm' or 'none'")

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> ServerSettings:
        data: dict[str, Any] = json.loads(text)
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})
