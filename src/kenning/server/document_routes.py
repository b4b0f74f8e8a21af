"""The namespaced document routes of ``/v1/documents``: what LangGraph's store
(:class:`~kenning.integrations.langgraph.KenningStore`) does through ``kenning.Client``.

Each route is :class:`kenning.search.documents.Documents` (the embedded API) in the key's
tenant, or one of its users with ``user``: times are the server's clock, and texts and queries
sent without vectors are embedded with the server's model. Writes need the ``write`` scope;
reads (``get``, ``search``, ``namespaces``, sent by ``POST`` for their bodies) the ``read``
scope, and may restart the time to live of what they read (``refresh``), as a LangGraph read
does. A body that fails a check of the records layer is refused with 422 and nothing is stored.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from fastapi import APIRouter, Request

from kenning.records import KeyScope, Scope
from kenning.search.documents import Documents, float32_vectors
from kenning.server.gate import READS
from kenning.server.schemas import (
    DocumentKeysRequest,
    DocumentSearchRequest,
    DocumentWriteIn,
    DocumentWritesRequest,
    NamespacesRequest,
)
from kenning.server.state import authorize, scope_in, service
from kenning.store.records import DocumentWrite, IndexText
from kenning.wire import document_json, scored_json

__all__ = ["router"]

router = APIRouter(prefix="/v1/documents", tags=["documents"])

Json = dict[str, Any]


def _documents(request: Request) -> Documents:
    memory = service(request).memory
    return Documents(memory.documents, embedder=memory.embedder, fusion=memory.settings.fusion)


def _scope(request: Request, need: KeyScope, user: str | None) -> Scope:
    return scope_in(authorize(request, need).tenant, user, None, what="documents")


def _write(write: DocumentWriteIn) -> DocumentWrite:
    texts = tuple(IndexText(t.path, t.text, None if t.vector is None else _vector(t.vector))
                  for t in write.texts)  # fmt: skip
    return DocumentWrite(tuple(write.namespace), write.key, write.value, user=write.user,
                         texts=texts, ttl_minutes=write.ttl_minutes)  # fmt: skip


def _vector(values: list[float]) -> npt.NDArray[np.float32]:
    return float32_vectors(values, "a vector")


@router.get("/model", summary="The model the server embeds documents and queries with")
def model(request: Request) -> Json:
    scope = _scope(request, KeyScope.READ, None)
    found = _documents(request).embedding(scope)
    if found is None:
        return {"model": None, "dims": None}
    return {"model": found.model_id, "dims": found.dimension}


@router.post("", summary="Store and delete documents, in one transaction")
def put(request: Request, body: DocumentWritesRequest) -> Json:
    """Apply the writes in order, atomically (a null value deletes; replacing a document keeps
    its ``created_at``). With ``model``, every text carries its vector of that model (stored
    at unit length under ``name/dims``); without, the server embeds the texts with its own
    model. Vectors of another model than the tenant's stored ones are refused (422)."""
    scope = _scope(request, KeyScope.WRITE, body.user)
    writes = [_write(w) for w in body.writes]
    _documents(request).put(scope, writes, model=body.model)
    return {"written": len(writes)}


@router.post("/get", summary="Documents by namespace and key", openapi_extra=READS)
def get(request: Request, body: DocumentKeysRequest) -> Json:
    """The document under each key, null where there is none."""
    scope = _scope(request, KeyScope.READ, body.user)
    keys = [(tuple(k.namespace), k.key) for k in body.keys]
    found = _documents(request).get(
        scope, keys, refresh=body.refresh, omit_expired=body.omit_expired
    )
    return {"documents": [None if doc is None else document_json(doc) for doc in found]}


@router.post("/search", summary="Filter or rank documents", openapi_extra=READS)
def search(request: Request, body: DocumentSearchRequest) -> Json:
    """A page of the documents under ``prefix`` that ``filter`` admits (``$eq $ne $gt $gte
    $lt $lte``, or a value to match); with ``query``, ranked by kenning's hybrid search, each
    with its score."""
    scope = _scope(request, KeyScope.READ, body.user)
    hits = _documents(request).search(
        scope, tuple(body.prefix), filter=body.filter, limit=body.limit, offset=body.offset,
        query=body.query, vector=None if body.vector is None else _vector(body.vector),
        model=body.model, refresh=body.refresh, omit_expired=body.omit_expired,
    )  # fmt: skip
    return {"results": [scored_json(hit) for hit in hits]}


@router.post("/namespaces", summary="List the namespaces holding documents", openapi_extra=READS)
def namespaces(request: Request, body: NamespacesRequest) -> Json:
    scope = _scope(request, KeyScope.READ, body.user)
    found = _documents(request).namespaces(
        scope, conditions=[(c.match_type, tuple(c.path)) for c in body.conditions],
        max_depth=body.max_depth, limit=body.limit, offset=body.offset,
        omit_expired=body.omit_expired,
    )  # fmt: skip
    return {"namespaces": [list(ns) for ns in found]}


@router.post("/sweep", summary="Delete the tenant's expired documents")
def sweep(request: Request) -> Json:
    """Delete the documents whose time to live has run out, except what a legal hold
    covers."""
    tenant = authorize(request, KeyScope.WRITE).tenant
    return {"swept": _documents(request).sweep(tenant)}
