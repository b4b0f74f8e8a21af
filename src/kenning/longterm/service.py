"""Long-term memory over one store: ``memory.facts``.

Extraction reads each session's new events (the store keeps how far it got), finds fact drafts
(:mod:`kenning.longterm.extract`, :mod:`kenning.longterm.tool_facts`, or an LLM extractor that
falls back to them), drops sensitive ones the user has not consented to, and consolidates the
rest (:mod:`kenning.longterm.consolidate`) in one transaction per session, retried if another
writer changed the same facts meanwhile. Reads give current facts, facts as of a time, and a
fact's history; ``remember`` and ``revoke`` are the explicit writes.
"""

from __future__ import annotations

import builtins
import logging
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from kenning.chat import LLMSettings
from kenning.checks import check_numbers
from kenning.embed.base import Embedder
from kenning.embed.cache import CachedEmbedder
from kenning.errors import InvalidInput, LeaseLost, ModelUnavailable, NotFound, StaleWrite
from kenning.longterm.api import FactsAPI, user_of
from kenning.longterm.consolidate import (
    core,
    key_changes,
    nearest_kin,
    recounted,
    said,
    withdrawn_kin,
)
from kenning.longterm.profile import Profile, build_profile
from kenning.longterm.timeline import Said
from kenning.longterm.tool_facts import discovered_facts
from kenning.records import (
    USER,
    Consent,
    Event,
    Fact,
    FactCategory,
    FactDraft,
    FactSource,
    FactStatus,
    ProfileLine,
    Scope,
    UserSettings,
    check_text,
    content_hash,
)
from kenning.search.hits import SearchResults
from kenning.store.protocol import ContextState, EventLog, FactStore, PolicyStore
from kenning.store.records import ExtractionJob, FactChanges, FactInsert, ModelInfo

if TYPE_CHECKING:
    from kenning.longterm.statements import StatementReader
from kenning.telemetry import scope_attributes, traced

__all__ = ["FactExtractor", "LongTermMemory", "LongTermSettings", "LongTermStore", "importance"]

log = logging.getLogger("kenning")

_RETRIES = 4
# The statuses of a key's history (archived and expired facts are out of it).
_HISTORY = (FactStatus.ACTIVE, FactStatus.SUPERSEDED, FactStatus.REVOKED)
_BATCH_EVENTS = 500


class FactExtractor(Protocol):
    """Finds fact drafts in events (the deterministic rules, or an LLM)."""

    @property
    def name(self) -> str: ...

    def extract(self, events: Sequence[Event]) -> list[FactDraft]: ...


class RuleExtractor:
    """The deterministic extractor (no LLM): user self-statements, tool results, assistant
    turns.

    Self-statements are read by *statements*: by default their parse
    (:class:`~kenning.longterm.statements.ParsedStatements` over spaCy's small English
    pipeline, ``pip install 'kenning[nlp]'``), which falls back to the phrase rules of
    :mod:`kenning.longterm.extract` with one log line where spaCy is not installed. The default
    reader and its rules are imported when first used: a process that only searches (a cold
    ``kenning search``) does not compile them.
    """

    def __init__(
        self, *, tool_facts: bool = True, statements: StatementReader | None = None
    ) -> None:
        self._tool_facts = tool_facts
        self._given = statements
        self._lock = threading.Lock()

    @property
    def _statements(self) -> StatementReader:
        with self._lock:
            if self._given is None:
                from kenning.longterm.parsing.parser import SpacyParser
                from kenning.longterm.statements import ParsedStatements

                self._given = ParsedStatements(SpacyParser())
            return self._given

    @property
    def name(self) -> str:
        return self._statements.name

    def extract(self, events: Sequence[Event]) -> list[FactDraft]:
        said: dict[str | None, list[FactDraft]] = {}
        for draft in self._statements.read(events):
            said.setdefault(draft.source_event_id, []).append(draft)
        out: list[FactDraft] = []
        for event in events:  # the events' order: each event is consolidated in turn
            out.extend(said.get(event.id, ()))
            if self._tool_facts:
                out.extend(discovered_facts(event))
        return out


@dataclass(frozen=True, slots=True)
class LongTermSettings:
    """How facts are extracted, consolidated, ranked and pruned.

    Attributes:
        extract: read facts from new events in the background.
        tool_facts: also keep facts discovered in tool results and assistant turns.
        near_duplicate: cosine at or above which a draft reinforces an existing fact of the
            same subject and attribute family instead of adding one.
        withdrawal_match: cosine at or above which a withdrawal in other words closes a held
            fact of its attribute family (chosen on the tuning part of ``kenning bench
            revocation``: the lowest multiple of 0.05 with no false closure there).
        half_life_days: importance halves over this long without a mention or an access.
        prune_floor: pruning archives facts whose importance fell below this.
        prune_idle_hours / prune_min_accesses: ... or that were not accessed for this long
            and were accessed fewer times than this.
        lease_s: how long a worker holds a session's extraction before another may take it
            over; a working reader renews its lease every third of it.
        workers: background extraction threads per process (a bounded pool: further sessions
            wait in the store, whose unread events are the queue).
        llm: extract with this OpenAI-compatible model instead of the rules (which stay its
            fallback on any failure).
    """

    extract: bool = True
    tool_facts: bool = True
    near_duplicate: float = 0.9
    withdrawal_match: float = 0.75
    half_life_days: float = 30.0
    prune_floor: float = 0.1
    prune_idle_hours: float = 720.0
    prune_min_accesses: int = 5
    lease_s: float = 120.0
    workers: int = 1
    llm: LLMSettings | None = None

    def __post_init__(self) -> None:
        check_numbers(self, ("near_duplicate", "withdrawal_match"), low=0, high=1, above=True)
        positive = ("half_life_days", "prune_idle_hours", "lease_s")
        check_numbers(self, positive, low=0, above=True)
        check_numbers(self, "prune_floor", low=0, high=3, below=True)
        check_numbers(self, "prune_min_accesses", low=0, integer=True)
        check_numbers(self, "workers", low=1, high=64, integer=True)


def importance(fact: Fact, now: datetime, *, half_life_days: float = 30.0) -> float:
    """How much a fact matters now: 0.5^(age / half-life) × min(2, 1 + 0.1 × accesses) × 1.5
    if the user said it; the age counts from its last mention or access (an access resets
    the decay), and pinned facts never decay."""
    weight = min(2.0, 1 + 0.1 * fact.access_count) * (
        1.5 if fact.source is FactSource.EXPLICIT else 1.0
    )
    if fact.pinned:
        return weight
    last = max(t for t in (fact.last_seen, fact.last_access, fact.valid_from) if t is not None)
    age_days = max((now - last).total_seconds(), 0.0) / 86_400
    return float(0.5 ** (age_days / half_life_days) * weight)


class LongTermStore(FactStore, PolicyStore, EventLog, ContextState, Protocol):
    """What long-term memory uses of a store: the facts and their extraction, consent and
    tenant policy, the events facts are read from, the user's sessions and their summaries
    (for the profile lines of a window)."""


class LongTermMemory(FactsAPI):
    """Facts of one store's users: extraction, consolidation, reads and explicit writes."""

    def __init__(
        self,
        store: LongTermStore,
        embedder: Embedder | None,
        settings: LongTermSettings,
        *,
        extractor: FactExtractor | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._store = store
        # Each consolidation compares new statements with the user's held facts: their texts
        # repeat from one batch to the next, and are embedded once.
        self._embedder = None if embedder is None else CachedEmbedder(embedder)
        self._settings = settings
        rules = RuleExtractor(tool_facts=settings.tool_facts)
        if extractor is None and settings.llm is not None:
            from kenning.longterm.llm import LLMFactExtractor

            extractor = LLMFactExtractor(settings.llm, fallback=rules)
        self._extractor = extractor or rules
        self._now = clock

    @property
    def settings(self) -> LongTermSettings:
        return self._settings

    # -- consent ---------------------------------------------------------------------------

    def consent(self, scope: Scope) -> Consent:
        user = user_of(scope)
        return Consent.resolve(
            self._store.tenant_policy(user.tenant), self._store.user_settings(user)
        )

    def set_consent(self, scope: Scope, *, share_across_sessions: bool | None = None,
                    sensitive_facts: bool | None = None) -> Consent:  # fmt: skip
        for name, flag in (("share_across_sessions", share_across_sessions),
                           ("sensitive_facts", sensitive_facts)):  # fmt: skip
            if flag is not None and not isinstance(flag, bool):
                raise InvalidInput(f"{name} must be True, False or None")
        user = user_of(scope)
        self._store.put_user_settings(
            user, UserSettings(share_across_sessions=share_across_sessions,
                               sensitive_facts=sensitive_facts),
        )  # fmt: skip
        return self.consent(user)

    def shares_across_sessions(self, scope: Scope) -> bool:
        return scope.user is not None and self.consent(scope).share_across_sessions

    # -- profile ---------------------------------------------------------------------------

    def profile(self, scope: Scope) -> Profile:
        user = user_of(scope)
        now = self._now()
        current = sorted(self._store.facts(user), key=lambda f: -self.importance(f, now))
        closed = self._store.facts(user, statuses=(FactStatus.SUPERSEDED,))
        return build_profile(user, current, closed, self._store.user_sessions(user))

    def profile_lines(self, scope: Scope) -> list[ProfileLine]:
        """The profile a window of *scope*'s session shows: everything with the user's
        consent to share across sessions, else only what this session itself established;
        with consent, also the latest summary of each of the user's recent other sessions. Each
        line names the fact it states, if one does."""
        if scope.user is None:
            return []
        user = user_of(scope)
        if not self.shares_across_sessions(scope):
            now = self._now()
            own = sorted(  # facts sourced in this session, most important first
                self._store.facts(scope), key=lambda f: -self.importance(f, now)
            )
            return build_profile(user, own, (), ()).stated_lines()
        profile = self.profile(scope)
        lines = profile.stated_lines(current_session=scope.session)
        policy = self._store.tenant_policy(scope.tenant)
        others = [s for s in self._store.user_sessions(user) if s.session != scope.session]
        recent = sorted(others, key=lambda s: (s.active_at, s.session))
        for info in recent[-policy.recent_sessions :] if policy.recent_sessions else []:
            summaries = self._store.summaries(Scope(user.tenant, user.user, info.session))
            if summaries:
                latest = max(summaries, key=lambda s: (s.last_seq, s.level))
                first = " ".join(latest.text.split())[:300]
                said = f"session {info.session} ({info.active_at:%Y-%m-%d}): {first}"
                lines.append(ProfileLine(said))
        return lines

    # -- extraction ------------------------------------------------------------------------

    def extract_next(self) -> ExtractionJob | None:
        """Lease one session with unread events, read them for facts, consolidate, and record
        how far it got; None when nothing is waiting."""
        job = self._store.claim_extraction(at=self._now(), lease_s=self._settings.lease_s)
        if job is None:
            return None
        self.extract(job)
        return job

    @traced("extract_facts", lambda self, job, **_: {
        **scope_attributes(job.scope), "kenning.events.unread": job.last_seq - job.done_seq},
        lambda done: {"kenning.extraction.completed": done})  # fmt: skip
    def extract(self, job: ExtractionJob, *, stop: Callable[[], bool] = lambda: False) -> bool:
        """Read the unread events of a claimed session for facts, a batch at a time, each
        batch's facts written under the claim's lease, and record how far it got; *stop* is
        asked between batches. Returns False when another reader took the claim over: the
        store refused this reader's write (and its progress), and the new holder reads those
        events again, so nothing is consolidated twice."""
        done = job.done_seq
        try:
            while done < job.last_seq and not stop():
                events = self._store.events(job.scope, after_seq=done, limit=_BATCH_EVENTS)
                if not events:
                    break
                # One step per turn, dated by the turn: an imported history keeps its times
                # (a value replaced in March stopped holding in March, not when it was read).
                said = {e.id: e.at for e in events}
                drafts = self._from_listed_tools(job.scope, self._extractor.extract(events))
                for source in dict.fromkeys(d.source_event_id for d in drafts):
                    self._consolidate(
                        job.scope, [d for d in drafts if d.source_event_id == source],
                        at=said.get(source) if source is not None else None, lease=job.lease,
                    )  # fmt: skip
                done = events[-1].seq
        except LeaseLost:
            log.warning("fact extraction of %s was taken over by another reader", job.scope)
            return False
        except BaseException:
            self._store.finish_extraction(job, done_seq=done)  # the batches read so far stay
            raise
        return self._store.finish_extraction(job, done_seq=done)

    def _from_listed_tools(self, scope: Scope, drafts: list[FactDraft]) -> list[FactDraft]:
        """*drafts* without those read from the results of tools the tenant's policy does not
        list in ``fact_tools`` (the values stay in pins and search)."""
        listed = set(self._store.tenant_policy(scope.tenant).fact_tools)
        return [
            d
            for d in drafts
            if d.source is not FactSource.TOOL or d.subject.removeprefix("tool:") in listed
        ]

    def extract_all(self) -> int:
        """Run extraction until nothing waits (``kenning consolidate``); returns sessions read."""
        count = 0
        while self.extract_next() is not None:
            count += 1
        return count

    # -- consolidation ---------------------------------------------------------------------

    def consolidate(
        self, scope: Scope, drafts: Sequence[FactDraft], *, at: datetime | None = None
    ) -> list[Fact]:
        """Apply *drafts* (from one session of *scope*'s user) to the user's facts, as said at
        *at* (default: now): the time dates the mention and what it closes."""
        return self._consolidate(scope, drafts, at=at, lease=None)

    def _consolidate(
        self,
        scope: Scope,
        drafts: Sequence[FactDraft],
        *,
        at: datetime | None,
        lease: str | None,
        within_session: bool = False,
    ) -> list[Fact]:
        scope = scope.require_session()
        consent = self.consent(scope)
        kept = [d for d in drafts if not d.category.sensitive or consent.sensitive_facts]
        if not kept:
            return []
        for attempt in range(_RETRIES):
            changes, vectors = self._changes(scope, kept, at or self._now(), within_session)
            if not changes:
                return []
            try:
                return self._store.apply_facts(
                    scope, changes, at=at or self._now(), model=self._model(), vectors=vectors,
                    lease=lease,
                )  # fmt: skip
            except LeaseLost:
                raise  # deciding again cannot help: another reader holds the session now
            except StaleWrite:
                if attempt == _RETRIES - 1:
                    raise
                log.info("facts of %s changed meanwhile; consolidating again", scope)
        return []

    def _model(self) -> ModelInfo | None:
        if self._embedder is None:
            return None
        return ModelInfo(self._embedder.model_id, self._embedder.dimension)

    def _changes(
        self, scope: Scope, drafts: Sequence[FactDraft], at: datetime, within_session: bool
    ) -> tuple[FactChanges, dict[str, np.ndarray]]:
        """Refold the histories *drafts* touch (said at *at*, or at the times they name): the
        user's, or with *within_session* those of the scope's session alone."""
        user = user_of(scope)
        view = scope if within_session else user
        subjects = {d.subject for d in drafts}
        active = [f for s in subjects for f in self._store.facts(view, subject=s)]
        placed = self._placed(drafts, active, at)
        keys = list(placed)
        rows = self._store.facts(view, keys=keys, statuses=_HISTORY)
        times = self._said_at(user, rows)
        policy = self._store.tenant_policy(scope.tenant)

        def expires(start: datetime) -> datetime | None:
            return None if policy.fact_days is None else start + timedelta(days=policy.fact_days)

        def new_id() -> str:
            return f"fact_{uuid.uuid4().hex}"

        parts = [
            key_changes(
                key,
                [f for f in rows if f.key == key],
                placed[key],
                times,
                new_id=new_id,
                expires=expires,
            )
            for key in keys
        ]
        inserts = tuple(i for p in parts for i in p.inserts)
        inserts = tuple(replace(i, embed_hash=content_hash(i.draft.text)) for i in inserts)
        changes = FactChanges(
            inserts=inserts,
            revisions=tuple(r for p in parts for r in p.revisions),
            withdrawn=tuple(w for p in parts for w in p.withdrawn),
            expected=tuple((key, tuple(f.id for f in rows if f.key == key)) for key in keys),
            within_session=within_session,
        )
        return changes, self._statement_vectors(changes.inserts)

    def _placed(
        self, drafts: Sequence[FactDraft], active: Sequence[Fact], at: datetime
    ) -> dict[tuple[str, str, str], list[Said]]:
        """Each draft as a statement of its key, or of the active fact it restates in other
        words (a near duplicate reinforces that fact)."""
        vectors = self._core_vectors([*drafts, *active])
        placed: dict[tuple[str, str, str], list[Said]] = {}
        for n, draft in enumerate(drafts):

            def similarity(fact: Fact, draft: FactDraft = draft) -> float:
                a, b = vectors.get(core(draft)), vectors.get(core(fact))
                return float(a @ b) if a is not None and b is not None else 0.0

            settings = self._settings
            kin = (
                withdrawn_kin(draft, active, similarity, settings.withdrawal_match)
                if draft.revoke
                else nearest_kin(draft, active, similarity, settings.near_duplicate)
                if vectors
                else None
            )
            if kin is not None:
                placed.setdefault(kin.key, []).append(said(draft, at, value=kin.value))
            else:
                placed.setdefault(draft.key, []).append(said(draft, at))
            for key, closing in _recounts(draft, [*active, *drafts[:n]], at):
                placed.setdefault(key, []).append(closing)
        return placed

    def _said_at(self, user: Scope, rows: Sequence[Fact]) -> dict[str, datetime]:
        """When the source events of *rows* were said."""
        ids = list(dict.fromkeys(s for f in rows for s in f.sources))
        return {item.id: item.at for item in self._store.items(user, ids)} if ids else {}

    def _core_vectors(self, items: Sequence[Fact | FactDraft]) -> dict[str, np.ndarray]:
        if self._embedder is None:
            return {}
        texts = list(dict.fromkeys(core(i) for i in items if core(i)))
        if not texts:
            return {}
        try:
            matrix = self._embedder.embed(texts)
        except ModelUnavailable as exc:
            log.warning("near-duplicate check without the model: %s", exc)
            return {}
        return dict(zip(texts, matrix, strict=True))

    def _statement_vectors(self, inserts: Sequence[FactInsert]) -> dict[str, np.ndarray]:
        if self._embedder is None or not inserts:
            return {}
        texts = list(dict.fromkeys(i.draft.text for i in inserts))
        try:
            matrix = self._embedder.embed(texts)
        except ModelUnavailable as exc:
            log.warning("facts stored without vectors: %s", exc)
            return {}
        return {content_hash(t): v for t, v in zip(texts, matrix, strict=True)}

    # -- explicit writes and reads ---------------------------------------------------------

    def remember(self, scope: Scope, attribute: str, value: str, *, subject: str = USER,
                 qualifier: str = "", category: FactCategory | str = FactCategory.GENERAL,
                 source_event_id: str | None = None, within_session: bool = False,
                 ) -> Fact:  # fmt: skip
        scope = scope.require_session()
        for name, text in (("attribute", attribute), ("value", value), ("subject", subject)):
            if not isinstance(text, str) or not text.strip() or len(text) > 200:
                raise InvalidInput(f"{name} must be a non-empty string of at most 200 characters")
            check_text(text, name)
        if not isinstance(qualifier, str) or len(qualifier) > 60:
            raise InvalidInput("qualifier must be a string of at most 60 characters")
        check_text(qualifier, "qualifier")
        if source_event_id is not None:
            check_text(str(source_event_id), "source_event_id")
        try:
            kind = FactCategory(category)
        except ValueError as exc:
            raise InvalidInput(
                f"category must be one of {[c.value for c in FactCategory]}"
            ) from exc
        from kenning.longterm.extract import statement

        attribute = " ".join(attribute.lower().split())
        qualifier = " ".join(qualifier.lower().split())
        draft = FactDraft(
            subject=subject.strip(), attribute=attribute, value=value.strip(), qualifier=qualifier,
            text=statement(subject.strip(), attribute, value.strip(), qualifier),
            category=kind, source_event_id=source_event_id, valid_from=self._now(),
        )  # fmt: skip
        if kind.sensitive and not self.consent(scope).sensitive_facts:
            raise InvalidInput(
                f"{kind.value} facts need the user's consent (sensitive_facts) or the tenant's "
                "policy; nothing was stored"
            )
        self._consolidate(scope, [draft], at=None, lease=None, within_session=within_session)
        found = self._store.facts(scope if within_session else user_of(scope), keys=[draft.key])
        if not found:
            raise NotFound("the fact was not stored")
        return found[-1]

    def revoke(self, scope: Scope, fact_id: str) -> Fact:
        user = user_of(scope)
        found = self._store.facts(user, ids=[fact_id])
        if not found:
            raise NotFound(f"no active fact {fact_id!r} for user {user.user!r}")
        source = Scope(user.tenant, user.user, found[0].scope.session or scope.session)
        [closed] = self._store.apply_facts(
            source.require_session(),
            # The store closes it only while it is still active (StaleWrite otherwise).
            FactChanges(closures=((fact_id, FactStatus.REVOKED, None),)),
            at=self._now(),
        )
        return closed

    def list(self, scope: Scope, *, subject: str | None = None, as_of: datetime | None = None,
             include_closed: bool = False) -> list[Fact]:  # fmt: skip
        user_of(scope)
        statuses = None if include_closed else (FactStatus.ACTIVE,)
        return self._store.facts(scope, subject=subject, statuses=statuses, as_of=as_of)

    def history(self, scope: Scope, fact_id: str) -> builtins.list[Fact]:
        found = self._store.fact_history(user_of(scope), fact_id)
        if not found:
            raise NotFound(f"no fact {fact_id!r} for this user")
        return found

    def export(self, scope: Scope) -> dict[str, Any]:
        user = user_of(scope)
        consent = self.consent(user)
        data = self.profile(user).to_json()
        data["facts"] = [f.to_json() for f in self._store.facts(user, statuses=None)]
        data["consent"] = consent.to_json()
        return data

    def importance(self, fact: Fact, now: datetime | None = None) -> float:
        return importance(fact, now or self._now(), half_life_days=self._settings.half_life_days)

    def weigh(
        self, scope: Scope, results: SearchResults, *, min_score: float, now: datetime
    ) -> SearchResults:
        """Decay changes ranking: each fact among *results* has its score scaled by
        ``0.5 + 0.5 × 0.5^(days since its last mention or access / half-life)`` (pinned facts
        keep theirs), so of two facts that match alike the fresher or more used one comes
        first; turns are left as they are. Hits that fall under *min_score* are dropped."""
        ids = [h.id for h in results.hits if h.kind == "fact"]
        if not ids:
            return results
        half_life = self._settings.half_life_days
        decay: dict[str, float] = {}
        for fact in self._store.facts(scope, ids=ids, statuses=None):
            if fact.pinned:
                decay[fact.id] = 1.0
                continue
            last = max(t for t in (fact.last_seen, fact.last_access, fact.valid_from) if t)
            age_days = max((now - last).total_seconds(), 0.0) / 86_400
            decay[fact.id] = 0.5 ** (age_days / half_life)
        hits = []
        for hit in results.hits:
            if hit.id in decay:
                score = hit.score * (0.5 + 0.5 * decay[hit.id])
                scores = {**hit.scores, "decay": decay[hit.id], "score": score}
                hit = replace(hit, score=score, scores=scores)
            if hit.score >= min_score:
                hits.append(hit)
        hits.sort(key=lambda h: -h.score)
        return replace(results, hits=tuple(hits))

    def prune(self, scope: Scope, *, now: datetime | None = None) -> builtins.list[Fact]:
        """Archive the user's facts (with a session scope, those read from that session)
        whose importance fell below the floor, or that were not accessed within the idle
        window and seldom at all; pinned facts stay."""
        when = now or self._now()
        settings = self._settings
        idle = timedelta(hours=settings.prune_idle_hours)
        doomed = []
        for fact in self.list(scope):
            if fact.pinned:
                continue
            last = max(t for t in (fact.last_seen, fact.last_access, fact.valid_from) if t)
            stale = when - last > idle and fact.access_count < settings.prune_min_accesses
            if stale or self.importance(fact, when) < settings.prune_floor:
                doomed.append(fact)
        archived: list[Fact] = []
        for fact in doomed:
            source = Scope(fact.scope.tenant, fact.scope.user, fact.scope.session)
            archived.extend(
                self._store.apply_facts(
                    source.require_session(),
                    FactChanges(closures=((fact.id, FactStatus.ARCHIVED, None),)),
                    at=when,
                )
            )
        return archived


def _recounts(
    draft: FactDraft, held: Sequence[Fact | FactDraft], at: datetime
) -> list[tuple[tuple[str, str, str], Said]]:
    """The withdrawals a new count makes (:func:`~kenning.longterm.consolidate.recounted`): of
    each older count when it was said, or of itself when a later count is already held (a
    history read out of order ends as it was said)."""
    out = []
    when = draft.valid_from or at
    for old in recounted(draft, held):
        began = old.valid_from or at
        if when >= began:
            closing = replace(draft, attribute=old.attribute, qualifier=old.qualifier, revoke=True)
            out.append((old.key, said(closing, at, value=old.value)))
        else:
            out.append((draft.key, said(replace(draft, revoke=True, valid_from=began), at)))
    return out
