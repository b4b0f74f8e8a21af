"""Request bodies of the REST API (pydantic models, so ``/docs`` and the OpenAPI spec show them).

They check shape and size at the door (422 with the field's path); the values' meaning is
checked once more by :class:`kenning.Memory`, the one place every caller goes through. No body
carries a tenant: the tenant is the API key's.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from kenning.records import check_json

__all__ = [
    "AppendRequest",
    "AssembleRequest",
    "CandidateRequest",
    "ClosePinRequest",
    "CompactRequest",
    "ConsentRequest",
    "DocumentKeysRequest",
    "DocumentSearchRequest",
    "DocumentWriteIn",
    "DocumentWritesRequest",
    "EventIn",
    "ForgetRequest",
    "HoldRequest",
    "KeyRequest",
    "MatchRequest",
    "NamespacesRequest",
    "PinRequest",
    "PolicyRequest",
    "ProcedureRequest",
    "PromoteRequest",
    "PurgeRequest",
    "ReleaseRequest",
    "RememberRequest",
    "RetrieveFrom",
    "SearchRequest",
    "TaskRequest",
    "ToolCallRequest",
]

_ID_PATTERN = r"^[A-Za-z0-9._:@-]+$"


def _id() -> Any:
    return Field(min_length=1, max_length=128, pattern=_ID_PATTERN)


def _opt_id() -> Any:
    return Field(default=None, min_length=1, max_length=128, pattern=_ID_PATTERN)


Scalar = str | int | float | bool | None


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Request(_Body):
    """A whole request body: its text and numbers are ones every backend stores (no NUL, no
    lone surrogate, finite), checked before any field is read."""

    @model_validator(mode="before")
    @classmethod
    def _storable(cls, data: Any) -> Any:
        # Nesting is limited per field (JsonValue); the walk itself has no depth to exceed.
        check_json(data, "the request body", max_depth=1 << 30)
        return data


def _json_value(value: Any) -> Any:
    check_json(value, "the field")
    return value


#: Any JSON a store keeps as it is (a tool's arguments or result): nested at most
#: :data:`kenning.records.MAX_JSON_DEPTH` levels, refused at the door otherwise.
JsonValue = Annotated[Any, AfterValidator(_json_value)]


class EventIn(_Body):
    """One event to append (the fields of a ``kenning ingest`` line, without the scope)."""

    role: Literal["user", "assistant", "tool", "system"]
    content: str = Field(
        default="", max_length=2_000_000,
        description="the text; a tool event may leave it out and give tool_result",
    )  # fmt: skip
    at: str | float | None = Field(default=None, description="ISO-8601 or epoch seconds")
    id: str | None = Field(
        default=None, min_length=1, max_length=256,
        description="your id of the event: a repeated one is skipped",
    )  # fmt: skip
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=256)
    tool_name: str | None = Field(default=None, max_length=256)
    tool_args: JsonValue = None
    tool_result: JsonValue = None
    metadata: dict[str, Scalar] = Field(default_factory=dict, max_length=64)
    tags: list[str] = Field(default_factory=list, max_length=64)
    version: str | None = Field(default=None, max_length=256)


class AppendRequest(_Request):
    user: str = _id()
    events: list[EventIn] = Field(min_length=1, max_length=1_000)


class SearchRequest(_Request):
    query: str = Field(min_length=1, max_length=4_000)
    user: str | None = _opt_id()
    session: str | None = _opt_id()
    k: int = Field(default=10, ge=1, le=1_000)
    min_score: float = Field(default=0.0, ge=-1e6, le=1e6)
    filters: dict[str, Scalar] | None = Field(default=None, max_length=32)
    kinds: list[str] | None = Field(default=None, max_length=8)
    since: str | float | None = None
    until: str | float | None = None
    now: str | None = Field(default=None, max_length=64)


class RetrieveFrom(_Body):
    user: str | None = _opt_id()
    session: str | None = _opt_id()


class AssembleRequest(_Request):
    user: str = _id()
    budget_tokens: int = Field(ge=1, le=10_000_000)
    model: str = Field(min_length=1, max_length=128)
    reserve_output_tokens: int = Field(default=0, ge=0, le=10_000_000)
    system: str = Field(min_length=1, max_length=1_000_000)
    goal: str | None = Field(default=None, max_length=100_000)
    tools: list[dict[str, Any]] | None = Field(default=None, max_length=512)
    query: str | None = Field(default=None, min_length=1, max_length=100_000)
    retrieve_from: RetrieveFrom | None = None


class PinRequest(_Request):
    """A pin set by the host application (any kind, approvals included)."""

    user: str = _id()
    kind: Literal[
        "entity_id", "amount", "approval", "authorization", "idempotency_key", "human_gate",
        "obligation", "goal", "constraint",
    ]  # fmt: skip
    value: str = Field(min_length=1, max_length=2_000)
    key: str | None = Field(default=None, min_length=1, max_length=256)
    amount: str | float | None = None
    currency: str | None = Field(default=None, min_length=3, max_length=3)
    status: Literal["open", "closed"] = "open"
    source_event_id: str | None = Field(default=None, max_length=128)
    metadata: dict[str, Scalar] = Field(default_factory=dict, max_length=64)


class ClosePinRequest(_Request):
    user: str = _id()
    key: str = Field(min_length=1, max_length=256)


class DecisionIn(_Body):
    text: str = Field(min_length=1, max_length=2_000)
    rationale: str = Field(default="", max_length=2_000)


class TaskRequest(_Request):
    user: str = _id()
    task: str | None = Field(default=None, max_length=2_000)
    subtask: str | None = Field(default=None, max_length=2_000)
    status: Literal["not_started", "in_progress", "blocked", "done"] | None = None
    decisions: list[DecisionIn] = Field(default_factory=list, max_length=100)
    constraints: list[str] = Field(default_factory=list, max_length=100)
    drop_constraints: list[str] = Field(default_factory=list, max_length=100)
    hypotheses: list[HypothesisIn] = Field(default_factory=list, max_length=100)
    findings: list[FindingIn] = Field(default_factory=list, max_length=100)


class HypothesisIn(_Body):
    """A hypothesis to propose, support or reject (a reason is needed to reject, and to
    reopen a rejected one)."""

    text: str = Field(min_length=1, max_length=2_000)
    status: Literal["open", "supported", "rejected"] = "open"
    evidence: list[str] = Field(default_factory=list, max_length=50)
    reason: str = Field(default="", max_length=2_000)
    reopen: bool = False


class FindingIn(_Body):
    """A verified finding and its evidence (event ids, or pin:<key>)."""

    text: str = Field(min_length=1, max_length=2_000)
    evidence: list[str] = Field(default_factory=list, max_length=50)


class CompactRequest(_Request):
    user: str = _id()
    budget_tokens: int = Field(ge=1, le=10_000_000)
    model: str = Field(min_length=1, max_length=128)


class ForgetRequest(_Request):
    """What to erase: a session, a user's data, or (with ``"tenant": true`` and no user) the
    whole tenant; optionally only *ids* or what came *before* a time."""

    tenant: bool = Field(
        default=False,
        description="true to act across the whole tenant: required when no user is given, so "
        "an empty body erases nothing",
    )
    user: str | None = _opt_id()
    session: str | None = _opt_id()
    ids: list[str] | None = Field(default=None, max_length=10_000)
    before: str | float | None = None


class ToolCallRequest(_Request):
    user: str = _id()
    session: str = _id()
    arguments: dict[str, Any] = Field(default_factory=dict)
    share_sessions: bool = Field(
        default=False,
        description="the host lets the agent read the user's other sessions; it does only "
        "if the user's stored consent (share_across_sessions) allows it too",
    )


class KeyRequest(_Request):
    tenant: str = _id()
    scopes: list[Literal["read", "write"]] = Field(default=["read", "write"], min_length=1)
    name: str = Field(default="", max_length=200)


# -- long-term memory ----------------------------------------------------------------------


class RememberRequest(_Request):
    """A fact the user stated or confirmed, remembered in one of their sessions."""

    session: str = _id()
    attribute: str = Field(min_length=1, max_length=200)
    value: str = Field(min_length=1, max_length=200)
    subject: str = Field(default="user", min_length=1, max_length=200)
    qualifier: str = Field(default="", max_length=60)
    category: Literal["general", "health", "finance", "relationship"] = "general"
    source_event_id: str | None = Field(default=None, min_length=1, max_length=128)
    #: Only the session's own facts are reinforced, superseded or returned.
    within_session: bool = False


class PromoteRequest(_Request):
    """A verified finding of a session's task state, promoted to a long-term fact of its
    user; the value defaults to the finding's text."""

    user: str = _id()
    attribute: str = Field(min_length=1, max_length=200)
    value: str | None = Field(default=None, min_length=1, max_length=200)
    subject: str = Field(default="user", min_length=1, max_length=200)
    qualifier: str = Field(default="", max_length=60)
    category: Literal["general", "health", "finance", "relationship"] = "general"


class ConsentRequest(_Request):
    """The user's choices; null (or absent) follows the tenant's policy."""

    share_across_sessions: bool | None = None
    sensitive_facts: bool | None = None


_Tools = Field(max_length=512, description="the tool schemas the playbook is written for")


class ProcedureRequest(_Request):
    user: str | None = _opt_id()
    name: str = Field(min_length=1, max_length=500)
    steps: list[str] = Field(min_length=1, max_length=50)
    tools: list[dict[str, Any]] = _Tools
    description: str = Field(default="", max_length=10_000)
    active: bool = False


class CandidateRequest(_Request):
    user: str = _id()
    name: str = Field(min_length=1, max_length=500)
    tools: list[dict[str, Any]] = _Tools


class MatchRequest(_Request):
    name: str = Field(min_length=1, max_length=500)
    tools: list[dict[str, Any]] = _Tools
    include_drift: bool = False


class PolicyRequest(_Request):
    """A tenant's whole policy (what is absent takes the default)."""

    share_across_sessions: bool = False
    sensitive_facts: bool = False
    # At most ~270 years: a cutoff further back would fall before the calendar's year 1.
    episode_days: float | None = Field(default=None, gt=0, le=100_000)
    fact_days: float | None = Field(default=None, gt=0, le=100_000)
    recent_sessions: int = Field(default=5, ge=0, le=50)
    fact_tools: list[str] = Field(default_factory=list, max_length=200)
    authoritative_tools: list[str] = Field(
        default_factory=list, max_length=200,
        description="tools whose results may grant approval and authorization pins",
    )  # fmt: skip
    file_read_tools: list[str] = Field(
        default_factory=list, max_length=200,
        description="tools that read files: the action log lists the files their calls name",
    )  # fmt: skip
    file_write_tools: list[str] = Field(
        default_factory=list, max_length=200,
        description="tools that write files: the action log lists the files their calls name",
    )  # fmt: skip
    file_path_args: list[str] = Field(
        default_factory=lambda: ["path", "file_path", "filename"], max_length=200,
        description="the arguments of a file tool's call that name its path, first found",
    )  # fmt: skip


class HoldRequest(_Request):
    """A legal hold on the tenant, one user, or one session of a user."""

    user: str | None = _opt_id()
    session: str | None = _opt_id()
    reason: str = Field(min_length=1, max_length=500)


class ReleaseRequest(_Request):
    user: str | None = _opt_id()
    session: str | None = _opt_id()


class PurgeRequest(_Request):
    now: str | float | None = Field(
        default=None, description="purge as of this time (default: now; never later)"
    )


# -- namespaced documents ------------------------------------------------------------------

#: A namespace: its labels (each a non-empty string; kenning checks them once more).
_Namespace = Field(min_length=1, max_length=32)
_Key = Field(max_length=1024)
_Page = Field(default=10, ge=0, le=10_000)
_Vector = Field(default=None, min_length=1, max_length=16_384)
_Model = Field(
    default=None, min_length=1, max_length=256,
    description="the embedding model of the given vectors (stored as name/dims)",
)  # fmt: skip
_Expired = Field(default=False, description="leave out documents whose time to live has run out")
_Refresh = Field(default=False, description="restart the time to live of the documents read")


class IndexTextIn(_Body):
    """A text the document is found by: the JSON path it was read from, and its vector."""

    path: str = Field(min_length=1, max_length=1024)
    text: str = Field(max_length=1_000_000)
    vector: list[float] | None = _Vector


class DocumentWriteIn(_Body):
    """A document to store under (namespace, key), or to delete (value null)."""

    namespace: list[str] = _Namespace
    key: str = _Key
    value: JsonValue = Field(description="a JSON object, or null to delete")
    user: str | None = _opt_id()
    texts: list[IndexTextIn] = Field(default_factory=list, max_length=1_000)
    ttl_minutes: float | None = Field(default=None, gt=0, le=1e9)


class DocumentWritesRequest(_Request):
    """Writes applied in order, in one transaction. With ``model`` every text carries its
    vector of that model; without, the server embeds the texts with its own model."""

    user: str | None = _opt_id()
    writes: list[DocumentWriteIn] = Field(min_length=1, max_length=10_000)
    model: str | None = _Model


class DocumentKey(_Body):
    namespace: list[str] = _Namespace
    key: str = _Key


class DocumentKeysRequest(_Request):
    user: str | None = _opt_id()
    keys: list[DocumentKey] = Field(min_length=1, max_length=10_000)
    refresh: bool = _Refresh
    omit_expired: bool = _Expired


class DocumentSearchRequest(_Request):
    """A page of the documents under ``prefix`` that ``filter`` admits; with ``query``,
    ranked by hybrid search (the query's ``vector`` of ``model``, or the server embeds it)."""

    user: str | None = _opt_id()
    prefix: list[str] = Field(default_factory=list, max_length=32)
    filter: JsonValue = None
    limit: int = _Page
    offset: int = Field(default=0, ge=0, le=10_000)
    query: str | None = Field(default=None, max_length=100_000)
    vector: list[float] | None = _Vector
    model: str | None = _Model
    refresh: bool = _Refresh
    omit_expired: bool = _Expired


class NamespaceCondition(_Body):
    match_type: Literal["prefix", "suffix"]
    path: list[str] = Field(max_length=32, description='labels; "*" matches any one')


class NamespacesRequest(_Request):
    user: str | None = _opt_id()
    conditions: list[NamespaceCondition] = Field(default_factory=list, max_length=16)
    max_depth: int | None = Field(default=None, ge=1, le=32)
    limit: int = Field(default=100, ge=0, le=10_000)
    offset: int = Field(default=0, ge=0, le=10_000)
    omit_expired: bool = _Expired
