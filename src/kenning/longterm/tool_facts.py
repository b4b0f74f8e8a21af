"""Facts an agent discovered: configuration, endpoints, account ids and versions in tool results
and in what the assistant told the user (pure).

A tool result is walked as JSON; a scalar whose key names something worth keeping (``url``,
``endpoint``, ``version``, ``account_id``, ``region``, ``plan``...) becomes a fact about the
tool (subject ``tool:<name>``, attribute the key's path), tagged with its source. The assistant
stating "your account id is ACC-99123" gives a fact about the user, inferred (the user did not
say it). Fragments under 10 characters ("id: 7") are skipped: they are noise more often than
knowledge.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from kenning.records import USER, Event, FactDraft, FactSource, Role

__all__ = ["discovered_facts"]

_MIN_CHARS = 10
_MAX_VALUE = 200
_MAX_DEPTH = 4
_MAX_FACTS = 20
_KEY_RE = re.compile(
    r"(?:^|_|\b)(?:url|uri|endpoint|host|hostname|base_url|api_url|domain|version|release|"
    r"account(?:_id|_number)?|customer_id|tenant_id|project(?:_id)?|workspace(?:_id)?|"
    r"org(?:anization)?(?:_id)?|region|zone|plan|tier|sku|config|configuration|setting|"
    r"environment|env|cluster|database|bucket|queue|topic|repo(?:sitory)?|branch|model|"
    r"timezone|locale|currency|email)(?:$|_|\b)",
    re.IGNORECASE,
)
_ASSISTANT_RE = re.compile(
    r"\byour (?P<a>account(?: id| number)?|customer (?:id|number)|plan|subscription|"
    r"api endpoint|endpoint|base url|workspace(?: id)?|project id|region|tier|username|"
    r"support ticket|ticket(?: number)?) (?:is|has been set to|was changed to) "
    r"(?P<v>[^\s,;!?]+(?:\s[^\s,;!?]+){0,5}?)(?=[.,;!?]?(?:\s|$))",
    re.IGNORECASE,
)


def _leaves(value: Any, path: str = "", depth: int = 0) -> Iterator[tuple[str, Any]]:
    if depth > _MAX_DEPTH:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, f"{path}.{key}" if path else str(key), depth + 1)
    elif isinstance(value, list):
        for item in value[:20]:
            yield from _leaves(item, path, depth + 1)
    elif isinstance(value, str | int | float) and not isinstance(value, bool):
        yield path, value


def _tool_payload(event: Event) -> Any:
    payload = event.tool_result
    if payload is None and event.role is Role.TOOL:
        payload = event.content
    if isinstance(payload, str):
        try:
            payload = json.loads(payload)
        except ValueError:
            return None
    return payload


def discovered_facts(event: Event) -> list[FactDraft]:
    """Facts in a tool result or an assistant turn, each tagged with where it came from."""
    out: dict[tuple[str, str, str], FactDraft] = {}
    if event.role is Role.TOOL:
        tool = event.tool_name or "tool"
        payload = _tool_payload(event)
        for path, raw in _leaves(payload):
            last = path.rsplit(".", 1)[-1]
            value = str(raw).strip()[:_MAX_VALUE]
            text = f"{tool} {path}: {value}"
            if not _KEY_RE.search(last) or len(f"{last}: {value}") < _MIN_CHARS or not value:
                continue
            draft = FactDraft(
                subject=f"tool:{tool}", attribute=path.lower(), value=value, text=text,
                source=FactSource.TOOL, source_event_id=event.id, valid_from=event.at,
                tags=("tool", tool),
            )  # fmt: skip
            out.setdefault(draft.key, draft)
            if len(out) >= _MAX_FACTS:
                break
    elif event.role is Role.ASSISTANT:
        for match in _ASSISTANT_RE.finditer(event.content):
            attribute = " ".join(match["a"].lower().split())
            value = match["v"].strip(" .")
            if len(f"{attribute}: {value}") < _MIN_CHARS:
                continue
            draft = FactDraft(
                subject=USER, attribute=attribute, value=value, text=f"user {attribute}: {value}",
                source=FactSource.INFERRED, confidence=0.8, source_event_id=event.id,
                valid_from=event.at, tags=("assistant",),
            )  # fmt: skip
            out.setdefault(draft.key, draft)
    return list(out.values())
