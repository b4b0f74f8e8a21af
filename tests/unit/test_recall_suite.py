"""The synthetic recall suite: determinism by seed, planted facts, and the baselines' rules."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from kenning.bench.recall_bench import (
    SUMMARY_HEADER,
    extractive_summary,
    run_recall_bench,
    sliding_window,
)
from kenning.bench.recall_suite import FACT_KINDS, generate_conversation
from kenning.embed.minilm import MiniLMEmbedder
from kenning.errors import InvalidInput
from kenning.tokens.routing import tokenizer_for


@pytest.mark.parametrize("seed", [0, 1, 7, 123])
def test_same_seed_same_conversation(seed: int) -> None:
    assert generate_conversation(seed) == generate_conversation(seed)


def test_different_seeds_differ() -> None:
    texts = {tuple(t.text for t in generate_conversation(seed).turns) for seed in range(10)}
    assert len(texts) == 10


@pytest.mark.parametrize("seed", range(20))
def test_planted_facts_appear_once(seed: int) -> None:
    conversation = generate_conversation(seed)
    turns = conversation.turns
    assert len(turns) == 50
    assert len(conversation.facts) == 20
    assert len({fact.kind for fact in conversation.facts}) == 20
    assert turns[0].role == "user"
    for index, fact in enumerate(conversation.facts):
        assert turns[fact.turn].text == fact.text
        assert turns[fact.turn].fact == index
        assert turns[fact.turn].role == "user"
        assert [t.text for t in turns].count(fact.text) == 1
        assert sum(fact.value in t.text for t in turns) == 1
        assert fact.value not in fact.question
    assert sum(t.fact is not None for t in turns) == 20
    assert all(a.at < b.at for a, b in itertools.pairwise(turns))


def test_questions_paraphrase_rather_than_copy() -> None:
    for kind in FACT_KINDS.values():
        for question in kind.questions:
            for template in kind.facts:
                assert question.lower() != template.lower()
                assert question.endswith("?")


def test_bad_sizes_are_refused() -> None:
    with pytest.raises(InvalidInput):
        generate_conversation(1, facts=len(FACT_KINDS) + 1)
    with pytest.raises(InvalidInput):
        generate_conversation(1, facts=5, turns=4)


def test_extractive_summary_keeps_first_sentences_within_budget() -> None:
    tokenizer = tokenizer_for("gpt-4o")
    turns = ["I parked on level 3. It was busy.", "Hello there! How are you?", "Bye."]
    full = extractive_summary(turns, 1000, tokenizer)
    assert full.splitlines() == [
        SUMMARY_HEADER,
        "- I parked on level 3.",
        "- Hello there!",
        "- Bye.",
    ]
    tight = extractive_summary(turns, tokenizer.count(SUMMARY_HEADER) + 9, tokenizer)
    assert tight.splitlines() == [SUMMARY_HEADER, "- I parked on level 3."]
    assert tokenizer.count(tight) <= tokenizer.count(SUMMARY_HEADER) + 9


def test_sliding_window_keeps_the_newest_turns_within_budget() -> None:
    tokenizer = tokenizer_for("gpt-4o")
    turns = generate_conversation(2).turns
    assert sliding_window(turns, 0, tokenizer) == []
    kept = sliding_window(turns, 120, tokenizer)
    assert kept == list(range(len(turns) - 1, len(turns) - 1 - len(kept), -1))
    used = sum(tokenizer.count(f"{turns[i].role}: {turns[i].text}") + 1 for i in kept)
    assert 0 < used <= 120
    assert sliding_window(turns, 10**6, tokenizer) == list(range(len(turns) - 1, -1, -1))


def test_recall_bench_report(tmp_path: Path) -> None:
    report = run_recall_bench(
        tmp_path, embedder=MiniLMEmbedder(), seed=5, conversations=2, progress=False
    )
    assert report["suite"] == "recall"
    assert report["seeds"] == [5, 6]
    assert list(report["systems"]) == [
        "sliding_window", "summary_only", "vector", "bm25", "kenning"
    ]  # fmt: skip
    for entry in report["systems"].values():
        assert 0.0 <= entry["recall@5"] <= 1.0
        assert len(entry["per_seed"]) == 2
    assert (
        report["systems"]["kenning"]["recall@5"] > report["systems"]["sliding_window"]["recall@5"]
    )
    assert json.loads((tmp_path / "report.json").read_text()) == report
    assert "summary_only" in (tmp_path / "report.md").read_text()
