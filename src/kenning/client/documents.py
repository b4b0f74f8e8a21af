"""``client.documents``: a served kenning's namespaced documents, with the methods of
:class:`kenning.api.DocumentsAPI` (what :class:`~kenning.integrations.langgraph.KenningStore`
uses), and ``async_client.documents``, its awaitable twin.

Times are the server's clock; texts and queries sent without vectors are embedded with the
server's model. The tenant is the API key's: a scope naming another tenant is refused before
anything is sent (:class:`~kenning.errors.InvalidScope`).
"""

from __future__ import annotations

from collections.abc import Sequence

from kenning.api import DocumentsAPI
from kenning.client import document_calls as calls
from kenning.client.part import AsyncRuns, Part, R, Runs, Sent
from kenning.records import Scope
from kenning.records.documents import Document, DocumentWrite, Namespace

__all__ = ["AsyncDocuments", "Documents"]


class _DocumentCalls(Part[R]):
    embedding = Sent(calls.embedding)
    search = Sent(calls.search)
    namespaces = Sent(calls.namespaces)
    sweep = Sent(calls.sweep)


class Documents(_DocumentCalls[Runs], DocumentsAPI):
    """``client.documents``: the served tenant's namespaced documents."""

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


class AsyncDocuments(_DocumentCalls[AsyncRuns]):
    """``async_client.documents``: the awaitable twin of ``client.documents``."""

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
