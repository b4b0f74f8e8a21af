"""kenning: memory for LLM agents.

Keeps an agent's working context inside a token budget without losing what matters, and
remembers across turns and sessions: an episodic record, pinned structured facts, summaries,
long-term facts and hybrid retrieval. Embedded on one SQLite file with a local embedding model.

Importing kenning does nothing but define names: no model load, no environment reads, no
network, no logging setup. The service clients (``Client``, ``AsyncClient``) are imported on
first use: they bring an HTTP stack that embedded use and the command line do not need.
"""

from typing import TYPE_CHECKING

from kenning.compaction.body import SummaryBody, SummaryItem, SummaryResult
from kenning.compaction.extractive import ExtractiveSummarizer
from kenning.compaction.llm import LLMSettings, LLMSummarizer
from kenning.compaction.plan import CompactionSettings
from kenning.compaction.summarizer import Summarizer, SummaryRequest
from kenning.context.actions import Action, ActionLog, Outcome
from kenning.context.assembler import ContextSettings
from kenning.context.service import WorkingContext
from kenning.context.window import (
    ContextWindow,
    Pressure,
    PressureThresholds,
    Price,
    Tier,
    TierAccount,
    TierCaps,
)
from kenning.embed.base import Embedder
from kenning.errors import (
    BudgetError,
    ConnectionFailed,
    ContentTooLarge,
    Forbidden,
    InternalError,
    InvalidArchive,
    InvalidFilter,
    InvalidInput,
    InvalidScope,
    KenningError,
    LegalHoldActive,
    ModelMismatch,
    ModelUnavailable,
    NotFound,
    Overloaded,
    QuotaExceeded,
    RateLimited,
    RequestTimeout,
    RequestTooLarge,
    ScopeConflict,
    StaleWrite,
    StorageFull,
    StoreError,
    StoreUnavailable,
    ToolRefused,
    Unauthorized,
    Unsupported,
)
from kenning.longterm.procedures import Procedures
from kenning.longterm.profile import Profile
from kenning.longterm.retention import Retention
from kenning.longterm.service import LongTermMemory, LongTermSettings
from kenning.memory import Memory
from kenning.pins.extract import ExtractionRules, IdPattern
from kenning.records import (
    AuditEntry,
    Consent,
    Decision,
    Event,
    Fact,
    FactCategory,
    FactSource,
    FactStatus,
    Finding,
    Hypothesis,
    HypothesisChange,
    HypothesisStatus,
    LegalHold,
    NewEvent,
    Pin,
    PinDraft,
    PinKind,
    PinStatus,
    Procedure,
    ProcedureStatus,
    Quota,
    Role,
    Scope,
    Summary,
    TaskState,
    TaskStatus,
    TaskUpdate,
    TenantPolicy,
    UserSettings,
)
from kenning.search.fusion import FusionConfig
from kenning.search.hits import Hit, SearchResults
from kenning.settings import Settings
from kenning.store.ann import AnnConfig
from kenning.store.protocol import (
    ContextState,
    DocumentStore,
    EventLog,
    FactStore,
    JobQueue,
    PolicyStore,
    ProcedureStore,
    SearchIndex,
    Store,
)
from kenning.store.sqlite.store import SQLiteStore
from kenning.tokens.base import Tokenizer
from kenning.version import __version__

if TYPE_CHECKING:
    from kenning.client import AsyncClient, Client

__all__ = [
    "Action",
    "ActionLog",
    "AnnConfig",
    "AsyncClient",
    "AuditEntry",
    "BudgetError",
    "Client",
    "CompactionSettings",
    "ConnectionFailed",
    "Consent",
    "ContentTooLarge",
    "ContextSettings",
    "ContextState",
    "ContextWindow",
    "Decision",
    "DocumentStore",
    "Embedder",
    "Event",
    "EventLog",
    "ExtractionRules",
    "ExtractiveSummarizer",
    "Fact",
    "FactCategory",
    "FactSource",
    "FactStatus",
    "FactStore",
    "Finding",
    "Forbidden",
    "FusionConfig",
    "Hit",
    "Hypothesis",
    "HypothesisChange",
    "HypothesisStatus",
    "IdPattern",
    "InternalError",
    "InvalidArchive",
    "InvalidFilter",
    "InvalidInput",
    "InvalidScope",
    "JobQueue",
    "KenningError",
    "LLMSettings",
    "LLMSummarizer",
    "LegalHold",
    "LegalHoldActive",
    "LongTermMemory",
    "LongTermSettings",
    "Memory",
    "ModelMismatch",
    "ModelUnavailable",
    "NewEvent",
    "NotFound",
    "Outcome",
    "Overloaded",
    "Pin",
    "PinDraft",
    "PinKind",
    "PinStatus",
    "PolicyStore",
    "Pressure",
    "PressureThresholds",
    "Price",
    "Procedure",
    "ProcedureStatus",
    "ProcedureStore",
    "Procedures",
    "Profile",
    "Quota",
    "QuotaExceeded",
    "RateLimited",
    "RequestTimeout",
    "RequestTooLarge",
    "Retention",
    "Role",
    "SQLiteStore",
    "Scope",
    "ScopeConflict",
    "SearchIndex",
    "SearchResults",
    "Settings",
    "StaleWrite",
    "StorageFull",
    "Store",
    "StoreError",
    "StoreUnavailable",
    "Summarizer",
    "Summary",
    "SummaryBody",
    "SummaryItem",
    "SummaryRequest",
    "SummaryResult",
    "TaskState",
    "TaskStatus",
    "TaskUpdate",
    "TenantPolicy",
    "Tier",
    "TierAccount",
    "TierCaps",
    "Tokenizer",
    "ToolRefused",
    "Unauthorized",
    "Unsupported",
    "UserSettings",
    "WorkingContext",
    "__version__",
]


def __getattr__(name: str) -> object:
    if name in ("AsyncClient", "Client"):
        from kenning import client

        return getattr(client, name)
    raise AttributeError(f"module 'kenning' has no attribute {name!r}")
