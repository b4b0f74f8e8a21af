"""Issue 27's everyday sentences, each as a user meets it: after saying it, the current value
is in ``facts list``, in the profile, in the next session's window and the top search hit for
a question about it, and the value it replaced is none of those. The real parser and model,
on SQLite and PostgreSQL."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kenning import Memory, Scope
from kenning.context.window import Tier
from kenning.records import FactStatus, Profile
from tests.conftest import MemoEmbedder
from tests.pg import PG_URL, fresh_postgres

T0 = datetime(2026, 1, 5, 9, tzinfo=UTC)
SAM = Scope("acme", "sam")


@dataclass(frozen=True)
class Example:
    """*said* (after *before*, a month earlier) makes *attribute* = *value* current; the
    profile shows it as *entry*; *question* asks for it."""

    said: str
    attribute: str
    value: str
    entry: tuple[str, str]
    question: str
    before: str | None = None
    old: str | None = None  # the value *before* stated, replaced by *said*


MOVE = "where do I live now?"
EXAMPLES = [
    Example("Big news: I moved to Lisbon last month.", "location", "Lisbon",
            ("location", "Lisbon"), MOVE, "I live in Berlin.", "Berlin"),
    Example("Hello again, it's Sam. Quick update: I moved to Porto last week.", "location",
            "Porto", ("location", "Porto"), MOVE, "I live in Berlin.", "Berlin"),
    Example("We just relocated to Lisbon", "location", "Lisbon", ("location", "Lisbon"), MOVE,
            "I live in Berlin.", "Berlin"),
    Example("I'm now living in Lisbon", "location", "Lisbon", ("location", "Lisbon"), MOVE,
            "I live in Berlin.", "Berlin"),
    Example("These days I live in Lisbon", "location", "Lisbon", ("location", "Lisbon"), MOVE,
            "I live in Berlin.", "Berlin"),
    Example("I just got hired by Stripe", "employer", "Stripe", ("employer", "Stripe"),
            "where do I work now?", "I work at Google.", "Google"),
    Example("I work at Siemens as an engineer", "employer", "Siemens", ("employer", "Siemens"),
            "which company do I work for?"),
    Example("I've been vegan since 2020", "is_a:vegan", "yes", ("vegan", "yes"),
            "am I vegan?"),
    Example("I have two kids", "family:two kids", "has", ("family two kids", "has"),
            "how many kids do I have?"),
    Example("I got married last year", "relationship status", "married",
            ("relationship status", "married"), "am I married?"),
    Example("I'm learning Spanish", "language:spanish", "is learning",
            ("language spanish", "is learning"), "which language am I learning?"),
    Example("I play the guitar", "hobby:guitar", "does", ("hobby guitar", "does"),
            "what instrument do I play?"),
    Example("I can't eat gluten", "diet:no gluten", "eats",
            ("does not eat or drink gluten", "yes"), "what can't I eat?"),
    Example("My new phone number is 555-0199.", "phone number", "555-0199",
            ("phone number", "555-0199"), "what is my phone number?",
            "My phone number is 555-0100.", "555-0100"),
    Example("I prefer email over phone calls, by the way", "preference:email", "prefers",
            ("email", "prefers"), "how do I like to be contacted?"),
]  # fmt: skip


@pytest.fixture(params=["sqlite", "postgresql"])
def memory(request: pytest.FixtureRequest, tmp_path: Path, real_embedder: MemoEmbedder) -> Memory:
    if request.param == "postgresql":
        fresh_postgres()
        return Memory.open(PG_URL, embedder=real_embedder)
    return Memory.open(tmp_path / "everyday.db", embedder=real_embedder)


def _say(memory: Memory, session: str, text: str, *, days: int) -> str:
    turn = {"role": "user", "content": text, "at": T0 + timedelta(days=days)}
    [event] = memory.add_events(Scope("acme", "sam", session), [turn])
    assert memory.wait_for_facts(60)
    return event.id


def _entries(profile: Profile) -> dict[str, str]:
    return {**profile.biography, **profile.preferences, **profile.style}


def _mark(example: Example) -> str:
    """The word a hit about *example* names: its value, or the thing a multi-valued attribute
    is about ("gluten" of ``diet:no gluten``)."""
    _, sep, thing = example.attribute.partition(":")
    return thing.removeprefix("no ").split()[-1] if sep else example.value.lower()


def _known(memory: Memory, question: str) -> str:
    """The long-term block of the window of a new session that opens with *question*."""
    later = Scope("acme", "sam", "later")
    memory.add_events(later, [{"role": "user", "content": question, "at": T0 + timedelta(60)}])
    window = memory.assemble(later, budget_tokens=2_000, model="gpt-4o", system="Be brief.")
    [block] = [m["content"] for m in window.messages if "long-term memory" in m["content"]]
    return block


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.said for e in EXAMPLES])
def test_what_was_said_is_current_everywhere(memory: Memory, example: Example) -> None:
    with memory:
        memory.facts.set_consent(SAM, share_across_sessions=True, sensitive_facts=True)
        old_turn = _say(memory, "s1", example.before, days=0) if example.before else None
        _say(memory, "s2", example.said, days=30)
        current = [(f.attribute, f.value) for f in memory.facts.list(SAM)]
        assert (example.attribute, example.value) in current
        assert all(v != example.old for a, v in current if a == example.attribute)
        entries = _entries(memory.facts.profile(SAM))
        assert entries[example.entry[0]] == example.entry[1]
        hits = list(memory.search(SAM, example.question, k=5))
        assert _mark(example) in hits[0].content.lower()
        if old_turn is not None:
            assert old_turn not in [h.id for h in hits[:1]]
        known = _known(memory, example.question)
        assert f"{example.entry[0]}: {example.entry[1]}" in known
        # The old value shows only as corrected ("corrected location: Berlin -> Lisbon").
        assert f"{example.entry[0]}: {example.old}" not in known.splitlines()


@pytest.mark.parametrize("withdrawal", ["Actually, forget that I like jazz.",
                                        "I don't listen to jazz anymore"])  # fmt: skip
def test_a_withdrawal_in_other_words_takes_jazz_out_of_every_view(
    memory: Memory, withdrawal: str
) -> None:
    """'jazz' closes 'jazz music': the keys differ, the meaning does not."""
    with memory:
        memory.facts.set_consent(SAM, share_across_sessions=True)
        _say(memory, "s1", "I love jazz music. I play the guitar.", days=0)
        _say(memory, "s2", withdrawal, days=30)
        assert [f.attribute for f in memory.facts.list(SAM)] == ["hobby:guitar"]
        [jazz] = memory.store.facts(SAM, statuses=(FactStatus.REVOKED,))
        assert (jazz.attribute, jazz.valid_to) == ("preference:jazz music", T0 + timedelta(30))
        assert "jazz" not in str(memory.facts.profile(SAM).to_json())
        assert "jazz" not in _known(memory, "what music do I like?")
        assert not [h for h in memory.search(SAM, "jazz", k=5) if h.kind == "fact"
                    and "jazz" in h.content]  # fmt: skip


def test_a_fact_the_profile_states_is_not_repeated_among_the_memories(memory: Memory) -> None:
    """The window's profile says where Sam lives; the search for the new session's question
    finds the same fact, which the memories tier leaves out instead of spending tokens on it
    again (before, the window said it twice: ``location: Berlin`` and the fact's line)."""
    with memory:
        memory.facts.set_consent(SAM, share_across_sessions=True)
        _say(memory, "s1", "I live in Berlin.", days=0)
        [fact] = [f for f in memory.facts.list(SAM) if f.attribute == "location"]
        assert fact.id in [h.id for h in memory.search(SAM, MOVE, k=10)]
        later = Scope("acme", "sam", "later")
        memory.add_events(later, [{"role": "user", "content": MOVE, "at": T0 + timedelta(9)}])

        window = memory.assemble(later, budget_tokens=2_000, model="gpt-4o", system="Hi.")
        text = "\n".join(m["content"] for m in window.messages)
        memories = [c["id"] for c in window.citations]
        skipped = {s.key: s.reason for s in window.tiers[Tier.MEMORIES].skipped}
        assert "location: Berlin" in text
        assert fact.id not in memories and skipped[fact.id] == "stated by an earlier tier"
        assert text.count("Berlin") == 1  # the profile line only
