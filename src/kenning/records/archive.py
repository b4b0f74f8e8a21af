"""kenning's export format, ``kenning-export`` (JSON Lines): its records, and how a line is read
and written. No I/O: the store reads and writes the records, the edges move the lines.

The first line is a header::

    {"format": "kenning-export", "version": 1, "kenning": "0.1.0", "tenant": "acme",
     "user": null, "created": "2026-12-03T09:00:00+00:00", "vectors": null}

``user`` names the one user exported (null: the whole tenant); ``vectors`` is null, or the
embedding models of the vectors that follow (``{"model", "dimension", "documents"}``: the
model of the ``vector`` records, null when there are none, and that of the documents' text
vectors). Every later line is one
record with a ``kind`` (:data:`KINDS`) and the fields its kind lists, all of them, no others.
Times are ISO 8601 with their UTC offset, amounts decimal strings, vectors base64 of
little-endian float32. A record's tenant is the header's; an import may give another.
"""

from __future__ import annotations

import base64
import binascii
import enum
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

import numpy as np
import numpy.typing as npt

from kenning.errors import InvalidArchive
from kenning.records.core import ModelInfo, PinKind, PinStatus, Role, validate_id
from kenning.records.facts import FactCategory, FactSource, FactStatus, ProcedureStatus

__all__ = [
    "FORMAT", "KINDS", "VERSION", "ArchiveHeader", "ArchiveRecord", "Exported", "decode_lines",
    "encode_header", "encode_record",
]  # fmt: skip

FORMAT = "kenning-export"
#: The format's version: a reader refuses any other (a new field or kind is a new version).
VERSION = 1


# A field's type: a scalar code ("?" suffix: may be null; "id": a kenning id), one of a set
# of values ("enum"), or a nested spec. What a store could not read back is refused here.
def _enum(values: type[enum.StrEnum]) -> tuple[str, frozenset[str]]:
    return ("enum", frozenset(v.value for v in values))


_ITEM = {
    "id": "id", "user_id": "id?", "session": "id?", "agent": "id?", "seq": "int?",
    "role": _enum(Role), "label": "str", "text": "str", "at": "time", "tags": "json",
    "metadata": "json", "version": "str?", "content_hash": "str", "embed_hash": "str?",
    "idem_key": "str?", "created_at": "time", "expires_at": "time?",
    "details": ("obj?", {"tool_name": "str?", "tool_args": "json?",
                         "tool_result": "json?"}),
    "chunks": ("list", {"n": "int", "start": "int", "stop": "int", "embed_hash": "str?",
                        "lexical": "bool"}),
    "token_counts": ("map", "int"),
    "access": ("obj?", {"count": "int", "last": "time"}),
}  # fmt: skip
_FACT = {
    "subject": "str", "attribute": "str", "qualifier": "str", "value": "str",
    "source": _enum(FactSource), "confidence": "float", "category": _enum(FactCategory),
    "status": _enum(FactStatus), "valid_from": "time",
    "valid_to": "time?", "superseded_by": "str?", "expires_at": "time?", "pinned": "bool",
    "reinforced": "int", "last_seen": "time", "sources": ("list", "str"),
    "source_event_id": "str?",
}  # fmt: skip
Spec = Mapping[str, Any]
#: Each kind's fields (besides ``kind``), in the order they are written.
KINDS: dict[str, Spec] = {
    "session": {"session": "id", "user_id": "id", "last_seq": "int", "created_at": "time",
                "first_at": "time?", "last_at": "time?"},
    "event": _ITEM,
    "fact": {**_ITEM, "fact": ("obj", _FACT)},
    "pin": {"id": "id", "user_id": "id", "session": "id", "pin_kind": _enum(PinKind),
            "key": "str", "version": "int", "value": "str", "amount": "amount?",
            "currency": "str?", "status": _enum(PinStatus), "source_event_id": "str?",
            "metadata": "json", "created_at": "time", "closed_at": "time?", "current": "bool"},
    "summary": {"id": "str", "user_id": "id", "session": "id", "level": "int",
                "first_seq": "int", "last_seq": "int", "text": "str", "body": "json",
                "summarizer": "str", "created_at": "time", "active": "bool"},
    "compaction": {"user_id": "str?", "session": "str?", "at": "time", "action": "str",
                   "first_seq": "int?", "last_seq": "int?", "tokens_before": "int?",
                   "tokens_after": "int?", "summary_id": "str?", "summarizer": "str?",
                   "detail": "str"},
    "task_state": {"session": "id", "user_id": "id", "body": "json", "version": "int",
                   "updated_at": "time"},
    "ledger": {"session": "id", "encoding": "str", "seq": "int", "n": "int", "cum": "int"},
    "extraction": {"session": "id", "user_id": "id", "done_seq": "int", "attempts": "int"},
    "consent": {"user_id": "id", "share_across_sessions": "bool?",
                "sensitive_facts": "bool?", "updated_at": "time"},
    "policy": {"body": "json", "updated_at": "time"},
    "hold": {"user_id": "str", "session": "str", "reason": "str", "created_at": "time"},
    "purge": {"at": "time", "purged": "str", "count": "int"},
    "procedure": {"id": "str", "user_id": "id?", "name": "str", "version": "int",
                  "tool_hash": "str", "steps": "json", "description": "str",
                  "status": _enum(ProcedureStatus), "created_at": "time"},
    "usage": {"session": "id", "model": "str", "input_tokens": "int",
              "output_tokens": "int", "calls": "int", "cost": "float"},
    "document": {"id": "str", "namespace": "str", "key": "str", "value": "json",
                 "created_at": "time", "updated_at": "time", "user_id": "id?",
                 "ttl_minutes": "float?", "expires_at": "time?",
                 "texts": ("list", {"n": "int", "path": "str", "text": "str",
                                    "vec": "vector?"})},
    "vector": {"hash": "str", "vec": "vector"},
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class ArchiveHeader:
    """The first line: whose records follow, and the model of their vectors (if any)."""

    tenant: str
    user: str | None
    created: datetime
    kenning: str
    #: The model of the ``vector`` records (id, dimension); None: no vectors (embed again).
    model: tuple[str, int] | None = None
    #: The model of the documents' text vectors, when they travel.
    document_model: str | None = None
    version: int = VERSION


@dataclass(frozen=True, slots=True)
class ArchiveRecord:
    """One record: its *kind* and fields as Python values (times as aware datetimes, amounts
    as Decimal, vectors as float32 arrays); *line* is where it was read (0 when written)."""

    kind: str
    data: Mapping[str, Any]
    line: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class Exported:
    """A scope's records, the model of the ``vector`` records among them (None: none), and
    the model of the documents' text vectors when those travel."""

    records: list[ArchiveRecord]
    model: ModelInfo | None
    document_model: str | None


def encode_header(header: ArchiveHeader) -> str:
    """The header line (no newline)."""
    vectors = None
    if header.model is not None or header.document_model is not None:
        name, dimension = header.model or (None, None)
        vectors = {"model": name, "dimension": dimension, "documents": header.document_model}
    return json.dumps({
        "format": FORMAT, "version": header.version, "kenning": header.kenning,
        "tenant": header.tenant, "user": header.user, "created": header.created.isoformat(),
        "vectors": vectors,
    }, ensure_ascii=False)  # fmt: skip


def encode_record(record: ArchiveRecord) -> str:
    """One record's line (no newline)."""
    out = {"kind": record.kind, **_encode_fields(KINDS[record.kind], record.data)}
    return json.dumps(out, ensure_ascii=False, allow_nan=False)


def _encode_fields(spec: Spec, data: Mapping[str, Any]) -> dict[str, Any]:
    return {name: _encode(kind, data[name]) for name, kind in spec.items()}


def _encode(kind: Any, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(kind, Mapping):
        return _encode_fields(kind, value)
    if isinstance(kind, tuple):
        shape, inner = kind
        if shape == "enum":
            return value
        if shape == "list":
            return [_encode(inner, v) for v in value]
        if shape == "map":
            return {k: _encode(inner, v) for k, v in value.items()}
        return _encode_fields(inner, value)
    base = kind.rstrip("?")
    if base == "json":
        # Keys sorted: backends keep an object's keys in different orders (jsonb sorts them),
        # and one record is one line whatever store it came from.
        return json.loads(json.dumps(value, sort_keys=True))
    if base == "time":
        return value.astimezone(UTC).isoformat()
    if base == "amount":
        return str(value)
    if base == "vector":
        data = np.ascontiguousarray(value, dtype="<f4").tobytes()
        return base64.b64encode(data).decode("ascii")
    return value


def decode_lines(lines: Iterable[str]) -> tuple[ArchiveHeader, list[ArchiveRecord]]:
    """Read a whole export: its header and records, every line checked before any is used.
    Raises :class:`~kenning.errors.InvalidArchive` naming the first bad line (1-based): not
    JSON, not the format or another version, an unknown kind, a missing, extra or mistyped
    field."""
    header: ArchiveHeader | None = None
    records: list[ArchiveRecord] = []
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise InvalidArchive(f"line {number}: not JSON ({exc})", line=number) from exc
        if not isinstance(obj, dict):
            raise InvalidArchive(f"line {number}: not a JSON object", line=number)
        if header is None:
            header = _header(obj, number)
            continue
        records.append(_record(obj, number))
    if header is None:
        raise InvalidArchive(f"empty file: no {FORMAT} header line", line=1)
    return header, records


def _header(obj: Mapping[str, Any], number: int) -> ArchiveHeader:
    def bad(what: str) -> InvalidArchive:
        return InvalidArchive(f"line {number}: {what}", line=number)

    if obj.get("format") != FORMAT:
        raise bad(f"not a {FORMAT} file (the first line's format is {obj.get('format')!r})")
    version = obj.get("version")
    if version != VERSION:
        raise bad(f"{FORMAT} version {version!r} is not readable here (this kenning reads "
                  f"version {VERSION})")  # fmt: skip
    user = obj.get("user")
    try:
        tenant = validate_id(obj.get("tenant"), "tenant")
        if user is not None:
            validate_id(user, "user")
    except ValueError as exc:
        raise bad(str(exc)) from exc
    created = _decode("time", obj.get("created"), "created", number)
    vectors = obj.get("vectors")
    model: tuple[str, int] | None = None
    documents = None
    if vectors is not None:
        if not isinstance(vectors, dict):
            raise bad("vectors must be null or an object")
        name = _decode("str?", vectors.get("model"), "vectors.model", number)
        dimension = _decode("int?", vectors.get("dimension"), "vectors.dimension", number)
        documents = _decode("str?", vectors.get("documents"), "vectors.documents", number)
        if (name is None) != (dimension is None):
            raise bad("vectors.model and vectors.dimension are both given or both null")
        model = None if name is None else (name, dimension)
    kenning = _decode("str", obj.get("kenning"), "kenning", number)
    return ArchiveHeader(tenant, user, created, kenning, model, documents)


def _record(obj: Mapping[str, Any], number: int) -> ArchiveRecord:
    kind = obj.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        raise InvalidArchive(
            f"line {number}: unknown record kind {kind!r} (known: {', '.join(KINDS)})",
            line=number,
        )
    fields = {k: v for k, v in obj.items() if k != "kind"}
    return ArchiveRecord(kind, _decode_fields(KINDS[kind], fields, kind, number), number)


def _decode_fields(spec: Spec, obj: Any, where: str, number: int) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise InvalidArchive(f"line {number}: {where} must be an object", line=number)
    missing = [name for name in spec if name not in obj]
    extra = [name for name in obj if name not in spec]
    if missing or extra:
        what = "; ".join(
            part for part in (
                f"missing {', '.join(missing)}" if missing else "",
                f"unknown {', '.join(map(str, extra))}" if extra else "",
            ) if part
        )  # fmt: skip
        raise InvalidArchive(f"line {number}: {where}: {what}", line=number)
    return {
        name: _decode(kind, obj[name], f"{where}.{name}", number) for name, kind in spec.items()
    }


def _decode(kind: Any, value: Any, where: str, number: int) -> Any:
    """*value* as the Python value of a field of type *kind*; InvalidArchive if it is not one."""
    if isinstance(kind, Mapping):
        return _decode_fields(kind, value, where, number)
    if isinstance(kind, tuple):
        shape, inner = kind
        if value is None and shape == "obj?":
            return None
        if shape == "list" and isinstance(value, list):
            return [_decode(inner, v, where, number) for v in value]
        if shape == "map" and isinstance(value, dict):
            return {str(k): _decode(inner, v, where, number) for k, v in value.items()}
        if shape in ("obj", "obj?"):
            return _decode_fields(inner, value, where, number)
        if shape == "enum" and value in inner:
            return value
        if shape == "enum":
            shown = str(value)[:40]
            raise InvalidArchive(
                f"line {number}: {where}: {shown!r} is not one of {', '.join(sorted(inner))}",
                line=number,
            )
        raise InvalidArchive(f"line {number}: {where} must be a {shape}", line=number)
    if value is None and kind.endswith("?"):
        return None
    try:
        return _scalar(kind.rstrip("?"), value)
    except (TypeError, ValueError, InvalidOperation, binascii.Error) as exc:
        raise InvalidArchive(f"line {number}: {where}: {exc}", line=number) from exc


def _scalar(base: str, value: Any) -> Any:
    if base == "json":
        if value is None:
            raise TypeError("expected a JSON value, got null")
        return value
    if base == "id":
        return validate_id(value, "id")
    if base == "bool":
        if isinstance(value, bool):
            return value
    elif base == "int":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif base == "float":
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    elif base == "str":
        if isinstance(value, str):
            return value
    elif base == "time" and isinstance(value, str):
        at = datetime.fromisoformat(value)
        if at.tzinfo is None:
            raise ValueError(f"time {value!r} has no UTC offset")
        return at.astimezone(UTC)
    elif base == "amount" and isinstance(value, str):
        amount = Decimal(value)
        if not amount.is_finite():
            raise ValueError(f"amount {value!r} is not a finite number")
        return amount
    elif base == "vector" and isinstance(value, str):
        return _vector(value)
    raise TypeError(f"expected {base}, got {type(value).__name__} {str(value)[:40]!r}")


def _vector(text: str) -> npt.NDArray[np.float32]:
    raw = base64.b64decode(text.encode("ascii"), validate=True)
    if not raw or len(raw) % 4:
        raise ValueError("a vector is base64 of float32 values (a multiple of 4 bytes)")
    vec = np.frombuffer(raw, dtype="<f4").astype(np.float32)
    if not np.isfinite(vec).all():
        raise ValueError("a vector holds a NaN or an infinity")
    return vec
