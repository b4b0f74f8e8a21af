"""The one error tree of kenning.

Every error has a stable ``code`` (the server maps it to an HTTP status and a client raises the
same class again) and also inherits the builtin it refines, so ``except ValueError`` keeps
working for callers that do not know kenning.
"""

from __future__ import annotations

__all__ = [
    "BudgetError",
    "ConnectionFailed",
    "ContentTooLarge",
    "Forbidden",
    "InternalError",
    "InvalidFilter",
    "InvalidInput",
    "InvalidScope",
    "KenningError",
    "LeaseLost",
    "LegalHoldActive",
    "ModelMismatch",
    "ModelUnavailable",
    "NotFound",
    "Overloaded",
    "QuotaExceeded",
    "RateLimited",
    "RequestTooLarge",
    "ScopeConflict",
    "StaleWrite",
    "StoreError",
    "ToolRefused",
    "Unauthorized",
    "Unsupported",
    "error_for_code",
]


class KenningError(Exception):
    """Root of every error kenning raises on purpose."""

    code: str = "kenning_error"
    http_status: int = 500

    #: Seconds after which a retry may succeed (rate limits, overload); sent as ``Retry-After``.
    retry_after: float | None = None

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        if retry_after is not None:
            self.retry_after = retry_after


class InvalidInput(KenningError, ValueError):
    """Input was rejected before anything was written."""

    code = "invalid_input"
    http_status = 422


class InvalidScope(InvalidInput):
    """A tenant, user, session or agent id is missing or malformed."""

    code = "invalid_scope"


class InvalidFilter(InvalidInput):
    """A search filter names a key outside the allowed syntax or has a bad value."""

    code = "invalid_filter"


class ContentTooLarge(InvalidInput):
    """A record's content exceeds the configured maximum."""

    code = "content_too_large"
    http_status = 413


class BudgetError(InvalidInput):
    """A token budget cannot be met (for example the system policy alone exceeds it)."""

    code = "budget_error"


class RequestTooLarge(InvalidInput):
    """A request body exceeds the server's size limit."""

    code = "request_too_large"
    http_status = 413


class ScopeConflict(KenningError, ValueError):
    """The scope contradicts stored data (a session id already owned by another user)."""

    code = "scope_conflict"
    http_status = 409


class LegalHoldActive(KenningError, PermissionError):
    """A legal hold covers what would be erased or purged; nothing was removed."""

    code = "legal_hold"
    http_status = 423


class StaleWrite(KenningError, RuntimeError):
    """A write was computed from records that were erased meanwhile; nothing was written."""

    code = "stale_write"
    http_status = 409


class LeaseLost(StaleWrite):
    """A background worker's lease on a job was taken over by another worker (it stalled past
    the lease); the write it attempted was refused and the new holder does the work."""

    code = "lease_lost"


class NotFound(KenningError, LookupError):
    """The requested record does not exist in this scope."""

    code = "not_found"
    http_status = 404


class ModelMismatch(KenningError, ValueError):
    """The store holds vectors of another embedding model; mixing them is refused."""

    code = "model_mismatch"
    http_status = 409


class ModelUnavailable(KenningError, RuntimeError):
    """A model (embedding model, tokenizer) cannot be loaded here."""

    code = "model_unavailable"
    http_status = 503


class StoreError(KenningError, RuntimeError):
    """The storage backend failed; the batch was rolled back."""

    code = "store_error"
    http_status = 500


class Unsupported(KenningError, NotImplementedError):
    """The backend does not offer this capability."""

    code = "unsupported"
    http_status = 501


class Unauthorized(KenningError, PermissionError):
    """No credential, or one that is unknown or revoked."""

    code = "unauthorized"
    http_status = 401


class Forbidden(KenningError, PermissionError):
    """The credential is valid but does not allow this operation."""

    code = "forbidden"
    http_status = 403


class ToolRefused(Forbidden):
    """An agent tool call asked for something only the host application may do (for example
    creating an approval, authorization or human-gate pin)."""

    code = "tool_refused"


class RateLimited(KenningError, RuntimeError):
    """The tenant sent more requests than its rate allows; retry after ``retry_after`` s."""

    code = "rate_limited"
    http_status = 429


class QuotaExceeded(KenningError, RuntimeError):
    """The tenant's storage quota is used up; nothing was written."""

    code = "quota_exceeded"
    http_status = 507


class Overloaded(KenningError, RuntimeError):
    """The server is at its limit of work in flight; retry after ``retry_after`` s."""

    code = "overloaded"
    http_status = 503


class InternalError(KenningError, RuntimeError):
    """The server failed in a way it did not expect; its log has the details under the
    request id the message names."""

    code = "internal_error"
    http_status = 500


class ConnectionFailed(KenningError, ConnectionError):
    """The client could not reach the server, or the connection broke before an answer."""

    code = "connection_failed"
    http_status = 503


def _all_subclasses(cls: type[KenningError]) -> list[type[KenningError]]:
    out: list[type[KenningError]] = [cls]
    for sub in cls.__subclasses__():
        out.extend(_all_subclasses(sub))
    return out


def error_for_code(code: str) -> type[KenningError]:
    """Return the error class whose stable ``code`` is *code* (``KenningError`` if unknown)."""
    for cls in _all_subclasses(KenningError):
        if cls.code == code:
            return cls
    return KenningError
