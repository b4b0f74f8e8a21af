"""What ``client.documents`` sends and how its answers are read: pure, shared by the sync and
async clients (:mod:`kenning.client.documents`), one call per route of ``/v1/documents``.

What can be checked before sending is checked here with the rules the server applies (the
records' own checks: namespaces, keys, values, filters, pages), so a bad argument raises the
same error as embedded without a round trip. The server checks everything again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from kenning.client.calls import Call
from kenning.errors import InvalidInput, InvalidScope
from kenning.records import Scope
from kenning.records.core import ModelInfo
from kenning.records.documents import (
    Document,
    DocumentWrite,
    Namespace,
    NamespaceQuery,
    ScoredDocument,
    check_key,
    check_model,
    check_namespace,
    check_page,
    parse_document_filter,
)
from kenning.wire import document_from_json, scored_from_json

__all__ = ["embedding", "get", "namespaces", "put", "search", "sweep"]

_PATH = "/v1/documents"
Vector = Sequence[float] | npt.NDArray[np.float32]


def _scope(scope: Scope) -> Scope:
    if not isinstance(scope, Scope):
        raise InvalidInput("scope must be a kenning.Scope")
    if scope.session is not None:
        raise InvalidScope("documents belong to a tenant or a user, not to a session")
    return scope


def _base(scope: Scope) -> dict[str, Any]:
    return {} if scope.user is None else {"user": scope.user}


def _floats(vector: Vector) -> list[float]:
    """*vector* as JSON numbers (the server checks their count and scales them to unit
    length)."""
    try:
        values = np.asarray(vector, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInput("a vector is a list of numbers") from exc
    if values.ndim != 1:
        raise InvalidInput("a vector is a flat list of numbers")
    return [float(x) for x in values]


def embedding(scope: Scope) -> Call[ModelInfo | None]:
    def read(data: Any) -> ModelInfo | None:
        return None if data["model"] is None else ModelInfo(data["model"], int(data["dims"]))

    return Call("GET", f"{_PATH}/model", read, scope=Scope(_scope(scope).tenant))


def _write_json(write: DocumentWrite) -> dict[str, Any]:
    if not isinstance(write, DocumentWrite):
        raise InvalidInput("writes must be DocumentWrite records")
    texts = [
        {"path": t.path, "text": t.text, "vector": None if t.vector is None else _floats(t.vector)}
        for t in write.texts
    ]
    body = {"namespace": list(write.namespace), "key": write.key, "value": write.value,
            "user": write.user, "texts": texts, "ttl_minutes": write.ttl_minutes}  # fmt: skip
    return {k: v for k, v in body.items() if v is not None or k == "value"}


def put(scope: Scope, writes: Sequence[DocumentWrite], model: str | None) -> Call[None] | None:
    """The call storing *writes* (None: there are none, nothing to send)."""
    body = _base(_scope(scope))
    body["writes"] = [_write_json(w) for w in writes]
    if model is not None:
        body["model"] = check_model(model)
    if not body["writes"]:
        return None
    return Call("POST", _PATH, lambda _: None, json=body, scope=scope)


def get(
    scope: Scope, keys: Sequence[tuple[Namespace, str]], *, refresh: bool, omit_expired: bool
) -> Call[list[Document | None]]:
    body = _base(_scope(scope))
    body["keys"] = [{"namespace": list(check_namespace(ns)), "key": check_key(key)}
                    for ns, key in keys]  # fmt: skip
    body.update(refresh=bool(refresh), omit_expired=bool(omit_expired))

    def read(data: Any) -> list[Document | None]:
        return [None if d is None else document_from_json(d) for d in data["documents"]]

    return Call("POST", f"{_PATH}/get", read, json=body, scope=scope)


def search(
    scope: Scope, prefix: Namespace = (), *, filter: Mapping[str, Any] | None = None,
    limit: int = 10, offset: int = 0, query: str | None = None, vector: Vector | None = None,
    model: str | None = None, refresh: bool = False, omit_expired: bool = False,
) -> Call[list[ScoredDocument]]:  # fmt: skip
    body = _base(_scope(scope))
    parse_document_filter(filter)
    check_page(limit, offset)
    if (vector is None) != (model is None):
        raise InvalidInput("a query vector and its model are given together, or neither")
    body.update(
        prefix=list(check_namespace(prefix, what="namespace prefix", empty=True)),
        filter=None if filter is None else dict(filter), limit=limit, offset=offset,
        query=query, refresh=bool(refresh), omit_expired=bool(omit_expired),
    )  # fmt: skip
    if vector is not None and model is not None:
        body.update(vector=_floats(vector), model=check_model(model))

    def read(data: Any) -> list[ScoredDocument]:
        return [scored_from_json(hit) for hit in data["results"]]

    return Call("POST", f"{_PATH}/search", read, json=body, scope=scope)


def namespaces(
    scope: Scope, *, conditions: Iterable[tuple[Literal["prefix", "suffix"], Namespace]] = (),
    max_depth: int | None = None, limit: int = 100, offset: int = 0, omit_expired: bool = False,
) -> Call[list[Namespace]]:  # fmt: skip
    checked = NamespaceQuery(conditions=conditions, max_depth=max_depth, limit=limit,
                             offset=offset)  # fmt: skip
    body = _base(_scope(scope))
    body.update(
        conditions=[{"match_type": kind, "path": list(path)} for kind, path in checked.conditions],
        max_depth=max_depth, limit=limit, offset=offset, omit_expired=bool(omit_expired),
    )  # fmt: skip

    def read(data: Any) -> list[Namespace]:
        return [tuple(ns) for ns in data["namespaces"]]

    return Call("POST", f"{_PATH}/namespaces", read, json=body, scope=scope)


def sweep(tenant: str) -> Call[int]:
    return Call("POST", f"{_PATH}/sweep", lambda d: int(d["swept"]), scope=Scope(tenant))
