"""Explicit configuration, built at the edge (CLI, server, caller) and passed in."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from kenning.checks import check_numbers
from kenning.compaction.plan import CompactionSettings
from kenning.context.assembler import ContextSettings
from kenning.errors import InvalidInput
from kenning.indexing import DEFAULT_UNIT_CHARS
from kenning.longterm.service import LongTermSettings
from kenning.pins.extract import DEFAULT_RULES, ExtractionRules
from kenning.records import DEFAULT_MAX_CONTENT_CHARS
from kenning.search.fusion import FusionConfig
from kenning.search.reader import QueryReader, RuleReader
from kenning.search.rerank import Reranker
from kenning.store.ann import AnnConfig
from kenning.store.replies import DEFAULT_REPLY_WEIGHT

__all__ = ["EmbedText", "Settings"]

EmbedText = Literal["content", "speaker", "speaker_date"]


@dataclass(frozen=True, slots=True)
class Settings:
    """Settings of a :class:`~kenning.Memory`.

    ``embed_text`` chooses what is embedded for an event: the content alone, the content
    prefixed with the speaker (metadata ``speaker``/``name``, else the role), or also with the
    event's date; ``embed_context`` also embeds the end of the preceding turn of the same
    session (see :func:`kenning.indexing.with_context`). ``reply_weight`` indexes a turn that
    answers someone else's question (the turn before it, holding a question mark) with that
    question: its vector is searched as ``normalize(v + reply_weight · v_question)`` and its
    lexical row holds the question's words at half weight (0 turns both off; ignored with
    ``embed_context``, which already embeds the turn before; see :mod:`kenning.store.replies`).
    It applies to stores that :meth:`Memory.open` opens.
    ``max_query_chars`` bounds search input; ``track_access`` records which results were
    returned (the access bonus reads it).
    ``context`` shapes windows (tier caps, pressure thresholds, retrieval), ``compaction`` the
    summaries, and ``pin_rules`` what pins are extracted from events.
    Content is stored whole up to ``max_content_chars``; content longer than twice
    ``chunk_chars`` is indexed as chunks of about ``chunk_chars`` (each with its own lexical row
    and vector) that a search returns as the one event. A shorter record of several sentences
    is embedded sentence by sentence (sentences shorter than ``unit_chars`` join the next) and
    found by its best sentence, while its whole text stays its lexical document; 0 embeds every
    record whole, as ``embed_context`` does (see :func:`kenning.indexing.texts_to_embed`).
    With ``defer_vectors`` (the default), ``add_events`` returns once its events are
    committed and one background writer per memory embeds the texts of many calls together,
    at most ``vector_batch`` a model call; every search first waits for its tenant's pending
    vectors (see :mod:`kenning.vectors`); a batch that needs ``vector_batch`` texts or more
    is embedded before its commit. ``defer_vectors=False`` embeds inside each ``add_events``
    before the commit (the server does: its worker processes cannot wait for each other's
    writer).
    ``longterm`` shapes fact extraction, consolidation and pruning (``memory.facts``).
    ``ann`` decides when a tenant's vectors get an HNSW index (``AnnConfig(enabled=False)``
    keeps vector search exact; ``AnnConfig(min_rows=...)`` moves the threshold; the index needs
    faiss, ``pip install 'kenning[ann]'``). ``reader``
    reads each query before search (the times it names, whether it has several targets; see
    :mod:`kenning.search.reader`). ``rerank_model`` is the re-ranker used when
    re-ranking is on (``FusionConfig(rerank=True)``; off by default); None: the one shipped
    with kenning, read on first use.
    """

    max_content_chars: int = DEFAULT_MAX_CONTENT_CHARS
    chunk_chars: int = 2_000
    unit_chars: int = DEFAULT_UNIT_CHARS
    max_query_chars: int = 4_000
    max_k: int = 1_000
    embed_text: EmbedText = "speaker"
    embed_context: bool = False
    reply_weight: float = DEFAULT_REPLY_WEIGHT
    embed_batch: int = 64
    defer_vectors: bool = True
    vector_batch: int = 16
    fusion: FusionConfig = field(default_factory=FusionConfig)
    track_access: bool = True
    context: ContextSettings = field(default_factory=ContextSettings)
    compaction: CompactionSettings = field(default_factory=CompactionSettings)
    pin_rules: ExtractionRules = DEFAULT_RULES
    ann: AnnConfig = field(default_factory=AnnConfig)
    longterm: LongTermSettings = field(default_factory=LongTermSettings)
    reader: QueryReader = field(default_factory=RuleReader)
    rerank_model: Reranker | None = None

    @property
    def index_reply_weight(self) -> float:
        """The reply weight the store indexes with: none when turns are embedded with the turn
        before them already."""
        return 0.0 if self.embed_context else self.reply_weight

    @property
    def index_unit_chars(self) -> int:
        """The shortest sentence unit records are embedded by: none (0) when turns are
        embedded with the turn before them, as one text."""
        return 0 if self.embed_context else self.unit_chars

    def __post_init__(self) -> None:
        check_numbers(self, "max_content_chars", low=1, high=10_000_000, integer=True)
        check_numbers(self, "chunk_chars", low=200, high=100_000, integer=True)
        check_numbers(self, "unit_chars", low=0, high=self.chunk_chars, integer=True)
        if 0 < self.unit_chars < 10:
            raise InvalidInput("unit_chars must be 0 (off) or between 10 and chunk_chars")
        check_numbers(self, ("max_query_chars", "max_k"), low=1, high=100_000, integer=True)
        if self.embed_text not in ("content", "speaker", "speaker_date"):
            raise InvalidInput("embed_text must be 'content', 'speaker' or 'speaker_date'")
        check_numbers(self, "reply_weight", low=0, high=4)
        check_numbers(self, ("embed_batch", "vector_batch"), low=1, high=4096, integer=True)
        if not isinstance(self.reader, QueryReader):
            raise InvalidInput("reader must have a read(text, now) method (a QueryReader)")
        if self.rerank_model is not None and not isinstance(self.rerank_model, Reranker):
            raise InvalidInput("rerank_model must have depth and order(fused, x) (a Reranker)")
