"""An LLM summarizer over any OpenAI-compatible ``/chat/completions`` endpoint.

The model is asked for a :class:`~kenning.compaction.body.SummaryBody` as JSON, constrained by a
JSON schema (``response_format: json_schema``). Network errors, HTTP 5xx/429 and replies that
are not a valid body are retried with exponential backoff; when every attempt fails (or anything
unexpected happens) the deterministic ``fallback`` summarizer runs instead and the result says
why in ``fallback_reason``. :meth:`LLMSummarizer.summarize` never raises.

Requests go through :class:`kenning.chat.ChatClient` (pooled, retried). Nothing happens at
import: settings are built explicitly, from arguments, at the edge.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Sequence
from typing import Any

from kenning.chat import (
    ChatClient,
    ChatFailed,
    LLMSettings,
    Rejected,
    array_schema,
    object_schema,
)
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

# Prompt bounds: one event's text is cut to at most _MAX_EVENT_CHARS (head and tail kept); if
# the events together still exceed _MAX_EVENTS_CHARS the per-event cap shrinks down to
# _MIN_EVENT_CHARS, and only then are middle events left out.
_MAX_EVENT_CHARS = 2_000
_MIN_EVENT_CHARS = 240
_MAX_EVENTS_CHARS = 24_000
_MAX_PIN_CHARS = 200
_MAX_PINS = 50
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


def summary_schema(*, max_items: int | None = None) -> dict[str, Any]:
    """The JSON schema of :meth:`SummaryBody.to_json` (five sections of ranged items), with at
    most ``max_items`` items per section when given (this also stops a looping model)."""
    item = object_schema(
        {
            "text": {"type": "string"},
            "first_seq": {"type": "integer"},
            "last_seq": {"type": "integer"},
        }
    )
    return object_schema({name: array_schema(item, max_items) for name in SummaryBody().to_json()})


def max_items_for(max_tokens: int) -> int:
    """Items per section worth asking for: a rendered item costs ~30 tokens, and the caller
    trims a summary to ``max_tokens`` anyway."""
    return max(2, min(20, max_tokens // 30))


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
        self._chat = ChatClient(settings)
        self._fallback = fallback

    def close(self) -> None:
        """Close the HTTP connections (a later summary opens new ones)."""
        self._chat.close()

    @property
    def name(self) -> str:
        return f"llm:{self._chat.settings.model}"

    @property
    def settings(self) -> LLMSettings:
        return self._chat.settings

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        """Summarize ``request`` with the LLM, or with the fallback if the LLM fails."""
        try:
            body = self._chat.complete_json(
                build_payload(self._chat.settings, request),
                lambda data: _body(data, request),
                name=self.name,
            )
        except ChatFailed as exc:
            logger.warning("%s; using %s", exc.reason, self._fallback.name)
            return self._fall_back(request, exc.reason)
        except Exception as exc:  # the contract: never raise, fall back instead
            reason = f"{self.name} failed: unexpected {type(exc).__name__}: {str(exc)[:200]}"
            logger.exception("LLM summarizer: unexpected error; using %s", self._fallback.name)
            return self._fall_back(request, reason)
        return SummaryResult(body=body, summarizer=self.name)

    def _fall_back(self, request: SummaryRequest, reason: str) -> SummaryResult:
        result = self._fallback.summarize(request)
        return dataclasses.replace(result, fallback_reason=reason)


def _body(data: Any, request: SummaryRequest) -> SummaryBody:
    try:
        return SummaryBody.from_json(
            _without_blank_items(data), first_seq=request.first_seq, last_seq=request.last_seq
        )
    except InvalidInput as exc:
        raise Rejected(f"reply is not a summary body: {exc.message}") from exc


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
