"""An LLM fact extractor over any OpenAI-compatible endpoint, with the rules as its fallback.

The model reads the user turns of a batch (numbered) and answers one JSON object constrained
by a schema: the facts the user states about themselves or people they name, each with the
turn it comes from. Facts in tool results and assistant turns are still read by the rules
(they are structured already). On any failure — the endpoint down, a reply that is not the
schema after the retries, anything unexpected — the whole batch falls back to the rules, so
extraction never stops because a model did.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from kenning.chat import ChatClient, ChatFailed, LLMSettings, Rejected, array_schema, object_schema
from kenning.longterm.extract import statement
from kenning.longterm.tool_facts import discovered_facts
from kenning.records import USER, Event, FactCategory, FactDraft, FactSource, Role

__all__ = ["LLMFactExtractor", "fact_schema"]

log = logging.getLogger("kenning")

_MAX_FACTS = 40
_MAX_TURN_CHARS = 1_500
_SYSTEM = """\
You extract long-term facts from what a user says in a chat. Answer with one JSON object and \
nothing else: {"facts": [...]}, each fact {"turn", "subject", "attribute", "value", \
"qualifier", "revoke", "category", "hedged"}.

Only facts the speaker states as true now, about themselves (subject "user") or about a person \
they name (subject: the relation, e.g. "sister"). Nothing from questions, wishes, plans, \
hypotheticals ("if I were"), the past ("I used to"), what others said about them, or jokes.

attribute: a short lower-case name. Single values: "employer", "occupation", "location", \
"hometown", "name", "preferred name", "age", "relationship status", or "my X is Y" as X. \
Things a user can have several of carry the thing after a colon: "preference:jazz" (value \
likes, loves, dislikes or prefers), "allergy:peanuts" (value allergic), "is_a:vegan" (value \
yes), "uses:linux" (value yes), "diet:no pork" (value yes).
qualifier: a context like "at work" or "at home", else "".
revoke: true when the user withdraws a fact ("I no longer eat meat" is a new diet fact, but \
"forget that I like jazz" and "I don't live in Paris anymore" revoke).
category: "health", "finance" or "relationship" for those topics (family members included), \
else "general". hedged: true when the user is unsure ("I think", "maybe")."""


def fact_schema() -> dict[str, Any]:
    """The JSON schema of the reply."""
    item = object_schema(
        {
            "turn": {"type": "integer"},
            "subject": {"type": "string"},
            "attribute": {"type": "string"},
            "value": {"type": "string"},
            "qualifier": {"type": "string"},
            "revoke": {"type": "boolean"},
            "category": {"type": "string", "enum": [c.value for c in FactCategory]},
            "hedged": {"type": "boolean"},
        }
    )
    return object_schema({"facts": array_schema(item, _MAX_FACTS)})


def _text(value: Any, what: str, *, empty: bool = False) -> str:
    if not isinstance(value, str) or (not value.strip() and not empty) or len(value) > 200:
        raise Rejected(f"{what} must be a string of at most 200 characters")
    return " ".join(value.split())


def _drafts(data: Any, turns: Sequence[Event]) -> list[FactDraft]:
    if not isinstance(data, dict) or not isinstance(data.get("facts"), list):
        raise Rejected('reply is not {"facts": [...]}')
    out = []
    for raw in data["facts"][:_MAX_FACTS]:
        if not isinstance(raw, dict):
            raise Rejected("a fact is not an object")
        turn = raw.get("turn")
        if not isinstance(turn, int) or not 1 <= turn <= len(turns):
            raise Rejected(f"a fact names turn {turn!r}, outside 1..{len(turns)}")
        event = turns[turn - 1]
        subject = _text(raw.get("subject"), "subject").lower()
        subject = USER if subject in ("user", "i", "me", "the user") else subject
        attribute = _text(raw.get("attribute"), "attribute").lower()
        value = _text(raw.get("value"), "value")
        qualifier = _text(raw.get("qualifier", ""), "qualifier", empty=True).lower()
        try:
            category = FactCategory(raw.get("category", "general"))
        except ValueError as exc:
            raise Rejected(f"unknown category {raw.get('category')!r}") from exc
        hedged = raw.get("hedged") is True
        out.append(
            FactDraft(
                subject=subject, attribute=attribute, value=value, qualifier=qualifier,
                text=statement(subject, attribute, value, qualifier),
                source=FactSource.INFERRED if hedged else FactSource.EXPLICIT,
                confidence=0.6 if hedged else 0.9, category=category,
                revoke=raw.get("revoke") is True, valid_from=event.at,
                source_event_id=event.id, tags=("llm",),
            )
        )  # fmt: skip
    return out


class LLMFactExtractor:
    """Extracts facts with an LLM; *fallback* (the rules) runs whenever it fails."""

    def __init__(self, settings: LLMSettings, *, fallback: Any) -> None:
        self._chat = ChatClient(settings)
        self._fallback = fallback
        self.fallbacks = 0

    @property
    def name(self) -> str:
        return f"llm:{self._chat.settings.model}"

    def close(self) -> None:
        self._chat.close()

    def extract(self, events: Sequence[Event]) -> list[FactDraft]:
        turns = [e for e in events if e.role is Role.USER]
        others = [d for e in events if e.role is not Role.USER for d in discovered_facts(e)]
        if not turns:
            return others
        payload = {
            "model": self._chat.settings.model,
            "messages": [
                {"role": "system", "content": _SYSTEM},
                {"role": "user", "content": "\n".join(
                    f"#{n} {e.content[:_MAX_TURN_CHARS]}" for n, e in enumerate(turns, start=1)
                )},
            ],
            "temperature": self._chat.settings.temperature,
            "max_tokens": self._chat.settings.max_output_tokens,
            "stream": False,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "kenning_facts", "strict": True, "schema": fact_schema()},
            },
        }  # fmt: skip
        try:
            found = self._chat.complete_json(
                payload, lambda data: _drafts(data, turns), name=self.name
            )
        except ChatFailed as exc:
            self.fallbacks += 1
            log.warning("%s; facts read by the rules instead", exc.reason)
            return list(self._fallback.extract(events))
        except Exception:  # never stop extraction because a model failed
            self.fallbacks += 1
            log.exception("LLM fact extractor: unexpected error; facts read by the rules")
            return list(self._fallback.extract(events))
        return [*found, *others]
