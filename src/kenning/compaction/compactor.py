"""Runs compaction for a session: the I/O shell around :mod:`kenning.compaction.plan`.

Order matters and is the point of this module. For each range: (1) pins are extracted from its
events and committed; (2) the summarizer runs; (3) the amnesia guard checks that every
pin-worthy value of the range is in a pin or in the summary text, and pins what is missing;
(4) the summary, the guard's pins, the retired summaries and the audit entries are committed
in one transaction. A crash at any point leaves the episode and the pins whole; the job is
retried from the queue.

A summarizer may take seconds (an LLM). If records of the tenant are erased meanwhile, the
writes of that range are refused (the store's erase generation moved) and compaction stops:
nothing computed from erased text is written back.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime

from kenning.compaction.body import KEEP_ORDER, SummaryBody, SummaryItem, SummaryResult
from kenning.compaction.extractive import ExtractiveSummarizer
from kenning.compaction.ledger import SessionStore, sync_ledger
from kenning.compaction.plan import CompactionSettings, plan_segments
from kenning.compaction.summarizer import Summarizer, SummaryRequest
from kenning.errors import StaleWrite
from kenning.pins.extract import ExtractionRules, TenantTools, extract_pins, listed_tools
from kenning.records import AuditAction, AuditEntry, Event, Pin, PinDraft, Role, Scope, Summary
from kenning.telemetry import scope_attributes, traced
from kenning.tokens.base import Tokenizer
from kenning.tokens.routing import tokenizer_for

__all__ = ["Compactor", "Stopped", "fit_body"]

log = logging.getLogger("kenning")

_ALL = 1 << 62
_LATEST_USER_SCAN = 256


class Stopped(Exception):
    """Compaction was asked to stop (the store is closing, or the worker lost its lease to
    another); the job can simply run again."""


def fit_body(
    body: SummaryBody,
    tokenizer: Tokenizer,
    *,
    max_tokens: int,
    first_seq: int,
    last_seq: int,
    level: int,
) -> SummaryBody:
    """Trim *body* so its rendered text has at most *max_tokens* tokens.

    Items are kept by section priority (open obligations, goals, decisions, constraints,
    facts) and, within a section, newest first; the kept ones stay in event order.
    """
    header = tokenizer.count(body.render(first_seq=first_seq, last_seq=last_seq, level=level))
    if header <= max_tokens:
        return body
    budget = max_tokens - tokenizer.count(
        SummaryBody().render(first_seq=first_seq, last_seq=last_seq, level=level)
    )
    kept: dict[str, list[SummaryItem]] = {s.value: [] for s in KEEP_ORDER}
    for section in KEEP_ORDER:
        items = body.section(section)
        if not items:
            continue
        cost_header = tokenizer.count(f"\n{section.value}:") + 2
        lines = tokenizer.count_many(["\n" + i.render() for i in items])
        chosen: list[SummaryItem] = []
        for item, cost in sorted(zip(items, lines, strict=True), key=lambda x: -x[0].last_seq):
            extra = cost + (cost_header if not chosen else 0)
            if extra <= budget:
                chosen.append(item)
                budget -= extra
        kept[section.value] = sorted(chosen, key=lambda i: i.first_seq)
    fitted = SummaryBody(**{k: tuple(v) for k, v in kept.items()})
    while (
        len(fitted)
        and tokenizer.count(fitted.render(first_seq=first_seq, last_seq=last_seq, level=level))
        > max_tokens
    ):
        fitted = fitted.without_last()
    return fitted


class Compactor:
    """Compacts sessions of one store (see the module docstring)."""

    def __init__(
        self,
        store: SessionStore,
        *,
        summarizer: Summarizer,
        settings: CompactionSettings,
        rules: ExtractionRules,
        fallback: Summarizer | None = None,
        authoritative: TenantTools = lambda tenant: (),
    ) -> None:
        self._store = store
        self._summarizer = summarizer
        self._settings = settings
        self._rules = rules
        self._authoritative = authoritative
        self._fallback = fallback or ExtractiveSummarizer()

    @traced("compact_session", lambda self, scope, *, model, budget, reason, **_: {
        **scope_attributes(scope), "gen_ai.request.model": model, "kenning.window.budget": budget,
        "kenning.compaction.reason": reason},
        lambda written: {"gen_ai.memory.record.count": len(written)})  # fmt: skip
    def compact(
        self,
        scope: Scope,
        *,
        model: str,
        budget: int,
        reason: str,
        summarizer: Summarizer | None = None,
        stop: Callable[[], bool] = lambda: False,
        fence: Callable[[], bool] = lambda: False,
    ) -> list[Summary]:
        """Summarize what the policy says is due; return the summaries written.

        *stop* is asked between ranges; when it says so, the work done so far stays (each
        range is committed whole) and :class:`Stopped` is raised. *fence* is asked right
        before each write: when it says the caller no longer holds the job (its lease was
        taken over while the summarizer ran), nothing more is written and :class:`Stopped`
        is raised.
        """
        scope = scope.require_session()
        summarizer = summarizer or self._summarizer
        tokenizer = tokenizer_for(model)
        # Read before the events: an erase after this point refuses this run's writes.
        generation = self._store.erase_generation(scope.tenant)
        segments = self._plan(scope, tokenizer, budget)
        written: list[Summary] = []
        try:
            self._ranges(
                scope, segments, written, budget=budget, encoding=tokenizer.name,
                tokenizer=tokenizer, summarizer=summarizer, reason=reason,
                generation=generation, stop=stop, fence=fence,
            )  # fmt: skip
        except StaleWrite as exc:
            log.info("compaction of %s stopped: %s", scope, exc)
        return written

    def draft(
        self, scope: Scope, *, model: str, budget: int, summarizer: Summarizer | None = None
    ) -> list[Summary]:
        """The segment summaries :meth:`compact` would write now, written nowhere: no pin, no
        summary, no audit entry (for a window that must leave the store as it was)."""
        scope = scope.require_session()
        summarizer = summarizer or self._summarizer
        tokenizer = tokenizer_for(model)
        pins = self._store.pins(scope, history=True)
        drafts = []
        for first, last in self._plan(scope, tokenizer, budget):
            events = self._events(scope, first, last)
            if not events:
                continue
            before = self._tokens(scope, tokenizer.name, first, last)
            summary, _, after = self._made(
                scope, events, pins, level=1, first=first, last=last,
                max_tokens=self._settings.tokens(self._settings.segment_summary, budget),
                tokens_before=before, tokenizer=tokenizer, summarizer=summarizer,
            )  # fmt: skip
            if after >= before:
                break  # as compact() does: not smaller, left raw
            drafts.append(summary)
        return drafts

    def _plan(self, scope: Scope, tokenizer: Tokenizer, budget: int) -> list[tuple[int, int]]:
        """The ranges of the session due for a summary: what precedes the recent turns kept
        raw (and the latest user input), in segments."""
        encoding = tokenizer.name
        sync_ledger(self._store, scope, tokenizer)
        settings = self._settings
        boundary = max((s.last_seq for s in self._store.summaries(scope)), default=0)
        raw = self._store.ledger_tail(scope, encoding, room=_ALL, after_seq=boundary)
        if not raw or raw[-1][0] < settings.min_turns:
            return []  # nothing new, or too short a session to summarize
        kept = self._store.ledger_tail(
            scope, encoding, room=int(settings.keep_recent * budget), after_seq=boundary
        )
        keep_from = kept[0][0] if kept else raw[-1][0] + 1
        if settings.keep_turns:
            keep_from = min(keep_from, raw[-1][0] - settings.keep_turns + 1)
        recent = self._store.events(scope, tail=_LATEST_USER_SCAN)
        users = [e.seq for e in recent if e.role is Role.USER and e.seq > boundary]
        if users:
            keep_from = min(keep_from, users[-1])
        return plan_segments(
            raw, keep_from=keep_from, segment_tokens=max(1, int(settings.segment * budget))
        )

    def _tokens(self, scope: Scope, encoding: str, first: int, last: int) -> int:
        """Message tokens of the events *first* to *last*."""
        through = self._store.ledger_cum
        return through(scope, encoding, last) - through(scope, encoding, first - 1)

    def _ranges(
        self,
        scope: Scope,
        segments: Sequence[tuple[int, int]],
        written: list[Summary],
        *,
        budget: int,
        encoding: str,
        tokenizer: Tokenizer,
        summarizer: Summarizer,
        reason: str,
        generation: int,
        stop: Callable[[], bool],
        fence: Callable[[], bool],
    ) -> None:
        """Summarize each segment, then merge segments into a session summary when due."""
        settings = self._settings
        for first, last in segments:
            if stop():
                raise Stopped(f"compaction of {scope.session} stopped after {len(written)} ranges")
            before = self._tokens(scope, encoding, first, last)
            events = self._events(scope, first, last)
            if not events:
                continue
            summary = self._summarize(
                scope, events, level=1, first=first, last=last, replaces=(),
                max_tokens=settings.tokens(settings.segment_summary, budget),
                tokens_before=before, tokenizer=tokenizer, summarizer=summarizer,
                reason=reason, generation=generation, fence=fence,
            )  # fmt: skip
            if summary is None:
                break  # the ranges after it wait too: summaries stay contiguous
            written.append(summary)
        active = self._store.summaries(scope)
        if sum(1 for s in active if s.level == 1) > settings.max_segments:
            last = max(s.last_seq for s in active)
            before = sum(tokenizer.count_many([s.text for s in active]))
            events = self._events(scope, 1, last)
            merged = self._summarize(
                scope, events, level=2, first=min(s.first_seq for s in active), last=last,
                replaces=[s.id for s in active],
                max_tokens=settings.tokens(settings.session_summary, budget),
                tokens_before=before, tokenizer=tokenizer, summarizer=summarizer,
                reason=reason, generation=generation, fence=fence,
            )  # fmt: skip
            written.extend([merged] if merged else [])

    def _events(self, scope: Scope, first: int, last: int) -> list[Event]:
        events = self._store.events(scope, after_seq=first - 1, limit=last - first + 1)
        return [e for e in events if e.seq <= last]

    def _summarize(
        self,
        scope: Scope,
        events: Sequence[Event],
        *,
        level: int,
        first: int,
        last: int,
        replaces: Sequence[str],
        max_tokens: int,
        tokens_before: int,
        tokenizer: Tokenizer,
        summarizer: Summarizer,
        reason: str,
        generation: int,
        fence: Callable[[], bool],
    ) -> Summary | None:
        """Pin the range, summarize it and write the summary; None (no summary written, the
        pins kept) when the summary is not smaller than what it would replace: compaction
        that lags behind the writes can end a run with a tail of a few short turns."""
        now = datetime.now(UTC)
        drafts = self._pin_first(scope, events, now=now, first=first, last=last,
                                 generation=generation)  # fmt: skip
        pins = self._store.pins(scope, history=True)
        summary, result, tokens_after = self._made(
            scope, events, pins, level=level, first=first, last=last, max_tokens=max_tokens,
            tokens_before=tokens_before, tokenizer=tokenizer, summarizer=summarizer, now=now,
        )  # fmt: skip
        text = summary.text
        if tokens_after >= tokens_before:
            log.info("range #%d-%d of %s left as it is: its summary (%d tokens) is not smaller",
                     first, last, scope.session, tokens_after)  # fmt: skip
            return None
        keys = {p.key for p in pins}
        missing: dict[str, PinDraft] = {}
        for draft in drafts:
            if draft.key not in keys and draft.value not in text:
                missing.setdefault(draft.key, draft)
        audit = _audit(
            summary, result, list(missing.values()), reason=reason, tokens_before=tokens_before,
            tokens_after=tokens_after,
        )  # fmt: skip
        if missing:
            log.warning(
                "amnesia guard pinned %d values the summary of %s #%d-%d lost",
                len(missing), scope.session, first, last,
            )  # fmt: skip
        if fence():
            # The summarizer may have taken long (an LLM): a worker whose lease was taken over
            # meanwhile must not write what the new holder is writing too.
            raise Stopped(f"compaction of {scope.session} stopped before writing #{first}-{last}")
        return self._store.put_summary(
            summary, replaces=replaces, guard_pins=list(missing.values()), audit=audit,
            generation=generation,
        )  # fmt: skip

    def _made(
        self,
        scope: Scope,
        events: Sequence[Event],
        pins: Sequence[Pin],
        *,
        level: int,
        first: int,
        last: int,
        max_tokens: int,
        tokens_before: int,
        tokenizer: Tokenizer,
        summarizer: Summarizer,
        now: datetime | None = None,
    ) -> tuple[Summary, SummaryResult, int]:
        """The summary of *events* (not stored), what the summarizer said, and the summary's
        tokens."""
        request = SummaryRequest(
            events=events, pins=list(pins), level=level, first_seq=first, last_seq=last,
            max_tokens=max_tokens,
        )  # fmt: skip
        result, body, text, tokens = self._body(request, summarizer, tokenizer, tokens_before)
        summary = Summary(
            id=f"sum_{uuid.uuid4().hex}", scope=scope, level=level, first_seq=first,
            last_seq=last, text=text, body=body.to_json(), summarizer=result.summarizer,
            created_at=now or datetime.now(UTC),
        )  # fmt: skip
        return summary, result, tokens

    def _pin_first(
        self,
        scope: Scope,
        events: Sequence[Event],
        *,
        now: datetime,
        first: int,
        last: int,
        generation: int,
    ) -> list[PinDraft]:
        """Extract the range's pins and commit them before the summary exists, so that a crash
        from here on loses no value; return the drafts (the amnesia guard checks them)."""
        drafts: list[PinDraft] = []
        listed = listed_tools(self._authoritative, scope.tenant)
        for event in events:
            drafts.extend(extract_pins(event, self._rules, authoritative=listed))
        if not drafts:
            return drafts
        pinned = self._store.put_pins(scope, drafts, at=now, mode="add", generation=generation)
        if pinned:
            self._store.audit(
                [
                    AuditEntry(
                        scope=scope, at=now, action=AuditAction.PINS, first_seq=first,
                        last_seq=last, detail=f"{len(pinned)} pins extracted before summary",
                    )
                ]
            )  # fmt: skip
        return drafts

    def _body(
        self,
        request: SummaryRequest,
        summarizer: Summarizer,
        tokenizer: Tokenizer,
        tokens_before: int,
    ) -> tuple[SummaryResult, SummaryBody, str, int]:
        """What *summarizer* made of the range, fitted to ``request.max_tokens`` and rendered;
        the deterministic fallback's instead when it does not compress enough; with its tokens."""
        span = {"first_seq": request.first_seq, "last_seq": request.last_seq,
                "level": request.level}  # fmt: skip
        result = summarizer.summarize(request)
        body = fit_body(result.body, tokenizer, max_tokens=request.max_tokens, **span)
        text = body.render(**span)
        after = tokenizer.count(text)
        ratio = tokens_before / after if after else float("inf")
        if ratio < self._settings.min_ratio and summarizer.name != self._fallback.name:
            # Not worth its place: the deterministic summarizer runs instead.
            fallback = self._fallback.summarize(request)
            note = f"{result.summarizer} compressed only {ratio:.1f}x"
            result = replace(fallback, fallback_reason=note)
            body = fit_body(result.body, tokenizer, max_tokens=request.max_tokens, **span)
            text = body.render(**span)
            after = tokenizer.count(text)
        return result, body, text, after


def _audit(
    summary: Summary,
    result: SummaryResult,
    guarded: Sequence[PinDraft],
    *,
    reason: str,
    tokens_before: int,
    tokens_after: int,
) -> list[AuditEntry]:
    """The audit entries written with *summary*: the segment or merge, then one per value the
    amnesia guard pinned."""
    scope, now = summary.scope, summary.created_at
    first, last = summary.first_seq, summary.last_seq
    action = AuditAction.SEGMENT if summary.level == 1 else AuditAction.MERGE
    detail = reason
    if result.fallback_reason:
        detail += f"; fallback: {result.fallback_reason}"
    audit = [
        AuditEntry(
            scope=scope, at=now, action=action, first_seq=first, last_seq=last,
            tokens_before=tokens_before, tokens_after=tokens_after, summary_id=summary.id,
            summarizer=result.summarizer, detail=detail,
        )
    ]  # fmt: skip
    audit.extend(
        AuditEntry(
            scope=scope, at=now, action=AuditAction.GUARD_PIN, first_seq=first,
            last_seq=last, summary_id=summary.id,
            detail=f"{d.kind.value} {d.value!r} was in neither pins nor summary",
        )
        for d in guarded
    )  # fmt: skip
    return audit
