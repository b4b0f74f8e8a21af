"""What an investigation carries across turns, as part of a session's task state: hypotheses
(open, supported, rejected) and verified findings, each with its evidence. Validated records,
no I/O; the merge rules are in :mod:`kenning.context.task`.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kenning.errors import InvalidInput
from kenning.records.values import check_text, enum_member, one_line

__all__ = [
    "Finding", "Hypothesis", "HypothesisChange", "HypothesisStatus", "evidence_of",
    "finding_id", "hypothesis_id",
]  # fmt: skip

_MAX_TEXT = 2_000
_MAX_EVIDENCE = 50


class HypothesisStatus(enum.StrEnum):
    OPEN = "open"
    SUPPORTED = "supported"
    REJECTED = "rejected"


def _key(text: str) -> str:
    return " ".join(text.lower().split())


def hypothesis_id(text: str) -> str:
    """A hypothesis's id: the same for the same text, case and spacing ignored."""
    return "h_" + hashlib.sha256(_key(text).encode()).hexdigest()[:12]


def finding_id(text: str) -> str:
    """A finding's id: the same for the same text, case and spacing ignored (findings are
    named by their text, like hypotheses; ``f_`` tells the two apart)."""
    return "f_" + hashlib.sha256(_key(text).encode()).hexdigest()[:12]


@dataclass(frozen=True, slots=True)
class Hypothesis:
    """A hypothesis of the investigation: its text, status, the events that bear on it, why
    it stands as it does, and the task-state version at which it last changed."""

    id: str
    text: str
    status: HypothesisStatus = HypothesisStatus.OPEN
    evidence: tuple[str, ...] = ()
    reason: str = ""
    changed_at: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "text": self.text, "status": self.status.value,
                "evidence": list(self.evidence), "reason": self.reason,
                "changed_at": self.changed_at}  # fmt: skip

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Hypothesis:
        return cls(
            id=str(data["id"]), text=str(data["text"]),
            status=HypothesisStatus(data.get("status", "open")),
            evidence=tuple(str(e) for e in data.get("evidence", [])),
            reason=str(data.get("reason", "")), changed_at=int(data.get("changed_at", 0)),
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Finding:
    """A verified finding: a short statement and its evidence (event ids, or ``pin:<key>``),
    with the task-state version at which it was recorded."""

    text: str
    evidence: tuple[str, ...] = ()
    found_at: int = 0

    @property
    def id(self) -> str:
        """The finding's id (:func:`finding_id` of its text), to name it in a promotion."""
        return finding_id(self.text)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "text": self.text, "evidence": list(self.evidence),
                "found_at": self.found_at}  # fmt: skip

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Finding:
        return cls(text=str(data["text"]), evidence=tuple(str(e) for e in data.get("evidence", [])),
                   found_at=int(data.get("found_at", 0)))  # fmt: skip

    @classmethod
    def given(cls, value: object) -> Finding:
        """A finding from an update: a :class:`Finding`, a mapping with ``text`` and
        ``evidence``, or a string."""
        if isinstance(value, str):
            return cls(_text(value, "finding"))
        if isinstance(value, Finding):
            return cls(_text(value.text, "finding"), evidence_of(value.evidence))
        if isinstance(value, Mapping) and set(value) <= {"text", "evidence"}:
            return cls(_text(value.get("text"), "finding"), evidence_of(value.get("evidence")))
        raise InvalidInput("a finding is a Finding, a {text, evidence} object or a string")


@dataclass(frozen=True, slots=True)
class HypothesisChange:
    """A change an update makes to a hypothesis, named by its text: propose it (``open``),
    support it, or reject it (with a reason). A rejected hypothesis is proposed again only
    with ``reopen`` and a reason."""

    text: str
    status: HypothesisStatus | str = HypothesisStatus.OPEN
    evidence: Sequence[str] = ()
    reason: str = ""
    reopen: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", _text(self.text, "hypothesis"))
        status = enum_member(HypothesisStatus, self.status, "hypothesis status")
        object.__setattr__(self, "status", status)
        object.__setattr__(self, "evidence", evidence_of(self.evidence))
        reason = _text(self.reason, "reason", allow_empty=True)
        object.__setattr__(self, "reason", reason)
        if not isinstance(self.reopen, bool):
            raise InvalidInput("reopen must be true or false")
        if self.reopen and not reason:
            raise InvalidInput("reopening a rejected hypothesis needs a reason")
        if self.status is HypothesisStatus.REJECTED and not reason:
            raise InvalidInput(f"rejecting {self.text!r:.80} needs a reason (one line)")

    @classmethod
    def given(cls, value: object) -> HypothesisChange:
        """A change from an update: a :class:`HypothesisChange`, a mapping of its fields, or a
        string (an open hypothesis)."""
        if isinstance(value, HypothesisChange):
            return value
        if isinstance(value, str):
            return cls(value)
        fields = {"text", "status", "evidence", "reason", "reopen"}
        if isinstance(value, Mapping) and "text" in value and set(value) <= fields:
            return cls(**{str(k): v for k, v in value.items()})
        raise InvalidInput(
            "a hypothesis is a HypothesisChange, an object with text (and status, evidence, "
            "reason, reopen) or a string"
        )


def evidence_of(value: object) -> tuple[str, ...]:
    """Evidence ids: event ids or ``pin:<key>``, de-duplicated in order."""
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise InvalidInput("evidence must be a list of event ids or pin:<key> references")
    if len(value) > _MAX_EVIDENCE:
        raise InvalidInput(f"evidence has more than {_MAX_EVIDENCE} entries")
    for item in value:
        if not isinstance(item, str) or not 0 < len(item) <= 256:
            raise InvalidInput("each evidence entry is an event id or pin:<key> (1-256 chars)")
        check_text(item, "evidence")
    return tuple(dict.fromkeys(value))


def _text(value: object, what: str, *, allow_empty: bool = False) -> str:
    return one_line(value, what, allow_empty=allow_empty, max_chars=_MAX_TEXT)
