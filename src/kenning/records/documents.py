"""Namespaced documents: JSON values stored under (namespace, key) inside one tenant, and the
rules every backend shares for them.

A namespace is a tuple of labels of any depth (``("memories", "dana")``); a key names one
document in it. The rules here are written once for every backend and every caller: how a
namespace is checked and stored as text (:func:`encode_namespace`), which stored namespaces a
prefix or a suffix pattern matches (:func:`list_namespaces`), what a filter over a document's
JSON means (:func:`parse_document_filter`), and when a document with a time to live expires
(:func:`expiry`). Nothing here does I/O.

>>> f = parse_document_filter({"color": "red", "score": {"$gte": 4}})
>>> f.matches({"color": "red", "score": 4.5}), f.matches({"color": "red", "score": 3})
(True, False)
>>> list_namespaces([("a", "b", "c"), ("a", "x", "c"), ("b",)],
...                 NamespaceQuery(prefix=("a", "*"), max_depth=2))
[('a', 'b'), ('a', 'x')]
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from kenning.errors import ContentTooLarge, InvalidFilter, InvalidInput
from kenning.records.core import validate_id
from kenning.records.values import check_json, check_text

__all__ = [
    "MAX_DOCUMENT_CHARS",
    "MAX_PAGE",
    "Document",
    "DocumentFilter",
    "DocumentQuery",
    "DocumentWrite",
    "IndexText",
    "Namespace",
    "NamespaceQuery",
    "ScoredDocument",
    "check_key",
    "check_model",
    "check_namespace",
    "check_page",
    "check_ttl",
    "check_value",
    "decode_namespace",
    "encode_namespace",
    "expiry",
    "is_expired",
    "list_namespaces",
    "parse_document_filter",
    "prefix_range",
]

Namespace = tuple[str, ...]
"""A document's namespace: one or more labels, outermost first."""

#: Stored namespaces are their labels, each followed by this character (which no label may
#: hold): a prefix is then a range of the stored text, and no label can pose as two.
_SEP = "\x1f"
_MAX_LABEL = 256
_MAX_DEPTH = 32
_MAX_KEY = 1024
_MAX_PATH = 256
MAX_DOCUMENT_CHARS = 1_000_000
"""The largest document value, as JSON text."""
MAX_PAGE = 10_000
"""The largest ``limit`` (and ``offset``) of one listing or search."""
_MAX_MODEL = 256


def check_namespace(
    namespace: object, *, what: str = "namespace", empty: bool = False
) -> Namespace:
    """*namespace* as a tuple of labels; InvalidInput unless each label is a non-empty string
    of at most 256 characters without NUL or U+001F (*empty*: the empty tuple is allowed, as
    a prefix that matches everything). A label holds text every backend stores (no lone
    surrogate)."""
    if isinstance(namespace, str) or not isinstance(namespace, tuple | list):
        raise InvalidInput(f"{what} must be a tuple of strings, not {type(namespace).__name__}")
    labels = tuple(namespace)
    if not labels and not empty:
        raise InvalidInput(f"{what} is empty: give at least one label")
    if len(labels) > _MAX_DEPTH:
        raise InvalidInput(f"{what} has {len(labels)} labels, over the maximum of {_MAX_DEPTH}")
    for label in labels:
        if not isinstance(label, str) or not label:
            raise InvalidInput(f"{what} labels must be non-empty strings, got {label!r:.40}")
        if len(label) > _MAX_LABEL or "\x00" in label or _SEP in label:
            raise InvalidInput(
                f"{what} label {label!r:.40} is invalid: at most {_MAX_LABEL} characters, "
                "without NUL or U+001F"
            )
        check_text(label, f"{what} label")
    return labels


def check_key(key: object) -> str:
    """*key* if it is a string of at most 1024 characters without NUL (or a lone surrogate),
    else InvalidInput."""
    if not isinstance(key, str) or len(key) > _MAX_KEY or "\x00" in key:
        raise InvalidInput(f"a document key is a string of at most {_MAX_KEY} characters "
                           f"without NUL, got {key!r:.40}")  # fmt: skip
    return check_text(key, "a document key")


def check_model(model: object) -> str:
    """*model*, the name of the embedding model of given vectors, if it is a string of 1 to
    256 characters without control characters (or a lone surrogate); InvalidInput otherwise."""
    if (
        not isinstance(model, str)
        or not 0 < len(model) <= _MAX_MODEL
        or any(ord(c) < 32 or 0xD800 <= ord(c) <= 0xDFFF for c in model)
    ):
        raise InvalidInput(f"a model name is 1 to {_MAX_MODEL} printable characters, "
                           f"got {model!r:.40}")  # fmt: skip
    return model


def encode_namespace(namespace: Namespace) -> str:
    """The stored text of a checked namespace: each label followed by U+001F.

    >>> encode_namespace(("a", "b"))
    'a\\x1fb\\x1f'
    """
    return "".join(label + _SEP for label in namespace)


def decode_namespace(text: str) -> Namespace:
    """The namespace whose stored text is *text*."""
    return tuple(text.split(_SEP)[:-1])


def prefix_range(prefix: Namespace) -> tuple[str, str] | None:
    """Stored namespaces under *prefix* (itself included) are the texts ``low <= ns < high``
    in code point order; None for the empty prefix (every namespace)."""
    if not prefix:
        return None
    low = encode_namespace(prefix)
    return low, low[:-1] + chr(ord(_SEP) + 1)


def check_page(limit: object, offset: object) -> tuple[int, int]:
    """(limit, offset) if both are integers from 0 to :data:`MAX_PAGE`, else InvalidInput."""
    for name, value in (("limit", limit), ("offset", offset)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_PAGE:
            raise InvalidInput(f"{name} must be an integer from 0 to {MAX_PAGE}, got {value!r:.40}")
    return limit, offset  # type: ignore[return-value]  # both checked to be ints above


#: What json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False) makes, without
#: building an encoder per value.
_ENCODER = json.JSONEncoder(sort_keys=True, ensure_ascii=False, allow_nan=False)


def check_value(value: object) -> str:
    """The JSON text of *value* as a document: a JSON object that every backend stores the
    same (:func:`~kenning.records.check_json`: string keys, no NUL or lone surrogate, finite
    numbers, nested at most :data:`~kenning.records.MAX_JSON_DEPTH` levels), at most
    :data:`MAX_DOCUMENT_CHARS` as JSON text; InvalidInput (ContentTooLarge) otherwise."""
    if not isinstance(value, Mapping):
        raise InvalidInput(f"a document value is a JSON object, not {type(value).__name__}")
    check_json(value, "a document value")
    try:
        text = _ENCODER.encode(value)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"a document value must be JSON: {exc}") from exc
    if len(text) > MAX_DOCUMENT_CHARS:
        raise ContentTooLarge(
            f"a document value is {len(text)} characters as JSON, over the maximum of "
            f"{MAX_DOCUMENT_CHARS}"
        )
    return text


# -- time to live ---------------------------------------------------------------------------


def check_ttl(minutes: object) -> float | None:
    """A time to live in minutes: None (never expires) or a finite number > 0."""
    if minutes is None:
        return None
    if (
        isinstance(minutes, bool)
        or not isinstance(minutes, int | float)
        or not math.isfinite(minutes)
        or minutes <= 0
    ):
        raise InvalidInput(
            f"a time to live is a number of minutes > 0 (or None), got {minutes!r:.40}"
        )
    return float(minutes)


def expiry(at: datetime, ttl_minutes: float | None) -> datetime | None:
    """When a document written or read at *at* expires (None: never). Reading a document may
    restart its clock (a refresh): the same rule applies from the time of the read."""
    return None if ttl_minutes is None else at + timedelta(minutes=ttl_minutes)


def is_expired(doc: Document, at: datetime | None) -> bool:
    """Whether *doc*'s time to live had run out at *at* (never, for *at* None)."""
    return at is not None and doc.expires_at is not None and doc.expires_at <= at


# -- documents ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Document:
    """A stored JSON document of a tenant.

    ``user`` is the user it belongs to (erased with the user), or None for the tenant's own.
    Replacing a document keeps ``created_at`` and its ``id``; ``updated_at`` is the last
    write. ``expires_at`` is when its time to live (``ttl_minutes``) runs out, if it has one.
    """

    id: str
    tenant: str
    namespace: Namespace
    key: str
    value: Mapping[str, Any]
    created_at: datetime
    updated_at: datetime
    user: str | None = None
    ttl_minutes: float | None = None
    expires_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class IndexText:
    """One text a document is found by: the JSON path it was read from (``$``: the whole
    value), the text, and its vector (unit length, of the write's model) or None."""

    path: str
    text: str
    vector: npt.NDArray[np.float32] | None = None


@dataclass(frozen=True, slots=True)
class DocumentWrite:
    """One document to store under (*namespace*, *key*), replacing what is there, or to
    delete (*value* None). *user* owns it (None: the tenant); *texts* are what search finds it
    by (none: it is listed and filtered, never ranked); *ttl_minutes* its time to live.
    Checked on construction."""

    namespace: Namespace
    key: str
    value: Mapping[str, Any] | None
    user: str | None = None
    texts: tuple[IndexText, ...] = ()
    ttl_minutes: float | None = None
    #: The value as JSON text, checked once here and stored as it is.
    value_json: str | None = field(init=False, repr=False, compare=False, default=None)

    def __post_init__(self) -> None:
        object.__setattr__(self, "namespace", check_namespace(self.namespace))
        check_key(self.key)
        if self.value is not None:
            object.__setattr__(self, "value_json", check_value(self.value))
        if self.user is not None:
            validate_id(self.user, "user")
        check_ttl(self.ttl_minutes)
        if not all(isinstance(t, IndexText) for t in self.texts):
            raise InvalidInput("a document's texts must be IndexText records")


class ScoredDocument(NamedTuple):
    """A document found by a ranked search, with its fused score (None: not ranked)."""

    document: Document
    score: float | None


# -- filters over a document's JSON ---------------------------------------------------------

_ORDERED = ("$gt", "$gte", "$lt", "$lte")
_OPERATORS = ("$eq", "$ne", *_ORDERED)
_MISSING: Any = None  # a missing field reads as JSON null, as LangGraph's stores read it


class _Condition(NamedTuple):
    path: tuple[str, ...]
    op: str  # one of _OPERATORS, or "match" (the exact-match shorthand)
    value: Any


@dataclass(frozen=True, slots=True)
class DocumentFilter:
    """Conditions on a document's JSON value, all of which must hold (parsed and checked by
    :func:`parse_document_filter`; the empty filter admits every document)."""

    conditions: tuple[_Condition, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.conditions)

    def matches(self, value: Mapping[str, Any]) -> bool:
        """Whether the document value *value* satisfies every condition."""
        return all(_holds(_lookup(value, c.path), c.op, c.value) for c in self.conditions)


def parse_document_filter(raw: Mapping[str, Any] | None) -> DocumentFilter:
    """Check a LangGraph-style filter and return it parsed.

    Each key is a field of the document, ``"a.b"`` naming the field ``b`` inside ``a``. Its
    value is either an exact match (a scalar, a list compared element by element, or an
    object whose fields must all match, other fields of the document being free), or an
    object of operators: ``$eq``, ``$ne`` (any JSON value), ``$gt``, ``$gte``, ``$lt``,
    ``$lte`` (a number or a string; numbers compare as numbers, strings by code point, and a
    field of another type never matches). A missing field reads as null. Anything else
    raises :class:`~kenning.errors.InvalidFilter` naming what is wrong.
    """
    if raw is None:
        return DocumentFilter()
    if not isinstance(raw, Mapping):
        raise InvalidFilter("a document filter must be an object of field -> condition")
    conditions: list[_Condition] = []
    for key, want in raw.items():
        path = _path(key)
        if _is_operators(want):
            for op, value in want.items():
                conditions.append(_Condition(path, op, value))
        else:
            _check_match(want)
            conditions.append(_Condition(path, "match", want))
    return DocumentFilter(tuple(conditions))


def _path(key: object) -> tuple[str, ...]:
    if not isinstance(key, str) or not 0 < len(key) <= _MAX_PATH or "\x00" in key:
        raise InvalidFilter(f"invalid filter key {key!r:.60}: a field name of 1-{_MAX_PATH} "
                            "characters")  # fmt: skip
    parts = tuple(key.split("."))
    if not all(parts):
        raise InvalidFilter(f"invalid filter key {key!r:.60}: empty field name between dots")
    return parts


def _is_operators(want: object) -> bool:
    """Whether *want* is an object of operators (checked), rather than an exact match."""
    if not isinstance(want, Mapping) or not any(str(k).startswith("$") for k in want):
        return False
    for op, value in want.items():
        if op not in _OPERATORS:
            raise InvalidFilter(
                f"unsupported filter operator {op!r:.40}: use one of {', '.join(_OPERATORS)}, "
                "or a value for an exact match"
            )
        if op in _ORDERED and (isinstance(value, bool) or not isinstance(value, int | float | str)):
            raise InvalidFilter(f"{op} compares with a number or a string, got {value!r:.40}")
        if op not in _ORDERED:
            _check_match(value, exact=True)
    return True


def _check_match(want: object, *, exact: bool = False) -> None:
    """Check an exact-match value: JSON data, whose objects may hold operators (not under
    ``$eq``/``$ne``, which compare whole values)."""
    if want is None or isinstance(want, str | bool | int):
        return
    if isinstance(want, float):
        if not math.isfinite(want):
            raise InvalidFilter("a filter value must be finite")
        return
    if isinstance(want, list | tuple):
        for item in want:
            _check_match(item, exact=exact)
        return
    if isinstance(want, Mapping):
        if not exact and _is_operators(want):
            return
        for key, item in want.items():
            if not isinstance(key, str):
                raise InvalidFilter(f"filter object keys must be strings, got {key!r:.40}")
            _check_match(item, exact=exact)
        return
    raise InvalidFilter(f"a filter value must be JSON, got {type(want).__name__}")


def _lookup(value: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if not isinstance(value, Mapping):
            return _MISSING
        value = value.get(part, _MISSING)
    return value


def _holds(found: Any, op: str, want: Any) -> bool:
    if op == "match":
        return _matches(found, want)
    if op == "$eq":
        return _equal(found, want)
    if op == "$ne":
        return not _equal(found, want)
    if isinstance(found, bool) or isinstance(want, bool):
        return False
    number = isinstance(found, int | float) and isinstance(want, int | float)
    if not number and not (isinstance(found, str) and isinstance(want, str)):
        return False
    if op == "$gt":
        return bool(found > want)
    if op == "$gte":
        return bool(found >= want)
    if op == "$lt":
        return bool(found < want)
    return bool(found <= want)


def _matches(found: Any, want: Any) -> bool:
    """The exact-match shorthand: objects match field by field (other fields free), lists
    element by element, scalars by JSON equality; an object of operators applies them."""
    if isinstance(want, Mapping):
        if any(str(k).startswith("$") for k in want):
            return all(_holds(found, op, value) for op, value in want.items())
        if not isinstance(found, Mapping):
            return False
        return all(_matches(found.get(k, _MISSING), v) for k, v in want.items())
    if isinstance(want, list | tuple):
        return (
            isinstance(found, list | tuple)
            and len(found) == len(want)
            and all(_matches(f, w) for f, w in zip(found, want, strict=True))
        )
    return _equal(found, want)


def _equal(a: Any, b: Any) -> bool:
    """JSON equality: true is not 1, 1 is 1.0, lists and objects compare whole."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@dataclass(frozen=True, slots=True)
class DocumentQuery:
    """Which documents a listing or search reads: those in *prefix* (or below it) that
    *filter* admits, page by page. With *live_at*, documents expired by then are left out
    (they stay until a sweep or the purge removes them)."""

    prefix: Namespace = ()
    filter: DocumentFilter = field(default_factory=DocumentFilter)
    limit: int = 10
    offset: int = 0
    live_at: datetime | None = None

    def __post_init__(self) -> None:
        check_namespace(self.prefix, what="namespace prefix", empty=True)
        check_page(self.limit, self.offset)


# -- listing namespaces ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NamespaceQuery:
    """Which namespaces to list: those every condition matches, cut to *max_depth* labels
    (then each listed once), sorted, then paged. A condition is a prefix or a suffix pattern
    whose ``"*"`` labels match any one label."""

    conditions: tuple[tuple[Literal["prefix", "suffix"], Namespace], ...] = ()
    max_depth: int | None = None
    limit: int = 100
    offset: int = 0
    live_at: datetime | None = None

    def __init__(
        self,
        *,
        prefix: Namespace | None = None,
        suffix: Namespace | None = None,
        conditions: Iterable[tuple[Literal["prefix", "suffix"], Namespace]] = (),
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
        live_at: datetime | None = None,
    ) -> None:
        found = list(conditions)
        if prefix is not None:
            found.append(("prefix", prefix))
        if suffix is not None:
            found.append(("suffix", suffix))
        checked = []
        for kind, pattern in found:
            if kind not in ("prefix", "suffix"):
                raise InvalidInput(
                    f"a namespace condition is 'prefix' or 'suffix', not {kind!r:.20}"
                )
            checked.append((kind, check_namespace(pattern, what=f"{kind} pattern", empty=True)))
        if max_depth is not None and (
            isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 1
        ):
            raise InvalidInput(f"max_depth must be an integer >= 1, got {max_depth!r:.20}")
        check_page(limit, offset)
        object.__setattr__(self, "conditions", tuple(checked))
        object.__setattr__(self, "max_depth", max_depth)
        object.__setattr__(self, "limit", limit)
        object.__setattr__(self, "offset", offset)
        object.__setattr__(self, "live_at", live_at)

    def literal_prefix(self) -> Namespace:
        """The labels every listed namespace starts with (a prefix pattern's labels before
        its first wildcard): the stored rows to read, before the patterns are matched."""
        best: Namespace = ()
        for kind, pattern in self.conditions:
            if kind == "prefix":
                head = pattern[: pattern.index("*")] if "*" in pattern else pattern
                best = max(best, head, key=len)
        return best


def _fits(namespace: Namespace, kind: str, pattern: Namespace) -> bool:
    if len(namespace) < len(pattern):
        return False
    part = (
        namespace[: len(pattern)]
        if kind == "prefix"
        else namespace[len(namespace) - len(pattern) :]
    )
    return all(p == "*" or p == label for p, label in zip(pattern, part, strict=True))


def list_namespaces(namespaces: Iterable[Namespace], query: NamespaceQuery) -> list[Namespace]:
    """The page of *namespaces* (the stored ones, each holding a document) that *query*
    lists."""
    kept = {
        ns if query.max_depth is None else ns[: query.max_depth]
        for ns in namespaces
        if all(_fits(ns, kind, pattern) for kind, pattern in query.conditions)
    }
    return sorted(kept)[query.offset : query.offset + query.limit]
