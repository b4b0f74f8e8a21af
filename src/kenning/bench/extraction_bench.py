"""``kenning bench extraction``: how well an extractor reads what people say about themselves.

The labelled set ships with kenning (``kenning/bench/data/self_statements/``, one JSONL file per
source; its README gives the sources, their licenses and the labelling guide): sentences from
user turns of the LoCoMo and LongMemEval development files and sentences written for kenning,
each labelled with the facts it states (subject, family, value, assert or revoke, current or
past), or none. Every sentence carries its part, ``tuning`` or ``held_out``, fixed by a hash of
its id before anything was measured. Rules are chosen on the tuning part; the held-out part is
reported by its figures only: this bench lists the mistakes of the tuning part and never those
of the held-out part.

An extractor is a self-statement reader (:class:`~kenning.longterm.statements.StatementReader`:
``parse``, kenning's default, ``parse-entities`` or ``rules``; see :func:`statement_reader`),
which reads the whole set in one batch as kenning reads a batch of events, or any
``Callable[[Event], Sequence[FactDraft]]``, called once per sentence. Each sentence becomes one
user event (LoCoMo sentences carry their speaker in ``metadata["speaker"]``).

Matching (one sentence at a time):

* A draft becomes a predicted fact: its **family** comes from kenning's attribute name by
  :func:`families_of` (``employer`` -> employer, ``preference:jazz`` -> preference with the value
  ``jazz``, ``diet:no meat`` -> diet ``meat`` negated, ``is_a:nurse`` -> occupation or identity,
  ``is_a:vegan`` -> diet, ``pet:dog`` -> pet, ``family:two kids`` -> family, ``hobby:``,
  ``language:``, ``education:`` likewise, ``partner`` -> relationship; a multi-valued object
  that starts with "no " is negated: ``uses:no car`` -> device ``car`` negated), its **op**
  is ``revoke`` when the draft revokes, else ``assert``; a draft is **current** (kenning
  stores every draft as holding from now on).
* **Subject**: ``user`` (or the speaker's name, for a sentence whose speaker is known) is the
  user. Another subject matches a label's subject when the words of one contain the other's
  (``brother luis`` matches ``brother``), ignoring case and a leading "my"/"our".
* **Value**: compared after :func:`normalise_value` (case, punctuation and a leading article
  or possessive ignored), and must be equal: "Siemens as an engineer" is not "Siemens".
* A predicted fact matches a labelled one when subject, family, normalised value, op and
  negation all agree. Each label matches at most one prediction and each prediction at most
  one label (labels in order, each with the first unused prediction that matches).
* Facts are scored in buckets: **asserts** (current assertions about the user: the headline
  precision and recall), **revokes** (withdrawals by the user: revocation recall), **past**
  (assertions about the user that no longer hold, "I used to live in Oslo"), **others** (facts
  about other people). A current prediction of a past fact is a false positive among asserts,
  also counted as ``past_read_as_current``.
* **Negatives** are sentences labelled with no fact; a negative with any predicted fact is a
  false-positive sentence.

Cost: sentences per second of the extractor alone over the whole set (the best of
``repeat`` passes).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Final

from kenning.bench.report import heading, table
from kenning.errors import InvalidInput
from kenning.longterm.parsing.lexicon import DIETS
from kenning.longterm.parsing.parser import SpacyParser
from kenning.longterm.statements import ParsedStatements, RuleStatements, StatementReader
from kenning.records import USER, Event, FactDraft, Role, Scope

__all__ = [
    "EXTRACTORS",
    "FAMILIES",
    "PARTS",
    "Extractor",
    "LabelledFact",
    "LabelledSentence",
    "PredictedFact",
    "families_of",
    "load_set",
    "normalise_value",
    "predicted_fact",
    "run_extraction_bench",
    "score_predictions",
    "statement_reader",
]

Extractor = Callable[[Event], Sequence[FactDraft]]
"""Reads one event; returns the fact drafts it finds (kenning's extractors have this shape)."""

FAMILIES: Final = frozenset(
    {
        "name", "age", "origin", "location", "contact", "employer", "occupation", "education",
        "language", "relationship", "family", "pet", "diet", "allergy", "health", "hobby",
        "preference", "device", "finance", "identity",
    }
)  # fmt: skip
"""The attribute families a label may name (the data's README defines each)."""

PARTS: Final = ("tuning", "held_out")
EXTRACTORS: Final = ("parse", "parse-entities", "rules")
"""The readers ``kenning bench extraction --extractor`` scores (:func:`statement_reader`)."""
OPS: Final = ("assert", "revoke")
BUCKETS: Final = ("asserts", "revokes", "past", "others")
DATA_DIR: Final = "data/self_statements"
SAID: Final = datetime(2026, 1, 10, 12, tzinfo=UTC)
TARGETS: Final = {"asserts_precision": 0.95, "asserts_recall": 0.85, "revokes_recall": 0.85}
"""Issue 27's targets, on the held-out part."""


@dataclass(frozen=True, slots=True)
class LabelledFact:
    """One fact a sentence states: who, which family, the value's span, assert or revoke."""

    subject: str
    family: str
    value: str
    op: str = "assert"
    current: bool = True
    negated: bool = False


@dataclass(frozen=True, slots=True)
class LabelledSentence:
    """A labelled sentence: its id, part, source, kind, text and the facts it states."""

    id: str
    part: str
    source: str
    kind: str
    text: str
    facts: tuple[LabelledFact, ...]
    speaker: str | None = None


@dataclass(frozen=True, slots=True)
class PredictedFact:
    """A draft as the scorer reads it. ``families`` holds more than one family only where
    kenning's attribute cannot say which (``is_a:``: occupation or identity)."""

    subject: str
    families: frozenset[str]
    value: str
    op: str = "assert"
    current: bool = True
    negated: bool = False
    attribute: str = ""


# Kenning's single-valued attribute names (and "my X is" names) by family.
_ATTRIBUTES: Final[Mapping[str, str]] = {
    "name": "name", "preferred name": "name", "first name": "name", "last name": "name",
    "middle name": "name", "surname": "name", "nickname": "name",
    "age": "age", "birthday": "age", "date of birth": "age",
    "location": "location", "time zone": "location", "timezone": "location",
    "hometown": "origin", "nationality": "origin",
    "employer": "employer", "company": "employer", "department": "employer",
    "occupation": "occupation", "job title": "occupation", "title": "occupation",
    "role": "occupation",
    "relationship status": "relationship",
    "income": "finance", "debt": "finance", "bank": "finance",
    "email": "contact", "email address": "contact", "e-mail": "contact", "phone": "contact",
    "phone number": "contact", "number": "contact", "address": "contact",
    "website": "contact", "username": "contact", "user name": "contact", "handle": "contact",
    "language": "language", "pronouns": "identity", "hobby": "hobby", "hobbies": "hobby",
    "editor": "device", "ide": "device", "os": "device", "operating system": "device",
    "browser": "device", "car": "device", "height": "health", "blood type": "health",
    "partner": "relationship",
}  # fmt: skip
# Multi-valued attributes ("kind:object") by family; is_a is decided by its object.
_KINDS: Final[Mapping[str, str]] = {
    "preference": "preference", "allergy": "allergy", "condition": "health", "diet": "diet",
    "uses": "device", "family": "family", "pet": "pet", "language": "language",
    "hobby": "hobby", "education": "education",
}  # fmt: skip
_DIETS: Final = (
    frozenset("vegan vegetarian pescatarian gluten-free gluten free kosher halal keto".split())
    | frozenset({"teetotal", "sober"})
    | DIETS
)
_ROLE_FAMILIES: Final = frozenset({"occupation", "identity"})
_LEADING: Final = re.compile(r"^(?:a|an|the|my|our|his|her|their|some)\s+")


def normalise_value(value: str) -> str:
    """*value* as values are compared: lower case, punctuation as spaces, no leading article.

    >>> normalise_value("The Beatles!")
    'beatles'
    >>> normalise_value("555-0148")
    '555 0148'
    """
    text = unicodedata.normalize("NFKC", value).lower()
    text = " ".join(re.sub(r"[^\w]+|_", " ", text).split())
    return _LEADING.sub("", text)


def families_of(attribute: str, value: str) -> tuple[frozenset[str], str, bool]:
    """The families of kenning's *attribute*, the value to compare and whether it is negated.

    >>> families_of("preference:jazz", "dislikes")
    (frozenset({'preference'}), 'jazz', True)
    >>> families_of("work email", "jo@example.com")
    (frozenset({'contact'}), 'jo@example.com', False)
    """
    kind, sep, obj = attribute.partition(":")
    if sep:
        if kind == "is_a":
            diet = obj in _DIETS
            return (frozenset({"diet"}) if diet else _ROLE_FAMILIES), obj, False
        kept = _KINDS.get(kind, f"unmapped:{kind}")
        if kind != "preference" and obj.startswith("no "):
            return frozenset({kept}), obj.removeprefix("no "), True
        return frozenset({kept}), obj, kind == "preference" and value == "dislikes"
    if attribute.startswith(("favorite ", "favourite ")):
        return frozenset({"preference"}), value, False
    words = attribute.split()
    for start in range(len(words)):
        family = _ATTRIBUTES.get(" ".join(words[start:]))
        if family is not None:
            return frozenset({family}), value, False
    return frozenset({f"unmapped:{attribute}"}), value, False


def predicted_fact(draft: FactDraft) -> PredictedFact:
    """*draft* as the scorer reads it (see :func:`families_of`)."""
    families, value, negated = families_of(draft.attribute, draft.value)
    return PredictedFact(
        subject=draft.subject, families=families, value=value,
        op="revoke" if draft.revoke else "assert", negated=negated, attribute=draft.attribute,
    )  # fmt: skip


def _fact(raw: Mapping[str, Any]) -> LabelledFact:
    fact = LabelledFact(
        subject=str(raw["subject"]), family=str(raw["family"]), value=str(raw["value"]),
        op=str(raw["op"]), current=bool(raw["current"]), negated=bool(raw.get("negated", False)),
    )  # fmt: skip
    if fact.family not in FAMILIES:
        raise ValueError(f"family {fact.family!r} is not one of {sorted(FAMILIES)}")
    if fact.op not in OPS:
        raise ValueError(f"op {fact.op!r} is not 'assert' or 'revoke'")
    return fact


def _sentence(raw: Mapping[str, Any], source: str) -> LabelledSentence:
    part = str(raw["split"])
    if part not in PARTS:
        raise ValueError(f"split {part!r} is not one of {PARTS}")
    ref = raw.get("ref") or {}
    speaker = ref.get("speaker")
    return LabelledSentence(
        id=str(raw["id"]), part=part, source=source, kind=str(raw["kind"]),
        text=str(raw["text"]), facts=tuple(_fact(f) for f in raw["facts"]),
        speaker=None if speaker is None else str(speaker),
    )  # fmt: skip


def _files(path: str | Path | None) -> Sequence[Traversable]:
    if path is None:
        folder = resources.files("kenning.bench").joinpath(DATA_DIR)
        return sorted((f for f in folder.iterdir() if f.name.endswith(".jsonl")),
                      key=lambda f: f.name)  # fmt: skip
    given = Path(path)
    if given.is_dir():
        return sorted(given.glob("*.jsonl"))
    if given.is_file():
        return [given]
    raise InvalidInput(f"--data {path}: no such file or directory")


def load_set(path: str | Path | None = None) -> tuple[list[LabelledSentence], dict[str, str]]:
    """The labelled sentences of *path* (a JSONL file, or a folder of them; default: the set
    shipped with kenning) and the SHA-256 of each file and of the whole (key ``"all"``).

    A file's name (without ``.jsonl``) is the source of its sentences.

    Raises:
        InvalidInput: A line is not a labelled sentence (the message names the line), or ids
            repeat.
    """
    sentences: list[LabelledSentence] = []
    hashes: dict[str, str] = {}
    for file in _files(path):
        data = file.read_bytes()
        hashes[file.name] = hashlib.sha256(data).hexdigest()
        source = file.name.removesuffix(".jsonl")
        for number, line in enumerate(data.decode("utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                sentences.append(_sentence(json.loads(line), source))
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                raise InvalidInput(
                    f"{file.name}:{number}: not a labelled sentence ({exc})"
                ) from exc
    repeated = [i for i, n in Counter(s.id for s in sentences).items() if n > 1]
    if repeated:
        raise InvalidInput(f"the labelled set repeats ids: {repeated[:5]}")
    whole = "".join(f"{name}:{digest}\n" for name, digest in sorted(hashes.items()))
    hashes["all"] = hashlib.sha256(whole.encode()).hexdigest()
    return sentences, hashes


def _words(subject: str) -> frozenset[str]:
    return frozenset(re.sub(r"^(?:my|our)\s+", "", subject.lower().strip()).split())


def _is_user(subject: str, speaker: str | None) -> bool:
    lowered = subject.lower()
    return lowered == USER or (speaker is not None and lowered == speaker.lower())


def _same_subject(label: LabelledFact, pred: PredictedFact, speaker: str | None) -> bool:
    if label.subject == USER or _is_user(pred.subject, speaker):
        return label.subject == USER and _is_user(pred.subject, speaker)
    mine, theirs = _words(label.subject), _words(pred.subject)
    return bool(mine and theirs) and (mine <= theirs or theirs <= mine)


def _matches(label: LabelledFact, pred: PredictedFact, speaker: str | None) -> bool:
    return (
        label.family in pred.families
        and label.op == pred.op
        and label.negated == pred.negated
        and normalise_value(label.value) == normalise_value(pred.value)
        and _same_subject(label, pred, speaker)
    )


def _bucket(subject: str, op: str, current: bool, speaker: str | None) -> str:
    if not _is_user(subject, speaker):
        return "others"
    if op == "revoke":
        return "revokes"
    return "asserts" if current else "past"


@dataclass(slots=True)
class _Tally:
    """True positives, false positives and misses of one bucket, with what they were."""

    tp: list[tuple[LabelledSentence, LabelledFact]] = field(default_factory=list)
    fp: list[tuple[LabelledSentence, PredictedFact]] = field(default_factory=list)
    fn: list[tuple[LabelledSentence, LabelledFact]] = field(default_factory=list)


def _unique(preds: Iterable[PredictedFact]) -> list[PredictedFact]:
    seen: dict[tuple[object, ...], PredictedFact] = {}
    for p in preds:
        key = (p.subject.lower(), p.families, normalise_value(p.value), p.op, p.negated, p.current)
        seen.setdefault(key, p)
    return list(seen.values())


def _score_one(
    sentence: LabelledSentence, preds: Sequence[PredictedFact], tallies: Mapping[str, _Tally]
) -> None:
    """Match *sentence*'s labels with *preds*, bucket by bucket, into *tallies*."""
    speaker = sentence.speaker
    used: set[int] = set()
    for label in sentence.facts:
        bucket = _bucket(label.subject, label.op, label.current, None)
        found = next(
            (n for n, p in enumerate(preds) if n not in used
             and _bucket(p.subject, p.op, p.current, speaker) == bucket
             and _matches(label, p, speaker)),
            None,
        )  # fmt: skip
        if found is None:
            tallies[bucket].fn.append((sentence, label))
        else:
            used.add(found)
            tallies[bucket].tp.append((sentence, label))
    for n, pred in enumerate(preds):
        if n not in used:
            tallies[_bucket(pred.subject, pred.op, pred.current, speaker)].fp.append(
                (sentence, pred)
            )


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _counts(tally: _Tally) -> dict[str, Any]:
    tp, fp, fn = len(tally.tp), len(tally.fp), len(tally.fn)
    return {"labelled": tp + fn, "predicted": tp + fp, "tp": tp,
            "precision": _ratio(tp, tp + fp), "recall": _ratio(tp, tp + fn)}  # fmt: skip


def _family_key(pred: PredictedFact) -> str:
    return "|".join(sorted(pred.families))


def _by_family(tallies: Mapping[str, _Tally]) -> dict[str, dict[str, Any]]:
    """Asserts and revokes about the user together, per family (a miss counts for the label's
    family, a false fact for the prediction's)."""
    per: dict[str, _Tally] = defaultdict(_Tally)
    for bucket in ("asserts", "revokes"):
        for sentence, label in tallies[bucket].tp:
            per[label.family].tp.append((sentence, label))
        for sentence, label in tallies[bucket].fn:
            per[label.family].fn.append((sentence, label))
        for sentence, pred in tallies[bucket].fp:
            per[_family_key(pred)].fp.append((sentence, pred))
    return {family: _counts(per[family]) for family in sorted(per)}


def _past_read_as_current(tally: _Tally) -> int:
    """False asserts that match a past fact of their sentence."""
    return sum(
        any(not f.current and f.op == "assert" and _matches(f, pred, s.speaker) for f in s.facts)
        for s, pred in tally.fp
    )


def _negatives(
    sentences: Sequence[LabelledSentence], preds: Mapping[str, Sequence[PredictedFact]]
) -> dict[str, Any]:
    negatives = [s for s in sentences if not s.facts]
    hit = [s for s in negatives if preds[s.id]]
    user_hit = [s for s in hit if any(_is_user(p.subject, s.speaker) for p in preds[s.id])]
    kinds = sorted({s.kind for s in negatives})
    return {
        "sentences": len(negatives), "with_any_fact": len(hit),
        "with_user_fact": len(user_hit), "rate": _ratio(len(hit), len(negatives)),
        "by_kind": {k: {"sentences": sum(s.kind == k for s in negatives),
                        "with_any_fact": sum(s.kind == k for s in hit)} for k in kinds},
    }  # fmt: skip


def _summary(
    sentences: Sequence[LabelledSentence], preds: Mapping[str, Sequence[PredictedFact]]
) -> tuple[dict[str, Any], Mapping[str, _Tally]]:
    tallies = {bucket: _Tally() for bucket in BUCKETS}
    for sentence in sentences:
        _score_one(sentence, preds[sentence.id], tallies)
    out: dict[str, Any] = {"sentences": len(sentences)}
    out.update({bucket: _counts(tallies[bucket]) for bucket in BUCKETS})
    out["past_read_as_current"] = _past_read_as_current(tallies["asserts"])
    out["negatives"] = _negatives(sentences, preds)
    out["by_family"] = _by_family(tallies)
    return out, tallies


def score_predictions(
    sentences: Sequence[LabelledSentence], preds: Mapping[str, Sequence[PredictedFact]]
) -> dict[str, Any]:
    """Scores of *preds* (by sentence id) against *sentences*, per part and per source.

    Returns:
        ``{part: summary}`` for each part present, each summary with ``asserts``, ``revokes``,
        ``past`` and ``others`` (labelled, predicted, tp, precision, recall; a ratio with
        nothing to divide is ``None``), ``past_read_as_current``, ``negatives``,
        ``by_family`` and ``by_source``; plus ``"mistakes"``: the tuning part's misses and
        false facts (the held-out part's are not listed).
    """
    unique = {s.id: _unique(preds.get(s.id, ())) for s in sentences}
    out: dict[str, Any] = {}
    for part in PARTS:
        chosen = [s for s in sentences if s.part == part]
        if not chosen:
            continue
        summary, tallies = _summary(chosen, unique)
        summary["by_source"] = {
            source: {bucket: _summary([s for s in chosen if s.source == source], unique)[0][bucket]
                     for bucket in ("asserts", "revokes")}
            for source in sorted({s.source for s in chosen})
        }  # fmt: skip
        out[part] = summary
        if part == "tuning":
            out["mistakes"] = _mistakes(tallies)
    return out


def _mistakes(tallies: Mapping[str, _Tally]) -> dict[str, list[dict[str, Any]]]:
    missed = [
        {"id": s.id, "text": s.text, "bucket": bucket, "family": f.family, "value": f.value,
         "op": f.op, "subject": f.subject}
        for bucket in BUCKETS for s, f in tallies[bucket].fn
    ]  # fmt: skip
    false = [
        {"id": s.id, "text": s.text, "bucket": bucket, "attribute": p.attribute,
         "family": _family_key(p), "value": p.value, "op": p.op, "subject": p.subject}
        for bucket in BUCKETS for s, p in tallies[bucket].fp
    ]  # fmt: skip
    return {"missed": missed, "false": false}


def _event(sentence: LabelledSentence, seq: int) -> Event:
    metadata = {} if sentence.speaker is None else {"speaker": sentence.speaker}
    return Event(
        id=f"x{seq}", scope=Scope("bench", "extraction", "set"), seq=seq, role=Role.USER,
        content=sentence.text, at=SAID, metadata=metadata,
    )  # fmt: skip


def statement_reader(kind: str) -> StatementReader:
    """The self-statement reader *kind* names: ``parse`` (kenning's default: spaCy's parse,
    the rules where spaCy is absent), ``parse-entities`` (the parse with the entity
    recogniser's types), ``rules`` (the phrase rules)."""
    if kind == "rules":
        return RuleStatements()
    if kind in ("parse", "parse-entities"):
        return ParsedStatements(SpacyParser(entities=kind == "parse-entities"))
    raise InvalidInput(f"extractor must be one of {', '.join(EXTRACTORS)}, not {kind!r}")


def _read_all(
    extractor: Extractor | StatementReader, events: Sequence[Event]
) -> list[Sequence[FactDraft]]:
    """Each event's drafts: a reader reads the whole set in one batch (as kenning reads a
    batch of events), an :data:`Extractor` one event at a time."""
    if not callable(extractor):
        found: dict[str | None, list[FactDraft]] = defaultdict(list)
        for draft in extractor.read(events):
            found[draft.source_event_id].append(draft)
        return [found.get(e.id, []) for e in events]
    return [extractor(event) for event in events]


def _extract(
    extractor: Extractor | StatementReader, sentences: Sequence[LabelledSentence], repeat: int
) -> tuple[dict[str, list[PredictedFact]], float]:
    """Predictions by sentence id, and the best time of *repeat* passes (seconds; a model is
    loaded before the first)."""
    events = [_event(s, n) for n, s in enumerate(sentences)]
    _read_all(extractor, events[:1])
    best = float("inf")
    drafts: list[Sequence[FactDraft]] = []
    for _ in range(repeat):
        started = time.perf_counter()
        drafts = _read_all(extractor, events)
        best = min(best, time.perf_counter() - started)
    preds = {s.id: [predicted_fact(d) for d in found] for s, found in zip(sentences, drafts,
                                                                          strict=True)}  # fmt: skip
    return preds, best


def _targets(held_out: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for key, target in TARGETS.items():
        bucket, metric = key.split("_")
        value = None if held_out is None else held_out[bucket][metric]
        out[key] = {"target": target, "held_out": value,
                    "met": value is not None and value >= target}  # fmt: skip
    return out


def run_extraction_bench(
    out: Path,
    *,
    extractor: Extractor | StatementReader | str = "parse",
    name: str | None = None,
    data: str | Path | None = None,
    repeat: int = 3,
) -> dict[str, Any]:
    """Score *extractor* on the labelled set; write ``out/report.json`` and ``out/report.md``.

    Args:
        out: The report folder (created).
        extractor: A reader's name (see :func:`statement_reader`; default ``parse``, what
            kenning reads with), a :class:`~kenning.longterm.statements.StatementReader`, or
            an :data:`Extractor` that reads one user event.
        name: How the report names the extractor (default: the reader's name, as it read:
            ``rules`` where the parse fell back; a function's ``__module__.__qualname__``).
        data: A labelled JSONL file or a folder of them (default: the shipped set).
        repeat: Timed passes over the set; the fastest gives the cost.

    Returns:
        The report as written to ``report.json``.
    """
    if repeat < 1:
        raise InvalidInput("repeat must be at least 1")
    chosen = statement_reader(extractor) if isinstance(extractor, str) else extractor
    sentences, hashes = load_set(data)
    preds, seconds = _extract(chosen, sentences, repeat)
    label = name or _label(chosen)
    scores = score_predictions(sentences, preds)
    report: dict[str, Any] = {
        "bench": "extraction",
        "extractor": label,
        "data": {"path": str(data) if data is not None else f"kenning/bench/{DATA_DIR}",
                 "sha256": hashes, "sentences": len(sentences),
                 "by_source": dict(sorted(Counter(s.source for s in sentences).items()))},
        "said": SAID.isoformat(),
        "parts": {part: scores[part] for part in PARTS if part in scores},
        "targets": _targets(scores.get("held_out")),
        "cost": {"sentences": len(sentences), "seconds": round(seconds, 4), "repeat": repeat,
                 "sentences_per_second": round(len(sentences) / seconds, 1) if seconds else None},
        "tuning_mistakes": scores.get("mistakes", {"missed": [], "false": []}),
    }  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / "report.md").write_text(_markdown(report))
    return report


def _label(extractor: Extractor | StatementReader) -> str:
    if not callable(extractor):
        return extractor.name
    qualname = getattr(extractor, "__qualname__", type(extractor).__name__)
    return f"{extractor.__module__}.{qualname}"


def _num(value: float | None) -> object:
    return "-" if value is None else value


def _headline(report: Mapping[str, Any]) -> list[str]:
    rows = []
    for part, s in report["parts"].items():
        a, r, neg = s["asserts"], s["revokes"], s["negatives"]
        rows.append([
            part, s["sentences"], a["labelled"], a["predicted"], _num(a["precision"]),
            _num(a["recall"]), r["labelled"], _num(r["recall"]), _num(r["precision"]),
            s["past_read_as_current"], neg["sentences"], neg["with_any_fact"], _num(neg["rate"]),
        ])  # fmt: skip
    header = ["part", "sentences", "self asserts", "predicted", "precision", "recall",
              "revokes", "revoke recall", "revoke precision", "past read as current",
              "negatives", "negatives with a fact", "FP rate"]  # fmt: skip
    return table(header, rows)


def _family_lines(report: Mapping[str, Any]) -> list[str]:
    parts = list(report["parts"])
    families = sorted({f for p in parts for f in report["parts"][p]["by_family"]})
    rows = []
    for family in families:
        row: list[object] = [family]
        for part in parts:
            c = report["parts"][part]["by_family"].get(family)
            row += (
                ["", "", "-", "-"]
                if c is None
                else [c["labelled"], c["predicted"], _num(c["precision"]), _num(c["recall"])]
            )
        rows.append(row)
    header = ["family"] + [f"{p} {m}" for p in parts
                           for m in ("labelled", "predicted", "precision", "recall")]  # fmt: skip
    return table(header, rows)


def _source_lines(report: Mapping[str, Any]) -> list[str]:
    rows = []
    for part, s in report["parts"].items():
        for source, c in s["by_source"].items():
            a, r = c["asserts"], c["revokes"]
            rows.append([part, source, a["labelled"], a["predicted"], _num(a["precision"]),
                         _num(a["recall"]), r["labelled"], _num(r["recall"])])  # fmt: skip
    header = ["part", "source", "self asserts", "predicted", "precision", "recall", "revokes",
              "revoke recall"]  # fmt: skip
    return table(header, rows)


def _mistake_lines(report: Mapping[str, Any]) -> list[str]:
    mistakes = report["tuning_mistakes"]
    lines = ["", f"## Tuning part: labelled facts not found ({len(mistakes['missed'])})", ""]
    lines += [f"- [{m['bucket']}] {m['family']}={m['value']!r} ({m['op']}, {m['subject']}): "
              f"{m['text']}" for m in mistakes["missed"]] or ["(none)"]  # fmt: skip
    lines += ["", f"## Tuning part: facts predicted but not labelled ({len(mistakes['false'])})",
              ""]  # fmt: skip
    lines += [
        f"- [{m['bucket']}] `{m['attribute']}`={m['value']!r} -> {m['family']} "
        f"({m['op']}, {m['subject']}): {m['text']}"
        for m in mistakes["false"]
    ] or ["(none)"]
    return lines


def _markdown(report: Mapping[str, Any]) -> str:
    data, cost = report["data"], report["cost"]
    targets = ", ".join(
        f"{k} {_num(v['held_out'])} (target {v['target']}, {'met' if v['met'] else 'not met'})"
        for k, v in report["targets"].items()
    )
    lines = [
        *heading("kenning bench extraction"),
        f"Extractor `{report['extractor']}` on `{data['path']}` ({data['sentences']} labelled "
        f"sentences: {', '.join(f'{k} {v}' for k, v in data['by_source'].items())}; sha256 "
        f"`{data['sha256']['all'][:16]}`). Self asserts: current facts the speaker states about "
        "themselves; a prediction matches a label with the same subject, family, normalised "
        "value, op and negation (see `kenning.bench.extraction_bench`). Negatives: sentences "
        "labelled with no fact.",
        "",
        *_headline(report),
        "",
        f"Held-out targets (issue 27): {targets}.",
        "",
        f"Cost: {cost['sentences']} sentences in {cost['seconds']} s "
        f"({_num(cost['sentences_per_second'])} sentences/s, best of {cost['repeat']}).",
        "",
        "## By family (self asserts and revokes)",
        "",
        *_family_lines(report),
        "",
        "## By source",
        "",
        *_source_lines(report),
        "",
        "The held-out part's mistakes are not listed: rules are written on the tuning part only.",
        *_mistake_lines(report),
        "",
    ]
    return "\n".join(lines)
