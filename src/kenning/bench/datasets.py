"""Loaders for the LoCoMo and LongMemEval conversational-memory benchmarks.

Pure: each loader reads the one file it is given and returns frozen records; nothing else happens.
The loaders take any file of the published formats (development or evaluation split) and depend
on no particular id, name or answer in it.

Example::

    conversations, questions = load_locomo("locomo10.json")
    lme_questions = load_longmemeval("longmemeval_s.json.gz")
"""

from __future__ import annotations

import gzip
import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from types import MappingProxyType
from typing import Any, Final, TypeVar

from kenning.errors import InvalidInput

__all__ = [
    "LOCOMO_CATEGORIES",
    "TURN_OFFSET",
    "Conversation",
    "LMEQuestion",
    "Question",
    "Session",
    "Turn",
    "load_locomo",
    "load_longmemeval",
    "normalize_dia_ids",
    "parse_locomo_datetime",
    "parse_longmemeval_datetime",
]

LOCOMO_CATEGORIES: Final[Mapping[int, str]] = MappingProxyType(
    {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
)
"""LoCoMo question category number → name (as in the paper; several harnesses mislabel them)."""

TURN_OFFSET: Final = timedelta(seconds=1)
"""Both datasets date whole sessions; turn ``i`` of a session is dated ``session + i * offset``."""

_T = TypeVar("_T")
_ROLES: Final = frozenset({"user", "assistant"})
_MONTHS: Final = {
    name: number
    for number, name in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"),
        start=1,
    )
}
_DIA_ID_RE: Final = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)", re.IGNORECASE)
_SESSION_KEY_RE: Final = re.compile(r"session_(\d+)")
_LOCOMO_DATE_RE: Final = re.compile(
    r"(\d{1,2})\s*[:.]\s*(\d{2})\s*([ap])\.?\s*m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+)\.?,?\s+(\d{4})",
    re.IGNORECASE,
)
_LME_DATE_RE: Final = re.compile(
    r"(\d{4})[/-](\d{1,2})[/-](\d{1,2})\s*(?:\(\s*[A-Za-z]+\s*\))?\s*(\d{1,2}):(\d{2})"
)


@dataclass(frozen=True, slots=True)
class Turn:
    """One message of a conversation.

    Attributes:
        id: Unique within its conversation (LoCoMo ``"D3:7"``) or haystack (LongMemEval
            ``f"{session_id}_{i + 1}"``).
        session_id: Id of the session holding the turn.
        speaker: Speaker name (LoCoMo) or the role (LongMemEval).
        role: ``"user"`` or ``"assistant"``.
        text: The message; a LoCoMo image is kept as ``" [shared an image: <caption>]"``.
        at: UTC time: the session's time plus ``index * TURN_OFFSET``.
        index: 0-based position within the session, counting every turn.
        has_answer: LongMemEval's evidence flag (always ``False`` for LoCoMo).
    """

    id: str
    session_id: str
    speaker: str
    role: str
    text: str
    at: datetime
    index: int
    has_answer: bool = False


@dataclass(frozen=True, slots=True)
class Session:
    """A dated session: its id, its start time (UTC) and its turns in order."""

    id: str
    at: datetime
    turns: tuple[Turn, ...]


@dataclass(frozen=True, slots=True)
class Conversation:
    """A LoCoMo conversation between two speakers, as sessions in order.

    ``speaker_a`` plays role ``"user"``, ``speaker_b`` role ``"assistant"``.
    """

    id: str
    speaker_a: str
    speaker_b: str
    sessions: tuple[Session, ...]

    @property
    def turns(self) -> tuple[Turn, ...]:
        """Every turn of every session, in order."""
        return tuple(turn for session in self.sessions for turn in session.turns)

    def turn_to_session(self) -> dict[str, str]:
        """Map each turn id to its session id."""
        return {turn.id: session.id for session in self.sessions for turn in session.turns}


@dataclass(frozen=True, slots=True)
class Question:
    """A LoCoMo question with its cleaned evidence.

    Attributes:
        id: ``f"{conversation_id}:q{n}"`` with ``n`` the 1-based position in the ``qa`` list.
        conversation_id: The conversation's ``sample_id``.
        text: The question.
        category: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial.
        answer: The answer as text (``adversarial_answer`` for category 5 when present).
        evidence_turns: Valid evidence turn ids; ids pointing at no turn are dropped.
        evidence_sessions: Sessions of ``evidence_turns``.
        question_date: Always ``None``: LoCoMo questions are undated.
        abstention: ``True`` for adversarial questions (category 5).
    """

    id: str
    conversation_id: str
    text: str
    category: int
    answer: str
    evidence_turns: frozenset[str]
    evidence_sessions: frozenset[str]
    question_date: datetime | None = None
    abstention: bool = False

    @property
    def category_name(self) -> str:
        """The category's name, e.g. ``"multi-hop"``."""
        return LOCOMO_CATEGORIES[self.category]


@dataclass(frozen=True, slots=True)
class LMEQuestion:
    """A LongMemEval question with its own haystack of sessions.

    Gold follows the official retrieval protocol: ``evidence_turns`` are user turns with
    ``has_answer`` in answer sessions; ``evidence_sessions`` are the answer sessions holding one.
    All turns (user and assistant) are kept; the benchmark chooses what to index.

    Attributes:
        id: ``question_id``.
        question_type: E.g. ``"multi-session"``.
        text: The question.
        answer: The answer as text.
        question_date: When the question is asked (UTC), ``None`` if the file has no date.
        sessions: The haystack in file order; a repeated session id keeps its first copy.
        answer_session_ids: ``answer_session_ids`` as published.
        evidence_sessions: Gold sessions.
        evidence_turns: Gold turn ids.
        abstention: The id ends with ``"_abs"``.
        no_user_evidence: No gold user turn (official averages skip these and abstentions).
    """

    id: str
    question_type: str
    text: str
    answer: str
    question_date: datetime | None
    sessions: tuple[Session, ...]
    answer_session_ids: frozenset[str]
    evidence_sessions: frozenset[str]
    evidence_turns: frozenset[str]
    abstention: bool
    no_user_evidence: bool

    @property
    def turns(self) -> tuple[Turn, ...]:
        """Every turn of the haystack, in order."""
        return tuple(turn for session in self.sessions for turn in session.turns)

    def turn_to_session(self) -> dict[str, str]:
        """Map each turn id to its session id."""
        return {turn.id: session.id for session in self.sessions for turn in session.turns}


def normalize_dia_ids(value: object) -> tuple[str, ...]:
    """Return the canonical dialogue ids (``"D<session>:<turn>"``) found in a LoCoMo evidence value.

    Accepts a string or a (nested) list of strings and repairs the published quirks:
    ``"D8:6; D9:17"`` and ``"D9:1 D4:4"`` hold two ids, ``"D:11:26"`` is ``"D11:26"``,
    ``"D30:05"`` is ``"D30:5"``. Pieces with no id (``"D"``) are dropped; order is kept and
    repeats are removed. Whether an id points at a turn is checked by the loader.

    Example:
        >>> normalize_dia_ids(["D8:6; D9:17", "D:11:26", "D30:05", "D"])
        ('D8:6', 'D9:17', 'D11:26', 'D30:5')
    """
    found: dict[str, None] = {}
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            for match in _DIA_ID_RE.finditer(item):
                found.setdefault(f"D{int(match.group(1))}:{int(match.group(2))}")
        elif isinstance(item, list | tuple):
            stack.extend(reversed(item))
    return tuple(found)


def parse_locomo_datetime(text: str) -> datetime:
    """Parse a LoCoMo session time such as ``"1:56 pm on 8 May, 2023"`` into a UTC datetime.

    Raises:
        InvalidInput: The text is not a time in that shape.
    """
    match = _LOCOMO_DATE_RE.search(text)
    month = _MONTHS.get(match.group(5)[:3].lower()) if match else None
    if match is None or month is None:
        raise InvalidInput(f"LoCoMo session time {text!r} is not like '1:56 pm on 8 May, 2023'")
    hour, minute = int(match.group(1)), int(match.group(2))
    if not 1 <= hour <= 12:
        raise InvalidInput(f"LoCoMo session time {text!r} has hour {hour}; expected 1-12")
    hour = hour % 12 + (12 if match.group(3).lower() == "p" else 0)
    return _utc(text, int(match.group(6)), month, int(match.group(4)), hour, minute)


def parse_longmemeval_datetime(text: str) -> datetime:
    """Parse a LongMemEval time such as ``"2023/05/20 (Sat) 02:21"`` into a UTC datetime.

    The weekday is ignored.

    Raises:
        InvalidInput: The text is not a time in that shape.
    """
    match = _LME_DATE_RE.search(text)
    if match is None:
        raise InvalidInput(f"LongMemEval time {text!r} is not like '2023/05/20 (Sat) 02:21'")
    year, month, day, hour, minute = (int(group) for group in match.groups())
    return _utc(text, year, month, day, hour, minute)


def _utc(text: str, year: int, month: int, day: int, hour: int, minute: int) -> datetime:
    try:
        return datetime(year, month, day, hour, minute, tzinfo=UTC)
    except ValueError as exc:
        raise InvalidInput(f"time {text!r} is not a valid date: {exc}") from exc


def load_locomo(path: str | os.PathLike[str]) -> tuple[list[Conversation], list[Question]]:
    """Load a LoCoMo file (JSON list of conversations; gzip accepted) into records.

    Sessions are ordered by number; a session with no turns is skipped. ``speaker_a`` maps to
    role ``"user"`` and ``speaker_b`` to ``"assistant"``; a turn by any other name takes the role
    opposite to the previous turn's. ``observation``, ``session_summary`` and ``event_summary``
    are ignored: they were written by an LLM and must not reach a system under test.

    Args:
        path: The file to read.

    Returns:
        The conversations and all their questions, in file order.

    Raises:
        InvalidInput: The file is not JSON or not in LoCoMo's shape (the message says where).

    Example:
        >>> conversations, questions = load_locomo("locomo10.json")  # doctest: +SKIP
    """
    data = _read_json(path)
    name = os.fspath(path)
    if not isinstance(data, list):
        raise InvalidInput(f"{name}: expected a JSON list of LoCoMo conversations")
    conversations: list[Conversation] = []
    questions: list[Question] = []
    for position, item in enumerate(data):
        where = f"{name}: conversation {position}"
        conversation = _locomo_conversation(_mapping(item, where), where)
        conversations.append(conversation)
        questions.extend(_locomo_questions(_mapping(item, where), conversation, where))
    return conversations, questions


def _locomo_conversation(item: Mapping[str, Any], where: str) -> Conversation:
    sample_id = _checked(item, "sample_id", where, _text)
    where = f"{where} ({sample_id})"
    body = _checked(item, "conversation", where, _mapping)
    speaker_a = _checked(body, "speaker_a", where, _text)
    speaker_b = _checked(body, "speaker_b", where, _text)
    numbers = sorted(
        int(match.group(1)) for key in body if (match := _SESSION_KEY_RE.fullmatch(key))
    )
    sessions: list[Session] = []
    seen: set[str] = set()
    previous_role = "assistant"
    for number in numbers:
        session_id = f"session_{number}"
        raw_turns = _list(body[session_id], f"{where} {session_id}")
        if not raw_turns:
            continue
        date_key = f"{session_id}_date_time"
        date_text = _checked(body, date_key, where, _text)
        try:
            start = parse_locomo_datetime(date_text)
        except InvalidInput as exc:
            raise InvalidInput(f"{where} {date_key}: {exc.message}") from exc
        turns: list[Turn] = []
        for index, raw in enumerate(raw_turns):
            turn_where = f"{where} {session_id} turn {index}"
            turn = _mapping(raw, turn_where)
            speaker = _checked(turn, "speaker", turn_where, _text)
            role = _locomo_role(speaker, speaker_a, speaker_b, previous_role)
            previous_role = role
            turn_id = _locomo_turn_id(turn.get("dia_id"), number, index, seen, turn_where)
            seen.add(turn_id)
            turns.append(
                Turn(
                    id=turn_id,
                    session_id=session_id,
                    speaker=speaker,
                    role=role,
                    text=_locomo_text(turn),
                    at=start + index * TURN_OFFSET,
                    index=index,
                )
            )
        sessions.append(Session(id=session_id, at=start, turns=tuple(turns)))
    return Conversation(
        id=sample_id, speaker_a=speaker_a, speaker_b=speaker_b, sessions=tuple(sessions)
    )


def _locomo_role(speaker: str, speaker_a: str, speaker_b: str, previous: str) -> str:
    name = speaker.strip().casefold()
    if name == speaker_a.strip().casefold():
        return "user"
    if name == speaker_b.strip().casefold():
        return "assistant"
    return "user" if previous == "assistant" else "assistant"


def _locomo_turn_id(raw: object, number: int, index: int, seen: set[str], where: str) -> str:
    ids = normalize_dia_ids(raw)
    candidates = [ids[0]] if len(ids) == 1 else []
    candidates.append(f"D{number}:{index + 1}")
    for candidate in candidates:
        if candidate not in seen:
            return candidate
    raise InvalidInput(f"{where}: dia_id {raw!r} repeats an earlier turn's id")


def _locomo_text(turn: Mapping[str, Any]) -> str:
    raw = turn.get("text")
    text = raw if isinstance(raw, str) else "" if raw is None else str(raw)
    caption = turn.get("blip_caption")
    if isinstance(caption, str) and caption.strip():
        text = f"{text} [shared an image: {caption.strip()}]".lstrip()
    return text


def _locomo_questions(
    item: Mapping[str, Any], conversation: Conversation, where: str
) -> list[Question]:
    turn_to_session = conversation.turn_to_session()
    questions: list[Question] = []
    for position, raw in enumerate(_list(item.get("qa", []), f"{where} qa")):
        q_where = f"{where} ({conversation.id}) qa {position}"
        qa = _mapping(raw, q_where)
        category = _locomo_category(qa.get("category"), q_where)
        evidence = tuple(
            dia_id
            for dia_id in normalize_dia_ids(qa.get("evidence", []))
            if dia_id in turn_to_session
        )
        answer = qa.get("answer")
        if category == 5 and qa.get("adversarial_answer") is not None:
            answer = qa["adversarial_answer"]
        questions.append(
            Question(
                id=f"{conversation.id}:q{position + 1}",
                conversation_id=conversation.id,
                text=_checked(qa, "question", q_where, _text),
                category=category,
                answer="" if answer is None else str(answer),
                evidence_turns=frozenset(evidence),
                evidence_sessions=frozenset(turn_to_session[dia_id] for dia_id in evidence),
                abstention=category == 5,
            )
        )
    return questions


def _locomo_category(raw: object, where: str) -> int:
    if isinstance(raw, str) and raw.strip().isdigit():
        raw = int(raw)
    if isinstance(raw, bool) or not isinstance(raw, int) or raw not in LOCOMO_CATEGORIES:
        raise InvalidInput(f"{where}: category {raw!r} is not one of 1-5")
    return raw


def load_longmemeval(path: str | os.PathLike[str]) -> list[LMEQuestion]:
    """Load a LongMemEval file (JSON list of questions, plain or gzip) into records.

    Turn ids are ``f"{session_id}_{i + 1}"`` with ``i`` counting all turns of the session, as in
    the official ``run_retrieval.py``. A session id repeated inside one haystack (the published
    S file has a few identical copies dated differently) keeps only its first copy, so turn ids
    stay unique. The record's docstring gives the gold rules.

    Args:
        path: The file to read.

    Returns:
        The questions in file order.

    Raises:
        InvalidInput: The file is not JSON or not in LongMemEval's shape (the message says where).

    Example:
        >>> questions = load_longmemeval("longmemeval_s.json.gz")  # doctest: +SKIP
    """
    data = _read_json(path)
    name = os.fspath(path)
    if not isinstance(data, list):
        raise InvalidInput(f"{name}: expected a JSON list of LongMemEval questions")
    return [
        _lme_question(
            _mapping(item, f"{name}: question {position}"), f"{name}: question {position}"
        )
        for position, item in enumerate(data)
    ]


def _lme_question(item: Mapping[str, Any], where: str) -> LMEQuestion:
    question_id = _checked(item, "question_id", where, _text)
    where = f"{where} ({question_id})"
    session_ids = _list(_field(item, "haystack_session_ids", where), f"{where} session ids")
    dates = _checked(item, "haystack_dates", where, _list)
    raw_sessions = _checked(item, "haystack_sessions", where, _list)
    if not len(session_ids) == len(dates) == len(raw_sessions):
        raise InvalidInput(
            f"{where}: haystack_session_ids, haystack_dates and haystack_sessions have "
            f"{len(session_ids)}, {len(dates)} and {len(raw_sessions)} entries; they must match"
        )
    answer_ids = frozenset(
        _text(sid, f"{where} answer_session_ids")
        for sid in _list(item.get("answer_session_ids", []), f"{where} answer_session_ids")
    )
    sessions: list[Session] = []
    seen: set[str] = set()
    for raw_id, raw_date, raw_turns in zip(session_ids, dates, raw_sessions, strict=True):
        session_id = _text(raw_id, f"{where} haystack_session_ids")
        if session_id in seen:
            continue
        seen.add(session_id)
        sessions.append(_lme_session(session_id, raw_date, raw_turns, f"{where} {session_id}"))
    evidence_turns = frozenset(
        turn.id
        for session in sessions
        if session.id in answer_ids
        for turn in session.turns
        if turn.role == "user" and turn.has_answer
    )
    evidence_sessions = frozenset(
        session.id
        for session in sessions
        if any(turn.id in evidence_turns for turn in session.turns)
    )
    raw_question_date = item.get("question_date")
    question_date = None
    if raw_question_date is not None:
        try:
            question_date = parse_longmemeval_datetime(_text(raw_question_date, where))
        except InvalidInput as exc:
            raise InvalidInput(f"{where} question_date: {exc.message}") from exc
    answer = item.get("answer")
    return LMEQuestion(
        id=question_id,
        question_type=_checked(item, "question_type", where, _text),
        text=_checked(item, "question", where, _text),
        answer="" if answer is None else str(answer),
        question_date=question_date,
        sessions=tuple(sessions),
        answer_session_ids=answer_ids,
        evidence_sessions=evidence_sessions,
        evidence_turns=evidence_turns,
        abstention=question_id.endswith("_abs"),
        no_user_evidence=not evidence_turns,
    )


def _lme_session(session_id: str, raw_date: object, raw_turns: object, where: str) -> Session:
    try:
        start = parse_longmemeval_datetime(_text(raw_date, f"{where} date"))
    except InvalidInput as exc:
        raise InvalidInput(f"{where} date: {exc.message}") from exc
    turns: list[Turn] = []
    for index, raw in enumerate(_list(raw_turns, where)):
        turn_where = f"{where} turn {index}"
        turn = _mapping(raw, turn_where)
        role = _checked(turn, "role", turn_where, _text).strip().lower()
        if role not in _ROLES:
            raise InvalidInput(f"{turn_where}: role {role!r} is neither 'user' nor 'assistant'")
        turns.append(
            Turn(
                id=f"{session_id}_{index + 1}",
                session_id=session_id,
                speaker=role,
                role=role,
                text=_checked(turn, "content", turn_where, _text),
                at=start + index * TURN_OFFSET,
                index=index,
                has_answer=turn.get("has_answer") is True,
            )
        )
    return Session(id=session_id, at=start, turns=tuple(turns))


def _read_json(path: str | os.PathLike[str]) -> Any:
    name = os.fspath(path)
    with open(path, "rb") as handle:
        raw = handle.read()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise InvalidInput(f"{name}: not a readable gzip file ({exc})") from exc
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise InvalidInput(f"{name}: not valid JSON ({exc}); expected a .json or .json.gz") from exc


def _field(item: Mapping[str, Any], key: str, where: str) -> Any:
    try:
        return item[key]
    except KeyError:
        raise InvalidInput(f"{where}: missing field {key!r}") from None


def _mapping(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InvalidInput(f"{where}: expected a JSON object, got {type(value).__name__}")
    return value


def _list(value: object, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise InvalidInput(f"{where}: expected a JSON list, got {type(value).__name__}")
    return value


def _text(value: object, where: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise InvalidInput(f"{where}: expected a string, got {type(value).__name__}")


def _checked(
    item: Mapping[str, Any], key: str, where: str, check: Callable[[object, str], _T]
) -> _T:
    """Field *key* of *item*, as *check* accepts it; an error names *where* and the key."""
    return check(_field(item, key, where), f"{where} {key}")
