"""A client of any OpenAI-compatible ``/chat/completions`` endpoint that wants one JSON object
back (OpenAI, vLLM, Ollama, llama.cpp's server): the LLM summarizer and the LLM fact extractor
both speak through it.

Requests go through one pooled :class:`httpx.Client` (thread-safe, kept alive between calls).
Network errors, HTTP 5xx/429, and replies that are not valid JSON or that the caller's parser
rejects (:class:`Rejected`) are retried with exponential backoff; anything else (HTTP 401)
fails at once. Callers fall back to their deterministic path when :class:`ChatFailed` is
raised. Nothing happens at import: settings are built explicitly at the edge, and the
connection is opened on first use.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from kenning.checks import is_int, is_number
from kenning.errors import InvalidInput

if TYPE_CHECKING:
    import httpx

__all__ = [
    "ChatClient",
    "ChatFailed",
    "LLMSettings",
    "Rejected",
    "array_schema",
    "object_schema",
]

logger = logging.getLogger("kenning")

T = TypeVar("T")

_REPLY_EXCERPT_CHARS = 200
_FENCE_RE = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.DOTALL | re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class LLMSettings:
    """Where and how to reach an OpenAI-compatible chat endpoint.

    Attributes:
        base_url: the API root, e.g. ``"http://127.0.0.1:8080/v1"``; ``/chat/completions`` is
            appended.
        model: the model name sent with each request (also names the summarizer).
        api_key: sent as ``Authorization: Bearer <key>`` when set; never shown in ``repr``.
        timeout_s: socket timeout of one request (connect, and each read).
        retries: further attempts after the first one fails for a retryable reason.
        backoff_s: wait before the first retry; doubles with each further retry.
        max_output_tokens: ``max_tokens`` of the completion.
        temperature: sampling temperature (0 for the most repeatable summaries).

    Raises:
        InvalidInput: a value is out of range (the message says which and what is allowed).

    Example:
        >>> LLMSettings(base_url="http://127.0.0.1:8080/v1", model="smollm2", api_key=None).endpoint
        'http://127.0.0.1:8080/v1/chat/completions'
    """

    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    timeout_s: float = 30.0
    retries: int = 2
    backoff_s: float = 0.5
    max_output_tokens: int = 800
    temperature: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.base_url, str):
            raise InvalidInput("LLM base_url must be a string such as 'http://127.0.0.1:8080/v1'")
        parsed = urllib.parse.urlsplit(self.base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise InvalidInput(
                f"LLM base_url {self.base_url!r} must be an http(s) URL such as "
                "'http://127.0.0.1:8080/v1'"
            )
        if parsed.query or parsed.fragment:
            raise InvalidInput("LLM base_url must not carry a query or a fragment")
        if not isinstance(self.model, str) or not self.model.strip():
            raise InvalidInput("LLM model must be a non-empty model name")
        if self.api_key is not None and (not isinstance(self.api_key, str) or not self.api_key):
            raise InvalidInput("LLM api_key must be a non-empty string, or None for no key")
        if not is_number(self.timeout_s) or not 0 < self.timeout_s <= 3_600:
            raise InvalidInput("LLM timeout_s must be a number of seconds in (0, 3600]")
        if not is_int(self.retries) or not 0 <= self.retries <= 10:
            raise InvalidInput("LLM retries must be an integer from 0 to 10")
        if not is_number(self.backoff_s) or not 0 <= self.backoff_s <= 60:
            raise InvalidInput("LLM backoff_s must be a number of seconds in [0, 60]")
        if not is_int(self.max_output_tokens) or not 1 <= self.max_output_tokens <= 32_768:
            raise InvalidInput("LLM max_output_tokens must be an integer from 1 to 32768")
        if not is_number(self.temperature) or not 0 <= self.temperature <= 2:
            raise InvalidInput("LLM temperature must be a number in [0, 2]")

    @property
    def endpoint(self) -> str:
        """The full chat-completions URL."""
        return self.base_url.rstrip("/") + "/chat/completions"


def object_schema(properties: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON schema of an object with exactly *properties*, every one required: the shape
    structured output (``response_format`` with ``strict``) accepts."""
    return {
        "type": "object",
        "properties": dict(properties),
        "required": list(properties),
        "additionalProperties": False,
    }


def array_schema(items: Mapping[str, Any], max_items: int | None = None) -> dict[str, Any]:
    """The JSON schema of a list of *items*, of at most *max_items* when given."""
    schema: dict[str, Any] = {"type": "array", "items": items}
    if max_items is not None:
        schema["maxItems"] = max_items
    return schema


class ChatFailed(Exception):
    """Every attempt failed (or one failed for good); ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Rejected(Exception):
    """Raised by a caller's parser: the reply is JSON but not what was asked for (retried)."""


class _Retryable(Exception):
    """One attempt failed in a way another attempt may fix."""


class _Fatal(Exception):
    """One attempt failed in a way another attempt will not fix (e.g. HTTP 401)."""


class ChatClient:
    """Sends chat-completions requests and returns the reply's JSON, parsed by the caller."""

    def __init__(self, settings: LLMSettings) -> None:
        self._settings = settings
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    @property
    def settings(self) -> LLMSettings:
        return self._settings

    def close(self) -> None:
        """Close the HTTP connections (a later call opens new ones)."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def _http(self) -> httpx.Client:
        # Imported here: embedded use and the command line load this module without calling
        # an LLM, and httpx is a tenth of a second of start-up.
        import httpx

        with self._lock:
            if self._client is None:
                headers = {"Content-Type": "application/json", "Accept": "application/json"}
                if self._settings.api_key is not None:
                    headers["Authorization"] = f"Bearer {self._settings.api_key}"
                self._client = httpx.Client(
                    headers=headers, timeout=self._settings.timeout_s, trust_env=False
                )
            return self._client

    def complete_json(
        self, payload: Mapping[str, Any], parse: Callable[[Any], T], *, name: str
    ) -> T:
        """POST *payload* and return ``parse(the reply's JSON)``, retried as the settings say.

        Raises:
            ChatFailed: every attempt failed, or one failed in a way a retry will not fix.
        """
        body = json.dumps(payload).encode("utf-8")
        attempts = 1 + self._settings.retries
        last = ""
        for attempt in range(1, attempts + 1):
            try:
                return self._attempt(body, parse)
            except _Fatal as exc:
                raise ChatFailed(f"{name} failed after {_attempts(attempt)}: {exc}") from exc
            except _Retryable as exc:
                last = str(exc)
                logger.info("%s attempt %d/%d failed: %s", name, attempt, attempts, last)
                if attempt < attempts:
                    time.sleep(self._settings.backoff_s * 2 ** (attempt - 1))
        raise ChatFailed(f"{name} failed after {_attempts(attempts)}: {last}")

    def _attempt(self, body: bytes, parse: Callable[[Any], T]) -> T:
        raw = self._post(body)
        content, finish_reason = _reply_content(raw)
        try:
            data = json.loads(_unfence(content))
        except ValueError as exc:
            cut = " (cut off at max_output_tokens)" if finish_reason == "length" else ""
            raise _Retryable(f"reply is not valid JSON{cut}: {_short(content)!r}") from exc
        try:
            return parse(data)
        except Rejected as exc:
            raise _Retryable(str(exc)) from exc

    def _post(self, payload: bytes) -> bytes:
        import httpx

        try:
            response = self._http().post(self._settings.endpoint, content=payload)
        except httpx.TimeoutException as exc:
            raise _Retryable("timed out") from exc
        except httpx.HTTPError as exc:
            raise _Retryable(
                f"connection failed: {type(exc).__name__}: {_short(str(exc))}"
            ) from exc
        if response.status_code >= 400:
            detail = _short(response.text[:_REPLY_EXCERPT_CHARS])
            message = f"HTTP {response.status_code}" + (f": {detail}" if detail else "")
            if response.status_code == 429 or response.status_code >= 500:
                raise _Retryable(message)
            raise _Fatal(message)
        return response.content


def _attempts(n: int) -> str:
    return "1 attempt" if n == 1 else f"{n} attempts"


def _reply_content(raw: bytes) -> tuple[str, object]:
    """The assistant message text of a chat-completions reply, and its finish reason."""
    try:
        reply = json.loads(raw)
        choice = reply["choices"][0]
        content, finish_reason = choice["message"]["content"], choice.get("finish_reason")
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        text = raw.decode("utf-8", "replace")
        raise _Retryable(f"reply is not a chat completion: {_short(text)!r}") from exc
    if not isinstance(content, str) or not content.strip():
        raise _Retryable("reply has no message content")
    return content, finish_reason


def _unfence(content: str) -> str:
    """The JSON inside a ```json fence if there is one, else the outermost ``{...}``."""
    text = content.strip()
    if text.startswith("{"):
        return text
    match = _FENCE_RE.search(text)
    if match:
        return match.group(1)
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if 0 <= start < end else text


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _REPLY_EXCERPT_CHARS else text[: _REPLY_EXCERPT_CHARS - 3] + "..."
