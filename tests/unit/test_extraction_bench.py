"""The extraction bench: its labelled self-statements and its scorer, pinned on hand-made
predictions, and the bench end to end on the shipped set with kenning's rules."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from kenning.bench.extraction_bench import (
    FAMILIES,
    LabelledFact,
    LabelledSentence,
    PredictedFact,
    families_of,
    load_set,
    normalise_value,
    predicted_fact,
    run_extraction_bench,
    score_predictions,
)
from kenning.cli.main import main
from kenning.errors import InvalidInput
from kenning.longterm.parsing.parser import MODEL, MODEL_VERSION
from kenning.records import USER, FactDraft


def _sentence(
    text: str, *facts: LabelledFact, part: str = "tuning", speaker: str | None = None
) -> LabelledSentence:
    return LabelledSentence(
        id=f"t:{text}", part=part, source="test", kind="self", text=text, facts=facts,
        speaker=speaker,
    )  # fmt: skip


def _pred(family: str, value: str, *, subject: str = USER, op: str = "assert") -> PredictedFact:
    return PredictedFact(subject=subject, families=frozenset({family}), value=value, op=op)


def _score(*pairs: tuple[LabelledSentence, list[PredictedFact]]) -> dict[str, Any]:
    return score_predictions([s for s, _ in pairs], {s.id: p for s, p in pairs})


def test_a_value_matches_only_at_its_span_boundary() -> None:
    siemens = _sentence(
        "I work at Siemens as an engineer",
        LabelledFact(USER, "employer", "Siemens"),
        LabelledFact(USER, "occupation", "engineer"),
    )
    beatles = _sentence(
        "I've always loved the Beatles.", LabelledFact(USER, "preference", "Beatles")
    )
    report = _score(
        (siemens, [_pred("employer", "Siemens as an engineer")]),
        (beatles, [_pred("preference", "the beatles!")]),
    )
    asserts = report["tuning"]["asserts"]
    assert asserts == {"labelled": 3, "predicted": 2, "tp": 1, "precision": 0.5,
                       "recall": 0.3333}  # fmt: skip
    by_family = report["tuning"]["by_family"]
    assert by_family["employer"]["tp"] == 0 and by_family["employer"]["predicted"] == 1
    assert by_family["preference"]["tp"] == 1


def test_a_wrong_family_is_a_false_fact_and_a_miss() -> None:
    lisbon = _sentence("I moved to Lisbon.", LabelledFact(USER, "location", "Lisbon"))
    report = _score((lisbon, [_pred("origin", "Lisbon")]))
    asserts = report["tuning"]["asserts"]
    assert (asserts["tp"], asserts["predicted"], asserts["labelled"]) == (0, 1, 1)
    by_family = report["tuning"]["by_family"]
    assert by_family["location"]["recall"] == 0.0
    assert by_family["origin"]["precision"] == 0.0


def test_a_missed_or_mistyped_revocation_counts_against_revocation_recall() -> None:
    jazz = LabelledFact(USER, "preference", "jazz", "revoke", current=False)
    forget = _sentence("Actually, forget that I like jazz.", jazz)
    meat = _sentence(
        "I stopped eating meat", LabelledFact(USER, "diet", "meat", "revoke", current=False)
    )
    phone = _sentence(
        "I switched from iPhone to Android",
        LabelledFact(USER, "device", "iPhone", "revoke", current=False),
        LabelledFact(USER, "device", "Android"),
    )
    negated = PredictedFact(USER, frozenset({"diet"}), "meat", negated=True)  # an assertion
    report = _score(
        (forget, []),
        (meat, [negated]),
        (phone, [_pred("device", "iphone", op="revoke"), _pred("device", "Android")]),
    )
    part = report["tuning"]
    assert part["revokes"] == {"labelled": 3, "predicted": 1, "tp": 1, "precision": 1.0,
                               "recall": 0.3333}  # fmt: skip
    assert part["asserts"]["tp"] == 1 and part["asserts"]["predicted"] == 2
    missed = {(m["value"], m["bucket"]) for m in report["mistakes"]["missed"]}
    assert missed == {("jazz", "revokes"), ("meat", "revokes")}


def test_a_fact_on_a_negative_is_a_false_positive_sentence() -> None:
    question = LabelledSentence(
        id="q", part="tuning", source="test", kind="question", text="Am I allergic to nuts?",
        facts=(),
    )  # fmt: skip
    chat = LabelledSentence(id="c", part="tuning", source="test", kind="chitchat",
                            text="Thanks!", facts=())  # fmt: skip
    sister = LabelledSentence(id="s", part="tuning", source="test", kind="other",
                              text="My sister lives in Toronto.",
                              facts=(LabelledFact("sister", "location", "Toronto"),))  # fmt: skip
    report = score_predictions(
        [question, chat, sister],
        {"q": [_pred("allergy", "nuts")], "c": [],
         "s": [_pred("location", "Toronto", subject="sister")]},
    )  # fmt: skip
    part = report["tuning"]
    assert part["negatives"]["sentences"] == 2
    assert part["negatives"]["with_any_fact"] == part["negatives"]["with_user_fact"] == 1
    assert part["negatives"]["rate"] == 0.5
    assert part["negatives"]["by_kind"]["question"] == {"sentences": 1, "with_any_fact": 1}
    assert part["asserts"] == {"labelled": 0, "predicted": 1, "tp": 0, "precision": 0.0,
                               "recall": None}  # fmt: skip
    assert part["others"]["tp"] == 1


def test_a_past_fact_read_as_current_is_a_false_positive() -> None:
    oslo = _sentence(
        "I used to live in Oslo.", LabelledFact(USER, "location", "Oslo", current=False)
    )
    part = _score((oslo, [_pred("location", "Oslo")]))["tuning"]
    assert part["asserts"]["predicted"] == 1 and part["asserts"]["tp"] == 0
    assert part["past"]["labelled"] == 1 and part["past"]["tp"] == 0
    assert part["past_read_as_current"] == 1


def test_subjects_the_speaker_the_user_and_other_people() -> None:
    speaker = _sentence("I'm learning German now.", LabelledFact(USER, "language", "German"),
                        speaker="Tim")  # fmt: skip
    luis = _sentence("My brother Luis lives in Madrid.",
                     LabelledFact("brother Luis", "location", "Madrid"))  # fmt: skip
    wrong = _sentence("My sister is a vegan.", LabelledFact("sister", "diet", "vegan"))
    part = _score(
        (speaker, [_pred("language", "German", subject="Tim")]),
        (luis, [_pred("location", "Madrid", subject="brother")]),
        (wrong, [_pred("diet", "vegan")]),  # the sister's diet read as the user's
    )["tuning"]
    assert part["asserts"] == {"labelled": 1, "predicted": 2, "tp": 1, "precision": 0.5,
                               "recall": 1.0}  # fmt: skip
    assert part["others"]["labelled"] == 2 and part["others"]["tp"] == 1


def test_held_out_mistakes_are_not_listed() -> None:
    seen = _sentence("I play the guitar", LabelledFact(USER, "hobby", "guitar"))
    hidden = _sentence("I play the drums", LabelledFact(USER, "hobby", "drums"), part="held_out")
    report = _score((seen, []), (hidden, [_pred("hobby", "the drums on weekends")]))
    assert report["held_out"]["asserts"]["labelled"] == 1
    mistakes = report["mistakes"]
    assert [m["id"] for m in mistakes["missed"]] == [seen.id]
    assert mistakes["false"] == []


@pytest.mark.parametrize(
    ("attribute", "value", "families", "compared", "negated"),
    [
        ("employer", "Siemens", {"employer"}, "Siemens", False),
        ("location", "Porto", {"location"}, "Porto", False),
        ("hometown", "Cork", {"origin"}, "Cork", False),
        ("preferred name", "Dee", {"name"}, "Dee", False),
        ("relationship status", "married", {"relationship"}, "married", False),
        ("preference:jazz music", "loves", {"preference"}, "jazz music", False),
        ("preference:mornings", "dislikes", {"preference"}, "mornings", True),
        ("diet:no pork", "yes", {"diet"}, "pork", True),
        ("is_a:vegan", "yes", {"diet"}, "vegan", False),
        ("is_a:nurse", "yes", {"occupation", "identity"}, "nurse", False),
        ("allergy:peanuts", "allergic", {"allergy"}, "peanuts", False),
        ("condition:asthma", "has", {"health"}, "asthma", False),
        ("uses:linux", "yes", {"device"}, "linux", False),
        ("favorite colour", "green", {"preference"}, "green", False),
        ("mobile phone number", "555-0148", {"contact"}, "555-0148", False),
        ("shoe size", "42", {"unmapped:shoe size"}, "42", False),
    ],
)
def test_kennings_attributes_map_to_families(
    attribute: str, value: str, families: set[str], compared: str, negated: bool
) -> None:
    assert families_of(attribute, value) == (frozenset(families), compared, negated)
    assert all(f in FAMILIES for f in families if not f.startswith("unmapped:"))


def test_a_draft_becomes_a_predicted_fact() -> None:
    draft = FactDraft(subject=USER, attribute="preference:jazz", value="likes",
                      text="The user likes jazz", revoke=True)  # fmt: skip
    fact = predicted_fact(draft)
    assert (fact.families, fact.value, fact.op, fact.current) == (
        frozenset({"preference"}), "jazz", "revoke", True)  # fmt: skip
    assert normalise_value("  The Beatles! ") == "beatles"
    assert normalise_value("St. Mary's") == normalise_value("st mary s") == "st mary s"
    assert normalise_value("D&D") == "d d"


def test_the_shipped_set_is_large_balanced_and_split_by_id() -> None:
    sentences, hashes = load_set()
    assert len(sentences) >= 600
    assert set(hashes) == {"locomo.jsonl", "longmemeval.jsonl", "written.jsonl", "all"}
    assert Counter(s.source for s in sentences).keys() == {"locomo", "longmemeval", "written"}
    for s in sentences:
        digest = int(hashlib.sha256(s.id.encode()).hexdigest()[:8], 16)
        assert s.part == ("tuning" if digest % 100 < 60 else "held_out"), s.id
        for fact in s.facts:
            assert fact.family in FAMILIES
            assert fact.value.lower() in s.text.lower(), (s.id, fact.value)
            assert fact.op == "assert" or not fact.current
    parts = Counter(s.part for s in sentences)
    assert 0.5 < parts["tuning"] / len(sentences) < 0.7
    negatives = sum(not s.facts for s in sentences)
    assert 0.3 < negatives / len(sentences) < 0.8
    facts = [f for s in sentences for f in s.facts if f.subject == USER]
    assert sum(f.op == "revoke" for f in facts) >= 50
    assert {f.family for f in facts} == FAMILIES
    assert all(s.speaker for s in sentences if s.source == "locomo")
    folder = resources.files("kenning.bench").joinpath("data/self_statements")
    assert sum(len(f.read_bytes()) for f in folder.iterdir()) < 400_000


def test_issue_27s_examples_are_in_the_set() -> None:
    texts = {s.text for s in load_set()[0]}
    for text in ("Big news: I moved to Lisbon last month.", "I just got hired by Stripe",
                 "I've been vegan since 2020", "I switched from iPhone to Android",
                 "Actually, forget that I like jazz.", "I don't listen to jazz anymore",
                 "I work at Siemens as an engineer", "refunds.create currency: EUR"):  # fmt: skip
        assert text in texts


def test_a_bad_line_is_refused_with_its_place(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    row = {"id": "x", "split": "tuning", "kind": "self", "text": "I like tea",
           "facts": [{"subject": "user", "family": "beverage", "value": "tea", "op": "assert",
                      "current": True}]}  # fmt: skip
    bad.write_text(json.dumps(row) + "\n")
    with pytest.raises(InvalidInput, match=r"bad\.jsonl:1.*beverage"):
        load_set(bad)


def test_the_bench_runs_end_to_end_on_the_shipped_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main(["bench", "extraction", "--out", str(out), "--repeat", "1"]) == 0
    assert "# kenning bench extraction" in capsys.readouterr().out
    report = json.loads((out / "report.json").read_text())
    assert report["extractor"] == f"parse ({MODEL}=={MODEL_VERSION})"  # kenning's default
    assert set(report["parts"]) == {"tuning", "held_out"}
    assert report["data"]["sentences"] == len(load_set()[0])
    assert len(report["data"]["sha256"]["all"]) == 64
    assert report["cost"]["sentences_per_second"] > 0
    for part in report["parts"].values():
        assert part["asserts"]["labelled"] > 0 and part["revokes"]["labelled"] > 0
        assert 0.0 <= part["asserts"]["recall"] <= 1.0
    tuning = {s.id for s in load_set()[0] if s.part == "tuning"}
    mistakes = report["tuning_mistakes"]
    assert all(m["id"] in tuning for m in mistakes["missed"] + mistakes["false"])
    assert (out / "report.md").read_text().count("## Tuning part") == 2
    # The phrase rules are scored on request, under their name.
    rules = run_extraction_bench(tmp_path / "rules", extractor="rules", repeat=1)
    assert rules["extractor"] == "rules"
    assert rules["parts"]["tuning"]["asserts"]["tp"] > 0
    # A custom extractor is scored the same way: one that finds nothing finds nothing.
    empty = run_extraction_bench(tmp_path / "none", extractor=lambda event: [], repeat=1)
    assert empty["parts"]["tuning"]["asserts"]["tp"] == 0
    assert empty["parts"]["held_out"]["negatives"]["with_any_fact"] == 0
