"""Long-term facts end to end: extraction in the background, consolidation, validity, consent;
the real model, on real SQLite and real PostgreSQL (``Memory.open`` of a file or a URL)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kenning import Memory, Scope, Settings
from kenning.errors import InvalidInput
from kenning.longterm.service import LongTermSettings
from kenning.records import FactSource, FactStatus, TenantPolicy, UserSettings
from tests.conftest import MemoEmbedder
from tests.pg import PG_URL, fresh_postgres

T0 = datetime(2026, 1, 5, 9, tzinfo=UTC)
DANA = Scope("acme", "dana")


def turn(text: str, minutes: int = 0) -> dict[str, object]:
    return {"role": "user", "content": text, "at": T0 + timedelta(minutes=minutes)}


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str | Path:
    """Where the memory lives: a SQLite file, or an emptied PostgreSQL database's URL."""
    if request.param == "postgresql":
        fresh_postgres()
        return PG_URL
    return tmp_path / "lt.db"


@pytest.fixture
def memory(location: str | Path, real_embedder: MemoEmbedder) -> Memory:
    return Memory.open(location, embedder=real_embedder)


def _said(memory: Memory, session: str, *texts: str, minutes: int = 0) -> None:
    scope = Scope("acme", "dana", session)
    memory.add_events(scope, [turn(t, minutes + i) for i, t in enumerate(texts)])
    assert memory.wait_for_facts(60)


def test_duplicates_reinforce_instead_of_piling_up(memory: Memory) -> None:
    with memory:
        _said(memory, "s1", "I work at Netflix.")
        _said(memory, "s2", "Just so you know, I work at Netflix.", minutes=60)
        [fact] = memory.facts.list(DANA)
        assert (fact.attribute, fact.value, fact.reinforced) == ("employer", "Netflix", 2)
        assert len(fact.sources) == 2


def test_erasing_a_turn_erases_a_fact_read_only_from_it(memory: Memory) -> None:
    with memory:
        _said(memory, "s1", "I work at Netflix.", "I'm allergic to penicillin.")
        _said(memory, "s2", "Just so you know, I work at Netflix.", minutes=60)
        first, second = memory.store.events(Scope("acme", "dana", "s1"))
        memory.facts.set_consent(DANA, sensitive_facts=True)
        assert {f.value for f in memory.facts.list(DANA)} == {"Netflix"}
        _said(memory, "s3", "I'm allergic to penicillin.", minutes=90)
        assert {f.attribute for f in memory.facts.list(DANA)} == {
            "employer", "allergy:penicillin"
        }  # fmt: skip
        [allergy] = [f for f in memory.facts.list(DANA) if f.attribute == "allergy:penicillin"]
        memory.forget(Scope("acme", "dana", "s1"), ids=[first.id, second.id])
        # The employer was stated again in s2: it stays, backed by that turn alone.
        [netflix] = [f for f in memory.facts.list(DANA) if f.value == "Netflix"]
        assert len(netflix.sources) == 1 and netflix.sources[0] not in {first.id, second.id}
        # The allergy fact came from s3, not from the erased (then unconsented) turn.
        assert allergy.id in {f.id for f in memory.facts.list(DANA)}
        [s3] = memory.store.events(Scope("acme", "dana", "s3"))
        memory.forget(Scope("acme", "dana", "s3"), ids=[s3.id])
        assert {f.value for f in memory.facts.list(DANA, include_closed=True)} == {"Netflix"}
        hits = memory.search(DANA, "what am I allergic to?", k=10)
        assert all("penicillin" not in h.content for h in hits)


def test_supersession_keeps_history_and_as_of_reads_the_past(memory: Memory) -> None:
    with memory:
        _said(memory, "s1", "I live in Berlin.")
        _said(memory, "s2", "I moved to Lisbon.", minutes=600)
        [now] = memory.facts.list(DANA)
        assert now.value == "Lisbon"
        history = memory.facts.history(DANA, now.id)
        assert [(f.value, f.status) for f in history] == [
            ("Berlin", FactStatus.SUPERSEDED),
            ("Lisbon", FactStatus.ACTIVE),
        ]
        assert history[0].superseded_by == now.id and history[0].valid_to is not None
        [then] = memory.facts.list(DANA, as_of=T0 + timedelta(minutes=5))
        assert then.value == "Berlin"
        assert [f.value for f in memory.facts.list(DANA, as_of=T0 - timedelta(days=1))] == []


def test_an_imported_history_keeps_its_times(memory: Memory) -> None:
    with memory:
        # One batch, read for facts after the fact: each turn is dated by when it was said.
        memory.add_events(Scope("acme", "dana", "s1"), [
            turn("I live in Berlin."),
            turn("I moved to Lisbon.", minutes=60 * 24 * 60),
        ])  # fmt: skip
        assert memory.wait_for_facts(60)
        [now] = memory.facts.list(DANA)
        [old, _] = memory.facts.history(DANA, now.id)
        assert old.valid_to == now.valid_from == T0 + timedelta(days=60)
        assert now.last_seen == T0 + timedelta(days=60)
        assert [f.value for f in memory.facts.list(DANA, as_of=T0 + timedelta(days=90))] == [
            "Lisbon"
        ]
        assert [f.value for f in memory.facts.list(DANA, as_of=T0 + timedelta(days=30))] == [
            "Berlin"
        ]


def test_decay_changes_ranking_and_an_access_resets_it(
    tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    # Searches here record no access themselves, so only the explicit touch below resets decay.
    settings = Settings(track_access=False)
    with Memory.open(tmp_path / "d.db", embedder=real_embedder, settings=settings) as memory:
        _said(memory, "s1", "I love jazz.")
        _said(memory, "s2", "I love techno.", minutes=60 * 24 * 60)
        query = "what music genre do I love?"
        fresh = memory.search(DANA, query, kinds=["fact"], now=T0 + timedelta(days=1))
        assert [h.content for h in fresh] == ["The user loves jazz", "The user loves techno"]
        # Two months without a mention: jazz weighs 0.5 + 0.5 * 0.5^(60/30) of its match.
        later = memory.search(DANA, query, kinds=["fact"], now=T0 + timedelta(days=60))
        assert [h.content for h in later] == ["The user loves techno", "The user loves jazz"]
        jazz = later.hits[1]
        assert jazz.scores["decay"] == pytest.approx(0.25, rel=1e-3)
        then = fresh.hits[0]
        match = then.score / (0.5 + 0.5 * then.scores["decay"])
        assert jazz.score == pytest.approx(match * 0.625, rel=1e-6)
        # Using the fact starts its decay again.
        memory.store.touch(DANA, [jazz.id], at=T0 + timedelta(days=60))
        again = memory.search(DANA, query, kinds=["fact"], now=T0 + timedelta(days=61))
        assert [h.content for h in again] == ["The user loves jazz", "The user loves techno"]


def test_a_qualifier_keeps_facts_apart(memory: Memory) -> None:
    with memory:
        _said(memory, "s1", "At work I use a Mac.", "At home I use Linux.")
        facts = {(f.attribute, f.qualifier) for f in memory.facts.list(DANA)}
        assert facts == {("uses:mac", "at work"), ("uses:linux", "at home")}


def test_a_revocation_stops_a_fact_surfacing_at_once(memory: Memory) -> None:
    with memory:
        _said(memory, "s1", "I love jazz.", "I also collect vinyl records.")
        hits = memory.search(DANA, "what music does she love", k=5)
        assert any(h.kind == "fact" and "jazz" in h.content for h in hits)
        _said(memory, "s2", "Forget that I like jazz.", minutes=30)
        # Collecting vinyl records stays (a hobby); nothing about jazz is current.
        assert [f.attribute for f in memory.facts.list(DANA)] == ["hobby:collect vinyl records"]
        hits = memory.search(DANA, "what music does she love", k=5)
        assert all(h.kind != "fact" or "jazz" not in h.content for h in hits)
        [old] = [f for f in memory.facts.list(DANA, include_closed=True) if "jazz" in f.attribute]
        assert old.status is FactStatus.REVOKED
        window = memory.assemble(
            Scope("acme", "dana", "s3"), budget_tokens=2_000, model="gpt-4o",
            system="Be brief.", query="does she love jazz?", retrieve_from=DANA,
        )  # fmt: skip
        assert "The user loves jazz" not in str(window.messages)


def test_revoke_by_id_and_remember_explicitly(memory: Memory) -> None:
    with memory:
        chat = Scope("acme", "dana", "s1")
        fact = memory.facts.remember(chat, "favorite color", "green")
        assert (
            fact.source is FactSource.EXPLICIT and fact.text == "The user's favorite color is green"
        )
        closed = memory.facts.revoke(DANA, fact.id)
        assert closed.status is FactStatus.REVOKED and memory.facts.list(DANA) == []
        with pytest.raises(InvalidInput):
            memory.facts.remember(chat, "allergy:nuts", "allergic", category="health")


def test_an_explicit_fact_outranks_an_inferred_one(memory: Memory) -> None:
    with memory:
        _said(memory, "s1", "I work at Netflix.")
        _said(memory, "s2", "I think I work at Google, maybe.", minutes=5)
        [fact] = memory.facts.list(DANA)
        assert fact.value == "Netflix"
        _said(memory, "s3", "I work at Google.", minutes=10)
        [fact] = memory.facts.list(DANA)
        assert fact.value == "Google"


def test_near_duplicates_reinforce(memory: Memory) -> None:
    with memory:
        _said(memory, "s1", "I like hiking in the Alps.")
        _said(memory, "s2", "I like hiking in the Swiss Alps.", minutes=5)
        [fact] = memory.facts.list(DANA)
        assert fact.reinforced == 2


def test_sensitive_facts_need_consent(memory: Memory) -> None:
    with memory:
        _said(memory, "s1", "I'm allergic to peanuts.", "My husband works at Siemens.")
        assert memory.facts.list(DANA) == []  # health and relationships: no consent yet
        memory.store.put_user_settings(DANA, UserSettings(sensitive_facts=True))
        _said(memory, "s2", "I'm allergic to peanuts.", minutes=5)
        assert [f.attribute for f in memory.facts.list(DANA)] == ["allergy:peanuts"]
        memory.store.put_tenant_policy("globex", TenantPolicy(sensitive_facts=True))
        other = Scope("globex", "ann", "g1")
        memory.add_events(other, [turn("I'm allergic to shellfish.")])
        assert memory.wait_for_facts(60)
        assert [f.attribute for f in memory.facts.list(Scope("globex", "ann"))] == [
            "allergy:shellfish"
        ]


def test_a_search_for_turns_finds_a_turn_through_its_fact(memory: Memory) -> None:
    with memory:
        _said(memory, "s1", "Honestly, I work at a tiny robotics startup called Kinemo.",
              "The weather has been awful all week.")  # fmt: skip
        facts_off = Memory(memory.store, embedder=memory.embedder, settings=Settings(
            longterm=LongTermSettings(extract=False),
            fusion=memory.settings.fusion.__class__(fact_key_weight=0.0),
        ))  # fmt: skip
        query = "which company employs the user"
        on = memory.search(DANA, query, k=1, kinds=["event"])
        off = facts_off.search(DANA, query, k=1, kinds=["event"])
        assert on[0].content.startswith("Honestly, I work at")
        assert on[0].kind == "event" and "fact" in on[0].scores
        assert on[0].score > off[0].score
        assert all(h.kind == "event" for h in memory.search(DANA, query, kinds=["event"]))


def test_extraction_resumes_after_a_restart(
    location: str | Path, real_embedder: MemoEmbedder
) -> None:
    off = Settings(longterm=LongTermSettings(extract=False))
    with Memory.open(location, embedder=real_embedder, settings=off) as memory:
        memory.add_events(Scope("acme", "dana", "s1"), [turn("I live in Porto.")])
        assert memory.facts.list(DANA) == []
    with Memory.open(location, embedder=real_embedder) as memory:
        assert memory.wait_for_facts(60)
        assert [f.value for f in memory.facts.list(DANA)] == ["Porto"]


def _tool_turn(name: str, result: dict[str, object]) -> dict[str, object]:
    return {"role": "tool", "tool_name": name, "content": "done", "tool_result": result}


def test_facts_discovered_in_tool_results_are_tagged(memory: Memory) -> None:
    with memory:
        memory.retention.set_policy("acme", TenantPolicy(fact_tools=("accounts",)))
        chat = Scope("acme", "dana", "s1")
        memory.add_events(chat, [_tool_turn("accounts", {
            "account_id": "ACC-99123", "api_url": "https://api.acme.io/v2", "ok": True, "id": 7,
        })])  # fmt: skip
        assert memory.wait_for_facts(60)
        facts = {(f.subject, f.attribute, f.value, f.source) for f in memory.facts.list(DANA)}
        assert facts == {
            ("tool:accounts", "account_id", "ACC-99123", FactSource.TOOL),
            ("tool:accounts", "api_url", "https://api.acme.io/v2", FactSource.TOOL),
        }


def test_a_tool_the_policy_does_not_list_makes_no_fact(memory: Memory) -> None:
    """A refund's currency is the tool's output, not a fact about the user: with the default
    policy no tool is read for facts, while its values still reach search and pins."""
    with memory:
        chat = Scope("acme", "dana", "s1")
        memory.add_events(chat, [
            turn("Please refund my order A-1042."),
            _tool_turn("refunds.create", {"refund_id": "RF-7781", "currency": "EUR",
                                          "amount": "42.50", "status": "approved"}),
        ])  # fmt: skip
        assert memory.wait_for_facts(60)
        assert memory.facts.list(DANA) == []
        profile = memory.facts.profile(DANA)
        assert not (profile.biography or profile.preferences or profile.people)
        [hit] = memory.search(chat, "refund currency EUR", k=1)
        assert hit.kind == "event" and hit.role == "tool"
        pins = memory.context.pins(chat)
        assert any("RF-7781" in p.value for p in pins)
        assert any(p.currency == "EUR" for p in pins)


def _lab(memory: Memory, *, consent: bool) -> str:
    """Session 1: "I work at Netflix" in turn 3, then 200 turns of chatter, compaction; then a
    new session asks. Returns the new session's window as text."""
    memory.store.put_user_settings(DANA, UserSettings(share_across_sessions=consent))
    first = Scope("acme", "dana", "lab-1")
    memory.add_events(first, [turn("Hi there."), {"role": "assistant", "content": "Hello!"},
                              turn("I work at Netflix.", 2)])  # fmt: skip
    chatter = [
        {"role": "user" if i % 2 == 0 else "assistant",
         "content": f"Chatter {i}: the weather, a recipe for soup, and football scores.",
         "at": T0 + timedelta(minutes=3 + i)}
        for i in range(200)
    ]  # fmt: skip
    memory.add_events(first, chatter)
    assert memory.wait_for_facts(120)
    assert memory.context.compact(first, budget_tokens=2_000, model="gpt-4o")
    later = Scope("acme", "dana", "lab-2")
    memory.add_events(later, [turn("What company do I work at?", 60 * 24)])
    window = memory.assemble(later, budget_tokens=2_000, model="gpt-4o", system="Be brief.")
    assert window.tokens <= 2_000
    return str(window.messages)


def test_the_lab_scenario_with_consent(memory: Memory) -> None:
    with memory:
        text = _lab(memory, consent=True)
        assert "Netflix" in text and "returning user (session 2)" in text


def test_the_lab_scenario_without_consent(memory: Memory) -> None:
    with memory:
        text = _lab(memory, consent=False)
        assert "Netflix" not in text and "returning user" not in text


def test_the_profile_is_typed_and_records_corrections(memory: Memory) -> None:
    with memory:
        _said(memory, "s1", "Call me Dee.", "I live in Berlin.", "I love jazz.",
              "My brother is a pilot.")  # fmt: skip
        _said(memory, "s2", "I moved to Lisbon.", minutes=60)
        profile = memory.facts.profile(DANA)
        assert profile.style == {"preferred name": "Dee"}
        assert profile.biography == {"location": "Lisbon"}
        assert profile.preferences == {"jazz": "loves"}
        assert profile.people == {}  # a brother is family: relationship facts need consent
        assert [(c.attribute, c.old, c.new) for c in profile.corrections] == [
            ("location", "Berlin", "Lisbon")
        ]
        assert profile.session_count == 2 and profile.last_session == "s2"
        assert profile.to_json()["biography"] == {"location": "Lisbon"}


def test_the_profile_lists_the_most_important_facts_first(memory: Memory) -> None:
    with memory:
        _said(memory, "s1", "I love jazz.")
        _said(memory, "s2", "I love techno.", minutes=60 * 24 * 60)
        keys = list(memory.facts.profile(DANA).preferences)
        assert len(keys) == 2 and "techno" in keys[0] and "jazz" in keys[1]
        # Said again, jazz is the fresher mention now.
        _said(memory, "s3", "I love jazz.", minutes=60 * 24 * 90)
        keys = list(memory.facts.profile(DANA).preferences)
        assert "jazz" in keys[0]


def test_a_history_imported_out_of_order_ends_as_it_was_said(memory: Memory) -> None:
    """Porto was said in February 2026, Lisbon in June 2025: read Porto first, Lisbon after,
    and Porto is still where the user lives, with Lisbon closed when Porto began."""
    with memory:
        porto = datetime(2026, 2, 1, tzinfo=UTC)
        lisbon = datetime(2025, 6, 1, tzinfo=UTC)
        memory.add_events(Scope("acme", "dana", "s2"), [{**turn("I moved to Porto."), "at": porto}])
        assert memory.wait_for_facts(60)
        memory.add_events(Scope("acme", "dana", "s1"),
                          [{**turn("I live in Lisbon."), "at": lisbon}])  # fmt: skip
        assert memory.wait_for_facts(60)
        [now] = memory.facts.list(DANA)
        assert (now.value, now.valid_from) == ("Porto", porto)
        [old] = memory.store.facts(DANA, statuses=(FactStatus.SUPERSEDED,))
        assert (old.value, old.valid_from, old.valid_to) == ("Lisbon", lisbon, porto)
        assert old.superseded_by == now.id
        assert [f.value for f in memory.facts.list(DANA, as_of=lisbon + timedelta(days=1))] == [
            "Lisbon"
        ]
        [hit] = memory.search(DANA, "where does dana live now?", k=1, kinds=["fact"])
        assert hit.id == now.id
        # The profile's times are when things were said, not when they were imported.
        profile = memory.facts.profile(DANA)
        assert (profile.last_session, profile.last_session_at) == ("s2", porto)
        assert profile.first_seen_at == lisbon


def test_the_current_value_ranks_above_the_turn_it_replaced(memory: Memory) -> None:
    """Issue 27: after 'I live in Lisbon.' and 'I moved to Porto.', 'where do I live?' ranked
    the Lisbon turn (0.764) above the fact that Dana lives in Porto (0.704)."""
    with memory:
        _said(memory, "s1", "I live in Lisbon.")
        _said(memory, "s2", "I moved to Porto.", minutes=60)
        [porto] = memory.facts.list(DANA)
        [lisbon_turn] = memory.get_session(Scope("acme", "dana", "s1"))
        [porto_turn] = memory.get_session(Scope("acme", "dana", "s2"))
        ids = [h.id for h in memory.search(DANA, "where do I live?", k=5)]
        assert ids.index(porto.id) < ids.index(lisbon_turn.id)
        turns = [h.id for h in memory.search(DANA, "where do I live?", k=5, kinds=["event"])]
        assert turns.index(porto_turn.id) < turns.index(lisbon_turn.id)
        tenant = [h.id for h in memory.search(Scope("acme"), "where do I live?", k=5)]
        assert tenant.index(porto.id) < tenant.index(lisbon_turn.id)
        # A question about the past, or bounded before the move, keeps the old turn's place.
        before = memory.search(DANA, "where did I live before?", k=5)
        assert before.plan is not None and before.plan.asks_past
        assert lisbon_turn.id in [h.id for h in before]
        until = memory.search(DANA, "where do I live?", k=5, until=T0 + timedelta(minutes=30))
        assert [h.id for h in until] == [lisbon_turn.id]


def test_a_current_fact_ranks_above_older_turns_it_was_not_read_from(memory: Memory) -> None:
    """An older turn can state the value a fact replaced without the reader reading a value
    from it ("it's an iPhone 11"): a current fact the search finds ranks above the turns said
    before it began, and a question about the past keeps their order."""
    with memory:
        _said(memory, "s1", "my iphone battery dies by 3pm every day", "it's an iPhone 11")
        _said(memory, "s2", "ok I switched to android, got a Pixel 8 on sale", minutes=600)
        current = {f.id for f in memory.facts.list(DANA)}
        assert current, "the switch was read"
        old = {e.id for e in memory.get_session(Scope("acme", "dana", "s1"))}
        hits = memory.search(DANA, "what phone am I using now?", k=10)
        kinds = [("fact" if h.id in current else "old" if h.id in old else "other") for h in hits]
        assert "fact" in kinds and "old" in kinds
        assert kinds.index("fact") < kinds.index("old")
        before = memory.search(DANA, "what phone did I use before?", k=10)
        assert before.plan is not None and before.plan.asks_past
        assert before[0].id in old


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_a_new_count_replaces_the_old_one_in_either_order(
    memory: Memory, order: tuple[int, int]
) -> None:
    """ "one kid" and later "two kids" are keys of their own (multi-valued family facts); the
    later count closes the earlier, whichever is read first."""
    said = ["I have one kid so far.", "so now we have two kids under four, send coffee"]
    with memory:
        memory.facts.set_consent(DANA, sensitive_facts=True)
        for n in order:
            _said(memory, f"s{n}", said[n], minutes=n * 60 * 24 * 100)
        facts = {f.attribute: f for f in memory.facts.list(DANA, include_closed=True)}
        assert facts["family:two kids"].status is FactStatus.ACTIVE
        old = facts["family:one kid"]
        assert old.status is not FactStatus.ACTIVE
        assert old.valid_to == facts["family:two kids"].valid_from
        assert [f.attribute for f in memory.facts.list(DANA)] == ["family:two kids"]


def test_a_withdrawal_in_other_words_closes_the_fact_it_means(memory: Memory) -> None:
    """Issue 27: 'Actually, forget that I like jazz.' left 'I love jazz music' active (the keys
    preference:jazz and preference:jazz music differ)."""
    with memory:
        _said(memory, "s1", "I love jazz music.", "I love folk music.")
        _said(memory, "s2", "Actually, forget that I like jazz.", minutes=60)
        [folk] = memory.facts.list(DANA)
        assert "folk" in folk.attribute
        [jazz] = memory.store.facts(DANA, statuses=(FactStatus.REVOKED,))
        assert jazz.attribute == "preference:jazz music"
        assert jazz.valid_to == T0 + timedelta(minutes=60)
