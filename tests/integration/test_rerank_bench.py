"""``kenning bench rerank``: what it records is what the engine re-ranks, and the command.

Real SQLite and the real embedding model. The bench scores every fitted model from one
recorded search per question; the first test shows that this equals searching with the
model on.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kenning import FusionConfig, Memory, NewEvent, Scope, Settings
from kenning.bench.rerank_bench import Asked, FeatureRecorder, rankings_of
from kenning.bench.rerank_fit import Group
from kenning.cli.main import main
from kenning.search.rerank import FEATURES, Reranker, RerankModel
from tests.conftest import MemoEmbedder
from tests.integration.test_bench_commands import _locomo
from tests.unit.test_longmemeval_bench import lme_items

START = datetime(2026, 2, 2, 9, 0, tzinfo=UTC)
TOPICS = [
    ("Dana", "My order A-1042 was charged twice, can you refund one charge?"),
    ("Bot", "I see two charges of 49.90 on A-1042; the duplicate is refunded."),
    ("Dana", "Thanks. Also, the blender arrived with a cracked jug."),
    ("Bot", "Sorry! Do you want a new jug or a refund for the blender?"),
    ("Dana", "A new jug, please. Ship it to my office on Baker Street."),
    ("Bot", "Done: a replacement jug ships to Baker Street on Thursday."),
    ("Dana", "When will the refund show on my card? I need it before the trip."),
    ("Bot", "Refunds take three to five business days to appear."),
    ("Dana", "My sister Priya uses the same account, can she see my orders?"),
    ("Bot", "Only if you add her as a household member in settings."),
]
QUERIES = [
    "Where does the replacement jug ship to?",
    "How long does a refund take?",
    "What was wrong with the blender?",
    "Can Priya see the orders?",
    "Which order was charged twice and for how much?",
]


def _write(memory: Memory) -> None:
    for day in range(4):
        scope = Scope("acme", "dana", f"s{day}")
        memory.add_events(scope, [
            NewEvent("user" if who == "Dana" else "assistant", f"{text} (visit {day})",
                     at=START + timedelta(days=7 * day, minutes=i), metadata={"speaker": who})
            for i, (who, text) in enumerate(TOPICS[day:] + TOPICS[:day])
        ])  # fmt: skip


def test_rankings_from_the_recorded_features_equal_searching_with_the_model(
    tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    depth, k = 12, 8
    recorder = FeatureRecorder(depth)
    on = replace(FusionConfig(), rerank=True)
    rng = np.random.default_rng(11)
    models: list[Reranker] = [
        replace(RerankModel.load(), depth=depth),
        RerankModel(weights=tuple(float(w) for w in rng.normal(size=len(FEATURES))), depth=depth),
    ]
    with Memory.open(tmp_path / "m.db", embedder=real_embedder,
                     settings=Settings(track_access=False, fusion=on,
                                       rerank_model=recorder)) as memory:  # fmt: skip
        _write(memory)
        asked: list[Asked] = []
        for query in QUERIES:
            recorder.last = None
            hits = memory.search(Scope("acme", "dana"), query, k=k, now=START + timedelta(60))
            assert recorder.last is not None
            head, x = recorder.last
            assert len(head) == depth and x.shape == (depth, len(FEATURES))
            asked.append(Asked("tuning", tuple(h.id for h in hits), Group(head, x, frozenset())))
    changed = 0
    for model in models:
        settings = Settings(track_access=False, fusion=on, rerank_model=model)
        with Memory.open(tmp_path / "m.db", embedder=real_embedder, settings=settings) as memory:
            offline = rankings_of(asked, model)
            for query, a, expected in zip(QUERIES, asked, offline, strict=True):
                hits = memory.search(Scope("acme", "dana"), query, k=k, now=START + timedelta(60))
                assert [h.id for h in hits] == expected
                changed += expected != list(a.ranking)
    assert changed >= 3  # the models do re-order: the equality is not the searched order again
    assert rankings_of(asked, None) == [list(a.ranking) for a in asked]


def _fixtures(tmp_path: Path) -> tuple[Path, Path]:
    """A LoCoMo file of two conversations and a LongMemEval file whose stride split puts a
    scored question in each part."""
    first = _locomo()[0]
    second = json.loads(json.dumps(first).replace("conv-tiny", "conv-tiny-2"))
    locomo = tmp_path / "locomo.json"
    locomo.write_text(json.dumps([first, second]))
    items = lme_items()
    for n in (2, 3):
        copy = json.loads(json.dumps(items[0]))
        copy["question_id"] = f"q-bike-{n}"
        items.append(copy)
    lme = tmp_path / "lme.json.gz"
    lme.write_bytes(gzip.compress(json.dumps(items).encode()))
    return locomo, lme


def test_bench_rerank_writes_a_loadable_model_chosen_on_validation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    locomo, lme = _fixtures(tmp_path)
    out = tmp_path / "out"
    argv = ["bench", "rerank", "--locomo", str(locomo), "--longmemeval", str(lme), "--out",
            str(out), "--l2", "0.01,0.1", "--depth", "5"]  # fmt: skip
    assert main(argv) == 0
    report: dict[str, Any] = json.loads((out / "report.json").read_text())
    assert report["questions"] == {"locomo": {"tuning": 2, "validation": 2},
                                   "longmemeval": {"tuning": 2, "validation": 1}}  # fmt: skip
    assert set(report["models"]) == {"off", "shipped", "l2=0.01", "l2=0.1"}
    best = max(("l2=0.01", "l2=0.1"),
               key=lambda n: report["models"][n]["scores"]["validation"]["objective"])  # fmt: skip
    assert report["chosen"] == best
    model = RerankModel.load(out / "rerank_weights.jsonl")
    assert model.depth == 5
    assert model.weights == tuple(report["models"][best]["weights"][f] for f in FEATURES)
    assert report["models"]["off"]["scores"]["tuning"]["locomo"]["turn"]["recall@5"] == 1.0
    assert "# kenning bench rerank" in capsys.readouterr().out


def test_bench_rerank_refuses_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    locomo, lme = _fixtures(tmp_path)
    base = ["bench", "rerank", "--locomo", str(locomo), "--longmemeval", str(lme), "--out",
            str(tmp_path / "o")]  # fmt: skip
    swapped = ["bench", "rerank", "--locomo", str(locomo), "--longmemeval", str(locomo),
               "--out", str(tmp_path / "o")]  # fmt: skip
    assert main(swapped) == 2  # refused before anything is ingested
    assert "question_id" in capsys.readouterr().err
    assert main([*base, "--l2", "0,1"]) == 2
    assert "--l2" in capsys.readouterr().err
    assert main([*base, "--l2", "x"]) == 2
    assert main([*base, "--depth", "1"]) == 2
    missing = ["bench", "rerank", "--locomo", str(tmp_path / "nope.json"), "--longmemeval",
               str(lme), "--out", str(tmp_path / "o")]  # fmt: skip
    assert main(missing) == 2
    assert "--locomo" in capsys.readouterr().err
    one = tmp_path / "one.json"
    one.write_text(json.dumps(_locomo()))  # one conversation: no validation part
    argv = ["bench", "rerank", "--locomo", str(one), "--longmemeval", str(lme), "--out",
            str(tmp_path / "o")]  # fmt: skip
    assert main(argv) == 2
    assert "validation part of the locomo file" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
