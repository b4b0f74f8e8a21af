"""Budget arithmetic of window assembly: invariants over random pieces and budgets."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kenning.context.fill import Piece, fill
from kenning.context.window import TIER_ORDER, Tier, TierCaps
from kenning.errors import BudgetError

LATER = TIER_ORDER[1:]


@st.composite
def windows(draw: st.DrawFn) -> tuple[dict[Tier, list[Piece]], int, TierCaps, dict[Tier, int]]:
    pieces: dict[Tier, list[Piece]] = {
        Tier.SYSTEM: [Piece(Tier.SYSTEM, "system", draw(st.integers(1, 400)))]
    }
    for tier in LATER:
        sizes = draw(st.lists(st.integers(1, 300), max_size=8))
        pieces[tier] = [Piece(tier, f"{tier.value}{i}", n) for i, n in enumerate(sizes)]
    if pieces[Tier.TAIL] and draw(st.booleans()):
        i = draw(st.integers(0, len(pieces[Tier.TAIL]) - 1))
        p = pieces[Tier.TAIL][i]
        pieces[Tier.TAIL][i] = Piece(p.tier, p.key, p.tokens, mandatory=True)
    caps = TierCaps(
        **{t.value: draw(st.one_of(st.none(), st.floats(0, 1))) for t in LATER}  # type: ignore[arg-type]
    )
    surcharge = {t: draw(st.integers(0, 20)) for t in TIER_ORDER}
    return pieces, draw(st.integers(1, 4_000)), caps, surcharge


@settings(max_examples=300, deadline=None)
@given(windows())
def test_window_never_exceeds_budget_and_is_deterministic(case) -> None:  # type: ignore[no-untyped-def]
    pieces, budget, caps, surcharge = case
    try:
        plan = fill(pieces, budget=budget, caps=caps, surcharge=surcharge, base=3)
    except BudgetError:
        mandatory = 3 + pieces[Tier.SYSTEM][0].tokens + surcharge[Tier.SYSTEM]
        mandatory += sum(p.tokens for p in pieces[Tier.TAIL] if p.mandatory)
        assert mandatory > budget
        return
    assert plan.tokens <= budget
    assert plan.tokens == 3 + sum(a.tokens for a in plan.accounts.values())
    again = fill(pieces, budget=budget, caps=caps, surcharge=surcharge, base=3)
    assert again == plan
    # The system policy and the latest input are always there.
    assert plan.pieces(Tier.SYSTEM) == tuple(pieces[Tier.SYSTEM])
    assert all(p in plan.pieces(Tier.TAIL) for p in pieces[Tier.TAIL] if p.mandatory)
    for tier in LATER:
        cap = caps.cap(tier, budget)
        if cap is not None:
            extra = sum(p.tokens for p in plan.pieces(tier) if p.mandatory)
            assert plan.accounts[tier].tokens - extra <= cap


@settings(max_examples=300, deadline=None)
@given(windows())
def test_a_later_tier_never_displaces_an_earlier_one(case) -> None:  # type: ignore[no-untyped-def]
    pieces, budget, caps, surcharge = case
    try:
        full = fill(pieces, budget=budget, caps=caps, surcharge=surcharge)
    except BudgetError:
        return
    for cut, tier in enumerate(LATER):
        # Removing every later tier's pieces (keeping the reserved latest input) must not
        # change what this tier and the earlier ones got.
        fewer = {t: list(pieces[t]) for t in TIER_ORDER}
        for later in LATER[cut + 1 :]:
            fewer[later] = [p for p in pieces[later] if p.mandatory]
        prefix = fill(fewer, budget=budget, caps=caps, surcharge=surcharge)
        for earlier in TIER_ORDER[: cut + 2]:
            if earlier is Tier.TAIL and tier is not Tier.TAIL and cut + 1 < LATER.index(Tier.TAIL):
                continue
            assert prefix.pieces(earlier) == full.pieces(earlier), (tier, earlier)


@settings(max_examples=300, deadline=None)
@given(windows())
def test_pins_are_kept_whenever_they_fit_with_the_policy_and_goal(case) -> None:  # type: ignore[no-untyped-def]
    pieces, budget, _, surcharge = case
    caps = TierCaps()  # pins are uncapped by default
    pieces[Tier.TOOLS] = []
    pieces[Tier.PROFILE] = []  # the tiers between the goal and the pins are empty here
    try:
        plan = fill(pieces, budget=budget, caps=caps, surcharge=surcharge)
    except BudgetError:
        return
    goal = plan.accounts[Tier.GOAL].tokens
    reserved = sum(p.tokens for p in pieces[Tier.TAIL] if p.mandatory)
    pins = sum(p.tokens for p in pieces[Tier.PINS])
    pins += surcharge[Tier.PINS] if pieces[Tier.PINS] else 0
    if plan.accounts[Tier.SYSTEM].tokens + goal + reserved + pins <= budget:
        assert plan.pieces(Tier.PINS) == tuple(pieces[Tier.PINS])


def test_tail_stops_at_the_first_message_that_does_not_fit() -> None:
    tail = [Piece(Tier.TAIL, f"m{i}", n) for i, n in enumerate([10, 10, 500, 5, 5])]
    pieces = {Tier.SYSTEM: [Piece(Tier.SYSTEM, "s", 10)], Tier.TAIL: tail}
    uncapped = TierCaps(profile=None, memories=None)
    plan = fill(pieces, budget=100, caps=uncapped)
    assert [p.key for p in plan.pieces(Tier.TAIL)] == ["m0", "m1"]
    reasons = [s.reason for s in plan.accounts[Tier.TAIL].skipped]
    assert reasons == ["budget", "older than the tail that fits", "older than the tail that fits"]


def test_a_piece_that_does_not_fit_is_skipped_and_later_ones_still_enter() -> None:
    pins = [Piece(Tier.PINS, "big", 80), Piece(Tier.PINS, "small", 5)]
    pieces = {Tier.SYSTEM: [Piece(Tier.SYSTEM, "s", 10)], Tier.PINS: pins}
    plan = fill(pieces, budget=50, caps=TierCaps())
    assert [p.key for p in plan.pieces(Tier.PINS)] == ["small"]
    assert plan.accounts[Tier.PINS].skipped[0].key == "big"


def test_system_policy_too_big_alone_is_a_budget_error() -> None:
    with pytest.raises(BudgetError, match="system policy"):
        fill({Tier.SYSTEM: [Piece(Tier.SYSTEM, "s", 101)]}, budget=100, caps=TierCaps())


def test_a_record_an_earlier_tier_states_is_not_shown_again() -> None:
    """A profile line states a fact: the fact found again among the memories is left out,
    with its reason, and costs nothing; one the profile could not fit is shown."""
    profile = [
        Piece(Tier.PROFILE, "profile:0", 8, states=frozenset({"fact-munich"})),
        Piece(Tier.PROFILE, "profile:1", 500, states=frozenset({"fact-jazz"})),
    ]
    memories = [Piece(Tier.MEMORIES, key, 9) for key in ("fact-munich", "fact-jazz", "ev-1")]
    pieces = {Tier.SYSTEM: [Piece(Tier.SYSTEM, "system", 5)], Tier.PROFILE: profile,
              Tier.MEMORIES: memories}  # fmt: skip
    uncapped = TierCaps(profile=None, memories=None)
    plan = fill(pieces, budget=100, caps=uncapped)
    assert [p.key for p in plan.pieces(Tier.PROFILE)] == ["profile:0"]
    assert [p.key for p in plan.pieces(Tier.MEMORIES)] == ["fact-jazz", "ev-1"]
    (skip,) = plan.accounts[Tier.MEMORIES].skipped
    assert (skip.key, skip.reason) == ("fact-munich", "stated by an earlier tier")
    assert plan.accounts[Tier.MEMORIES].tokens == 18
    # Without the profile's claim the fact is a memory like any other.
    plain = {**pieces, Tier.PROFILE: [Piece(Tier.PROFILE, "profile:0", 8)]}
    shown = fill(plain, budget=100, caps=uncapped).pieces(Tier.MEMORIES)
    assert [p.key for p in shown] == ["fact-munich", "fact-jazz", "ev-1"]
