"""LangGraph's long-term store on kenning: :class:`KenningStore`, a ``BaseStore`` whose items
are kenning's namespaced documents (``pip install 'kenning[langgraph]'``).

What maps to what (``docs/integrations.md``): a namespace lives inside one kenning tenant;
with ``user_at`` one of its labels names the user who owns the item, so erasing the user
erases it; ``search(query=...)`` ranks by kenning's hybrid search (BM25 and cosine, fused);
TTL is kenning's document expiry, which the retention purge and a legal hold also govern.
"""

from kenning.integrations.langgraph.store import KenningStore

__all__ = ["KenningStore"]
