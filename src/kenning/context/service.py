"""The working-context operations behind :class:`kenning.Memory`: assemble, pins, task state,
pressure and compaction. Validates input where it enters, then drives the store and the pure
cores (:mod:`kenning.context.fill`, :mod:`kenning.compaction.plan`)."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any, Protocol

from kenning.compaction.compactor import Compactor
from kenning.compaction.extractive import ExtractiveSummarizer
from kenning.compaction.ledger import SessionStore, uncounted
from kenning.compaction.plan import CompactionSettings
from kenning.compaction.summarizer import Summarizer
from kenning.compaction.worker import CompactionWorker
from kenning.context.action_reader import ActionLogs, TenantFileTools
from kenning.context.actions import ActionLog, FileTools
from kenning.context.api import ContextAPI, WindowAPI, session_of, window_source
from kenning.context.assembler import (
    ContextSettings,
    Gathered,
    TokenCache,
    build_window,
    check_mandatory,
    faithful,
    gather,
    memory_pieces,
)
from kenning.context.fill import Piece
from kenning.context.past import refers_to_past
from kenning.context.render import validate_tools
from kenning.context.task import finding_to_promote, merge_task, promoted_source
from kenning.context.window import ContextWindow, Pressure, Price, Tier
from kenning.errors import InvalidInput, KenningError, NotFound
from kenning.pins.extract import ExtractionRules, TenantTools, extract_pins, listed_tools
from kenning.records import (
    USER,
    AuditAction,
    AuditEntry,
    Event,
    Fact,
    FactCategory,
    JSONScalar,
    NewEvent,
    Pin,
    PinDraft,
    PinKind,
    PinStatus,
    Procedure,
    ProfileLine,
    Role,
    Scope,
    Summary,
    TaskState,
    TaskUpdate,
    check_amount,
    check_json,
    check_text,
    enum_member,
)
from kenning.search.hits import SearchResults
from kenning.store.protocol import JobQueue
from kenning.store.records import Usage
from kenning.tokens.base import Tokenizer
from kenning.tokens.chat import DEFAULT_CHAT_OVERHEAD, message_texts
from kenning.tokens.routing import tokenizer_for

__all__ = ["ContextStore", "WorkingContext"]

log = logging.getLogger("kenning")

_MAX_PIN_VALUE = 2_000
_ISO_4217 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

# (scope, query, k, kinds or None for the default) -> results
Search = Callable[[Scope, str, int, Sequence[str] | None], SearchResults]


class PlaybookView(Protocol):
    """What a window needs of procedures (implemented by ``memory.procedures``)."""

    def for_window(
        self, tenant: str, text: str | None, tools: Sequence[Mapping[str, Any]]
    ) -> list[Procedure]: ...


class LongTermView(Protocol):
    """What the working context needs of long-term memory (implemented by ``memory.facts``):
    the profile and sharing of a window, and the fact path a promoted finding takes."""

    def profile_lines(self, scope: Scope) -> list[ProfileLine]:
        """The profile of the session's user as lines, each with the fact it states
        (consent permitting)."""
        ...

    def shares_across_sessions(self, scope: Scope) -> bool:
        """True if the user's facts may reach their other sessions."""
        ...

    def remember(self, scope: Scope, attribute: str, value: str, *, subject: str = USER,
                 qualifier: str = "", category: FactCategory | str = FactCategory.GENERAL,
                 source_event_id: str | None = None, within_session: bool = False,
                 ) -> Fact:  # fmt: skip
        """Store a fact stated in the session of *scope* (``memory.facts.remember``)."""
        ...


class ContextStore(SessionStore, JobQueue, Protocol):
    """What the working context uses of a store: a session's events and context state, and
    the compaction queue."""


def _now() -> datetime:
    return datetime.now(UTC)


class WorkingContext(ContextAPI, WindowAPI):
    """Assembly, pins, task state and compaction over one store: ``memory.context``.

    >>> from kenning import Memory, Scope
    >>> with Memory.open(":memory:", embedder=None) as memory:
    ...     chat = Scope("acme", "dana", "s1")
    ...     memory.context.set_pin(chat, "entity_id", "A-1042").value
    'A-1042'
    """

    def __init__(
        self,
        store: ContextStore,
        *,
        search: Search,
        settings: ContextSettings,
        compaction: CompactionSettings,
        rules: ExtractionRules,
        summarizer: Summarizer | None = None,
        longterm: LongTermView | None = None,
        procedures: PlaybookView | None = None,
        authoritative: TenantTools = lambda tenant: (),
        file_tools: TenantFileTools = lambda tenant: FileTools(),
    ) -> None:
        self._store = store
        self._actions = ActionLogs(store, file_tools)
        self._authoritative = authoritative
        self._search = search
        self._longterm = longterm
        self._procedures = procedures
        self._settings = settings
        self._compaction = compaction
        self._rules = rules
        self._cache = TokenCache()
        self._extractive = ExtractiveSummarizer()
        self._compactor = Compactor(
            store, summarizer=summarizer or self._extractive, settings=compaction, rules=rules,
            authoritative=authoritative,
        )  # fmt: skip
        self._worker = CompactionWorker(
            store, self._compactor, lease_s=compaction.lease_s, threads=compaction.workers
        )
        #: Pressure events since open: ``{"warn": n, "compact": n, "hard": n}``.
        self.metrics: Counter[str] = Counter()

    # -- pins ------------------------------------------------------------------------------

    def pin_drafts(self, scope: Scope, event: NewEvent, *, event_id: str) -> list[PinDraft]:
        """The pins the extraction rules find in a validated event about to be written as
        *event_id* (none when extraction is off); the store commits them with the event."""
        if not self._settings.extract_pins:
            return []
        assert event.at is not None
        draft = Event(
            id=event_id, scope=scope, seq=0, role=Role(event.role), content=event.content,
            at=event.at, tool_name=event.tool_name, tool_args=event.tool_args,
            tool_result=event.tool_result, metadata=event.metadata, tags=event.tags,
        )  # fmt: skip
        return extract_pins(
            draft, self._rules, authoritative=listed_tools(self._authoritative, scope.tenant)
        )

    def set_pin(self, scope: Scope, kind: PinKind | str, value: str, *, key: str | None = None,
                amount: Decimal | str | None = None, currency: str | None = None,
                status: PinStatus | str = PinStatus.OPEN, source_event_id: str | None = None,
                metadata: Mapping[str, JSONScalar] | None = None) -> Pin:  # fmt: skip
        scope = session_of(scope)
        draft = _draft(kind, value, key, amount, currency, status, source_event_id, metadata)
        written = self._store.put_pins(scope, [draft], at=_now(), mode="set")
        if written:
            return written[0]
        return next(p for p in self._store.pins(scope) if p.key == draft.key)

    def close_pin(self, scope: Scope, key: str) -> Pin:
        scope = session_of(scope)
        current = next((p for p in self._store.pins(scope) if p.key == key), None)
        if current is None:
            raise NotFound(f"no pin with key {key!r} in session {scope.session!r}")
        return self.set_pin(
            scope, current.kind, current.value, key=current.key, amount=current.amount,
            currency=current.currency, status=PinStatus.CLOSED,
            source_event_id=current.source_event_id, metadata=current.metadata,
        )  # fmt: skip

    def pins(self, scope: Scope, *, history: bool = False) -> list[Pin]:
        """Current pins in *scope* (a session, a user or a tenant); every version with
        *history*."""
        if not isinstance(scope, Scope):
            raise InvalidInput("scope must be a kenning.Scope")
        return self._store.pins(scope, history=history)

    # -- task state ------------------------------------------------------------------------

    def update_task(self, scope: Scope, update: TaskUpdate) -> TaskState:
        if not isinstance(update, TaskUpdate):
            raise InvalidInput("update must be a kenning.TaskUpdate")
        scope = session_of(scope)
        while True:
            # Optimistic: merge onto what is stored, write only if nobody wrote in between.
            state = self._store.task_state(scope)
            merged = merge_task(state, update)
            if merged is state or self._store.put_task_state(
                scope, merged, expected=state.version, at=_now()
            ):
                return merged

    def task_state(self, scope: Scope) -> TaskState:
        return self._store.task_state(session_of(scope))

    def action_log(self, scope: Scope) -> ActionLog:
        """See :meth:`TaskAPI.action_log`; the goal tier shows its digest."""
        return self._actions.log(session_of(scope))

    def promote_finding(self, scope: Scope, finding_id: str, *, attribute: str,
                        value: str | None = None, subject: str = USER, qualifier: str = "",
                        category: FactCategory | str = FactCategory.GENERAL) -> Fact:  # fmt: skip
        scope = session_of(scope)
        finding = finding_to_promote(self._store.task_state(scope), finding_id)
        if self._longterm is None:
            raise InvalidInput("this working context has no long-term memory to promote to")
        source = promoted_source(finding, self._store.pins(scope))
        return self._longterm.remember(
            scope, attribute, finding.text if value is None else value, subject=subject,
            qualifier=qualifier, category=category, source_event_id=source,
        )  # fmt: skip

    # -- compaction ------------------------------------------------------------------------

    def compact(
        self, scope: Scope, *, budget_tokens: int, model: str, summarizer: Summarizer | None = None
    ) -> list[Summary]:
        scope = session_of(scope)
        _positive(budget_tokens, "budget_tokens")
        tokenizer_for(model)
        return self._compactor.compact(
            scope, model=model, budget=budget_tokens, reason="requested", summarizer=summarizer
        )

    def summaries(self, scope: Scope) -> list[Summary]:
        return self._store.summaries(session_of(scope))

    def compaction_log(self, scope: Scope, *, limit: int = 1_000) -> list[AuditEntry]:
        return self._store.audit_log(session_of(scope), limit=limit)

    def count_tokens(self, scope: Scope, *, model: str) -> dict[str, int]:
        """Exact token counts of the session's events for *model*'s tokenizer, by event id.

        Counts are cached per record and encoding, so a long session is counted once; an
        approximate tokenizer (model families without a public one) is cached under its own
        labelled name. Per-message chat overhead is not included (see
        :func:`kenning.tokens.count_messages`).
        """
        tokenizer = tokenizer_for(model)
        events = self._store.events(session_of(scope))
        ids = [e.id for e in events]
        counts = self._store.token_counts(scope, ids, tokenizer.name)
        missing = [e for e in events if e.id not in counts]
        if missing:
            fresh = dict(
                zip(
                    (e.id for e in missing),
                    tokenizer.count_many([e.content for e in missing]),
                    strict=True,
                )
            )
            self._store.put_token_counts(scope, tokenizer.name, fresh)
            counts.update(fresh)
        return {i: counts[i] for i in ids}

    def forgot(self) -> None:
        """Erased text must not linger as cache keys or in action logs either."""
        self._cache.clear()
        self._actions.clear()

    def resume(self) -> None:
        """Start the worker if the queue holds work from before a restart."""
        if self._store.pending_compactions():
            self._worker.wake()

    @property
    def pressure_events(self) -> Mapping[str, int]:
        """How often each pressure level was met since open (warn, compact, hard)."""
        return dict(self.metrics)

    @property
    def worker(self) -> CompactionWorker:
        """The background compaction pool (its counters: completed, failed, lost, busy)."""
        return self._worker

    def wait_for_compaction(self, timeout: float | None = None) -> bool:
        """Block until background compaction is idle; True if it is."""
        return self._worker.wait(timeout)

    def close(self) -> None:
        self._worker.close()

    # -- assembly --------------------------------------------------------------------------

    def _retrieve(
        self,
        request: _Request,
        text: str,
        gathered: Gathered,
        *,
        whole: bool = False,
    ) -> tuple[list[Piece], str | None]:
        """The memories tier: the best records of the request's source (and, with the user's
        consent, their facts from other sessions) above the relevance floor, not already in
        the tail. With *whole* (the tail shows all of the source) only the facts are searched.
        Returns the pieces and a note for the window's reasons (None if nothing to say)."""
        settings = self._settings
        scope, source = request.scope, request.source
        # The tail's own turns match best and are left out: ask for enough more.
        k = settings.memories_k + len(gathered.pieces[Tier.TAIL])
        shares = (
            source.user is not None and source.session is not None
            and self._longterm is not None and self._longterm.shares_across_sessions(scope)
        )  # fmt: skip
        if whole and not shares:
            return [], None
        try:
            user = Scope(scope.tenant, scope.user)
            facts = self._search(user, text, settings.memories_k, ["fact"]) if shares else None
            if whole:
                assert facts is not None
                results = facts
            else:
                results = self._search(source, text, k, None)
                if facts is not None:
                    results = _merged(results, facts)
        except KenningError as exc:
            return [], f"retrieval unavailable: {exc}"
        note = (results.reason or "retrieval degraded") if results.degraded else None
        above = replace(
            results, hits=tuple(h for h in results.hits if h.score >= settings.memory_floor)
        )
        pieces = memory_pieces(
            above, scope=scope, tail_start=gathered.tail_start, tokenizer=request.tokenizer,
            cache=self._cache, max_chars=settings.memory_chars,
        )[: settings.memories_k]  # fmt: skip
        if not pieces and results.hits and note is None:
            note = f"retrieved: none above floor {settings.memory_floor}"
        return pieces, note

    def assemble(self, scope: Scope, *, budget_tokens: int, model: str,
                 reserve_output_tokens: int = 0, system: str, goal: str | None = None,
                 tools: Sequence[Mapping[str, Any]] | None = None, query: str | None = None,
                 retrieve_from: Scope | None = None, read_only: bool = False,
                 ) -> ContextWindow:  # fmt: skip
        """See :meth:`WindowAPI.assemble`. With *read_only* (a caller that may only read,
        such as a read key's request) the window is built from what is stored and nothing is
        written: at hard pressure the compaction's summaries are made for this window only,
        no compaction is queued or audited, and no usage is recorded."""
        scope = session_of(scope)
        source = window_source(scope, retrieve_from)
        _check_window(budget_tokens, reserve_output_tokens, system, goal, query)
        tools = validate_tools(tools)
        budget = budget_tokens - reserve_output_tokens
        reasons: list[str] = []
        with self._counted_snapshot(scope, tokenizer_for(model)):
            request = self._request(
                scope, source, model=model, budget=budget, system=system, goal=goal,
                tools=tools, query=query,
            )  # fmt: skip
            gathered, utilization, pressure = self._gather(request)
            # Refuse an impossible budget before pressure can change anything.
            check_mandatory(
                gathered, budget=request.budget, tokenizer=request.tokenizer, cache=self._cache
            )
            if pressure is not Pressure.OK:
                self.metrics[pressure.value] += 1
            compact = pressure is Pressure.HARD and not read_only
            if pressure is Pressure.HARD and read_only:
                gathered, utilization, pressure = self._draft_now(request, utilization, reasons)
        if compact:
            self._compact_now(request, utilization, reasons)
            with self._store.reading(scope):
                gathered, utilization, pressure = self._gather(request)
        elif not read_only:
            self._relieve(request, pressure, utilization)
        # Retrieval reads in a transaction of its own: a search may hand its lexical half to a
        # worker thread, which cannot join this thread's transaction (and would wait for it
        # where reads are serialised, as in an in-memory SQLite store).
        window = self._window(request, gathered, pressure, utilization, reasons)
        record = gathered.written and not read_only
        return self._charge(request, window, reserve_output_tokens, record=record)

    @contextmanager
    def _counted_snapshot(self, scope: Scope, tokenizer: Tokenizer) -> Iterator[None]:
        """One read transaction over the session (its profile, procedures, action log, pins,
        summaries and tail), its token ledger counted first. New turns
        are counted by a write of their own, before the transaction that reads the window
        begins: a write inside it would not be seen by the reads after it."""
        with self._store.reading(scope):
            counts = uncounted(self._store, scope, tokenizer, overhead=DEFAULT_CHAT_OVERHEAD)
            if not counts:
                yield
                return
        self._store.extend_ledger(scope, tokenizer.name, counts)
        with self._store.reading(scope):
            yield

    def _window(
        self, request: _Request, gathered: Gathered, pressure: Pressure, utilization: float,
        reasons: list[str],
    ) -> ContextWindow:  # fmt: skip
        """The window built from what was gathered, with the memories retrieved for it."""
        memories, degraded = self._memories(request, gathered, reasons)
        return build_window(
            gathered, tokenizer=request.tokenizer, cache=self._cache, budget=request.budget,
            settings=self._settings, memories=memories, pressure=pressure,
            utilization=utilization, degraded=degraded, reasons=reasons,
            count_message=self._message_counter(request.tokenizer),
        )  # fmt: skip

    def _request(
        self,
        scope: Scope,
        source: Scope,
        *,
        model: str,
        budget: int,
        system: str,
        goal: str | None,
        tools: list[Mapping[str, Any]],
        query: str | None,
    ) -> _Request:
        """What one window is assembled from besides the session: the caller's input, the
        user's profile and the playbooks for the tools."""
        tokenizer = tokenizer_for(model)
        profile: list[ProfileLine] = []
        if self._settings.profile and self._longterm is not None:
            profile = self._longterm.profile_lines(scope)
        playbooks: list[Procedure] = []
        if self._procedures is not None and tools:
            playbooks = self._procedures.for_window(scope.tenant, goal or query, tools)
        return _Request(
            scope=scope, source=source, model=model, tokenizer=tokenizer,
            budget=budget, system=system, goal=goal, tools=tools, query=query, profile=profile,
            playbooks=playbooks, actions=self._actions.log(scope),
        )  # fmt: skip

    def _gather(
        self, request: _Request, drafts: Sequence[Summary] = ()
    ) -> tuple[Gathered, float, Pressure]:
        """The session read and counted (*drafts* standing in for the turns they cover), with
        its utilization of the budget and the pressure level that gives."""
        settings, budget = self._settings, request.budget
        got = gather(
            self._store, request.scope, request.tokenizer, self._cache, budget=budget,
            system=request.system, goal=request.goal or None, tools=request.tools,
            query=request.query,
            tools_room=min(budget, settings.caps.cap(Tier.TOOLS, budget) or budget),
            closed_pins=settings.closed_pins, profile=request.profile,
            procedures=request.playbooks, drafts=drafts, actions=request.actions,
        )  # fmt: skip
        got = faithful(
            got, budget=budget, settings=settings, tokenizer=request.tokenizer, cache=self._cache
        )
        use = got.dynamic_tokens / budget
        return got, use, settings.thresholds.level(use)

    def _compact_now(self, request: _Request, utilization: float, reasons: list[str]) -> None:
        """Hard pressure: compact on the caller's thread, extractively, before the window."""
        scope = request.scope
        log.info("context of %s at %.0f%%: compacting before the window", scope, 100 * utilization)
        written = self._compactor.compact(
            scope, model=request.model, budget=request.budget,
            reason=f"hard {utilization:.2f}", summarizer=self._extractive,
        )  # fmt: skip
        reasons.append(f"hard pressure {utilization:.2f}: compacted {len(written)} ranges")

    def _draft_now(
        self, request: _Request, utilization: float, reasons: list[str]
    ) -> tuple[Gathered, float, Pressure]:
        """Hard pressure for a caller that may not write: the compaction's summaries made for
        this window only, extractively; nothing is stored."""
        drafts = self._compactor.draft(
            request.scope, model=request.model, budget=request.budget, summarizer=self._extractive
        )
        reasons.append(
            f"hard pressure {utilization:.2f}: read-only, {len(drafts)} ranges summarized "
            "for this window only (not stored)"
        )
        return self._gather(request, drafts)

    def _relieve(self, request: _Request, pressure: Pressure, utilization: float) -> None:
        """Below hard pressure: queue a compaction for the worker at the compact level (when
        compaction runs in the background), or only log at the warn level."""
        scope = request.scope
        if pressure is Pressure.COMPACT and self._settings.background:
            job = self._store.enqueue_compaction(
                scope, model=request.model, budget=request.budget,
                reason=f"compact {utilization:.2f}", at=_now(),
            )  # fmt: skip
            if job is not None:
                self._store.audit(
                    [AuditEntry(scope=scope, at=_now(), action=AuditAction.SCHEDULED,
                                detail=f"utilization {utilization:.2f}")]
                )  # fmt: skip
            self._worker.wake()
        elif pressure is Pressure.WARN:
            log.info("context of %s at %.0f%% of the budget", scope, 100 * utilization)

    def _memories(
        self, request: _Request, gathered: Gathered, reasons: list[str]
    ) -> tuple[list[Piece], bool]:
        """The memories tier's candidates when the settings and the input call for retrieval,
        and whether retrieval was degraded; notes go to *reasons*."""
        settings, query = self._settings, request.query
        text = query or gathered.latest_user
        if (
            settings.retrieval == "past_reference" and query is None and text
            and not refers_to_past(text)
        ):  # fmt: skip
            reasons.append("retrieval: the input does not refer to the past")
            return [], False
        if not (settings.retrieve and settings.memories_k and text):
            return [], False
        # A session the tail shows whole has nothing older to recall: every hit would be
        # left out as already shown, so its search (and query embedding) is skipped.
        whole = request.source == request.scope and gathered.tail_start <= 1
        memories, note = self._retrieve(request, text[:4_000], gathered, whole=whole)
        if not note:
            return memories, False
        reasons.append(note)
        return memories, note.startswith(("retrieval unavailable", "vector"))

    def _message_counter(self, tokenizer: Tokenizer) -> Callable[[Mapping[str, Any]], int]:
        """How the window's rendered messages are counted: the per-message framing plus each
        value's tokens, through the cache (block messages repeat from one window to the next:
        each text is counted once)."""

        def count(message: Mapping[str, Any]) -> int:
            return DEFAULT_CHAT_OVERHEAD.tokens_per_message + sum(
                self._cache.count(tokenizer, v) for v in message_texts(message)
            )

        return count

    def _charge(
        self, request: _Request, window: ContextWindow, reserve_output_tokens: int, *, record: bool
    ) -> ContextWindow:
        """The window with its cost estimate; with *record*, its input tokens are added to the
        session's usage."""
        price = self._price(request.model)
        if price is not None:
            window = replace(window, cost=price.cost(window.tokens, reserve_output_tokens))
        if record:
            # Usage claims the session: a window over a session nobody has written to yet
            # (e.g. a user naming another user's id before that user's first turn) records
            # nothing, so it cannot take the id.
            self._store.add_usage(
                request.scope, request.model, input_tokens=window.tokens, output_tokens=0,
                cost=0.0 if price is None else price.cost(window.tokens, 0),
            )  # fmt: skip
        return window

    def _price(self, model: str) -> Price | None:
        prices = self._settings.prices
        return prices.get(model) or prices.get(model.strip().lower())

    def record_usage(self, scope: Scope, *, model: str, output_tokens: int) -> None:
        """Add a reply's output tokens (and their cost) to the session's running usage; the
        windows' input tokens are recorded by ``assemble``."""
        scope = session_of(scope)
        if (
            isinstance(output_tokens, bool)
            or not isinstance(output_tokens, int)
            or not (0 <= output_tokens <= 10_000_000)
        ):
            raise InvalidInput("output_tokens must be an int between 0 and 10,000,000")
        price = self._price(model)
        cost = 0.0 if price is None else price.cost(0, output_tokens)
        self._store.add_usage(
            scope, model, input_tokens=0, output_tokens=output_tokens, cost=cost, calls=0
        )

    def usage(self, scope: Scope) -> list[Usage]:
        """The session's running token usage and cost, per model."""
        return self._store.usage(session_of(scope))


@dataclass(frozen=True, slots=True)
class _Request:
    """One window's input, checked: the session, where memories come from, the model's
    tokenizer, the usable budget (reserve taken off), the caller's text and tools, and the
    profile and playbooks read for it."""

    scope: Scope
    source: Scope
    model: str
    tokenizer: Tokenizer
    budget: int
    system: str
    goal: str | None
    tools: list[Mapping[str, Any]]
    query: str | None
    profile: list[ProfileLine]
    playbooks: list[Procedure]
    actions: ActionLog


def _check_window(
    budget_tokens: int,
    reserve_output_tokens: int,
    system: str,
    goal: str | None,
    query: str | None,
) -> None:
    """Refuse a window's arguments when they are invalid (InvalidInput)."""
    _positive(budget_tokens, "budget_tokens")
    if (
        isinstance(reserve_output_tokens, bool)
        or not isinstance(reserve_output_tokens, int)
        or not 0 <= reserve_output_tokens < budget_tokens
    ):
        raise InvalidInput("reserve_output_tokens must be an int in [0, budget_tokens)")
    if not isinstance(system, str) or not system.strip():
        raise InvalidInput("system is empty: pass the system policy text")
    if goal is not None and not isinstance(goal, str):
        raise InvalidInput("goal must be a string")
    if query is not None and (not isinstance(query, str) or not query.strip()):
        raise InvalidInput("query must be a non-empty string when given")


def _merged(first: SearchResults, second: SearchResults) -> SearchResults:
    """Hits of both, each once, best first."""
    seen = {h.id for h in first.hits}
    hits = sorted([*first.hits, *(h for h in second.hits if h.id not in seen)],
                  key=lambda h: -h.score)  # fmt: skip
    return replace(first, hits=tuple(hits), degraded=first.degraded or second.degraded)


def _positive(value: object, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10_000_000:
        raise InvalidInput(f"{what} must be an int between 1 and 10,000,000")


def _draft(
    kind: PinKind | str,
    value: str,
    key: str | None,
    amount: Decimal | str | None,
    currency: str | None,
    status: PinStatus | str,
    source_event_id: str | None,
    metadata: Mapping[str, JSONScalar] | None,
) -> PinDraft:
    kind = enum_member(PinKind, kind, "kind")
    try:
        status = PinStatus(status)
    except ValueError as exc:
        raise InvalidInput(f"status {status!r:.40} is invalid: use 'open' or 'closed'") from exc
    if kind is PinKind.AMOUNT and amount is None:
        raise InvalidInput("an amount pin needs its amount and currency (amount=, currency=)")
    if not isinstance(value, str) or not value.strip() or len(value) > _MAX_PIN_VALUE:
        raise InvalidInput(
            f"a pin value is a non-empty string of at most {_MAX_PIN_VALUE} characters"
        )
    value = " ".join(check_text(value, "a pin value").split())
    parsed: Decimal | None = None
    if amount is not None:
        try:
            parsed = check_amount(Decimal(str(amount)))
        except InvalidOperation as exc:
            raise InvalidInput(f"amount {amount!r:.40} is not a decimal number") from exc
        if currency is None:
            raise InvalidInput("an amount needs its ISO-4217 currency (e.g. 'EUR')")
    if currency is not None and (
        not isinstance(currency, str)
        or len(currency) != 3
        or any(c not in _ISO_4217 for c in currency)
    ):
        raise InvalidInput(f"currency {currency!r:.20} is not an ISO-4217 code like 'EUR'")
    if key is None:
        key = f"{kind.value}:{value}"[:256]
    elif not isinstance(key, str) or not key.strip() or len(key) > 256:
        raise InvalidInput("a pin key is a non-empty string of at most 256 characters")
    check_text(key, "a pin key")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise InvalidInput("metadata must be a mapping")
    check_json(metadata, "metadata")
    if source_event_id is not None and not isinstance(source_event_id, str):
        raise InvalidInput("source_event_id must be a string")
    check_json(source_event_id, "source_event_id")
    return PinDraft(
        kind=kind, key=key, value=value, amount=parsed, currency=currency, status=status,
        source_event_id=source_event_id, metadata=dict(metadata or {}),
    )  # fmt: skip
