"""Builds a :class:`~kenning.context.window.ContextWindow` for a session: the I/O shell around
:func:`~kenning.context.fill.fill`.

It reads the session's task state, pins, summaries and the tail the token ledger says can fit
(never the whole history), counts every piece exactly for the target model (cached), reads
pressure from the running totals, and asks for a search when there is a query.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kenning.checks import check_numbers
from kenning.compaction.ledger import SessionStore, sync_ledger
from kenning.context.actions import ActionLog, action_lines
from kenning.context.fill import Piece, Plan, fill
from kenning.context.render import (
    BLOCK_HEADERS,
    hit_line,
    pin_line,
    pin_order,
    procedure_text,
    route_tools,
    tool_text,
)
from kenning.context.window import (
    TIER_ORDER,
    ContextWindow,
    Pressure,
    PressureThresholds,
    Price,
    Tier,
    TierAccount,
    TierCaps,
)
from kenning.errors import InvalidInput
from kenning.records import PinStatus, Procedure, ProfileLine, Role, Scope, Summary, TaskState
from kenning.search.hits import SearchResults
from kenning.store.records import ContextSnapshot, MessageRow
from kenning.tokens.base import Tokenizer
from kenning.tokens.chat import DEFAULT_CHAT_OVERHEAD
from kenning.tokens.messages import message_for

__all__ = [
    "ContextSettings",
    "Gathered",
    "TokenCache",
    "build_window",
    "check_mandatory",
    "faithful",
    "gather",
    "memory_pieces",
]

log = logging.getLogger("kenning")

_LATEST_USER_SCAN = 256
_BLOCKS = (Tier.GOAL, Tier.PROFILE, Tier.PINS, Tier.SUMMARIES, Tier.MEMORIES)


@dataclass(frozen=True, slots=True)
class ContextSettings:
    """How windows are assembled.

    Attributes:
        caps: the most of the budget each tier may take.
        thresholds: the pressure levels.
        memories_k: how many retrieved memories are offered to the memories tier.
        memory_chars: retrieved memories longer than this are shortened (the tail never is).
        retrieve: search for memories (with ``query``, else the latest user input).
        extract_pins: extract pins from events as they are added.
        closed_pins: show closed pins in the window too (by default a closed pin leaves it;
            its history stays).
        background: compact on a worker thread at the compact threshold (else only at hard).
        memory_floor: a retrieved memory enters the window only with at least this score (no
            memory just to fill space; when none clears it, the window says so). With the
            default fusion, off-topic records score under 0.06 and a record that shares the
            question's subject 0.2 or more.
        profile: show the user's profile (long-term facts, consent permitting).
        max_messages: the most messages a window holds (next to the token budget).
        retrieval: ``always``, or ``past_reference``: retrieve only when the latest input
            refers to the past ("like I said", "last time", "remember when").
        prices: per model name, its price per million tokens: windows carry a cost estimate
            and sessions a running total.
    """

    caps: TierCaps = field(default_factory=TierCaps)
    thresholds: PressureThresholds = field(default_factory=PressureThresholds)
    memories_k: int = 6
    memory_chars: int = 500
    retrieve: bool = True
    extract_pins: bool = True
    closed_pins: bool = False
    memory_floor: float = 0.15
    profile: bool = True
    max_messages: int = 50
    retrieval: str = "always"
    prices: Mapping[str, Price] = field(default_factory=dict)
    background: bool = True

    def __post_init__(self) -> None:
        check_numbers(self, "memories_k", low=0, high=100, integer=True)
        check_numbers(self, "memory_chars", low=40, integer=True)
        check_numbers(self, "max_messages", low=2, integer=True)
        check_numbers(self, "memory_floor", low=0)
        if self.retrieval not in ("always", "past_reference"):
            raise InvalidInput("ContextSettings.retrieval must be 'always' or 'past_reference'")
        if not all(isinstance(p, Price) for p in self.prices.values()):
            raise InvalidInput("ContextSettings.prices maps model names to kenning Price")


class TokenCache:
    """Exact counts of texts per encoding, least recently used out first."""

    def __init__(self, size: int = 8_192) -> None:
        self._size = size
        self._counts: OrderedDict[tuple[str, str], int] = OrderedDict()

    def clear(self) -> None:
        self._counts.clear()

    def count(self, tokenizer: Tokenizer, text: str) -> int:
        key = (tokenizer.name, text)
        found = self._counts.get(key)
        if found is not None:
            self._counts.move_to_end(key)
            return found
        n = tokenizer.count(text)
        self._counts[key] = n
        if len(self._counts) > self._size:
            self._counts.popitem(last=False)
        return n


@dataclass(frozen=True, slots=True)
class Gathered:
    """What a window is built from, read once per assembly; *written* says the session holds
    anything of its own (events, pins, summaries or task state). *raw* is the same session
    read as if nothing were summarized, when it has summaries and its raw turns may fit the
    budget (:func:`faithful` chooses)."""

    pieces: Mapping[Tier, Sequence[Piece]]
    dynamic_tokens: int
    tail_start: int
    latest_user: str | None
    written: bool = True
    raw: Gathered | None = None


def _snapshot(
    store: SessionStore,
    scope: Scope,
    tokenizer: Tokenizer,
    *,
    budget: int,
    drafts: Sequence[Summary],
) -> ContextSnapshot:
    """The session as a window of *budget* reads it, its token ledger brought up to date
    first, with *drafts* standing in for the turns they cover."""
    snap = store.context_snapshot(scope, tokenizer.name, room=budget)
    if snap.last_seq > snap.counted_seq:
        # Events arrived since the last window: count only those, then read again.
        sync_ledger(store, scope, tokenizer, overhead=DEFAULT_CHAT_OVERHEAD)
        snap = store.context_snapshot(scope, tokenizer.name, room=budget)
    if drafts:
        snap = _with_drafts(store, scope, tokenizer.name, snap, drafts)
    return snap


def _standing_pieces(
    snap: ContextSnapshot,
    tokenizer: Tokenizer,
    cache: TokenCache,
    *,
    system: str,
    goal: str | None,
    profile: Sequence[ProfileLine],
    closed_pins: bool,
    actions: ActionLog | None = None,
) -> dict[Tier, list[Piece]]:
    """The pieces that do not depend on which turns are shown: the system prompt, the goal
    (with the action log's digest), the profile lines and the pins (closed ones only with
    *closed_pins*)."""
    pieces: dict[Tier, list[Piece]] = {tier: [] for tier in Tier}
    system_tokens = cache.count(tokenizer, system)
    pieces[Tier.SYSTEM].append(Piece(Tier.SYSTEM, "system", system_tokens, system))
    pieces[Tier.GOAL] = _goal_pieces(goal, snap.task, actions, tokenizer, cache)
    pieces[Tier.PROFILE] = [
        _line(
            Tier.PROFILE,
            f"profile:{n}",
            line.text,
            tokenizer,
            cache,
            states=frozenset(() if line.fact is None else (line.fact,)),
        )
        for n, line in enumerate(profile)
    ]
    shown = [p for p in snap.pins if closed_pins or p.status is not PinStatus.CLOSED]
    pieces[Tier.PINS] = [
        _line(Tier.PINS, pin.id, pin_line(pin), tokenizer, cache) for pin in pin_order(shown)
    ]
    return pieces


def gather(
    store: SessionStore,
    scope: Scope,
    tokenizer: Tokenizer,
    cache: TokenCache,
    *,
    budget: int,
    system: str,
    goal: str | None,
    tools: Sequence[Mapping[str, Any]],
    query: str | None,
    tools_room: int,
    closed_pins: bool = False,
    profile: Sequence[ProfileLine] = (),
    procedures: Sequence[Procedure] = (),
    drafts: Sequence[Summary] = (),
    actions: ActionLog | None = None,
) -> Gathered:
    """Read the session and count every candidate piece (no retrieval; see build_window).

    Closed pins (a fulfilled obligation, a withdrawn approval) stay in the pin history but
    enter the window only with *closed_pins*.

    *tools_room* is what the tools tier may take; when all tools fit in it they keep their
    order, else they are routed by relevance. *profile* holds the user's profile lines, most
    useful first; *procedures* the playbooks that match the tools and the goal or query (they
    enter the tools tier after the tools themselves). *drafts* are summaries made for this
    window only (never stored): they stand in for the turns they cover, as stored ones do.
    *actions* is the session's action log, whose digest follows the task state in the goal
    tier.
    """
    snap = _snapshot(store, scope, tokenizer, budget=budget, drafts=drafts)
    pieces = _standing_pieces(
        snap, tokenizer, cache, system=system, goal=goal, profile=profile,
        closed_pins=closed_pins, actions=actions,
    )  # fmt: skip

    def session(snap: ContextSnapshot) -> Gathered:
        """The pieces with the tail and summaries of *snap*, and the tools routed for it."""
        boundary = max((s.last_seq for s in snap.summaries), default=0)
        tail = list(snap.tail)
        latest = next((r for r in reversed(tail) if r.role is Role.USER), None)
        if latest is None:
            latest = _latest_user(store, scope, tokenizer.name, boundary)
            if latest is not None:
                tail.insert(0, latest)
        own = dict(pieces)
        own[Tier.TAIL] = _tail_pieces(tail, latest)
        tool_query = query if query is not None else (latest.text if latest is not None else None)
        own[Tier.TOOLS] = _tool_pieces(tools, tool_query, tools_room, tokenizer, cache)
        own[Tier.TOOLS] += _procedure_pieces(procedures, tokenizer, cache)
        own[Tier.SUMMARIES] = _summary_pieces(snap.summaries, tokenizer, cache)
        return _gathered(own, snap, boundary=boundary, latest=latest)

    got = session(snap)
    if snap.summaries and snap.total <= budget:
        # Every raw turn may fit: read them too, for faithful() to prefer them.
        whole = store.context_snapshot(scope, tokenizer.name, room=budget, summarized=False)
        got = replace(got, raw=session(whole))
    return got


def faithful(
    gathered: Gathered,
    *,
    budget: int,
    settings: ContextSettings,
    tokenizer: Tokenizer,
    cache: TokenCache,
) -> Gathered:
    """What the window shows of the session: every raw turn when a window of *budget* holds
    them all, else its summaries and the tail after them. A summary written for a smaller
    window replaces turns only in windows that cannot hold them, so compaction never makes a
    later, larger window less faithful (or larger) than it was before.

    The pressure is read from the smaller of the two: compaction is asked for only when the
    session's most compact stored form needs it (a session compacted once is not queued
    again while its raw turns still fit).
    """
    raw = gathered.raw
    if raw is None or raw.tail_start > 1:
        return replace(gathered, raw=None)
    pieces: dict[Tier, Sequence[Piece]] = {
        tier: raw.pieces[tier] for tier in TIER_ORDER if tier is not Tier.SUMMARIES
    }
    plan = fill(
        pieces, budget=budget, caps=settings.caps, surcharge=_surcharge(tokenizer, cache),
        base=DEFAULT_CHAT_OVERHEAD.reply_priming, max_tail=_max_tail(pieces, settings),
    )  # fmt: skip
    if len(plan.pieces(Tier.TAIL)) < len(raw.pieces[Tier.TAIL]):
        return replace(gathered, raw=None)
    return replace(raw, dynamic_tokens=min(raw.dynamic_tokens, gathered.dynamic_tokens))


def _with_drafts(
    store: SessionStore,
    scope: Scope,
    encoding: str,
    snap: ContextSnapshot,
    drafts: Sequence[Summary],
) -> ContextSnapshot:
    """*snap* as if *drafts* were stored: the turns they cover leave the tail and count as
    summarized."""
    boundary = max(s.last_seq for s in drafts)
    return replace(
        snap,
        summaries=(*snap.summaries, *drafts),
        tail=tuple(row for row in snap.tail if row.seq > boundary),
        summarized=store.ledger_cum(scope, encoding, boundary),
    )


def _goal_pieces(
    goal: str | None,
    task: TaskState,
    actions: ActionLog | None,
    tokenizer: Tokenizer,
    cache: TokenCache,
) -> list[Piece]:
    """The caller's goal for this window, then the session's task state, its investigation
    and its action log's digest a line each, most worth keeping first (the tier's cap drops
    from the end)."""
    pieces = []
    if goal:
        pieces.append(_line(Tier.GOAL, "goal", f"Goal: {goal}", tokenizer, cache))
    if not task.empty:
        pieces.append(_line(Tier.GOAL, "task", task.render(), tokenizer, cache))
        pieces.extend(
            _line(Tier.GOAL, key, text, tokenizer, cache)
            for key, text in task.investigation_lines()
        )
    if actions is not None:
        pieces.extend(
            _line(Tier.GOAL, key, text, tokenizer, cache) for key, text in action_lines(actions)
        )
    return pieces


def _tail_pieces(tail: Sequence[MessageRow], latest: MessageRow | None) -> list[Piece]:
    """The tail's messages, newest first, the latest user input marked mandatory."""
    pieces = []
    for row in reversed(tail):
        messages = message_for(
            row.role, row.text, tool_name=row.tool_name, tool_call_id=row.tool_call_id,
            tool_args=row.tool_args, seq=row.seq,
        )  # fmt: skip
        pieces.append(
            Piece(Tier.TAIL, row.id, row.tokens, messages=tuple(messages), payload=row.seq,
                  mandatory=row is latest)
        )  # fmt: skip
    return pieces


def _tool_pieces(
    tools: Sequence[Mapping[str, Any]],
    query: str | None,
    room: int,
    tokenizer: Tokenizer,
    cache: TokenCache,
) -> list[Piece]:
    """The tool schemas: in the caller's order when all fit in *room* (stable prompts cache
    better); else routed, most relevant to *query* first."""
    texts = [tool_text(tool) for tool in tools]
    sizes = [cache.count(tokenizer, text) for text in texts]
    order = range(len(tools)) if sum(sizes) <= room else route_tools(tools, query)
    return [
        Piece(Tier.TOOLS, f"tool:{index}", sizes[index], texts[index], payload=tools[index])
        for index in order
    ]


def _procedure_pieces(
    procedures: Sequence[Procedure], tokenizer: Tokenizer, cache: TokenCache
) -> list[Piece]:
    """The playbooks, each a system message of its own."""
    pieces = []
    for procedure in procedures:
        text = procedure_text(procedure)
        message = {"role": "system", "content": text}
        tokens = (
            DEFAULT_CHAT_OVERHEAD.tokens_per_message
            + cache.count(tokenizer, "system")
            + cache.count(tokenizer, text)
        )
        pieces.append(
            Piece(Tier.TOOLS, procedure.id, tokens, text, messages=(message,), payload=procedure)
        )
    return pieces


def _summary_pieces(
    summaries: Sequence[Summary], tokenizer: Tokenizer, cache: TokenCache
) -> list[Piece]:
    """Newest summaries first: they are worth the most (the block still shows them in event
    order)."""
    return [
        _line(Tier.SUMMARIES, summary.id, summary.text, tokenizer, cache, payload=summary)
        for summary in sorted(summaries, key=lambda s: (-s.last_seq, -s.level))
    ]


def _gathered(
    pieces: dict[Tier, list[Piece]],
    snap: ContextSnapshot,
    *,
    boundary: int,
    latest: MessageRow | None,
) -> Gathered:
    """The pieces with the tokens the session holds beyond the system policy, where its tail
    starts, and its latest user input."""
    raw = snap.total - snap.summarized
    dynamic = raw + sum(
        p.tokens
        for tier in (Tier.GOAL, Tier.TOOLS, Tier.PROFILE, Tier.PINS, Tier.SUMMARIES)
        for p in pieces[tier]
    )
    tail_start = min((p.payload for p in pieces[Tier.TAIL]), default=boundary + 1)
    return Gathered(
        pieces=pieces,
        dynamic_tokens=dynamic,
        tail_start=int(tail_start),
        written=bool(snap.last_seq or snap.pins or snap.summaries or not snap.task.empty),
        latest_user=None if latest is None else latest.text,
    )


def _latest_user(
    store: SessionStore, scope: Scope, encoding: str, boundary: int
) -> MessageRow | None:
    """The latest user message when the tail that fits does not reach it (a long run of tool
    output after it): it is mandatory, so it is placed anyway."""
    recent = store.events(scope, tail=_LATEST_USER_SCAN)
    event = next((e for e in reversed(recent) if e.role is Role.USER and e.seq > boundary), None)
    if event is None:
        return None
    tokens = store.ledger_cum(scope, encoding, event.seq) - store.ledger_cum(
        scope, encoding, event.seq - 1
    )
    call = event.metadata.get("tool_call_id")
    return MessageRow(
        seq=event.seq, id=event.id, role=event.role, text=event.content,
        tool_name=event.tool_name, tool_call_id=call if isinstance(call, str) else None,
        tokens=tokens,
    )  # fmt: skip


def _line(
    tier: Tier, key: str, text: str, tokenizer: Tokenizer, cache: TokenCache, payload: Any = None,
    states: frozenset[str] = frozenset(),
) -> Piece:  # fmt: skip
    return Piece(
        tier, key, cache.count(tokenizer, "\n" + text), text, payload=payload, states=states
    )


def memory_pieces(
    results: SearchResults,
    *,
    scope: Scope,
    tail_start: int,
    tokenizer: Tokenizer,
    cache: TokenCache,
    max_chars: int,
) -> list[Piece]:
    """Retrieved hits as memory lines, leaving out what the tail already shows."""
    out = []
    for hit in results.hits:
        if hit.scope.session == scope.session and hit.seq is not None and hit.seq >= tail_start:
            continue
        out.append(
            _line(Tier.MEMORIES, hit.id, hit_line(hit, max_chars=max_chars), tokenizer, cache,
                  payload=hit)
        )  # fmt: skip
    return out


def _block(tier: Tier, pieces: Sequence[Piece]) -> dict[str, Any]:
    lines = pieces
    if tier is Tier.SUMMARIES:
        lines = sorted(pieces, key=lambda p: (p.payload.first_seq, -p.payload.level))
    return {
        "role": "system",
        "content": BLOCK_HEADERS[tier.value] + "".join("\n" + p.text for p in lines),
    }


def _surcharge(tokenizer: Tokenizer, cache: TokenCache) -> dict[Tier, int]:
    overhead = DEFAULT_CHAT_OVERHEAD
    role = overhead.tokens_per_message + cache.count(tokenizer, "system")
    return {
        Tier.SYSTEM: role,
        **{tier: role + cache.count(tokenizer, BLOCK_HEADERS[tier.value]) for tier in _BLOCKS},
    }


def check_mandatory(
    gathered: Gathered, *, budget: int, tokenizer: Tokenizer, cache: TokenCache
) -> None:
    """Raise BudgetError if the system policy and the latest user input alone do not fit."""
    mandatory = {
        Tier.SYSTEM: gathered.pieces[Tier.SYSTEM],
        Tier.TAIL: [p for p in gathered.pieces[Tier.TAIL] if p.mandatory],
    }
    fill(
        mandatory, budget=budget, caps=TierCaps(), surcharge=_surcharge(tokenizer, cache),
        base=DEFAULT_CHAT_OVERHEAD.reply_priming,
    )  # fmt: skip


def build_window(
    gathered: Gathered,
    *,
    tokenizer: Tokenizer,
    cache: TokenCache,
    budget: int,
    settings: ContextSettings,
    memories: Sequence[Piece] = (),
    pressure: Pressure,
    utilization: float,
    degraded: bool,
    reasons: Sequence[str],
    count_message: Callable[[Mapping[str, Any]], int],
) -> ContextWindow:
    """Fill the budget and render the messages; counts are checked exactly at the end."""
    pieces = dict(gathered.pieces)
    pieces[Tier.MEMORIES] = list(memories)
    plan, messages, exact = _fit(
        pieces, budget=budget, settings=settings, surcharge=_surcharge(tokenizer, cache),
        count_message=count_message,
    )  # fmt: skip
    accounts = dict(plan.accounts)
    return ContextWindow(
        messages=tuple(messages),
        tools=tuple(p.payload for p in plan.pieces(Tier.TOOLS) if not p.messages),
        tiers={tier: accounts.get(tier, TierAccount(tier)) for tier in Tier},
        tokens=exact,
        budget=budget,
        utilization=utilization,
        pressure=pressure,
        degraded=degraded,
        reasons=tuple(reasons),
        encoding=tokenizer.name,
        exact=tokenizer.exact,
        citations=_citations(plan),
    )


def _fit(
    pieces: dict[Tier, Sequence[Piece]],
    *,
    budget: int,
    settings: ContextSettings,
    surcharge: Mapping[Tier, int],
    count_message: Callable[[Mapping[str, Any]], int],
) -> tuple[Plan, list[dict[str, Any]], int]:
    """Plan and render until the exact count of the rendered messages fits in *budget*."""
    while True:
        plan = fill(
            pieces, budget=budget, caps=settings.caps, surcharge=surcharge,
            base=DEFAULT_CHAT_OVERHEAD.reply_priming, max_tail=_max_tail(pieces, settings),
        )  # fmt: skip
        messages, exact = _render(plan, count_message)
        if exact <= budget:
            return plan, messages, exact
        # Line counts are not strictly additive across joins; drop the lowest-priority line.
        for tier in reversed(_BLOCKS):
            chosen = plan.pieces(tier)
            if chosen:
                pieces[tier] = [p for p in pieces[tier] if p is not chosen[-1]]
                break
        else:  # pragma: no cover - only block lines can be off
            return plan, messages, exact


def _max_tail(pieces: Mapping[Tier, Sequence[Piece]], settings: ContextSettings) -> int:
    """The message cap's share of the tail: what the other tiers can add at most, the tail
    gets the rest."""
    others = 1 + len(_BLOCKS) + sum(len(p.messages) for p in pieces.get(Tier.TOOLS, ()))
    return max(1, settings.max_messages - others)


def _citations(plan: Plan) -> tuple[dict[str, str | int | float | None], ...]:
    """Where each memory the window shows comes from."""
    return tuple(
        {
            "id": p.payload.id,
            "session": p.payload.scope.session,
            "seq": p.payload.seq,
            "at": p.payload.at.isoformat(),
            "score": round(p.payload.score, 6),
        }
        for p in plan.pieces(Tier.MEMORIES)
    )


def _render(
    plan: Plan, count_message: Callable[[Mapping[str, Any]], int]
) -> tuple[list[dict[str, Any]], int]:
    overhead = DEFAULT_CHAT_OVERHEAD
    messages: list[dict[str, Any]] = []
    total = overhead.reply_priming
    system = plan.pieces(Tier.SYSTEM)
    for piece in system:
        message = {"role": "system", "content": piece.text}
        messages.append(message)
        total += count_message(message)
    for tier in _BLOCKS:
        chosen = plan.pieces(tier)
        if chosen:
            message = _block(tier, chosen)
            messages.append(message)
            total += count_message(message)
    for piece in plan.pieces(Tier.TOOLS):
        # A playbook is a message; a tool schema goes to the window's tools.
        messages.extend(dict(m) for m in piece.messages)
        total += piece.tokens
    tail = sorted(plan.pieces(Tier.TAIL), key=lambda p: p.payload)
    for piece in tail:
        assert piece.messages
        messages.extend(dict(m) for m in piece.messages)
        total += piece.tokens
    return messages, total
