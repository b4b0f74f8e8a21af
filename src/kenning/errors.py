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
    "InvalidArchive",
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
    "RequestTimeout",
    "RequestTooLarge",
    "ScopeConflict",
    "StaleWrite",
    "StorageFull",
    "StoreError",
    "StoreUnavailable",
    "ToolRefused",
    "Unauthorized",
    "Unsupported",
    "UnsupportedMediaType",
    "VectorsPending",
    "WeakCredential",
    "error_for_code",
]


class KenningError(Exception):
    """Root of every error kenning raises on purpose."""

    code: str = "kenning_error"
    http_status: int = 500

    #: Seconds after which a retry may succeed (rate limits, overload); sent as ``Retry-After``.
    retry_after: float | None = None

    def __init_subclass__(
        cls, *, code: str | None = None, http_status: int | None = None, **kwargs: object
    ) -> None:
        # Each error states its code and status in its class line; one it leaves out is inherited.
        super().__init_subclass__(**kwargs)
        if code is not None:
            cls.code = code
        if http_status is not None:
            cls.http_status = http_status

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        if retry_after is not None:
            self.retry_after = retry_after


class InvalidInput(KenningError, ValueError, code="invalid_input", http_status=422):
    """Input was rejected before anything was written."""


class InvalidScope(InvalidInput, code="invalid_scope"):
    """A tenant, user, session or agent id is missing or malformed."""


class InvalidFilter(InvalidInput, code="invalid_filter"):
    """A search filter names a key outside the allowed syntax or has a bad value."""


class ContentTooLarge(InvalidInput, code="content_too_large", http_status=413):
    """A record's content exceeds the configured maximum."""


class BudgetError(InvalidInput, code="budget_error"):
    """A token budget cannot be met (for example the system policy alone exceeds it)."""


class RequestTooLarge(InvalidInput, code="request_too_large", http_status=413):
    """A request body exceeds the server's size limit."""


class UnsupportedMediaType(InvalidInput, code="unsupported_media_type", http_status=415):
    """A request body in a format the server does not read (the API reads JSON)."""


class WeakCredential(InvalidInput, code="weak_credential"):
    """A configured secret is too easy to guess (the admin token: at least 32 characters, not
    only whitespace); the server refuses to start with it."""


class InvalidArchive(InvalidInput, code="invalid_archive"):
    """An export or conversation file kenning cannot read (not the format, another version, a
    malformed line, an unknown record kind); ``line`` is the first bad line (1-based).
    Nothing of the file was imported."""

    def __init__(
        self, message: str, *, line: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message, retry_after=retry_after)
        self.line = line


class ScopeConflict(KenningError, ValueError, code="scope_conflict", http_status=409):
    """The scope contradicts stored data (a session id already owned by another user)."""


class LegalHoldActive(KenningError, PermissionError, code="legal_hold", http_status=423):
    """A legal hold covers what would be erased or purged; nothing was removed."""


class StaleWrite(KenningError, RuntimeError, code="stale_write", http_status=409):
    """A write was computed from records that were erased meanwhile; nothing was written."""


class LeaseLost(StaleWrite, code="lease_lost"):
    """A background worker's lease on a job was taken over by another worker (it stalled past
    the lease); the write it attempted was refused and the new holder does the work."""


class NotFound(KenningError, LookupError, code="not_found", http_status=404):
    """The requested record does not exist in this scope."""


class ModelMismatch(KenningError, ValueError, code="model_mismatch", http_status=409):
    """The store holds vectors of another embedding model; mixing them is refused."""


class ModelUnavailable(KenningError, RuntimeError, code="model_unavailable", http_status=503):
    """A model (embedding model, tokenizer) cannot be loaded here."""


class VectorsPending(KenningError, RuntimeError, code="vectors_pending", http_status=503):
    """Committed events still wait for their vectors because the embedding model failed in
    the background writer (the failure is the ``__cause__``). The events are stored and found
    by their words; their vectors are embedded again at the next flush."""


class StoreError(KenningError, RuntimeError, code="store_error", http_status=500):
    """The storage backend failed; the batch was rolled back."""


class StoreUnavailable(StoreError, code="store_unavailable", http_status=503):
    """The database cannot be reached for now (stopped, restarting, out of connections).
    Retry after ``retry_after`` s; a write whose answer was lost may have been stored, so
    retry appends with the same event ids (they are stored once)."""

    retry_after = 2.0


class StorageFull(StoreError, code="storage_full", http_status=507):
    """The database's disk (or the file-size limit) is full; the write was rolled back and
    what is stored stays readable."""


class Unsupported(KenningError, NotImplementedError, code="unsupported", http_status=501):
    """The backend does not offer this capability."""


class Unauthorized(KenningError, PermissionError, code="unauthorized", http_status=401):
    """No credential, or one that is unknown or revoked."""


class Forbidden(KenningError, PermissionError, code="forbidden", http_status=403):
    """The credential is valid but does not allow this operation."""


class ToolRefused(Forbidden, code="tool_refused"):
    """An agent tool call asked for something only the host application may do (for example
    creating an approval, authorization or human-gate pin)."""


class RateLimited(KenningError, RuntimeError, code="rate_limited", http_status=429):
    """The tenant sent more requests than its rate allows; retry after ``retry_after`` s."""


class QuotaExceeded(KenningError, RuntimeError, code="quota_exceeded", http_status=507):
    """The tenant's storage quota is used up; nothing was written."""


class Overloaded(KenningError, RuntimeError, code="overloaded", http_status=503):
    """The server is at its limit of work in flight; retry after ``retry_after`` s."""


class RequestTimeout(KenningError, TimeoutError, code="request_timeout", http_status=408):
    """The request's body did not arrive within the server's body timeout; nothing was read
    into the store, and the connection is closed."""


class InternalError(KenningError, RuntimeError, code="internal_error", http_status=500):
    """The server failed in a way it did not expect; its log has the details under the
    request id the message names."""


class ConnectionFailed(KenningError, ConnectionError, code="connection_failed", http_status=503):
    """The client could not reach the server, or the connection broke before an answer."""


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
