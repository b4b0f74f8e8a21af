"""Deferred vectors: events committed first, their vectors written by one background writer.

Embedding a turn's texts costs far more than committing it, and a model call of one turn's
texts pays the call's fixed cost for few tokens. With ``Settings.defer_vectors`` the write
path (:class:`kenning.ingest.IngestPipeline`) commits each batch of events together with a
``pending_vectors`` row per text it still needs (:meth:`~kenning.store.protocol.EventLog.
append_events`), returns, and hands the texts to :class:`VectorWriter` (a batch that needs a
whole model call's texts by itself, a bulk import, is embedded before its commit instead).
The writer's thread gathers the texts of many calls (up to ``max_texts`` a model call; the
embedder sorts them by length so no text pads to a longer neighbour), and stores their
vectors in a transaction of its own (:meth:`~kenning.store.protocol.VectorBacklog.
put_vectors`); the search partitions take the events when their vectors are there.

- **Read your writes.** :meth:`VectorWriter.flush` waits until the writer has delivered a
  tenant's texts, then embeds whatever the store still lists as pending for the tenant
  (texts of a process that died, of another process, or of a failed call). ``Memory.search``
  (and so every window's retrieval) flushes its tenant first.
- **Crash safety.** The pending rows commit with the events, so a process killed with vectors
  pending leaves them listed; the next flush of that tenant, in any process, embeds them.
- **Errors.** A failed model call is logged and kept; the tenant's rows stay pending. The
  next flush of that tenant embeds them again and, if that fails too, raises
  :class:`~kenning.errors.VectorsPending` from the failure.
- **Back-pressure.** A writer more than ``max_queued`` texts behind makes ``submit`` wait, so
  a loop faster than the model cannot queue without bound.
- **Several processes.** A flush embeds what the store lists for the tenant, whoever wrote
  it, so a search sees the vectors of every committed event; a text that another live
  process's writer is embedding at that moment is embedded twice (stored once).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from kenning.background import QueueThread
from kenning.embed.base import Embedder
from kenning.errors import InvalidInput, VectorsPending
from kenning.store.protocol import VectorBacklog
from kenning.store.records import ModelInfo
from kenning.telemetry import stage

__all__ = ["VectorWriter"]

log = logging.getLogger("kenning")

# Texts read from the store's backlog per step of a flush.
_BACKLOG_STEP = 256
# How often a flush looks in the store for a tenant's texts no writer of this process holds
# (left by a killed process or another one): on the tenant's first flush, after a failure,
# and then at most once in this many seconds, so a search reads no extra row in between.
RECHECK_S = 60.0


@dataclass
class _Queue:
    """What the writer holds: texts by tenant in arrival order, each with a ticket (when it
    arrived), and the tickets of the call it is running. A flush waits only for the texts
    that arrived before it: writes that go on meanwhile do not keep it waiting."""

    waiting: dict[str, dict[str, str]] = field(default_factory=dict)
    tickets: dict[tuple[str, str], int] = field(default_factory=dict)
    running: dict[str, dict[str, int]] = field(default_factory=dict)
    issued: int = 0

    @property
    def size(self) -> int:
        return len(self.tickets)

    def add(self, tenant: str, texts: Mapping[str, str]) -> None:
        held = self.waiting.setdefault(tenant, {})
        for digest, text in texts.items():
            if digest not in held:
                self.issued += 1
                self.tickets[(tenant, digest)] = self.issued
            held[digest] = text

    def take(self, limit: int) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, int]]]:
        """The oldest texts, at most *limit*, by tenant, and their tickets (now running)."""
        batch: dict[str, dict[str, str]] = {}
        taken: dict[str, dict[str, int]] = {}
        left = limit
        for tenant in list(self.waiting):
            held = self.waiting[tenant]
            while held and left:
                digest = next(iter(held))
                batch.setdefault(tenant, {})[digest] = held.pop(digest)
                taken.setdefault(tenant, {})[digest] = self.tickets.pop((tenant, digest))
                left -= 1
            if not held:
                del self.waiting[tenant]
            if not left:
                break
        for tenant, tickets in taken.items():
            self.running.setdefault(tenant, {}).update(tickets)
        return batch, taken

    def done(self, taken: Mapping[str, Mapping[str, int]]) -> None:
        for tenant, tickets in taken.items():
            for digest in tickets:
                del self.running[tenant][digest]
            if not self.running[tenant]:
                del self.running[tenant]

    def held(self, tenant: str) -> set[str]:
        """The hashes of *tenant* the writer holds (waiting or running)."""
        return set(self.waiting.get(tenant, ())) | set(self.running.get(tenant, ()))

    def holds(self, tenant: str | None, through: int) -> bool:
        """Whether texts of *tenant* (None: any) that arrived by ticket *through* are not
        delivered yet."""
        tenants = list(self.waiting.keys() | self.running.keys()) if tenant is None else [tenant]
        for name in tenants:
            held = self.waiting.get(name)
            if held and self.tickets[(name, next(iter(held)))] <= through:
                return True
            if any(ticket <= through for ticket in self.running.get(name, {}).values()):
                return True
        return False


class VectorWriter:
    """Embeds the texts that committed events wait for, many calls' texts per model call, on
    one thread, and stores their vectors (see the module).

    Args:
        store: where the events wait (:class:`~kenning.store.protocol.VectorBacklog`).
        embedder: the model the vectors come from.
        max_texts: the most texts one model call embeds (keyword-only).
        max_queued: how many texts may wait before :meth:`submit` blocks (keyword-only;
            default 8 calls' worth).

    Raises:
        InvalidInput: *max_texts* or *max_queued* is not a positive int.
    """

    def __init__(
        self, store: VectorBacklog, embedder: Embedder, *, max_texts: int = 16,
        max_queued: int | None = None,
    ) -> None:  # fmt: skip
        queued = 8 * max_texts if max_queued is None else max_queued
        for name, value in (("max_texts", max_texts), ("max_queued", queued)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidInput(f"{name} must be a positive int, got {value!r}")
        self._store = store
        self._embedder = embedder
        self._model = ModelInfo(model_id=embedder.model_id, dimension=embedder.dimension)
        self._max_texts = max_texts
        self._max_queued = queued
        self._queue = _Queue()
        self._worker = QueueThread("kenning-vectors", self._run)
        self._cond = self._worker.cond
        self._failed: dict[str, BaseException] = {}
        self._checked: dict[str, float] = {}  # tenant -> when the store was last looked in
        #: Model calls made and texts embedded by the thread (for benches and tests).
        self.calls = 0
        self.texts = 0

    @property
    def model(self) -> ModelInfo:
        return self._model

    @property
    def max_texts(self) -> int:
        """The most texts one model call of the writer embeds."""
        return self._max_texts

    def submit(self, tenant: str, texts: Mapping[str, str]) -> None:
        """Queue texts (hash -> text) whose events were committed with pending rows. Waits
        while the writer is ``max_queued`` texts behind; after :meth:`close` it embeds them
        on the caller's thread."""
        if not texts:
            return
        with self._cond:
            if not self._worker.closed:
                while self._queue.size >= self._max_queued and not self._worker.closed:
                    self._cond.wait()
                if not self._worker.closed:
                    self._queue.add(tenant, texts)
                    self._worker.start()
                    self._cond.notify_all()
                    return
        self._deliver(tenant, dict(texts))

    def flush(self, tenant: str | None = None) -> None:
        """Wait until the writer has delivered the texts of *tenant* (None: of any tenant)
        queued before the call, then embed what the store still lists as pending for *tenant*
        (all tenants with a failure, for None): on the tenant's first flush, after a failure,
        and at most once every :data:`RECHECK_S` seconds otherwise.

        Raises:
            VectorsPending: the model failed again on what was pending (the rows stay
                pending; a later flush tries again).
        """
        with self._cond:
            through = self._queue.issued
            while self._queue.holds(tenant, through):
                self._cond.wait()
            tenants = set(self._failed) if tenant is None else {tenant}
            now = time.monotonic()
            due = {
                t for t in tenants
                if t in self._failed or now - self._checked.get(t, -RECHECK_S) >= RECHECK_S
            }  # fmt: skip
        for name in sorted(due):
            self._catch_up(name)
            with self._cond:
                self._checked[name] = now

    def close(self) -> None:
        """Embed what is queued, then stop the thread (idempotent). Texts that fail stay
        pending in the store for the next flush, in this process or the next."""
        self._worker.close()

    # -- the writer's thread ---------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue.waiting and not self._worker.closed:
                    self._cond.wait()
                if not self._queue.waiting:
                    return
                batch, taken = self._queue.take(self._max_texts)
                self._cond.notify_all()  # a submit waiting for room may go on
            try:
                self._write(batch)
            except Exception as exc:  # kept for the tenants' next flush; the thread goes on
                log.warning("embedding deferred vectors failed, their events wait: %s", exc)
                with self._cond:
                    self._failed.update(dict.fromkeys(batch, exc))
            finally:
                with self._cond:
                    self._queue.done(taken)
                    self._cond.notify_all()

    def _write(self, batch: Mapping[str, Mapping[str, str]]) -> None:
        """One model call for the batch's texts (each distinct text once), then one store
        transaction per tenant."""
        unique = list(dict.fromkeys(t for texts in batch.values() for t in texts.values()))
        try:
            with stage("model"):
                matrix = self._embedder.embed(unique)
        except Exception as exc:  # the model's own errors are of any type: one typed error
            raise VectorsPending(
                f"{len(unique)} texts of {', '.join(map(repr, sorted(batch)))} wait for "
                f"vectors: the embedding model failed ({exc}); their events are stored and "
                "found by their words"
            ) from exc
        self.calls += 1
        self.texts += len(unique)
        row = {text: i for i, text in enumerate(unique)}
        for tenant, texts in batch.items():
            with stage("store"):  # its partition catch-up is timed inside, as "index"
                self._store.put_vectors(
                    tenant, self._model, {h: matrix[row[t]] for h, t in texts.items()}
                )

    def _deliver(self, tenant: str, texts: dict[str, str]) -> None:
        """Embed and store *texts* on the caller's thread; VectorsPending if the model fails."""
        try:
            self._write({tenant: texts})
        except VectorsPending as exc:
            with self._cond:
                self._failed[tenant] = exc
            raise
        with self._cond:
            self._failed.pop(tenant, None)

    def _catch_up(self, tenant: str) -> None:
        """Embed what the store lists as pending for *tenant*, a step at a time, but for the
        texts the writer holds (written after the flush began: the writer delivers them, and
        a thread that keeps writing does not keep the flush going)."""
        while True:
            found = self._store.pending_texts(tenant, limit=_BACKLOG_STEP)
            with self._cond:
                held = self._queue.held(tenant)
            texts = {h: t for h, t in found.items() if h not in held}
            if texts:
                self._deliver(tenant, texts)
            if len(found) < _BACKLOG_STEP or not texts:
                break
        with self._cond:
            self._failed.pop(tenant, None)
