"""kenning's records as JSON and back: the one codec the server writes and the client reads.

Pure functions, no I/O. Every ``*_json`` function returns plain JSON values (times as ISO-8601
strings, amounts as decimal strings so no digit is lost to a float); every ``*_from_json``
rebuilds the same frozen record, so a served ``Memory`` returns what an embedded one does.
Errors travel as ``{"error": {"code", "message", "status", "retry_after"}}`` and come back as
the same :class:`~kenning.errors.KenningError` subclass (:func:`error_from_json`).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from kenning.context.actions import ActionLog
from kenning.context.window import ContextWindow, Pressure, Skip, Tier, TierAccount
from kenning.errors import KenningError, error_for_code
from kenning.records import (
    AuditAction,
    AuditEntry,
    CompactionJob,
    Consent,
    Event,
    Fact,
    JobStatus,
    LegalHold,
    Pin,
    PinKind,
    PinStatus,
    Procedure,
    ProcedureMatch,
    ProcedureStatus,
    Profile,
    Role,
    Scope,
    StoreStats,
    Summary,
    TaskState,
    TenantPolicy,
)
from kenning.records.core import parse_opt_time, parse_time, time_json
from kenning.records.documents import Document, ScoredDocument
from kenning.search.hits import Hit, SearchResults
from kenning.search.plan import QueryPlan
from kenning.search.timeref import TimeWindow

__all__ = [
    "actions_from_json",
    "actions_json",
    "audit_from_json",
    "audit_json",
    "consent_from_json",
    "consent_json",
    "document_from_json",
    "document_json",
    "error_from_json",
    "error_json",
    "event_from_json",
    "event_json",
    "fact_from_json",
    "fact_json",
    "hold_from_json",
    "hold_json",
    "job_from_json",
    "job_json",
    "match_from_json",
    "match_json",
    "pin_from_json",
    "pin_json",
    "policy_from_json",
    "policy_json",
    "procedure_from_json",
    "procedure_json",
    "profile_from_json",
    "profile_json",
    "results_from_json",
    "results_json",
    "scope_from_json",
    "scope_json",
    "scored_from_json",
    "scored_json",
    "stats_from_json",
    "stats_json",
    "summary_from_json",
    "summary_json",
    "task_from_json",
    "task_json",
    "window_from_json",
    "window_json",
]


def scope_json(scope: Scope) -> dict[str, Any]:
    return {"tenant": scope.tenant, "user": scope.user, "session": scope.session,
            "agent": scope.agent}  # fmt: skip


def scope_from_json(data: Mapping[str, Any]) -> Scope:
    return Scope(data["tenant"], data.get("user"), data.get("session"), data.get("agent"))


def event_json(event: Event) -> dict[str, Any]:
    return {
        "id": event.id, "scope": scope_json(event.scope), "seq": event.seq,
        "role": event.role.value, "content": event.content, "at": time_json(event.at),
        "tool_name": event.tool_name, "tool_args": event.tool_args,
        "tool_result": event.tool_result, "metadata": dict(event.metadata),
        "tags": list(event.tags), "version": event.version, "content_hash": event.content_hash,
        "idempotency_key": event.idempotency_key,
    }  # fmt: skip


def event_from_json(data: Mapping[str, Any]) -> Event:
    return Event(
        id=data["id"], scope=scope_from_json(data["scope"]), seq=int(data["seq"]),
        role=Role(data["role"]), content=data["content"], at=parse_time(data["at"]),
        tool_name=data.get("tool_name"), tool_args=data.get("tool_args"),
        tool_result=data.get("tool_result"), metadata=dict(data.get("metadata") or {}),
        tags=tuple(data.get("tags") or ()), version=data.get("version"),
        content_hash=data.get("content_hash", ""), idempotency_key=data.get("idempotency_key"),
    )  # fmt: skip


def pin_json(pin: Pin) -> dict[str, Any]:
    return {
        "id": pin.id, "scope": scope_json(pin.scope), "kind": pin.kind.value, "key": pin.key,
        "value": pin.value, "version": pin.version,
        "amount": None if pin.amount is None else str(pin.amount), "currency": pin.currency,
        "status": pin.status.value, "source_event_id": pin.source_event_id,
        "created_at": time_json(pin.created_at), "closed_at": time_json(pin.closed_at),
        "metadata": dict(pin.metadata),
    }  # fmt: skip


def pin_from_json(data: Mapping[str, Any]) -> Pin:
    amount = data.get("amount")
    return Pin(
        id=data["id"], scope=scope_from_json(data["scope"]), kind=PinKind(data["kind"]),
        key=data["key"], value=data["value"], version=int(data.get("version", 1)),
        amount=None if amount is None else Decimal(str(amount)), currency=data.get("currency"),
        status=PinStatus(data.get("status", "open")), source_event_id=data.get("source_event_id"),
        created_at=parse_time(data["created_at"]), closed_at=parse_opt_time(data.get("closed_at")),
        metadata=dict(data.get("metadata") or {}),
    )  # fmt: skip


def summary_json(summary: Summary) -> dict[str, Any]:
    return {
        "id": summary.id, "scope": scope_json(summary.scope), "level": summary.level,
        "first_seq": summary.first_seq, "last_seq": summary.last_seq, "text": summary.text,
        "body": dict(summary.body), "summarizer": summary.summarizer,
        "created_at": time_json(summary.created_at),
    }  # fmt: skip


def summary_from_json(data: Mapping[str, Any]) -> Summary:
    return Summary(
        id=data["id"], scope=scope_from_json(data["scope"]), level=int(data["level"]),
        first_seq=int(data["first_seq"]), last_seq=int(data["last_seq"]), text=data["text"],
        body=dict(data.get("body") or {}), summarizer=data.get("summarizer", ""),
        created_at=parse_time(data["created_at"]),
    )  # fmt: skip


def audit_json(entry: AuditEntry) -> dict[str, Any]:
    return {
        "id": entry.id, "scope": scope_json(entry.scope), "at": time_json(entry.at),
        "action": entry.action.value, "first_seq": entry.first_seq, "last_seq": entry.last_seq,
        "tokens_before": entry.tokens_before, "tokens_after": entry.tokens_after,
        "summary_id": entry.summary_id, "summarizer": entry.summarizer, "detail": entry.detail,
    }  # fmt: skip


def audit_from_json(data: Mapping[str, Any]) -> AuditEntry:
    return AuditEntry(
        scope=scope_from_json(data["scope"]), at=parse_time(data["at"]),
        action=AuditAction(data["action"]), first_seq=data.get("first_seq"),
        last_seq=data.get("last_seq"), tokens_before=data.get("tokens_before"),
        tokens_after=data.get("tokens_after"), summary_id=data.get("summary_id"),
        summarizer=data.get("summarizer"), detail=data.get("detail", ""),
        id=int(data.get("id", 0)),
    )  # fmt: skip


def job_json(job: CompactionJob) -> dict[str, Any]:
    # The lease token is the holder's fencing secret: it never leaves the server.
    return {
        "id": job.id, "scope": scope_json(job.scope), "model": job.model, "budget": job.budget,
        "reason": job.reason, "status": job.status.value, "attempts": job.attempts,
        "created_at": time_json(job.created_at), "error": job.error,
    }  # fmt: skip


def job_from_json(data: Mapping[str, Any]) -> CompactionJob:
    return CompactionJob(
        id=int(data["id"]), scope=scope_from_json(data["scope"]), model=data["model"],
        budget=int(data["budget"]), reason=data["reason"], status=JobStatus(data["status"]),
        attempts=int(data["attempts"]), created_at=parse_time(data["created_at"]),
        error=data.get("error"),
    )  # fmt: skip


# Records that carry their own JSON codec: the wire's names for it are the record's methods.
task_json = TaskState.to_json
task_from_json = TaskState.from_json
actions_json = ActionLog.to_json
actions_from_json = ActionLog.from_json
window_json = ContextWindow.to_json
fact_json = Fact.to_json
fact_from_json = Fact.from_json
profile_json = Profile.to_json
profile_from_json = Profile.from_json
consent_json = Consent.to_json
consent_from_json = Consent.from_json
policy_json = TenantPolicy.to_json
policy_from_json = TenantPolicy.from_json


def window_from_json(data: Mapping[str, Any]) -> ContextWindow:
    tiers = {
        Tier(name): TierAccount(
            tier=Tier(name),
            tokens=int(acc["tokens"]),
            included=int(acc["included"]),
            cap=acc.get("cap"),
            skipped=tuple(Skip(s["key"], int(s["tokens"]), s["reason"]) for s in acc["skipped"]),
        )
        for name, acc in data["tiers"].items()
    }
    return ContextWindow(
        messages=tuple(dict(m) for m in data["messages"]),
        tools=tuple(dict(t) for t in data["tools"]), tiers=tiers, tokens=int(data["tokens"]),
        budget=int(data["budget"]), utilization=float(data["utilization"]),
        pressure=Pressure(data["pressure"]), degraded=bool(data["degraded"]),
        reasons=tuple(data["reasons"]), encoding=data["encoding"], exact=bool(data["exact"]),
        citations=tuple(dict(c) for c in data.get("citations", ())),
    )  # fmt: skip


def results_json(results: SearchResults) -> dict[str, Any]:
    plan = results.plan
    return {
        "hits": [h.to_dict() | {"agent": h.scope.agent} for h in results.hits],
        "degraded": results.degraded,
        "reason": results.reason,
        "plan": None
        if plan is None
        else {
            "text": plan.text,
            "multi_target": plan.multi_target,
            "asks_past": plan.asks_past,
            "windows": [
                {"start": time_json(w.start), "end": time_json(w.end), "phrase": w.phrase}
                for w in plan.windows
            ],
        },
    }


def results_from_json(data: Mapping[str, Any]) -> SearchResults:
    hits = tuple(
        Hit(
            id=h["id"],
            kind=h["kind"],
            score=float(h["score"]),
            scores={k: float(v) for k, v in h["scores"].items()},
            content=h["content"],
            role=Role(h["role"]),
            scope=Scope(h["tenant"], h.get("user"), h.get("session"), h.get("agent")),
            seq=int(h["seq"]),
            at=parse_time(h["at"]),
            metadata=dict(h.get("metadata") or {}),
            tags=tuple(h.get("tags") or ()),
        )
        for h in data["hits"]
    )
    raw = data.get("plan")
    plan = None
    if raw is not None:
        plan = QueryPlan(
            text=raw["text"], multi_target=bool(raw["multi_target"]),
            asks_past=bool(raw.get("asks_past", False)),
            windows=tuple(
                TimeWindow(parse_time(w["start"]), parse_time(w["end"]), w["phrase"])
                for w in raw["windows"]
            ),
        )  # fmt: skip
    return SearchResults(
        hits=hits, degraded=bool(data.get("degraded")), reason=data.get("reason"), plan=plan
    )


def hold_json(hold: LegalHold) -> dict[str, Any]:
    return {"scope": scope_json(hold.scope), "reason": hold.reason,
            "created_at": time_json(hold.created_at)}  # fmt: skip


def hold_from_json(data: Mapping[str, Any]) -> LegalHold:
    return LegalHold(scope=scope_from_json(data["scope"]), reason=data["reason"],
                     created_at=parse_time(data["created_at"]))  # fmt: skip


def procedure_json(procedure: Procedure) -> dict[str, Any]:
    return {
        "id": procedure.id, "scope": scope_json(procedure.scope), "name": procedure.name,
        "version": procedure.version, "tool_schema_hash": procedure.tool_schema_hash,
        "steps": list(procedure.steps), "description": procedure.description,
        "status": procedure.status.value, "created_at": time_json(procedure.created_at),
    }  # fmt: skip


def procedure_from_json(data: Mapping[str, Any]) -> Procedure:
    return Procedure(
        id=data["id"], scope=scope_from_json(data["scope"]), name=data["name"],
        version=int(data["version"]), tool_schema_hash=data["tool_schema_hash"],
        steps=tuple(data["steps"]), description=data.get("description", ""),
        status=ProcedureStatus(data["status"]), created_at=parse_time(data["created_at"]),
    )  # fmt: skip


def match_json(match: ProcedureMatch) -> dict[str, Any]:
    found = match.procedure
    return {"procedure": None if found is None else procedure_json(found),
            "drifted": [procedure_json(p) for p in match.drifted]}  # fmt: skip


def match_from_json(data: Mapping[str, Any]) -> ProcedureMatch:
    found = data.get("procedure")
    return ProcedureMatch(
        procedure=None if found is None else procedure_from_json(found),
        drifted=tuple(procedure_from_json(p) for p in data.get("drifted", ())),
    )


def stats_json(stats: StoreStats) -> dict[str, Any]:
    return {"records": dict(stats.records), "mean_age_days": dict(stats.mean_age_days),
            "top_tags": [list(t) for t in stats.top_tags], "facts": dict(stats.facts),
            "purged": dict(stats.purged), "unread_events": stats.unread_events,
            "documents": stats.documents}  # fmt: skip


def stats_from_json(data: Mapping[str, Any]) -> StoreStats:
    return StoreStats(
        records={k: int(v) for k, v in data["records"].items()},
        mean_age_days={k: float(v) for k, v in data["mean_age_days"].items()},
        top_tags=tuple((str(t), int(n)) for t, n in data["top_tags"]),
        facts={k: int(v) for k, v in data["facts"].items()},
        purged={k: int(v) for k, v in data["purged"].items()},
        unread_events=int(data.get("unread_events", 0)),
        documents=int(data.get("documents", 0)),
    )


def document_json(doc: Document) -> dict[str, Any]:
    return {
        "id": doc.id, "tenant": doc.tenant, "namespace": list(doc.namespace), "key": doc.key,
        "value": dict(doc.value), "created_at": time_json(doc.created_at),
        "updated_at": time_json(doc.updated_at), "user": doc.user,
        "ttl_minutes": doc.ttl_minutes, "expires_at": time_json(doc.expires_at),
    }  # fmt: skip


def document_from_json(data: Mapping[str, Any]) -> Document:
    ttl = data.get("ttl_minutes")
    return Document(
        id=data["id"], tenant=data["tenant"], namespace=tuple(data["namespace"]),
        key=data["key"], value=dict(data["value"]), created_at=parse_time(data["created_at"]),
        updated_at=parse_time(data["updated_at"]), user=data.get("user"),
        ttl_minutes=None if ttl is None else float(ttl),
        expires_at=parse_opt_time(data.get("expires_at")),
    )  # fmt: skip


def scored_json(hit: ScoredDocument) -> dict[str, Any]:
    return {"document": document_json(hit.document), "score": hit.score}


def scored_from_json(data: Mapping[str, Any]) -> ScoredDocument:
    score = data.get("score")
    return ScoredDocument(
        document_from_json(data["document"]), None if score is None else float(score)
    )


def error_json(exc: KenningError) -> dict[str, Any]:
    return {
        "error": {
            "code": exc.code,
            "message": exc.message,
            "status": exc.http_status,
            "retry_after": exc.retry_after,
        }
    }


def error_from_json(status: int, data: Any) -> KenningError:
    """The error a response carries, as the class the server raised; a body that is not a
    kenning error (a proxy's page, say) becomes a plain :class:`KenningError` with the
    status."""
    body = data.get("error") if isinstance(data, Mapping) else None
    if not isinstance(body, Mapping) or not isinstance(body.get("code"), str):
        return KenningError(f"the server answered HTTP {status} without a kenning error body")
    cls = error_for_code(body["code"])
    message = str(body.get("message", ""))
    retry = body.get("retry_after")
    return cls(message, retry_after=float(retry) if isinstance(retry, int | float) else None)
