"""An LLM summarizer over any OpenAI-compatible ``/chat/completions`` endpoint.

The model is asked for a :class:`~kenning.compaction.body.SummaryBody` as JSON, constrained by a
JSON schema (``response_format: json_schema``). Network errors, HTTP 5xx/429 and replies that
are not a valid body are retried with exponential backoff; when every attempt fails (or anything
unexpected happens) the deterministic ``fallback`` summarizer runs instead and the result says
why in ``fallback_reason``. :meth:`LLMSummarizer.summarize` never raises.

Requests go through one pooled :class:`httpx.Client` per summarizer (thread-safe, kept alive
between compactions). Nothing happens at import: settings are built explicitly, from arguments
or with :meth:`LLMSettings.from_env` at the edge, and the client is created on first use.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import re
import threading
import time
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from kenning.compaction.body import SummaryBody, SummaryResult
from kenning.compaction.summarizer import Summarizer, SummaryRequest
from kenning.errors import InvalidInput
from kenning.records import Event, Pin

__all__ = [
    "LLMSettings",
    "LLMSummarizer",
    "build_payload",
    "max_items_for",
    "render_prompt",
    "summary_schema",
]

logger = logging.getLogger("kenning")

ENV_BASE_URL = "KENNING_LLM_BASE_URL"
ENV_MODEL = "KENNING_LLM_MODEL"
ENV_API_KEY = "KENNING_LLM_API_KEY"

# Prompt bounds: one event's text is cut to at most _MAX_EVENT_CHARS (head and tail kept); if
# the events together still exceed _MAX_EVENTS_CHARS the per-event cap shrinks down to
# _MIN_EVENT_CHARS, and only then are middle events left out.
_MAX_EVENT_CHARS = 2_000
_MIN_EVENT_CHARS = 240
_MAX_EVENTS_CHARS = 24_000
_MAX_PIN_CHARS = 200
_MAX_PINS = 50
_REPLY_EXCERPT_CHARS = 200

_FENCE_RE = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.DOTALL | re.IGNORECASE)

_SYSTEM_PROMPT = """\
You summarize a range of events from an AI agent's session so the agent can continue the task \
after the raw events leave its context window. Answer with one JSON object and nothing else.

The object has exactly five sections, each a list of items:
- "goals": what the user or the agent is trying to achieve.
- "facts": facts learned (from the user, from tool results, from documents).
- "decisions": decisions taken and approvals or refusals given, with who decided.
- "obligations": open obligations and pending actions: promised, requested or not yet done.
- "constraints": constraints and preferences the agent must respect.

Each item is {"text": "...", "first_seq": N, "last_seq": M}: one short statement and the range \
of event numbers (the #N before each event) it comes from. Ranges must lie inside the covered \
range. Leave a section empty ([]) when nothing belongs there; do not invent anything.

Keep verbatim, never paraphrase or round: ids and reference numbers, amounts with their \
currency, dates, approvals (who approved what), decisions, and open obligations. Prefer the \
exact words of the events for these.

Pinned items are kept by the system separately and shown next to the summary; you need not \
repeat them, but you may refer to them. Event texts marked "[... N chars cut ...]" were \
shortened for this prompt; do not guess the missing part."""


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
        if not _is_number(self.timeout_s) or not 0 < self.timeout_s <= 3_600:
            raise InvalidInput("LLM timeout_s must be a number of seconds in (0, 3600]")
        if not _is_int(self.retries) or not 0 <= self.retries <= 10:
            raise InvalidInput("LLM retries must be an integer from 0 to 10")
        if not _is_number(self.backoff_s) or not 0 <= self.backoff_s <= 60:
            raise InvalidInput("LLM backoff_s must be a number of seconds in [0, 60]")
        if not _is_int(self.max_output_tokens) or not 1 <= self.max_output_tokens <= 32_768:
            raise InvalidInput("LLM max_output_tokens must be an integer from 1 to 32768")
        if not _is_number(self.temperature) or not 0 <= self.temperature <= 2:
            raise InvalidInput("LLM temperature must be a number in [0, 2]")

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> LLMSettings:
        """Build settings from ``KENNING_LLM_BASE_URL``, ``KENNING_LLM_MODEL`` and the optional
        ``KENNING_LLM_API_KEY`` (an empty key counts as none). Call it at the edge (CLI,
        server) with ``os.environ``.

        Raises:
            InvalidInput: the base URL or the model is missing, or a value is invalid.

        Example:
            >>> LLMSettings.from_env({"KENNING_LLM_BASE_URL": "http://127.0.0.1:8080/v1",
            ...                       "KENNING_LLM_MODEL": "smollm2"}).model
            'smollm2'
        """
        base_url = environ.get(ENV_BASE_URL, "").strip()
        model = environ.get(ENV_MODEL, "").strip()
        missing = [
            name for name, value in ((ENV_BASE_URL, base_url), (ENV_MODEL, model)) if not value
        ]
        if missing:
            raise InvalidInput(
                f"set {' and '.join(missing)} to use an LLM summarizer "
                f"(e.g. {ENV_BASE_URL}=http://127.0.0.1:8080/v1)"
            )
        api_key = environ.get(ENV_API_KEY, "").strip() or None
        return cls(base_url=base_url, model=model, api_key=api_key)

    @property
    def endpoint(self) -> str:
        """The full chat-completions URL."""
        return self.base_url.rstrip("/") + "/chat/completions"


def _is_number(value: object) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def summary_schema(*, max_items: int | None = None) -> dict[str, Any]:
    """The JSON schema of :meth:`SummaryBody.to_json` (five sections of ranged items), with at
    most ``max_items`` items per section when given (this also stops a looping model)."""
    item = {
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "first_seq": {"type": "integer"},
            "last_seq": {"type": "integer"},
        },
        "required": ["text", "first_seq", "last_seq"],
        "additionalProperties": False,
    }
    sections = list(SummaryBody().to_json())
    return {
        "type": "object",
        "properties": {name: _array(item, max_items) for name in sections},
        "required": sections,
        "additionalProperties": False,
    }


def _array(item: dict[str, Any], max_items: int | None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "array", "items": item}
    if max_items is not None:
        schema["maxItems"] = max_items
    return schema


def max_items_for(max_tokens: int) -> int:
    """Items per section worth asking for: a rendered item costs ~30 tokens, and the caller
    trims a summary to ``max_tokens`` anyway."""
    return max(2, min(20, max_tokens // 30))


class _Retryable(Exception):
    """One attempt failed in a way another attempt may fix."""


class _Fatal(Exception):
    """One attempt failed in a way another attempt will not fix (e.g. HTTP 401)."""


class LLMSummarizer:
    """A :class:`~kenning.compaction.summarizer.Summarizer` backed by an OpenAI-compatible LLM.

    Args:
        settings: endpoint, model, key, timeout and retry policy.
        fallback: the summarizer used when the LLM fails (usually the extractive one).

    ``summarize`` never raises: after ``1 + settings.retries`` failed attempts, a non-retryable
    HTTP error, or any unexpected exception, it returns ``fallback.summarize(request)`` with
    ``fallback_reason`` set.

    Example:
        >>> settings = LLMSettings(base_url="http://127.0.0.1:8080/v1", model="smollm2",
        ...                        api_key=None)
        >>> summarizer = LLMSummarizer(settings, fallback=extractive)  # doctest: +SKIP
        >>> summarizer.summarize(request).summarizer  # doctest: +SKIP
        'llm:smollm2'
    """

    def __init__(self, settings: LLMSettings, *, fallback: Summarizer) -> None:
        self._settings = settings
        self._fallback = fallback
        self._client: httpx.Client | None = None
        self._client_lock = threading.Lock()

    def close(self) -> None:
        """Close the HTTP connections (a later summary opens new ones)."""
        with self._client_lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def _http(self) -> httpx.Client:
        with self._client_lock:
            if self._client is None:
                headers = {"Content-Type": "application/json", "Accept": "application/json"}
                if self._settings.api_key is not None:
                    headers["Authorization"] = f"Bearer {self._settings.api_key}"
                self._client = httpx.Client(
                    headers=headers, timeout=self._settings.timeout_s, trust_env=False
                )
            return self._client

    @property
    def name(self) -> str:
        return f"llm:{self._settings.model}"

    @property
    def settings(self) -> LLMSettings:
        return self._settings

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        """Summarize ``request`` with the LLM, or with the fallback if the LLM fails."""
        try:
            return self._summarize(request)
        except Exception as exc:  # the contract: never raise, fall back instead
            reason = f"{self.name} failed: unexpected {type(exc).__name__}: {_short(str(exc))}"
            logger.exception("LLM summarizer: unexpected error; using %s", self._fallback.name)
            return self._fall_back(request, reason)

    def _summarize(self, request: SummaryRequest) -> SummaryResult:
        payload = json.dumps(build_payload(self._settings, request)).encode("utf-8")
        attempts = 1 + self._settings.retries
        last = ""
        for attempt in range(1, attempts + 1):
            try:
                body = self._attempt(payload, request)
            except _Fatal as exc:
                reason = f"{self.name} failed after {_attempts(attempt)}: {exc}"
                logger.warning("%s; using %s", reason, self._fallback.name)
                return self._fall_back(request, reason)
            except _Retryable as exc:
                last = str(exc)
                logger.info("%s attempt %d/%d failed: %s", self.name, attempt, attempts, last)
                if attempt < attempts:
                    time.sleep(self._settings.backoff_s * 2 ** (attempt - 1))
                continue
            return SummaryResult(body=body, summarizer=self.name)
        reason = f"{self.name} failed after {_attempts(attempts)}: {last}"
        logger.warning("%s; using %s", reason, self._fallback.name)
        return self._fall_back(request, reason)

    def _fall_back(self, request: SummaryRequest, reason: str) -> SummaryResult:
        result = self._fallback.summarize(request)
        return dataclasses.replace(result, fallback_reason=reason)

    def _attempt(self, payload: bytes, request: SummaryRequest) -> SummaryBody:
        raw = self._post(payload)
        content, finish_reason = _reply_content(raw)
        try:
            data = json.loads(_unfence(content))
        except ValueError as exc:
            cut = " (cut off at max_output_tokens)" if finish_reason == "length" else ""
            raise _Retryable(f"reply is not valid JSON{cut}: {_short(content)!r}") from exc
        try:
            return SummaryBody.from_json(
                _without_blank_items(data), first_seq=request.first_seq, last_seq=request.last_seq
            )
        except InvalidInput as exc:
            raise _Retryable(f"reply is not a summary body: {exc.message}") from exc

    def _post(self, payload: bytes) -> bytes:
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


def _without_blank_items(data: Any) -> Any:
    """``data`` less items whose text is blank: they say nothing, and schema-constrained small
    models emit them."""
    if not isinstance(data, dict):
        return data
    out: dict[str, object] = {}
    for key, items in data.items():
        if isinstance(items, list):
            items = [
                i
                for i in items
                if not (
                    isinstance(i, dict) and isinstance(i.get("text"), str) and not i["text"].strip()
                )
            ]
        out[key] = items
    return out


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


def build_payload(settings: LLMSettings, request: SummaryRequest) -> dict[str, Any]:
    """The chat-completions request body for ``request`` (pure; used by tests too)."""
    return {
        "model": settings.model,
        "messages": [
            {"role": "system", "content": _SYSTEM_PROMPT},
            {"role": "user", "content": render_prompt(request)},
        ],
        "temperature": settings.temperature,
        "max_tokens": settings.max_output_tokens,
        "stream": False,
        "response_format": {
            "type": "json_schema",
            "json_schema": {
                "name": "kenning_summary",
                "strict": True,
                "schema": summary_schema(max_items=max_items_for(request.max_tokens)),
            },
        },
    }


def render_prompt(request: SummaryRequest) -> str:
    """The user message: covered range, pins, and the events as ``#seq role: content`` lines."""
    what = "segment" if request.level == 1 else "session"
    lines = [
        f"Summarize events #{request.first_seq}-{request.last_seq} (a {what} summary). "
        f"Every first_seq and last_seq must lie in {request.first_seq}..{request.last_seq}. "
        f"Stay under about {request.max_tokens} tokens.",
        "",
    ]
    pins = list(request.pins)
    if pins:
        lines.append("Pinned (kept separately, shown next to the summary):")
        lines.extend(_render_pin(pin) for pin in pins[:_MAX_PINS])
        if len(pins) > _MAX_PINS:
            lines.append(f"- ... and {len(pins) - _MAX_PINS} more pins")
    else:
        lines.append("Pinned: none.")
    lines.append("")
    lines.append("Events:")
    lines.extend(_render_events(request.events))
    return "\n".join(lines)


def _render_pin(pin: Pin) -> str:
    text = f"- {pin.kind.value} {pin.key}: {pin.value}"
    if pin.amount is not None:
        text += f" ({pin.amount} {pin.currency or ''})".replace(" )", ")")
    if pin.status.value != "open":
        text += f" [{pin.status.value}]"
    return _cut(text, _MAX_PIN_CHARS)


def _event_text(event: Event) -> str:
    parts = [event.content.strip()]
    if event.tool_args is not None:
        parts.append(f"args: {_json_text(event.tool_args)}")
    if event.tool_result is not None:
        parts.append(f"result: {_json_text(event.tool_result)}")
    return " | ".join(p for p in parts if p)


def _event_head(event: Event) -> str:
    role = event.role.value
    if event.tool_name:
        role = f"{role} {event.tool_name}"
    return f"#{event.seq} {role}: "


def _render_events(events: Sequence[Event]) -> list[str]:
    if not events:
        return ["(no events)"]
    heads = [_event_head(e) for e in events]
    texts = [" ".join(_event_text(e).split()) for e in events]
    cap = _MAX_EVENT_CHARS
    while True:
        lines = [h + _cut(t, cap) for h, t in zip(heads, texts, strict=True)]
        total = sum(len(line) + 1 for line in lines)
        if total <= _MAX_EVENTS_CHARS or cap <= _MIN_EVENT_CHARS:
            break
        cap = max(_MIN_EVENT_CHARS, cap * 2 // 3)
    if total <= _MAX_EVENTS_CHARS:
        return lines
    # Still too long at the smallest cap: keep the start and the end, drop the middle.
    keep_head: list[str] = []
    keep_tail: list[str] = []
    used = 0
    lo, hi = 0, len(lines) - 1
    while lo <= hi:
        line = lines[lo] if len(keep_head) <= len(keep_tail) else lines[hi]
        if used + len(line) + 1 > _MAX_EVENTS_CHARS:
            break
        used += len(line) + 1
        if len(keep_head) <= len(keep_tail):
            keep_head.append(line)
            lo += 1
        else:
            keep_tail.append(line)
            hi -= 1
    omitted = hi - lo + 1
    marker = [f"[... {omitted} events omitted for length ...]"] if omitted > 0 else []
    return keep_head + marker + keep_tail[::-1]


def _cut(text: str, limit: int) -> str:
    """``text`` if short enough, else its head and tail with a marker saying how much was cut."""
    if len(text) <= limit:
        return text
    keep = max(limit - 40, 20)
    head, tail = keep * 2 // 3, keep - keep * 2 // 3
    cut = len(text) - head - tail
    return f"{text[:head]} [... {cut} chars cut ...] {text[-tail:]}"


def _json_text(value: object) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _REPLY_EXCERPT_CHARS else text[: _REPLY_EXCERPT_CHARS - 3] + "..."
