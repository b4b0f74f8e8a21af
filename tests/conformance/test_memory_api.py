"""The Memory API conformance suite: the calls an agent makes, written once, run in process
(:class:`kenning.Memory`) and through HTTP (:class:`kenning.Client` against the ASGI app served
on loopback), over a real SQLite store and the real model.

What passes embedded must pass served: the same records come back, and every error is the same
class. (The store-level suites next to this one test the storage protocols; those primitives
are not an HTTP API: the server's routes are the Memory API, so that is what runs over HTTP.)
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest

from kenning import (
    BudgetError,
    Client,
    Consent,
    FactCategory,
    FactStatus,
    InvalidInput,
    InvalidScope,
    Memory,
    NotFound,
    PinKind,
    PinStatus,
    ProcedureStatus,
    Scope,
    ScopeConflict,
    TaskStatus,
    TaskUpdate,
    TenantPolicy,
)
from kenning.store.sqlite.store import SQLiteStore
from tests.conftest import MemoEmbedder, open_store
from tests.served import serve

DANA = Scope("acme", "dana", "s-dana")
LEE = Scope("acme", "lee", "s-lee")
MODES = ("embedded", "served")


@pytest.fixture(params=MODES)
def memory(
    request: pytest.FixtureRequest, tmp_path: Path, real_embedder: MemoEmbedder
) -> Iterator[Any]:
    embedded = Memory(SQLiteStore(tmp_path / "api.db"), embedder=real_embedder)
    try:
        if request.param == "embedded":
            yield embedded
        else:
            with serve(embedded) as served, Client(served.url, api_key=served.key("acme")) as c:
                yield c
    finally:
        embedded.close()


def test_add_events_assigns_sequence_and_skips_repeated_ids(memory: Any) -> None:
    first = memory.add_events(DANA, [
        {"role": "user", "content": "I was charged twice for order A-1042", "id": "m1",
         "metadata": {"speaker": "Dana"}, "tags": ["billing"]},
        {"role": "assistant", "content": "Refund RF-7781 of 42.50 EUR approved.", "id": "m2"},
    ])  # fmt: skip
    assert [e.seq for e in first] == [1, 2]
    assert first[0].metadata == {"speaker": "Dana"} and first[0].tags == ("billing",)
    again = memory.add_events(DANA, [{"role": "user", "content": "retry", "id": "m1"}])
    assert again == []
    stored = memory.get_session(DANA)
    assert [e.id for e in stored] == [e.id for e in first]
    assert memory.get_session(DANA, after_seq=1) == stored[1:]
    assert memory.get_session(DANA, after_seq=2**63 - 1) == []
    for bad in (-1, 2**63):  # a sequence number is a 64-bit integer in every store
        with pytest.raises(InvalidInput, match="after_seq"):
            memory.get_session(DANA, after_seq=bad)
    assert memory.get_session(Scope("acme", "dana", "never")) == []


def test_search_stays_inside_its_scope(memory: Any) -> None:
    memory.add_events(DANA, [{"role": "user", "content": "My parcel P-88 is lost in Porto"}])
    memory.add_events(LEE, [{"role": "user", "content": "My parcel P-99 is lost in Lisbon"}])
    dana = memory.search(Scope("acme", "dana"), "lost parcel", k=5)
    assert [h.content for h in dana] == ["My parcel P-88 is lost in Porto"]
    assert dana[0].scope == DANA and dana[0].seq == 1 and dana[0].scores
    tenant = memory.search(Scope("acme"), "lost parcel", k=5)
    assert {h.scope.user for h in tenant} == {"dana", "lee"}
    assert {h.scope for h in memory.search(DANA, "Lisbon", k=5)} <= {DANA}


def test_another_users_session_is_a_scope_conflict_on_every_path(memory: Any) -> None:
    memory.add_events(DANA, [{"role": "user", "content": "hello"}])
    wrong = Scope("acme", "lee", DANA.session)
    calls = [
        lambda: memory.add_events(wrong, [{"role": "user", "content": "x"}]),
        lambda: memory.get_session(wrong),
        lambda: memory.search(wrong, "hello"),
        lambda: memory.context.pins(wrong),
        lambda: memory.context.task_state(wrong),
        lambda: memory.context.summaries(wrong),
        lambda: memory.assemble(wrong, budget_tokens=500, model="gpt-4o", system="s"),
    ]
    for call in calls:
        with pytest.raises(ScopeConflict):
            call()


def test_bad_input_raises_the_same_classes(memory: Any) -> None:
    with pytest.raises(InvalidInput):
        memory.search(DANA, "   ")
    with pytest.raises(InvalidInput):
        memory.add_events(DANA, [{"role": "robot", "content": "x"}])
    with pytest.raises(InvalidInput):
        memory.context.set_pin(DANA, "amount", "12 EUR")  # an amount needs amount=
    with pytest.raises(BudgetError):
        memory.assemble(DANA, budget_tokens=5, model="gpt-4o", system="a long system policy " * 5)
    with pytest.raises(InvalidScope):
        memory.assemble(DANA, budget_tokens=500, model="gpt-4o", system="s",
                        retrieve_from=Scope("globex", "dana"))  # fmt: skip
    with pytest.raises(NotFound):
        memory.context.close_pin(DANA, "no-such-pin")


def test_assemble_keeps_pins_and_the_budget(memory: Any) -> None:
    memory.add_events(DANA, [
        {"role": "user", "content": "Order A-1042 was charged twice."},
        {"role": "tool", "content": "refund created", "tool_name": "refunds",
         "tool_result": {"refund_id": "RF-7781", "amount": "42.50", "currency": "EUR"}},
    ])  # fmt: skip
    memory.context.update_task(DANA, TaskUpdate(task="Refund the double charge"))
    window = memory.assemble(DANA, budget_tokens=600, model="gpt-4o",
                             system="You are a support agent.", query="refund")  # fmt: skip
    text = "\n".join(m["content"] or "" for m in window.messages)
    assert window.tokens <= window.budget == 600
    # The tool result is a tool message right after its call, on both sides of the wire.
    at = next(i for i, m in enumerate(window.messages) if m["role"] == "tool")
    call = window.messages[at - 1]["tool_calls"][0]
    assert window.messages[at]["tool_call_id"] == call["id"]
    assert call["function"]["name"] == "refunds"
    assert window.messages[at]["content"] == "refund created"
    assert "A-1042" in text and "Refund the double charge" in text
    assert window.encoding and window.tiers


def test_pins_round_trip_with_decimal_amounts_and_history(memory: Any) -> None:
    pin = memory.context.set_pin(DANA, PinKind.AMOUNT, "42.50 EUR", key="refund",
                                 amount=Decimal("42.50"), currency="EUR")  # fmt: skip
    assert pin.amount == Decimal("42.50") and pin.currency == "EUR" and pin.version == 1
    closed = memory.context.close_pin(DANA, "refund")
    assert closed.status is PinStatus.CLOSED and closed.version == 2
    assert [p.version for p in memory.context.pins(DANA, history=True)] == [1, 2]


def test_task_state_merges(memory: Any) -> None:
    memory.context.update_task(DANA, TaskUpdate(task="Refund", constraints=["no refunds > 100"]))
    state = memory.context.update_task(
        DANA, TaskUpdate(status="in_progress", decisions=[("refund to card", "customer asked")])
    )
    assert state.task == "Refund" and state.status is TaskStatus.IN_PROGRESS
    assert state.constraints == ("no refunds > 100",) and state.version == 2
    assert memory.context.task_state(DANA) == state


def test_compaction_writes_audited_summaries(memory: Any) -> None:
    memory.add_events(DANA, [
        {"role": "user" if i % 2 else "assistant",
         "content": f"Turn {i}: the customer asked about order A-{1000 + i} and its refund."}
        for i in range(40)
    ])  # fmt: skip
    written = memory.context.compact(DANA, budget_tokens=400, model="gpt-4o")
    assert written
    assert memory.context.summaries(DANA)
    log = memory.context.compaction_log(DANA)
    assert log and any(e.tokens_before for e in log)


def test_forget_erases_from_search(memory: Any) -> None:
    memory.add_events(DANA, [{"role": "user", "content": "my passport number is X1234567"}])
    assert memory.search(Scope("acme", "dana"), "passport", k=3).hits
    assert memory.forget(Scope("acme", "dana")) == 1
    assert memory.search(Scope("acme", "dana"), "passport", k=3).hits == ()
    assert memory.get_session(DANA) == []


# -- long-term memory ------------------------------------------------------------------------

DANA_USER = Scope("acme", "dana")
TOOLS = [{"type": "function", "function": {"name": "refund", "parameters": {"type": "object"}}}]


def test_facts_supersede_read_as_of_and_revoke(memory: Any) -> None:
    first = memory.facts.remember(DANA, "location", "Berlin")
    second = memory.facts.remember(DANA, "location", "Lisbon")
    assert (first.value, second.value, second.scope) == ("Berlin", "Lisbon", DANA)
    assert [f.value for f in memory.facts.list(DANA_USER)] == ["Lisbon"]
    between = first.valid_from + (second.valid_from - first.valid_from) / 2
    assert [f.value for f in memory.facts.list(DANA_USER, as_of=between)] == ["Berlin"]
    history = memory.facts.history(DANA_USER, second.id)
    assert [(f.value, f.status) for f in history] == [
        ("Berlin", FactStatus.SUPERSEDED), ("Lisbon", FactStatus.ACTIVE),
    ]  # fmt: skip
    assert history[0].superseded_by == second.id
    revoked = memory.facts.revoke(DANA_USER, second.id)
    assert revoked.status is FactStatus.REVOKED and memory.facts.list(DANA_USER) == []
    closed = memory.facts.list(DANA_USER, include_closed=True)
    assert [f.status for f in closed] == [FactStatus.SUPERSEDED, FactStatus.REVOKED]
    assert memory.facts.list(Scope("acme", "dana", "other"), include_closed=True) == []
    for call in (
        lambda: memory.facts.history(DANA_USER, "fact_nope"),
        lambda: memory.facts.revoke(DANA_USER, "fact_nope"),
        lambda: memory.facts.history(Scope("acme", "lee"), first.id),  # another user's
    ):
        with pytest.raises(NotFound):
            call()


def test_profile_export_and_consent(memory: Any) -> None:
    memory.facts.remember(DANA, "location", "Berlin")
    memory.facts.remember(DANA, "location", "Porto")
    memory.facts.remember(DANA, "preferred language", "Portuguese")
    profile = memory.facts.profile(DANA_USER)
    assert profile.biography == {"location": "Porto"}
    assert profile.style == {"preferred language": "Portuguese"}
    assert [(c.old, c.new) for c in profile.corrections] == [("Berlin", "Porto")]
    assert memory.facts.consent(DANA_USER) == Consent(False, False)
    assert not memory.facts.shares_across_sessions(DANA)
    with pytest.raises(InvalidInput, match="consent"):
        memory.facts.remember(DANA, "condition", "asthma", category=FactCategory.HEALTH)
    chosen = memory.facts.set_consent(DANA_USER, share_across_sessions=True, sensitive_facts=True)
    assert chosen == Consent(True, True) and memory.facts.shares_across_sessions(DANA)
    memory.facts.remember(DANA, "condition", "asthma", category="health")
    exported = memory.facts.export(DANA_USER)
    assert exported["consent"] == {"share_across_sessions": True, "sensitive_facts": True}
    assert len(exported["facts"]) == 4 and exported["biography"]["condition"] == "asthma"
    assert memory.facts.profile(Scope("acme", "nobody")).session_count == 0


def test_procedures_are_bound_to_their_tools_and_approved(memory: Any) -> None:
    draft = memory.procedures.record(DANA, "refund a double charge",
                                     ["look up the order", "refund it"], tools=TOOLS)  # fmt: skip
    assert draft.status is ProcedureStatus.CANDIDATE and draft.version == 1
    assert memory.procedures.get("acme", "refund a double charge", tools=TOOLS).procedure is None
    active = memory.procedures.approve("acme", draft.id)
    assert active.status is ProcedureStatus.ACTIVE
    assert memory.procedures.get("acme", "refund a double charge", tools=TOOLS).procedure == active
    changed = [{"type": "function", "function": {"name": "refund_v2", "parameters": {}}}]
    drift = memory.procedures.get("acme", "refund a double charge", tools=changed)
    assert drift.procedure is None and drift.drifted == (active,)
    kept = memory.procedures.get("acme", "refund a double charge", tools=changed,
                                 include_drift=True)  # fmt: skip
    assert kept.procedure == active
    assert memory.procedures.show("acme", draft.id) == active
    assert memory.procedures.list("acme", name="refund a double charge") == [active]
    memory.add_events(DANA, [{"role": "tool", "content": "refunded", "tool_name": "refund",
                              "tool_args": {"order": "A-1"}}])  # fmt: skip
    with pytest.raises(InvalidInput, match="not done"):
        memory.procedures.candidate_from_task(DANA, "refund", tools=TOOLS)
    memory.context.update_task(DANA, TaskUpdate(task="Refund A-1", status="done"))
    candidate = memory.procedures.candidate_from_task(DANA, "refund", tools=TOOLS)
    assert candidate.steps == ("call refund with order", "outcome: Refund A-1")
    assert memory.procedures.retire("acme", active.id).status is ProcedureStatus.RETIRED
    with pytest.raises(NotFound):
        memory.procedures.show("acme", "proc_nope")
    with pytest.raises(NotFound):
        memory.procedures.approve("acme", "proc_nope")


def test_retention_reads_and_stats(memory: Any) -> None:
    assert memory.retention.policy("acme") == TenantPolicy()
    assert memory.retention.holds("acme") == []
    memory.add_events(DANA, [{"role": "user", "content": "hello there"}])
    stats = memory.retention.stats(DANA_USER)
    assert stats.records == {"event": 1} and stats.purged == {}
    assert memory.retention.stats(Scope("acme", "lee")).records == {}


def test_the_action_log_is_the_same_embedded_and_served(memory: Any) -> None:
    memory.add_events(DANA, [
        {"role": "assistant", "content": "looking", "tool_name": "orders",
         "tool_args": {"id": "A-1042"}, "metadata": {"tool_call_id": "c1"}},
        {"role": "tool", "content": "not found", "tool_name": "orders",
         "metadata": {"tool_call_id": "c1", "is_error": True}},
        {"role": "tool", "tool_name": "refunds", "tool_result": {"refund_id": "RF-1"}},
    ])  # fmt: skip
    log = memory.context.action_log(DANA)
    assert [(a.seq, a.tool, a.args, a.outcome.value, a.call_id) for a in log.actions] == [
        (1, "orders", '{"id":"A-1042"}', "error", "c1"), (3, "refunds", "", "ok", None),
    ]  # fmt: skip
    assert dict(log.calls) == {"orders": 1, "refunds": 1} and dict(log.errors) == {"orders": 1}
    assert log.seq == 3 and not log.files_read
    with pytest.raises(InvalidScope):
        memory.context.action_log(Scope("acme", "dana"))


@pytest.fixture(params=[(b, m) for b in ("sqlite-file", "postgresql", "citus")
                        for m in MODES],
                ids=lambda p: "-".join(p))  # fmt: skip
def promoting(
    request: pytest.FixtureRequest, tmp_path: Path, real_embedder: MemoEmbedder
) -> Iterator[tuple[Any, str | None]]:
    """A memory on each backend, embedded or served; the server's URL when served."""
    backend, mode = request.param
    embedded = Memory(open_store(backend, tmp_path), embedder=real_embedder)
    try:
        if mode == "embedded":
            yield embedded, None
        else:
            with serve(embedded) as served, Client(served.url, api_key=served.key("acme")) as c:
                yield c, served.url
    finally:
        embedded.close()


def test_a_verified_finding_is_promoted_to_a_fact_citing_its_evidence(
    promoting: tuple[Any, str | None],
) -> None:
    memory, url = promoting
    tool = {"role": "tool", "tool_name": "read_file", "id": "r1", "tool_result": {"a": "5s"}}
    [read] = memory.add_events(DANA, [tool])
    memory.context.set_pin(DANA, "entity_id", "cfg-9", key="config", source_event_id="r1")
    state = memory.context.update_task(DANA, TaskUpdate(
        task="Find why checkout times out",
        hypotheses=[{"text": "The database is slow", "status": "rejected",
                     "reason": "its p99 is 3 ms"}],
        findings=[{"text": "The gateway times out after 5 s", "evidence": [read.id]},
                  {"text": "Config cfg-9 is the live one", "evidence": ["pin:config"]}],
    ))  # fmt: skip
    gateway, config = state.findings
    assert gateway.id.startswith("f_") and memory.context.task_state(DANA) == state
    fact = memory.context.promote_finding(DANA, gateway.id, attribute="Gateway timeout",
                                          value="5 s")  # fmt: skip
    assert (fact.attribute, fact.value, fact.source_event_id) == ("gateway timeout", "5 s",
                                                                  read.id)  # fmt: skip
    assert fact.scope.user == "dana" and fact.status is FactStatus.ACTIVE
    # Evidence that is a pin: the fact cites the pin's source event; the value is the text.
    cited = memory.context.promote_finding(DANA, config.id, attribute="live config")
    assert (cited.value, cited.source_event_id) == ("Config cfg-9 is the live one", "r1")

    def promoted() -> list[tuple[str, str]]:
        return sorted((f.attribute, f.value) for f in memory.facts.list(DANA_USER)
                      if f.attribute in {"gateway timeout", "live config", "x"})  # fmt: skip

    before = promoted()
    assert before == [("gateway timeout", "5 s"), ("live config", "Config cfg-9 is the live one")]
    with pytest.raises(NotFound):
        memory.context.promote_finding(DANA, "f_000000000000", attribute="x")
    with pytest.raises(NotFound):  # another session of the same user holds no findings
        memory.context.promote_finding(Scope("acme", "dana", "s-2"), gateway.id, attribute="x")
    with pytest.raises(InvalidInput, match="rejected hypothesis"):
        memory.context.promote_finding(DANA, state.hypotheses[0].id, attribute="x")
    with pytest.raises(InvalidInput, match="consent"):  # a sensitive category, no consent
        memory.context.promote_finding(DANA, gateway.id, attribute="x", category="health")
    with pytest.raises(InvalidInput):
        memory.context.promote_finding(DANA, "not an id", attribute="x")
    with pytest.raises(ScopeConflict):
        memory.context.promote_finding(Scope("acme", "lee", DANA.session), gateway.id,
                                       attribute="x")  # fmt: skip
    if url is None:
        with pytest.raises(NotFound):
            memory.context.promote_finding(Scope("globex", "dana", DANA.session), gateway.id,
                                           attribute="x")  # fmt: skip
    else:
        _another_tenant_promotes_nothing(url, gateway.id)
    assert promoted() == before and memory.context.task_state(DANA) == state


def _another_tenant_promotes_nothing(url: str, finding_id: str) -> None:
    from tests.served import ADMIN

    def key(tenant: str, scopes: list[str]) -> str:
        made = httpx.post(f"{url}/v1/admin/keys", json={"tenant": tenant, "scopes": scopes},
                          headers={"Authorization": f"Bearer {ADMIN}"})  # fmt: skip
        return str(made.raise_for_status().json()["key"])

    path = f"{url}/v1/sessions/{DANA.session}/task/findings/{finding_id}/promote"
    body = {"user": "dana", "attribute": "x"}
    other = httpx.post(
        path, json=body, headers={"Authorization": f"Bearer {key('globex', ['read', 'write'])}"}
    )
    assert other.status_code == 404 and DANA.session not in other.text
    reader = httpx.post(
        path, json=body, headers={"Authorization": f"Bearer {key('acme', ['read'])}"}
    )
    assert reader.status_code == 403
