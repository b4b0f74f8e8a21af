"""kenning: memory for LLM agents.

Keeps an agent's working context inside a token budget without losing what matters, and
remembers across turns and sessions: an episodic record, pinned structured facts, summaries,
long-term facts and hybrid retrieval. Embedded on one SQLite file with a local embedding model.

Importing kenning does nothing but define names: no model load, no environment reads, no
network, no logging setup.
"""

from kenning.embed.base import Embedder
from kenning.errors import (
    BudgetError,
    ContentTooLarge,
    InvalidFilter,
    InvalidInput,
    InvalidScope,
    KenningError,
    ModelMismatch,
    ModelUnavailable,
    NotFound,
    ScopeConflict,
    StoreError,
    Unsupported,
)
from kenning.memory import Memory
from kenning.records import (
    Event,
    Fact,
    FactSource,
    NewEvent,
    Pin,
    PinKind,
    PinStatus,
    Procedure,
    Role,
    Scope,
    Summary,
)
from kenning.search.fusion import FusionConfig
from kenning.search.hits import Hit, SearchResults
from kenning.settings import Settings
from kenning.store.ann import AnnConfig
from kenning.store.protocol import Capabilities, Store
from kenning.store.sqlite.store import SQLiteStore
from kenning.tokens.base import Tokenizer

__version__ = "0.1.0"

__all__ = [
    "AnnConfig",
    "BudgetError",
    "Capabilities",
    "ContentTooLarge",
    "Embedder",
    "Event",
    "Fact",
    "FactSource",
    "FusionConfig",
    "Hit",
    "InvalidFilter",
    "InvalidInput",
    "InvalidScope",
    "KenningError",
    "Memory",
    "ModelMismatch",
    "ModelUnavailable",
    "NewEvent",
    "NotFound",
    "Pin",
    "PinKind",
    "PinStatus",
    "Procedure",
    "Role",
    "SQLiteStore",
    "Scope",
    "ScopeConflict",
    "SearchResults",
    "Settings",
    "Store",
    "StoreError",
    "Summary",
    "Tokenizer",
    "Unsupported",
    "__version__",
]
