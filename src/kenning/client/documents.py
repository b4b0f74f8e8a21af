"""``client.documents``: a served kenning's namespaced documents, with the methods of
:class:`kenning.api.DocumentsAPI` (what :class:`~kenning.integrations.langgraph.KenningStore`
uses), and ``async_client.documents``, its awaitable twin.

Times are the server's clock; texts and queries sent without vectors are embedded with the
server's model. The tenant is the API key's: a scope naming another tenant is refused before
anything is sent (:class:`~kenning.errors.InvalidScope`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from kenning.api import DocumentsAPI
from kenning.client import document_calls as calls
from kenning.client.document_calls import Vector
from kenning.client.longterm import AsyncRuns, Part, Runs
from kenning.records import Scope
from kenning.records.core import ModelInfo
from kenning.records.documents import Document, DocumentWrite, Namespace, ScoredDocument

__all__ = ["AsyncDocuments", "Documents"]

Conditions = Iterable[tuple[Literal["prefix", "suffix"], Namespace]]


class Documents(Part[Runs], DocumentsAPI):
    """``client.documents``: the served tenant's namespaced documents."""

    def embedding(self, scope: Scope) -> ModelInfo | None:
        return self._c._run(calls.embedding(scope))

    def put(
        self, scope: Scope, writes: Sequence[DocumentWrite], *, model: str | None = None
    ) -> None:
        call = calls.put(scope, writes, model)
        if call is not None:
            self._c._run(call)

    def get(
        self, scope: Scope, keys: Sequence[tuple[Namespace, str]], *, refresh: bool = False,
        omit_expired: bool = False,
    ) -> list[Document | None]:  # fmt: skip
        call = calls.get(scope, keys, refresh=refresh, omit_expired=omit_expired)
        return self._c._run(call) if keys else []

    def search(
        self, scope: Scope, prefix: Namespace = (), *, filter: Mapping[str, Any] | None = None,
        limit: int = 10, offset: int = 0, query: str | None = None, vector: Vector | None = None,
        model: str | None = None, refresh: bool = False, omit_expired: bool = False,
    ) -> list[ScoredDocument]:  # fmt: skip
        return self._c._run(calls.search(
            scope, prefix, filter=filter, limit=limit, offset=offset, query=query, vector=vector,
            model=model, refresh=refresh, omit_expired=omit_expired,
        ))  # fmt: skip

    def namespaces(
        self, scope: Scope, *, conditions: Conditions = (), max_depth: int | None = None,
        limit: int = 100, offset: int = 0, omit_expired: bool = False,
    ) -> list[Namespace]:  # fmt: skip
        return self._c._run(calls.namespaces(
            scope, conditions=conditions, max_depth=max_depth, limit=limit, offset=offset,
            omit_expired=omit_expired,
        ))  # fmt: skip

    def sweep(self, tenant: str) -> int:
        return self._c._run(calls.sweep(tenant))


class AsyncDocuments(Part[AsyncRuns]):
    """``async_client.documents``: the awaitable twin of ``client.documents``."""

    async def embedding(self, scope: Scope) -> ModelInfo | None:
        return await self._c._run(calls.embedding(scope))

    async def put(
        self, scope: Scope, writes: Sequence[DocumentWrite], *, model: str | None = None
    ) -> None:
        call = calls.put(scope, writes, model)
        if call is not None:
            await self._c._run(call)

    async def get(
        self, scope: Scope, keys: Sequence[tuple[Namespace, str]], *, refresh: bool = False,
        omit_expired: bool = False,
    ) -> list[Document | None]:  # fmt: skip
        call = calls.get(scope, keys, refresh=refresh, omit_expired=omit_expired)
        return await self._c._run(call) if keys else []

    async def search(
        self, scope: Scope, prefix: Namespace = (), *, filter: Mapping[str, Any] | None = None,
        limit: int = 10, offset: int = 0, query: str | None = None, vector: Vector | None = None,
        model: str | None = None, refresh: bool = False, omit_expired: bool = False,
    ) -> list[ScoredDocument]:  # fmt: skip
        return await self._c._run(calls.search(
            scope, prefix, filter=filter, limit=limit, offset=offset, query=query, vector=vector,
            model=model, refresh=refresh, omit_expired=omit_expired,
        ))  # fmt: skip

    async def namespaces(
        self, scope: Scope, *, conditions: Conditions = (), max_depth: int | None = None,
        limit: int = 100, offset: int = 0, omit_expired: bool = False,
    ) -> list[Namespace]:  # fmt: skip
        return await self._c._run(calls.namespaces(
            scope, conditions=conditions, max_depth=max_depth, limit=limit, offset=offset,
            omit_expired=omit_expired,
        ))  # fmt: skip

    async def sweep(self, tenant: str) -> int:
        return await self._c._run(calls.sweep(tenant))
