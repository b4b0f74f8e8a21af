"""The server's settings: built at the edge (``kenning serve``) and passed in, never read from
the environment by the library. ``--workers N`` hands them to each worker process as JSON,
without the admin token: the workers read it from a private file (``admin_token_file``)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

from kenning.checks import check_numbers
from kenning.errors import InvalidInput, WeakCredential

__all__ = ["MIN_ADMIN_TOKEN", "ServerSettings"]

#: The shortest admin token the server starts with (a token_hex(16) or token_urlsafe(24)).
MIN_ADMIN_TOKEN = 32


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """How ``kenning serve`` runs.

    Attributes:
        db: the store every worker opens: a SQLite file or a ``postgresql://`` URL.
        host, port, workers: where uvicorn listens and how many processes serve.
        admin_token: the credential of ``/v1/admin`` (key management); None disables it.
            At least 32 characters, not only whitespace (``WeakCredential`` otherwise).
        admin_token_file: where worker processes read the admin token (a file only the
            server's user can read, written by ``kenning serve --workers N``); the token
            itself never travels in the workers' settings or environment.
        rate_per_s, burst: each tenant's request rate (a token bucket per worker process).
        max_events, max_chars: each tenant's storage quota (None: unlimited); a write past it
            answers 507.
        max_body_bytes: the largest request body (413 above it).
        max_in_flight: authenticated requests one process works on at once; more answer 503
            with ``Retry-After`` (backpressure instead of an unbounded queue). Requests
            without a valid key are refused from their headers and take no place.
        max_in_flight_per_tenant: how many of those places one tenant may hold (429 past it);
            None: half of ``max_in_flight`` (at least 1).
        max_mcp_streams: ``GET /mcp`` event streams one key may hold open, counted apart
            from requests (429 past it).
        header_timeout_s: how long a connection may take to send a request's head (the
            connection is closed after it).
        body_timeout_s: how long an admitted request may take to send its whole body (408,
            and its place is freed).
        compaction_workers: background compaction threads per process.
        extraction_workers: background fact-extraction threads per process.
        embedder: ``minilm`` (the local model) or ``none`` (lexical search only).
        embed_window_ms: how long the process's one embedding queue waits, after a request's
            texts arrive, for other requests' texts to embed in the same model call (0: only
            the texts that queued while the model was busy).
        embed_batch: the most texts in one model call of that queue.
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
    admin_token_file: str | None = None
    rate_per_s: float = 100.0
    burst: int = 200
    max_events: int | None = None
    max_chars: int | None = None
    max_body_bytes: int = 8 * 1024 * 1024
    max_in_flight: int = 256
    max_in_flight_per_tenant: int | None = None
    max_mcp_streams: int = 4
    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    compaction_workers: int = 2
    extraction_workers: int = 1
    embedder: Literal["minilm", "none"] = "minilm"
    embed_window_ms: float = 2.0
    embed_batch: int = 16
    mcp: bool = True
    json_logs: bool = True
    otel: bool = False

    def __post_init__(self) -> None:
        check_numbers(self, "port", low=0, high=65_535, integer=True)
        check_numbers(self, "workers", low=1, high=64, integer=True)
        check_numbers(self, "rate_per_s", low=0, high=1_000_000, above=True)
        check_numbers(self, "burst", low=1, high=1_000_000, integer=True)
        check_numbers(self, ("max_events", "max_chars"), low=0, integer=True, optional=True)
        check_numbers(self, "max_body_bytes", low=1024, integer=True)
        check_numbers(self, "max_in_flight", low=1, high=100_000, integer=True)
        check_numbers(self, "max_in_flight_per_tenant", low=1, high=self.max_in_flight,
                      integer=True, optional=True)  # fmt: skip
        check_numbers(self, "max_mcp_streams", low=1, high=10_000, integer=True)
        check_numbers(self, ("header_timeout_s", "body_timeout_s"), low=0.1, high=3600)
        _check_admin_token(self.admin_token)
        workers = ("compaction_workers", "extraction_workers")
        check_numbers(self, workers, low=1, high=64, integer=True)
        if self.embedder not in ("minilm", "none"):
            raise InvalidInput("embedder must be 'minilm' or 'none'")
        check_numbers(self, "embed_window_ms", low=0, high=1000)
        check_numbers(self, "embed_batch", low=1, high=4096, integer=True)

    @property
    def tenant_in_flight(self) -> int:
        """The places one tenant may hold (see ``max_in_flight_per_tenant``)."""
        share = self.max_in_flight_per_tenant
        return share if share is not None else max(1, self.max_in_flight // 2)

    def to_json(self) -> str:
        """The settings for worker processes: everything but the admin token itself."""
        data = asdict(self)
        data["admin_token"] = None
        return json.dumps(data)

    @classmethod
    def from_json(cls, text: str) -> ServerSettings:
        data: dict[str, Any] = json.loads(text)
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def _check_admin_token(token: str | None) -> None:
    if token is None:
        return
    if not token.strip():
        raise WeakCredential(
            "the admin token is empty or only whitespace: use secrets.token_hex(32)"
        )
    if len(token) < MIN_ADMIN_TOKEN:
        raise WeakCredential(
            f"the admin token has {len(token)} characters; it needs at least {MIN_ADMIN_TOKEN}"
            " (make one with: python -c 'import secrets; print(secrets.token_hex(32))')"
        )
