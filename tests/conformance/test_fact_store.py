"""The FactStore, PolicyStore and ProcedureStore conformance suites.

Written once against the protocols, run over every backend (the ``store`` fixture)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from kenning.errors import LeaseLost, LegalHoldActive, StaleWrite
from kenning.records import (
    USER,
    FactDraft,
    FactStatus,
    Procedure,
    ProcedureStatus,
    Scope,
    Summary,
    TenantPolicy,
    UserSettings,
)
from kenning.store.protocol import Store
from kenning.store.records import FactChanges, FactInsert
from tests.conformance.helpers import A1, A2, G1, add

T0 = datetime(2026, 1, 1, tzinfo=UTC)
ANN = Scope("acme", "ann")


def draft(attribute: str, value: str, *, qualifier: str = "", minutes: int = 0) -> FactDraft:
    return FactDraft(
        subject=USER, attribute=attribute, value=value, qualifier=qualifier,
        text=f"The user's {attribute} is {value}", valid_from=T0 + timedelta(minutes=minutes),
    )  # fmt: skip


def insert(store: Store, scope: Scope, fact_id: str, d: FactDraft) -> None:
    held = tuple(f.id for f in store.facts(ANN, keys=[d.key]))
    changes = FactChanges(inserts=(FactInsert(fact_id, d),), expected=((d.key, held),))
    store.apply_facts(scope, changes, at=d.valid_from or T0)


def test_facts_supersede_keep_history_and_read_as_of(store: Store) -> None:
    insert(store, A1, "fact_1", draft("location", "Berlin"))
    later = draft("location", "Lisbon", minutes=60)
    store.apply_facts(
        A2,
        FactChanges(
            inserts=(FactInsert("fact_2", later),),
            closures=(("fact_1", FactStatus.SUPERSEDED, "fact_2"),),
            expected=((later.key, ("fact_1",)),),
        ),
        at=T0 + timedelta(minutes=60),
    )
    [now] = store.facts(ANN)
    assert (now.id, now.value, now.scope.session) == ("fact_2", "Lisbon", "a-s2")
    [old] = store.facts(ANN, statuses=(FactStatus.SUPERSEDED,))
    assert old.superseded_by == "fact_2" and old.valid_to == T0 + timedelta(minutes=60)
    assert [f.value for f in store.facts(ANN, as_of=T0 + timedelta(minutes=30))] == ["Berlin"]
    assert [f.value for f in store.fact_history(ANN, "fact_2")] == ["Berlin", "Lisbon"]
    assert [f.id for f in store.facts(A1)] == []  # facts sourced in a-s1 are no longer active
    assert store.facts(Scope("acme", "bob")) == [] and store.facts(Scope("globex")) == []


def test_a_step_decided_on_stale_facts_is_refused(store: Store) -> None:
    insert(store, A1, "fact_1", draft("employer", "Netflix"))
    stale = FactChanges(
        inserts=(FactInsert("fact_2", draft("employer", "Google")),),
        expected=((draft("employer", "").key, ()),),  # decided before fact_1 existed
    )
    with pytest.raises(StaleWrite):
        store.apply_facts(A1, stale, at=T0)
    assert [f.id for f in store.facts(ANN)] == ["fact_1"]


def test_a_step_within_one_session_is_decided_on_that_sessions_facts(store: Store) -> None:
    insert(store, A2, "fact_1", draft("employer", "Netflix"))  # the user's other session
    mine = draft("employer", "Google")
    own = FactChanges(inserts=(FactInsert("fact_2", mine),), expected=((mine.key, ()),))
    with pytest.raises(StaleWrite):  # over all the user's facts: it missed a-s2's
        store.apply_facts(A1, own, at=T0)
    store.apply_facts(A1, replace(own, within_session=True), at=T0)
    assert [(f.id, f.scope.session) for f in store.facts(A1)] == [("fact_2", "a-s1")]
    assert [f.id for f in store.facts(A2)] == ["fact_1"]  # untouched
    late = FactChanges(inserts=(FactInsert("fact_3", mine),), expected=((mine.key, ()),),
                       within_session=True)  # fmt: skip
    with pytest.raises(StaleWrite):  # decided before a-s1's own fact_2
        store.apply_facts(A1, late, at=T0)


def test_reinforce_and_revoke(store: Store) -> None:
    insert(store, A1, "fact_1", draft("preference:jazz", "likes"))
    store.apply_facts(A2, FactChanges(reinforcements=(("fact_1", "ev_x"),)), at=T0)
    [fact] = store.facts(ANN)
    assert fact.reinforced == 2 and "ev_x" in fact.sources
    store.apply_facts(A2, FactChanges(closures=(("fact_1", FactStatus.REVOKED, None),)), at=T0)
    assert store.facts(ANN) == []
    with pytest.raises(StaleWrite):  # no longer active
        store.apply_facts(A2, FactChanges(reinforcements=(("fact_1", None),)), at=T0)


def test_inactive_facts_are_not_searched(store: Store) -> None:
    from kenning.search.filters import parse_filters

    insert(store, A1, "fact_1", draft("favorite band", "Radiohead"))
    found = store.lexical(ANN, "radiohead", filters=parse_filters(None), limit=5)
    assert [c.id for c in found] == ["fact_1"] and found[0].kind == "fact"
    store.apply_facts(A1, FactChanges(closures=(("fact_1", FactStatus.ARCHIVED, None),)), at=T0)
    assert store.lexical(ANN, "radiohead", filters=parse_filters(None), limit=5) == []
    assert store.facts(ANN, as_of=T0 + timedelta(days=1)) == []  # archived: out of every read


def test_extraction_progress_is_a_leased_queue(store: Store) -> None:
    add(store, A1, "one", "two")
    job = store.claim_extraction(at=T0, lease_s=60)
    assert job is not None and (job.scope.session, job.done_seq, job.last_seq) == ("a-s1", 0, 2)
    assert job.lease
    assert store.claim_extraction(at=T0 + timedelta(seconds=10), lease_s=60) is None
    assert store.renew_extraction(job, at=T0 + timedelta(seconds=50), lease_s=60)
    assert store.claim_extraction(at=T0 + timedelta(seconds=61), lease_s=60) is None  # renewed
    again = store.claim_extraction(at=T0 + timedelta(seconds=111), lease_s=60)
    assert again is not None and again.scope == job.scope  # the first reader died
    assert again.lease and again.lease != job.lease
    assert store.finish_extraction(again, done_seq=2)
    assert store.pending_extractions() == []
    add(store, A1, "three")
    [pending] = store.pending_extractions()
    assert (pending.done_seq, pending.last_seq) == (2, 3)


def test_a_reader_whose_lease_was_taken_over_writes_nothing(store: Store) -> None:
    add(store, A1, "I live in Berlin", "I work at Netflix")
    stale = store.claim_extraction(at=T0, lease_s=60)
    assert stale is not None
    stats = store.extraction_stats()
    assert (stats.pending, stats.running) == (0, 1) and stats.oldest_pending is not None
    holder = store.claim_extraction(at=T0 + timedelta(seconds=61), lease_s=60)
    assert holder is not None and holder.scope == stale.scope
    changes = FactChanges(inserts=(FactInsert("fact_1", draft("location", "Berlin")),))
    with pytest.raises(LeaseLost):
        store.apply_facts(A1, changes, at=T0, lease=stale.lease)
    assert store.facts(ANN, statuses=None) == []
    assert not store.renew_extraction(stale, at=T0, lease_s=60)
    assert not store.finish_extraction(stale, done_seq=2)
    [pending] = store.pending_extractions()
    assert pending.done_seq == 0  # the stale reader recorded no progress
    store.apply_facts(A1, changes, at=T0, lease=holder.lease)
    assert store.finish_extraction(holder, done_seq=2)
    assert [f.id for f in store.facts(ANN)] == ["fact_1"]
    stats = store.extraction_stats()
    assert (stats.pending, stats.running, stats.oldest_pending) == (0, 0, None)
    add(store, A2, "later")
    assert store.extraction_stats().pending == 1


def test_consent_policy_and_holds(store: Store) -> None:
    assert store.tenant_policy("acme") == TenantPolicy()
    store.put_tenant_policy("acme", TenantPolicy(share_across_sessions=True, episode_days=30))
    assert store.tenant_policy("acme").episode_days == 30
    assert store.tenant_policy("globex") == TenantPolicy()
    store.put_user_settings(ANN, UserSettings(sensitive_facts=True))
    assert store.user_settings(ANN) == UserSettings(sensitive_facts=True)
    assert store.user_settings(Scope("acme", "bob")) == UserSettings()
    add(store, A1, "kept")
    store.put_hold(ANN, "litigation")
    assert [h.scope for h in store.holds("acme")] == [ANN]
    with pytest.raises(LegalHoldActive):
        store.forget(A1)
    with pytest.raises(LegalHoldActive):
        store.forget(Scope("acme"))
    assert store.release_hold(ANN) and not store.release_hold(ANN)
    assert store.forget(A1) == 1


def test_the_purge_removes_expired_records_but_not_held_ones(store: Store) -> None:
    add(store, A1, "old one")
    add(store, G1, "other tenant")
    store.put_hold(Scope("acme", "ann", "a-s2"), "keep")
    add(store, A2, "held one")
    assert store.purge("acme", now=T0, episodes_before=T0 + timedelta(days=1)) == 1
    assert [e.content for e in store.events(Scope("acme"))] == ["held one"]
    assert [e.content for e in store.events(Scope("globex"))] == ["other tenant"]


def test_procedures_are_versioned_and_one_is_active(store: Store) -> None:
    def proc(n: int) -> Procedure:
        return Procedure(
            id=f"proc_{n}", scope=Scope("acme"), name="refund", version=0, tool_schema_hash="h",
            steps=("look up", f"refund {n}"), status=ProcedureStatus.CANDIDATE, created_at=T0,
        )  # fmt: skip

    first, second = store.put_procedure(proc(1)), store.put_procedure(proc(2))
    assert (first.version, second.version) == (1, 2)
    store.set_procedure_status("acme", "proc_1", ProcedureStatus.ACTIVE)
    store.set_procedure_status("acme", "proc_2", ProcedureStatus.ACTIVE)
    statuses = [(p.version, p.status) for p in store.procedures("acme", name="refund")]
    assert statuses == [(1, ProcedureStatus.RETIRED), (2, ProcedureStatus.ACTIVE)]
    assert store.procedures("globex") == []
    assert store.procedures("acme")[1].steps == ("look up", "refund 2")


def test_erasing_its_only_source_erases_a_fact_but_the_purge_does_not(store: Store) -> None:
    first, second = add(store, A1, "I work at Netflix", "I live in Porto")
    [again] = add(store, A2, "I work at Netflix, as I said")
    insert(store, A1, "fact_job", replace(draft("employer", "Netflix"), source_event_id=first))
    insert(store, A1, "fact_home", replace(draft("location", "Porto"), source_event_id=second))
    store.apply_facts(A2, FactChanges(reinforcements=(("fact_job", again),)), at=T0)
    store.forget(A1, ids=[first, second])
    [job] = store.facts(ANN, statuses=None)
    assert job.id == "fact_job" and job.sources == (again,)
    assert store.items(ANN, ["fact_home", "fact_job"])[0].id == "fact_job"
    assert len(store.items(ANN, ["fact_home", "fact_job"])) == 1
    # Retention's purge removes expired turns; facts keep their own retention.
    later = T0 + timedelta(days=2)
    assert store.purge("acme", now=later, episodes_before=later) == 1
    assert store.events(ANN) == []
    assert [f.id for f in store.facts(ANN)] == ["fact_job"]


def test_changes_are_dated_by_when_they_were_said(store: Store) -> None:
    insert(store, A1, "fact_1", draft("location", "Berlin"))
    [berlin] = store.facts(ANN)
    assert berlin.last_seen == T0  # the statement's time, not when the row was written
    # "I've lived in Lisbon since March", said in May: Berlin stopped holding in March.
    march, may = T0 + timedelta(days=60), T0 + timedelta(days=120)
    lisbon = replace(draft("location", "Lisbon"), valid_from=march)
    store.apply_facts(
        A2,
        FactChanges(
            inserts=(FactInsert("fact_2", lisbon),),
            closures=(("fact_1", FactStatus.SUPERSEDED, "fact_2"),),
            expected=((lisbon.key, ("fact_1",)),),
        ),
        at=may,
    )
    [old] = store.facts(ANN, statuses=(FactStatus.SUPERSEDED,))
    assert old.valid_to == march
    assert [f.value for f in store.facts(ANN, as_of=march + timedelta(days=1))] == ["Lisbon"]
    # A restatement read late from an older turn does not move the last mention back.
    store.apply_facts(A2, FactChanges(reinforcements=(("fact_2", "ev_old"),)), at=may)
    store.apply_facts(A2, FactChanges(reinforcements=(("fact_2", "ev_older"),)), at=march)
    [now] = store.facts(ANN)
    assert now.last_seen == may and now.reinforced == 3


def test_erasing_a_fact_leaves_its_sessions_summaries_and_ledger(store: Store) -> None:
    """A fact is no turn of its session: erasing it (on request, by the purge, or with the
    turns it was read from) keeps the summaries and running totals of the session's turns."""
    first, _ = add(store, A1, "I work at Netflix", "I live in Porto")
    store.put_summary(Summary(id="sum_1", scope=A1, level=1, first_seq=1, last_seq=2,
                              text="work and home", created_at=T0))  # fmt: skip
    store.extend_ledger(A1, "o200k_base", [(1, 5), (2, 6)])
    insert(store, A1, "fact_job", replace(draft("employer", "Netflix"), source_event_id=first))
    expiring = FactInsert("fact_old", draft("location", "Porto"), expires_at=T0)
    store.apply_facts(A1, FactChanges(inserts=(expiring,)), at=T0)
    assert store.forget(A1, ids=["fact_job"]) == 1
    assert store.purge("acme", now=T0 + timedelta(days=1), episodes_before=None) == 1
    assert store.facts(ANN, statuses=None) == []
    assert [s.id for s in store.summaries(A1)] == ["sum_1"]
    assert store.ledger_head(A1, "o200k_base") == (2, 11)
    assert len(store.events(A1)) == 2


def test_facts_are_found_by_the_events_that_stated_them(store: Store) -> None:
    first, second, third = add(store, A1, "I work at Netflix", "I live in Porto", "Hello")
    [again] = add(store, A2, "Still at Netflix")
    insert(store, A1, "fact_job", replace(draft("employer", "Netflix"), source_event_id=first))
    insert(store, A1, "fact_home", replace(draft("location", "Porto"), source_event_id=second))
    store.apply_facts(A2, FactChanges(reinforcements=(("fact_job", again),)), at=T0)
    store.apply_facts(A1, FactChanges(closures=(("fact_home", FactStatus.REVOKED, None),)), at=T0)
    assert [f.id for f in store.facts(ANN, sources=[again], statuses=None)] == ["fact_job"]
    assert [f.id for f in store.facts(ANN, sources=[second, third], statuses=None)] == ["fact_home"]
    assert [f.id for f in store.facts(ANN, sources=[first, second])] == ["fact_job"]  # active
    assert store.facts(ANN, sources=[third]) == [] and store.facts(ANN, sources=[]) == []
    assert store.facts(Scope("acme", "bob"), sources=[first], statuses=None) == []
    assert store.facts(Scope("globex", "ann"), sources=[first], statuses=None) == []
