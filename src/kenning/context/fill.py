"""The budget arithmetic of assembly: which pieces enter the window. Pure, no I/O.

Tiers fill in :data:`~kenning.context.window.TIER_ORDER`. The system policy and the latest
user input are mandatory: they are placed first (too big together is a
:class:`~kenning.errors.BudgetError`). Every other piece enters if it fits in what earlier
tiers left and under its tier's cap, else it is skipped and the next piece is tried; the tail
is the exception, filled newest first and stopped at the first message that does not fit, so
it stays one unbroken run of the latest messages. A later tier never takes room an earlier
tier used, nor shows again a record an earlier tier's piece states (a fact the profile
states is not repeated among the memories).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kenning.context.window import TIER_ORDER, Skip, Tier, TierAccount, TierCaps
from kenning.errors import BudgetError

__all__ = ["Piece", "Plan", "fill"]


@dataclass(frozen=True, slots=True)
class Piece:
    """A candidate for the window.

    ``tokens`` is what the piece adds: a tail event's whole cost (framing included); for a
    tier rendered as one block message, the cost of its line. ``messages`` are the chat
    messages a tail event (one, or a tool result's call and result) or a playbook becomes.
    ``tail`` pieces come newest first. ``states`` are the keys of records the piece
    states (a profile line, its fact): a later piece with one of those keys is left out.
    """

    tier: Tier
    key: str
    tokens: int
    text: str = ""
    messages: tuple[Mapping[str, Any], ...] = ()
    payload: Any = None
    mandatory: bool = False
    states: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Plan:
    """The chosen pieces per tier (in the order given) and each tier's account."""

    included: Mapping[Tier, tuple[Piece, ...]]
    accounts: Mapping[Tier, TierAccount]
    tokens: int
    budget: int

    def pieces(self, tier: Tier) -> tuple[Piece, ...]:
        return self.included.get(tier, ())


@dataclass(slots=True)
class _Tally:
    pieces: list[Piece] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    tokens: int = 0


def fill(
    pieces: Mapping[Tier, Sequence[Piece]],
    *,
    budget: int,
    caps: TierCaps,
    surcharge: Mapping[Tier, int] | None = None,
    base: int = 0,
    max_tail: int | None = None,
) -> Plan:
    """Choose the pieces of a window of at most *budget* tokens.

    Args:
        pieces: candidates per tier, each tier in priority order (the tail newest first).
        budget: the usable budget.
        caps: the most each tier may take.
        surcharge: tokens a tier's block message costs besides its lines (framing, header),
            charged once when its first piece enters.
        base: tokens every request costs (the reply priming).
        max_tail: the most tail messages (the window's message cap less its other messages);
            a tool result counts as its two.

    Raises:
        BudgetError: the system policy and the latest user input alone exceed *budget*.
    """
    extra = dict(surcharge or {})
    tallies = {tier: _Tally() for tier in TIER_ORDER}
    used = base + _place_system(pieces.get(Tier.SYSTEM, ()), tallies[Tier.SYSTEM], extra)
    # The latest user input is held back now and placed in the tail, where it belongs.
    reserved = sum(p.tokens for p in pieces.get(Tier.TAIL, ()) if p.mandatory)
    if used + reserved > budget:
        what = "the system policy" if not reserved else "the system policy and the latest input"
        raise BudgetError(
            f"{what} need {used + reserved} tokens, over the budget of {budget}; raise "
            "budget_tokens, lower reserve_output_tokens or shorten the system policy"
        )
    stated: set[str] = set()
    for tier in TIER_ORDER[1:]:
        used, reserved = _fill_tier(
            tier, pieces.get(tier, ()), tallies[tier], used=used, reserved=reserved,
            budget=budget, cap=caps.cap(tier, budget), surcharge=extra.get(tier, 0),
            max_tail=max_tail, stated=stated,
        )  # fmt: skip
    return Plan(
        included={tier: tuple(t.pieces) for tier, t in tallies.items()},
        accounts={
            tier: TierAccount(
                tier=tier,
                tokens=t.tokens,
                included=len(t.pieces),
                skipped=tuple(t.skipped),
                cap=caps.cap(tier, budget),
            )
            for tier, t in tallies.items()
        },
        tokens=used,
        budget=budget,
    )


def _place_system(pieces: Sequence[Piece], tally: _Tally, surcharge: Mapping[Tier, int]) -> int:
    """Place the system policy whatever its size; return the tokens it takes."""
    used = 0
    for piece in pieces:
        cost = piece.tokens + (surcharge.get(Tier.SYSTEM, 0) if not tally.pieces else 0)
        tally.pieces.append(piece)
        tally.tokens += cost
        used += cost
    return used


def _count(piece: Piece) -> int:
    """The chat messages a piece becomes (a tool result is two: its call and itself)."""
    return max(1, len(piece.messages))


def _fill_tier(
    tier: Tier,
    pieces: Sequence[Piece],
    tally: _Tally,
    *,
    used: int,
    reserved: int,
    budget: int,
    cap: int | None,
    surcharge: int,
    max_tail: int | None,
    stated: set[str],
) -> tuple[int, int]:
    """Place what fits of one tier's *pieces* into *tally*; return the tokens used in all and
    those still reserved for mandatory pieces. *stated* gathers the keys the placed pieces
    state."""
    stopped = False
    for piece in pieces:
        if piece.mandatory:
            reserved -= piece.tokens
            tally.pieces.append(piece)
            tally.tokens += piece.tokens
            used += piece.tokens
            stated |= piece.states
            continue
        cost = piece.tokens + (surcharge if not tally.pieces else 0)
        reason = None
        if stopped:
            reason = "older than the tail that fits"
        elif piece.key in stated:
            reason = "stated by an earlier tier"
        elif (
            tier is Tier.TAIL
            and max_tail is not None
            and (sum(map(_count, tally.pieces)) + _count(piece) > max_tail)
        ):
            reason = "message cap"
        elif used + reserved + cost > budget:
            reason = "budget"
        elif cap is not None and tally.tokens + cost > cap:
            reason = "tier cap"
        if reason is not None:
            tally.skipped.append(Skip(key=piece.key, tokens=piece.tokens, reason=reason))
            stopped = stopped or tier is Tier.TAIL
            continue
        tally.pieces.append(piece)
        tally.tokens += cost
        used += cost
        stated |= piece.states
    return used, reserved
