"""``kenning export`` and ``kenning import`` of a ``kenning-export`` file, over any store that
offers :class:`~kenning.store.protocol.Archive`.

An import reads and checks the whole file first (a bad line imports nothing), then writes it
in one transaction. A file without vectors is embedded on the way in with the destination's
model and settings, as ingest would index its events now, so its records are found by
meaning at once; the texts of documents are then found by their words until written again
(their vectors come from the application's own embedding function).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from kenning.embed.base import Embedder
from kenning.errors import InvalidScope
from kenning.indexing import embedding_text, index_plan
from kenning.records import Event, Role, Scope, content_hash
from kenning.records.archive import (
    ArchiveHeader,
    ArchiveRecord,
    decode_lines,
    encode_header,
    encode_record,
)
from kenning.settings import Settings
from kenning.store.protocol import EventLog, archive_of
from kenning.store.records import ModelInfo
from kenning.version import __version__

__all__ = ["ImportReport", "export_lines", "import_lines"]


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What an import did: the tenant written, the records read per kind, the rows added per
    kind (none on a second import of the same file) and the texts embedded."""

    tenant: str
    read: dict[str, int]
    added: dict[str, int]
    embedded: int = 0


def export_lines(
    store: object, scope: Scope, *, vectors: bool = False, now: datetime | None = None
) -> Iterator[str]:
    """The lines (without newlines) of *scope*'s export: the header, then every record of
    the tenant or of its user. The records are read in one transaction before the first
    line is given. With *vectors*, the vectors travel too (an import need not embed)."""
    if scope.session is not None:
        raise InvalidScope("an export is of a tenant or of one user: leave the session out")
    exported = archive_of(store).export_records(scope, vectors=vectors)
    model = exported.model
    header = ArchiveHeader(
        scope.tenant, scope.user, now or datetime.now(UTC), __version__,
        None if model is None else (model.model_id, model.dimension), exported.document_model,
    )  # fmt: skip
    yield encode_header(header)
    for record in exported.records:
        yield encode_record(record)


def import_lines(
    store: object, lines: Iterable[str], *, tenant: str | None = None,
    embedder: Embedder | None = None, settings: Settings | None = None,
) -> ImportReport:  # fmt: skip
    """Import an export's *lines* into *tenant* (default: the file's own). Every line is
    checked first: ``InvalidArchive`` names the first bad one and nothing is written. A file
    without vectors is embedded with *embedder* (None: its records are found by their words
    until ``kenning reindex``). Importing the same file again adds nothing."""
    header, records = decode_lines(lines)
    target = Scope(tenant or header.tenant).tenant
    read: dict[str, int] = {}
    for record in records:
        read[record.kind] = read.get(record.kind, 0) + 1
    model = None if header.model is None else ModelInfo(*header.model)
    embedded = 0
    if model is None and embedder is not None:
        model = ModelInfo(embedder.model_id, embedder.dimension)
        known = model  # the store refuses another model's vectors (ModelMismatch) here

        def missing(hashes: list[str]) -> set[str]:
            if not isinstance(store, EventLog):
                return set(hashes)
            return set(store.missing_vectors(target, known, hashes))

        records, embedded = _embedded(records, target, embedder, settings or Settings(), missing)
    added = archive_of(store).import_records(
        target, records, model=model, document_model=header.document_model
    )
    return ImportReport(target, read, added, embedded)


def _embedded(
    records: list[ArchiveRecord], tenant: str, embedder: Embedder, settings: Settings,
    missing: Callable[[list[str]], set[str]],
) -> tuple[list[ArchiveRecord], int]:  # fmt: skip
    """*records* with their events indexed as ingest would index them now and their facts
    by their statements, plus a ``vector`` record for each text the store lacks (*missing*
    tells which), embedded once."""
    texts: dict[str, str] = {}
    out: list[ArchiveRecord] = []
    previous: dict[str | None, tuple[int, str]] = {}
    events = sorted(
        (r for r in records if r.kind == "event"),
        key=lambda r: (r.data["session"] or "", r.data["seq"] or 0),
    )
    planned: dict[int, ArchiveRecord] = {}
    for record in events:
        planned[id(record)], text = _plan(record, tenant, settings, previous, texts)
        if record.data["session"] is not None and record.data["seq"] is not None:
            previous[record.data["session"]] = (record.data["seq"], text)
    for record in records:
        if record.kind == "event":
            record = planned[id(record)]
        elif record.kind == "fact":
            digest = content_hash(record.data["text"])
            texts[digest] = record.data["text"]
            record = replace(record, data={**record.data, "embed_hash": digest})
        out.append(record)
    hashes = sorted(missing(list(texts))) if texts else []
    if not hashes:
        return out, 0
    matrix: npt.NDArray[np.float32] = embedder.embed([texts[h] for h in hashes])
    out += [ArchiveRecord("vector", {"hash": h, "vec": matrix[i]}) for i, h in enumerate(hashes)]
    return out, len(hashes)


def _plan(
    record: ArchiveRecord, tenant: str, settings: Settings,
    previous: dict[str | None, tuple[int, str]], texts: dict[str, str],
) -> tuple[ArchiveRecord, str]:  # fmt: skip
    """*record* with the index rows ingest would give its event now, and its embedded text
    (the next turn's context); the texts to embed are added to *texts*."""
    data: dict[str, Any] = dict(record.data)
    details = data["details"] or {}
    event = Event(
        id=data["id"], scope=Scope(tenant, data["user_id"], data["session"], data["agent"]),
        seq=data["seq"] or 0, role=Role(data["role"]), content=data["text"], at=data["at"],
        tool_name=details.get("tool_name"), tool_args=details.get("tool_args"),
        tool_result=details.get("tool_result"), metadata=data["metadata"] or {},
        tags=tuple(data["tags"] or ()), version=data["version"],
        content_hash=data["content_hash"], idempotency_key=data["idem_key"],
    )  # fmt: skip
    mode = settings.embed_text
    before = previous.get(data["session"])
    context = None
    if settings.embed_context and before is not None and before[0] == event.seq - 1:
        context = before[1]
    plan = index_plan(
        event, mode=mode, previous=context, chunk_chars=settings.chunk_chars,
        unit_chars=settings.index_unit_chars,
    )  # fmt: skip
    texts.update(plan.texts)
    data["embed_hash"] = plan.embed_hash
    data["chunks"] = [
        {"n": n, "start": c.start, "stop": c.stop, "embed_hash": c.embed_hash,
         "lexical": c.lexical}
        for n, c in enumerate(plan.chunks)
    ]  # fmt: skip
    return replace(record, data=data), embedding_text(event, mode)
