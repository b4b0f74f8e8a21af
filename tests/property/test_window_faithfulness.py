"""Compaction never makes a later window worse: a summary replaces turns only in windows that
cannot hold them.

A window at a small budget compacts the session (at hard pressure on the caller's thread, at
the compact level in the background) and the summaries it writes stay. A later window at a
budget that holds every raw turn still shows them all, raw, and is no larger than the window
the same budget gave before any compaction. Real SQLite, the real embedding model.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from kenning import BudgetError, ContextWindow, Memory, Scope, Tier
from tests.conftest import MemoEmbedder

SCOPE = Scope("acme", "dana", "s1")
SYSTEM = "You are a helpful support agent."
TURNS = [
    ("user", "My order A-1042 arrived broken, the glass is shattered."),
    ("assistant", "Sorry to hear that. Can you send a photo of the damage?"),
    ("user", "Sure, here it is. The box was crushed on one side too."),
    ("assistant", "Thanks. I can offer a refund of 49.90 EUR or a replacement."),
    ("user", "A refund please, to the card I paid with."),
    ("assistant", "Done: refund R-77 of 49.90 EUR is on its way, 3-5 days."),
    ("user", "Great. Will I get an email confirmation?"),
    ("assistant", "Yes, you will get it within the hour."),
    ("user", "Also, my previous order B-311 never arrived at all."),
    ("assistant", "I see B-311 was returned to the depot; shall I resend it?"),
    ("user", "Yes please, same address as before."),
    ("assistant", "Resent B-311 today with tracking number TR-5521."),
]


def _window(memory: Memory, budget: int) -> ContextWindow:
    return memory.context.assemble(SCOPE, budget_tokens=budget, model="gpt-4o", system=SYSTEM)


def _raw_turns(window: ContextWindow) -> list[dict[str, str]]:
    return [dict(m) for m in window.messages if m["role"] != "system"]


def _holds_every_turn(window: ContextWindow, turns: Sequence[tuple[str, str]]) -> bool:
    return [(m["role"], m["content"]) for m in _raw_turns(window)] == list(turns)


def _compare(memory: Memory, turns: Sequence[tuple[str, str]], small: Sequence[int], large: int):  # type: ignore[no-untyped-def]
    """The window at *large* before and after windows at the *small* budgets."""
    memory.add_events(SCOPE, [{"role": r, "content": c} for r, c in turns])
    before = _window(memory, large)
    for budget in small:
        with suppress(BudgetError):  # a budget the latest input alone does not fit
            _window(memory, budget)
    memory.context.wait_for_compaction(timeout=60)  # what the background queued, done
    return before, _window(memory, large)


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    n=st.integers(min_value=6, max_value=len(TURNS)),
    small=st.lists(st.integers(min_value=40, max_value=400), min_size=1, max_size=4),
    large=st.integers(min_value=200, max_value=3_000),
)
def test_a_compaction_for_small_budgets_leaves_a_window_that_held_every_turn_as_it_was(
    real_embedder: MemoEmbedder, n: int, small: list[int], large: int
) -> None:
    turns = TURNS[:n]
    with Memory.open(":memory:", embedder=real_embedder) as memory:
        before, after = _compare(memory, turns, [b for b in small if b < large], large)
        summarized = bool(memory.context.summaries(SCOPE))
    event(f"held every turn: {_holds_every_turn(before, turns)}; summarized: {summarized}")
    if not _holds_every_turn(before, turns):
        return  # a budget that never held every turn: compaction is what it is for
    assert _holds_every_turn(after, turns), (small, large, after.reasons)
    assert after.tiers[Tier.SUMMARIES].included == 0
    assert after.tokens <= before.tokens
    assert after.messages == before.messages


def test_the_eight_turn_session_keeps_its_raw_window_after_budgets_of_60_120_and_250(
    real_embedder: MemoEmbedder,
) -> None:
    turns = TURNS[:8]
    with Memory.open(":memory:", embedder=real_embedder) as memory:
        before, after = _compare(memory, turns, [60, 120, 250], 2_000)
        # The small windows did compact: the summary is stored, for windows that need it.
        assert memory.context.summaries(SCOPE)
        assert _holds_every_turn(_window(memory, 250), turns)  # 250 holds every turn too
    assert _holds_every_turn(before, turns)
    assert _holds_every_turn(after, turns), after.reasons
    assert after.tiers[Tier.SUMMARIES].included == 0
    assert after.tiers[Tier.MEMORIES].included == 0
    assert after.tokens == before.tokens
