"""Pure parts of the service: rate and quota bookkeeping, the wire codec, the tool schema
check, key tokens, and the client's parity with Memory's methods (and those of its long-term
sub-APIs)."""

from __future__ import annotations

import inspect
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from kenning import (
    AsyncClient,
    Client,
    InvalidInput,
    KenningError,
    LongTermMemory,
    Memory,
    Procedures,
    QuotaExceeded,
    RateLimited,
    Retention,
    ScopeConflict,
    TenantPolicy,
    Unauthorized,
    WorkingContext,
)
from kenning.errors import error_for_code
from kenning.records import (
    AuditAction,
    AuditEntry,
    Consent,
    Correction,
    Event,
    Fact,
    FactCategory,
    FactSource,
    FactStatus,
    LegalHold,
    Pin,
    PinKind,
    Procedure,
    ProcedureMatch,
    ProcedureStatus,
    Profile,
    Quota,
    Role,
    Scope,
    StoreStats,
    Summary,
    TenantUsage,
)
from kenning.server.auth import create_key, verify_key
from kenning.server.limits import RateLimiter
from kenning.store.sqlite.store import SQLiteStore
from kenning.tools.schema import check_arguments
from kenning.wire import (
    audit_from_json,
    audit_json,
    consent_from_json,
    consent_json,
    error_from_json,
    error_json,
    event_from_json,
    event_json,
    fact_from_json,
    fact_json,
    hold_from_json,
    hold_json,
    match_from_json,
    match_json,
    pin_from_json,
    pin_json,
    policy_from_json,
    policy_json,
    procedure_from_json,
    procedure_json,
    profile_from_json,
    profile_json,
    stats_from_json,
    stats_json,
    summary_from_json,
    summary_json,
)

T0 = datetime(2026, 3, 2, 10, tzinfo=UTC)
S = Scope("acme", "dana", "s1")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_rate_limiter_is_a_token_bucket_per_tenant() -> None:
    clock = Clock()
    limiter = RateLimiter(2.0, 3, clock=clock)
    for _ in range(3):
        limiter.take("acme")
    with pytest.raises(RateLimited) as err:
        limiter.take("acme")
    assert err.value.retry_after == 1.0
    limiter.take("globex")
    clock.now = 0.5  # one token back
    limiter.take("acme")
    with pytest.raises(RateLimited):
        limiter.take("acme")


def test_a_quota_refuses_a_batch_that_would_pass_either_limit() -> None:
    used = TenantUsage(events=8, content_chars=100)
    Quota(max_events=10).check("acme", used, events=2, chars=5)  # exactly at the quota
    with pytest.raises(QuotaExceeded, match="8 events; 3 more would pass its quota of 10"):
        Quota(max_events=10).check("acme", used, events=3, chars=5)
    with pytest.raises(QuotaExceeded, match="characters"):
        Quota(max_chars=104).check("acme", used, events=1, chars=5)
    Quota().check("acme", used, events=10**9, chars=10**12)  # no limits
    for bad in (-1, 1.5, True):
        with pytest.raises(InvalidInput, match="max_events"):
            Quota(max_events=bad)  # type: ignore[arg-type]


def test_records_survive_the_wire() -> None:
    event = Event(id="ev1", scope=S, seq=3, role=Role.TOOL, content="done", at=T0,
                  tool_name="refunds", tool_args={"id": 1}, tool_result=[1, "x"],
                  metadata={"speaker": "bot", "n": 2}, tags=("billing",), version="v2",
                  content_hash="h", idempotency_key="k1")  # fmt: skip
    assert event_from_json(event_json(event)) == event
    pin = Pin(id="p1", scope=S, kind=PinKind.AMOUNT, key="refund", value="42.50 EUR",
              amount=Decimal("42.50"), currency="EUR", created_at=T0,
              closed_at=T0 + timedelta(seconds=1))  # fmt: skip
    assert pin_from_json(pin_json(pin)) == pin
    assert pin_json(pin)["amount"] == "42.50"  # no float on the way
    summary = Summary(id="sum1", scope=S, level=1, first_seq=1, last_seq=9, text="t",
                      body={"facts": []}, created_at=T0)  # fmt: skip
    assert summary_from_json(summary_json(summary)) == summary
    entry = AuditEntry(scope=S, at=T0, action=AuditAction.SEGMENT, first_seq=1, last_seq=2,
                       tokens_before=100, tokens_after=20, detail="d", id=4)  # fmt: skip
    assert audit_from_json(audit_json(entry)) == entry


def test_every_error_comes_back_as_its_own_class() -> None:
    import kenning.errors as errors

    for name in errors.__all__:
        cls = getattr(errors, name)
        if not (isinstance(cls, type) and issubclass(cls, KenningError)):
            continue
        back = error_from_json(cls.http_status, error_json(cls("why", retry_after=2.0)))
        assert type(back) is cls and back.message == "why" and back.retry_after == 2.0
    assert type(error_from_json(502, "<html>bad gateway</html>")) is KenningError
    assert error_for_code("scope_conflict") is ScopeConflict


def test_tool_schema_check_names_what_is_wrong() -> None:
    schema = {
        "type": "object",
        "properties": {
            "q": {"type": "string", "minLength": 1, "maxLength": 3},
            "k": {"type": "integer", "minimum": 1},
            "tags": {"type": "array", "maxItems": 1, "items": {"type": "string"}},
        },
        "required": ["q"],
        "additionalProperties": False,
    }
    assert check_arguments({"q": "ab", "k": None}, schema, tool="t") == {"q": "ab"}
    bad = [
        ({}, "missing required"), ({"q": "abcd"}, "at most 3"), ({"q": "a", "k": True}, "integer"),
        ({"q": "a", "k": 0}, "at least 1"), ({"q": "a", "x": 1}, "unknown argument"),
        ({"q": "a", "tags": ["a", "b"]}, "at most 1 items"), ({"q": "a", "tags": [1]}, "tags[0]"),
        ([1], "JSON object"),
    ]  # fmt: skip
    for arguments, message in bad:
        with pytest.raises(InvalidInput, match=message.replace("[", r"\[").replace("]", r"\]")):
            check_arguments(arguments, schema, tool="t")


def test_keys_are_shown_once_and_checked_against_a_hash() -> None:
    with SQLiteStore(":memory:") as store:
        key, token = create_key(store, "acme", ["read"])
        stored = store.api_key(key.id)
        assert stored is not None and token.split("_", 2)[2] not in stored[1]
        assert verify_key(store, token).tenant == "acme"
        for bad in (None, "", "Bearer x", token + "x", f"kn_{key.id}_", "kn_nope_secret"):
            with pytest.raises(Unauthorized):
                verify_key(store, bad)
        with pytest.raises(InvalidInput):
            create_key(store, "acme", ["admin"])


def _public(cls: type) -> dict[str, inspect.Signature]:
    """The public methods of *cls*, its bases' included (a client's parts take their methods
    from a base shared by the sync and async client), each as the class defines it."""
    members = {name: m for base in reversed(cls.__mro__) for name, m in vars(base).items()}
    return {
        name: inspect.signature(member)
        for name, member in members.items()
        if callable(member) and not name.startswith("_")
    }


@pytest.mark.parametrize("client_cls", [Client, AsyncClient])
def test_the_client_has_memorys_method_names_and_arguments(client_cls: type) -> None:
    memory, client = _public(Memory), _public(client_cls)
    # The facade's agent calls; ``open``, ``close`` and the store accessors are local concerns,
    # and so is a write's quota: the embedding application passes its own, a server its own.
    for name in ("add_events", "ingest", "get_session", "search", "assemble", "forget"):
        mine = [p for p in memory[name].parameters.values() if p.name != "quota"]
        assert list(client[name].parameters) == [p.name for p in mine], name
        for param in mine:
            assert client[name].parameters[param.name].kind == param.kind, (name, param.name)
    working = _public(WorkingContext)
    served = _public(type(client_cls(api_key="x").context))
    for name in ("set_pin", "close_pin", "pins", "update_task", "task_state", "summaries",
                 "compaction_log", "compact"):  # fmt: skip
        assert list(served[name].parameters)[:3] == list(working[name].parameters)[:3], name
        assert set(served[name].parameters) <= set(working[name].parameters), name
    # The long-term sub-APIs: every argument, in order, of the same kind, with the same default.
    client = client_cls(api_key="x")
    long_term = {
        LongTermMemory: (client.facts, ("list", "history", "remember", "revoke", "profile",
                                        "export", "consent", "set_consent",
                                        "shares_across_sessions")),
        Retention: (client.retention, ("policy", "set_policy", "hold", "release", "holds",
                                       "purge", "stats")),
        Procedures: (client.procedures, ("record", "candidate_from_task", "approve", "retire",
                                         "list", "show", "get")),
    }  # fmt: skip
    for embedded_cls, (sub, names) in long_term.items():
        embedded, mirrored = _public(embedded_cls), _public(type(sub))
        assert set(mirrored) == set(names), embedded_cls
        for name in names:
            mine, theirs = mirrored[name].parameters, embedded[name].parameters
            assert list(mine) == list(theirs), (embedded_cls, name)
            for param in theirs.values():
                assert mine[param.name].kind == param.kind, (name, param.name)
                assert mine[param.name].default == param.default, (name, param.name)


def test_long_term_records_survive_the_wire() -> None:
    fact = Fact(id="fact_1", scope=S, subject="user", attribute="preference:jazz", value="likes",
                text="The user likes jazz", qualifier="at work", source=FactSource.INFERRED,
                confidence=0.8, category=FactCategory.GENERAL, status=FactStatus.SUPERSEDED,
                tags=("music",), valid_from=T0, valid_to=T0 + timedelta(days=1),
                superseded_by="fact_2", expires_at=T0 + timedelta(days=30), pinned=True,
                reinforced=3, last_seen=T0, sources=("ev1", "ev2"), source_event_id="ev1",
                created_at=T0, access_count=4, last_access=T0)  # fmt: skip
    assert fact_from_json(fact_json(fact)) == fact
    profile = Profile(user=Scope("acme", "dana"), biography={"location": "Porto"},
                      preferences={"jazz": "likes"}, style={"language": "pt"},
                      people={"Ana": {"relation": "sister"}},
                      corrections=(Correction("location", "Berlin", "Porto", T0),),
                      session_count=2, last_session="s2", last_session_at=T0)  # fmt: skip
    assert profile_from_json(profile_json(profile)) == profile
    consent = Consent(share_across_sessions=True, sensitive_facts=False)
    assert consent_from_json(consent_json(consent)) == consent
    policy = TenantPolicy(share_across_sessions=True, episode_days=30, recent_sessions=3)
    assert policy_from_json(policy_json(policy)) == policy
    hold = LegalHold(scope=Scope("acme", "dana"), reason="litigation", created_at=T0)
    assert hold_from_json(hold_json(hold)) == hold
    procedure = Procedure(id="proc_1", scope=Scope("acme"), name="refund", version=2,
                          tool_schema_hash="h", steps=("look up", "refund"),
                          description="d", status=ProcedureStatus.CANDIDATE,
                          created_at=T0)  # fmt: skip
    assert procedure_from_json(procedure_json(procedure)) == procedure
    match = ProcedureMatch(procedure, (procedure,))
    assert match_from_json(match_json(match)) == match
    assert match_from_json(match_json(ProcedureMatch(None))) == ProcedureMatch(None)
    stats = StoreStats(records={"event": 2}, mean_age_days={"event": 1.5},
                       top_tags=(("billing", 2),), facts={"active": 1},
                       purged={"event": 3}, unread_events=1, documents=4)  # fmt: skip
    assert stats_from_json(stats_json(stats)) == stats
