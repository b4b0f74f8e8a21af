"""Structured logs: one JSON object a line, each with the request id of the request it
belongs to. Set up by ``kenning serve`` (never at import)."""

from __future__ import annotations

import contextvars
import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any

__all__ = ["REQUEST_ID", "JsonFormatter", "configure_logging"]

#: The id of the request being handled (``X-Request-Id``), for every log line it causes.
REQUEST_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "kenning_request_id", default=None
)

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """Formats a record as JSON: time, level, logger, message, process id (which worker of
    ``--workers N``), request id, the ``extra``
    fields, and the exception's type and text (its trace stays in the log, never a client)."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "pid": record.process,
        }
        request_id = getattr(record, "request_id", None) or REQUEST_ID.get()
        if request_id:
            out["request_id"] = request_id
        for key, value in record.__dict__.items():
            if key not in _STANDARD and key not in out and not key.startswith("_"):
                out[key] = value
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str, ensure_ascii=False)


def configure_logging(*, json_logs: bool = True, level: int = logging.INFO) -> None:
    """Send kenning's and uvicorn's logs to stderr, as JSON lines when *json_logs*."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        JsonFormatter() if json_logs else logging.Formatter("%(levelname)s %(name)s %(message)s")
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
    # Each request is logged once, by kenning's middleware, with its route and request id.
    logging.getLogger("uvicorn.access").disabled = True
