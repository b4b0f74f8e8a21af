"""What assembly returns: a :class:`ContextWindow` and its per-tier accounts. Pure data."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kenning.checks import check_numbers
from kenning.errors import InvalidInput

__all__ = [
    "TIER_ORDER",
    "ContextWindow",
    "Pressure",
    "PressureThresholds",
    "Price",
    "Skip",
    "Tier",
    "TierAccount",
    "TierCaps",
]


class Tier(enum.StrEnum):
    """The tiers of a window, in fill order."""

    SYSTEM = "system"
    GOAL = "goal"
    TOOLS = "tools"
    PROFILE = "profile"
    PINS = "pins"
    TAIL = "tail"
    SUMMARIES = "summaries"
    MEMORIES = "memories"


TIER_ORDER: tuple[Tier, ...] = tuple(Tier)


class Pressure(enum.StrEnum):
    """How full the session's working context is (see :class:`PressureThresholds`)."""

    OK = "ok"
    WARN = "warn"
    COMPACT = "compact"
    HARD = "hard"


@dataclass(frozen=True, slots=True)
class PressureThresholds:
    """Utilization thresholds: at ``warn`` a log line and a metric, at ``compact`` a background
    compaction is queued, at ``hard`` compaction completes before the window is returned."""

    warn: float = 0.70
    compact: float = 0.85
    hard: float = 0.95

    def __post_init__(self) -> None:
        check_numbers(self, ("warn", "compact", "hard"), low=0, above=True)
        if not 0 < self.warn <= self.compact <= self.hard:
            raise InvalidInput("pressure thresholds must satisfy 0 < warn <= compact <= hard")

    def level(self, utilization: float) -> Pressure:
        if utilization >= self.hard:
            return Pressure.HARD
        if utilization >= self.compact:
            return Pressure.COMPACT
        if utilization >= self.warn:
            return Pressure.WARN
        return Pressure.OK


@dataclass(frozen=True, slots=True)
class TierCaps:
    """The most of the usable budget each tier may take, as a fraction (``None``: no cap
    beyond what earlier tiers left). The system policy is never capped."""

    goal: float | None = 0.15
    tools: float | None = 0.25
    profile: float | None = 0.1
    pins: float | None = None
    tail: float | None = None
    summaries: float | None = 0.25
    memories: float | None = 0.15

    def __post_init__(self) -> None:
        names = [tier.value for tier in TIER_ORDER[1:]]
        check_numbers(self, names, low=0, high=1, optional=True)

    def cap(self, tier: Tier, budget: int) -> int | None:
        if tier is Tier.SYSTEM:
            return None
        value: float | None = getattr(self, tier.value)
        return None if value is None else int(value * budget)


@dataclass(frozen=True, slots=True)
class Price:
    """What a model charges per million tokens of input and of output (any currency)."""

    input_per_mtok: float
    output_per_mtok: float

    def __post_init__(self) -> None:
        for value in (self.input_per_mtok, self.output_per_mtok):
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise InvalidInput("prices must be numbers >= 0 per million tokens")

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1e6


@dataclass(frozen=True, slots=True)
class Skip:
    """A piece left out of the window, and why."""

    key: str
    tokens: int
    reason: str


@dataclass(frozen=True, slots=True)
class TierAccount:
    """One tier's share of the window."""

    tier: Tier
    tokens: int = 0
    included: int = 0
    skipped: tuple[Skip, ...] = ()
    cap: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "tokens": self.tokens,
            "included": self.included,
            "cap": self.cap,
            "skipped": [
                {"key": s.key, "tokens": s.tokens, "reason": s.reason} for s in self.skipped
            ],
        }


@dataclass(frozen=True, slots=True)
class ContextWindow:
    """A window ready for an OpenAI-style chat API.

    Attributes:
        messages: the chat messages, in order: system policy, goal and task state, pins,
            summaries, retrieved memories, then the recent tail (a tool result as a ``tool``
            message right after the ``assistant`` message carrying its call in
            ``tool_calls``; every ``content`` is a string).
        tools: the tool schemas to pass as ``tools`` (a routed subset when all did not fit).
        tiers: tokens used, pieces included and pieces skipped (and why) per tier.
        tokens: the exact prompt tokens of ``messages`` plus ``tools`` for the model.
        budget: the usable budget (``budget_tokens - reserve_output_tokens``).
        utilization: the session's dynamic tokens over the budget (what pressure is read
            from), in its most compact stored form: with its summaries, or its raw turns when
            the window shows them all and they take less.
        pressure: the pressure level at that utilization.
        degraded: True when a part could not be produced (e.g. retrieval unavailable).
        reasons: why the window is degraded, and what pressure did.
        encoding: the tokenizer counts were made with; ``exact`` is False for the labelled
            approximation used for model families without a public tokenizer.
        citations: id, session, sequence, time and score of each retrieved memory.
        cost: the estimated price of the call: this window as input plus the reserved output
            at the model's rates (``ContextSettings.prices``); None when no rate is known.
    """

    messages: tuple[Mapping[str, Any], ...]
    tools: tuple[Mapping[str, Any], ...]
    tiers: Mapping[Tier, TierAccount]
    tokens: int
    budget: int
    utilization: float
    pressure: Pressure
    degraded: bool = False
    reasons: tuple[str, ...] = ()
    encoding: str = ""
    exact: bool = True
    citations: tuple[Mapping[str, Any], ...] = field(default_factory=tuple)
    cost: float | None = None

    def to_json(self) -> dict[str, Any]:
        """The shape ``kenning assemble --json`` prints."""
        return {
            "messages": [dict(m) for m in self.messages],
            "tools": [dict(t) for t in self.tools],
            "tiers": {tier.value: account.to_json() for tier, account in self.tiers.items()},
            "tokens": self.tokens,
            "budget": self.budget,
            "utilization": round(self.utilization, 4),
            "pressure": self.pressure.value,
            "degraded": self.degraded,
            "reasons": list(self.reasons),
            "encoding": self.encoding,
            "exact": self.exact,
            "citations": [dict(c) for c in self.citations],
            "cost": self.cost,
        }
