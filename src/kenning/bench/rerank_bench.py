"""``kenning bench rerank``: train the opt-in re-ranker on the tuning parts, select on validation.

Both development files are ingested as their benches ingest them (``kenning bench locomo`` /
``longmemeval``: the same scopes, times and ``now``, access tracking off) and every question
is searched once by kenning with its defaults and the re-ranker slot filled by a
:class:`FeatureRecorder`. The recorder keeps what the engine hands a re-ranker (the best
``depth`` candidates after lifts and bonuses, and their features) and leaves the order as it
is, so the recorded rankings are kenning's own with re-ranking off.

Re-ordering is the engine's last step, so any model's rankings follow exactly from what was
recorded: its :meth:`~kenning.search.rerank.RerankModel.order` of the recorded candidates,
then the rest of the ranking as it was. That is how each fitted model is scored here, with the
benches' own scorers; ``tests/integration/test_rerank_bench.py`` checks it against searches
made with the model on.

For each L2 strength a model is fitted on the tuning parts (:mod:`kenning.bench.rerank_fit`:
the datasets weigh half each, their questions the same), and all are scored on both parts.
The one with the best validation objective — the mean of LoCoMo turn recall@10, LoCoMo
session nDCG@5, LongMemEval session recall_all@5 and LongMemEval turn recall_all@10 — is
written to ``rerank_weights.jsonl``, loadable by
:meth:`~kenning.search.rerank.RerankModel.load`. Nothing here reads ids, names or answers of
a particular split: gold comes from each file's evidence fields.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from kenning.bench import locomo_bench as loc
from kenning.bench import longmemeval_bench as lme
from kenning.bench.datasets import (
    Conversation,
    LMEQuestion,
    Question,
    load_locomo,
    load_longmemeval,
)
from kenning.bench.harness import TURNS, BenchStores, ingest_rows, safe_id
from kenning.bench.report import heading, table, write_files
from kenning.bench.rerank_fit import Group, fit_pairwise, group_weights
from kenning.bench.split import PARTS
from kenning.embed.base import Embedder
from kenning.errors import InvalidInput
from kenning.memory import Memory
from kenning.records import Scope
from kenning.search.fusion import Fused
from kenning.search.rerank import FEATURES, Reranker, RerankModel
from kenning.settings import Settings

__all__ = [
    "DEFAULT_L2",
    "Asked",
    "FeatureRecorder",
    "objective",
    "rankings_of",
    "run_rerank_bench",
]

DEFAULT_L2 = (0.001, 0.003, 0.01, 0.03, 0.1)
WEIGHTS_FILE = "rerank_weights.jsonl"


class FeatureRecorder:
    """A :class:`~kenning.search.rerank.Reranker` that keeps what it is handed and re-orders
    nothing: :attr:`last` holds the best ``depth`` candidates of the latest search and their
    features (None before a search that got that far)."""

    def __init__(self, depth: int) -> None:
        if depth < 2:
            raise ValueError("depth must be at least 2")
        self._depth = depth
        self.last: tuple[tuple[Fused, ...], npt.NDArray[np.float64]] | None = None

    @property
    def depth(self) -> int:
        return self._depth

    def order(self, fused: Sequence[Fused], x: npt.NDArray[np.float64]) -> list[Fused]:
        self.last = (tuple(fused[: len(x)]), np.array(x, dtype=np.float64))
        return list(fused)


@dataclass(frozen=True, slots=True)
class Asked:
    """One question as searched: its part, kenning's ranking (record ids, best first), and the
    head of that ranking as the re-ranker saw it (``group.gold``: its evidence records)."""

    part: str
    ranking: tuple[str, ...]
    group: Group


def rankings_of(asked: Sequence[Asked], model: Reranker | None) -> list[list[str]]:
    """Each question's ranking (record ids, as many as it returned) had *model* re-ranked it
    (None: as searched)."""
    out = []
    for a in asked:
        head = a.group.fused if model is None else model.order(a.group.fused, a.group.x)
        ids = [f.id for f in head]
        # A search returns its k best, and re-ordering hands out the same places.
        out.append([*ids, *a.ranking[len(ids) :]][: len(a.ranking)])
    return out


def objective(locomo: dict[str, Any], longmemeval: dict[str, Any]) -> float:
    """The selection objective of one part (the mean of four headline metrics)."""
    return float(
        np.mean(
            [
                locomo["turn"]["recall@10"],
                locomo["session"]["ndcg@5"],
                longmemeval["session"]["recall_all@5"],
                longmemeval["turn"]["recall_all@10"],
            ]
        )
    )


def _search(
    memory: Memory, recorder: FeatureRecorder, scope: Scope, query: str, k: int, **kw: Any
) -> tuple[list[str], tuple[tuple[Fused, ...], npt.NDArray[np.float64]]]:
    recorder.last = None
    hits = memory.search(scope, query, k=k, kinds=TURNS, **kw)
    ranking = [h.id for h in hits]
    empty: tuple[tuple[Fused, ...], npt.NDArray[np.float64]] = ((), np.zeros((0, len(FEATURES))))
    seen = recorder.last or empty
    # The recorder re-orders nothing, so the ranking starts with what it saw.
    assert [f.id for f in seen[0][: len(ranking)]] == ranking[: len(seen[0])]
    return ranking, seen


@dataclass
class _Dataset:
    """A dataset's questions as searched, with how to score rankings of record ids."""

    asked: list[Asked]
    score: Callable[[Sequence[int], list[list[str]]], dict[str, Any]]


def _locomo(
    loaded: tuple[list[Conversation], list[Question]], stores: BenchStores, embedder: Embedder,
    settings: Settings, recorder: FeatureRecorder, progress: Callable[[str], None],
) -> _Dataset:  # fmt: skip
    conversations, questions = loaded
    part_of = loc.locomo_parts(conversations)
    now_of = {c.id: loc.conversation_now(c) for c in conversations}
    memory = stores.memory("kenning", embedder, settings)
    rows = [row for conv in conversations for row in loc._rows(conv)]
    progress(f"locomo: ingesting {len(rows)} turns")
    events, _ = ingest_rows(memory, rows)
    dia_of = {e.id: str(e.metadata["dia_id"]) for e in events}
    record_of: dict[tuple[str, str], str] = {
        (str(e.scope.user), str(e.metadata["dia_id"])): e.id for e in events
    }
    asked: list[Asked] = []
    kept = []
    for question in questions:
        if not question.evidence_turns:
            continue
        user = safe_id(question.conversation_id)
        ranking, (head, x) = _search(
            memory, recorder, Scope(loc.TENANT, user), question.text, loc.SEARCH_DEPTH,
            now=now_of[question.conversation_id],
        )  # fmt: skip
        gold = frozenset(
            record_of[(user, t)] for t in question.evidence_turns if (user, t) in record_of
        )
        asked.append(Asked(part_of[question.conversation_id], tuple(ranking), Group(head, x, gold)))
        kept.append(question)
    turn_to_session = {c.id: c.turn_to_session() for c in conversations}

    def score(indexes: Sequence[int], rankings: list[list[str]]) -> dict[str, Any]:
        return loc.score_locomo(
            [kept[i] for i in indexes], [[dia_of[r] for r in rankings[i]] for i in indexes],
            turn_to_session,
        )  # fmt: skip

    return _Dataset(asked, score)


def _longmemeval(
    every: list[LMEQuestion], stores: BenchStores, embedder: Embedder, settings: Settings,
    recorder: FeatureRecorder, progress: Callable[[str], None],
) -> _Dataset:  # fmt: skip
    part_of = lme.longmemeval_parts(every)  # the split counts every question of the file
    questions = [q for q in every if lme._scored(q)]
    rows = [row for question in questions for row in lme._rows(question)]
    longest = max((len(event.content) for _, event in rows), default=0)
    if longest > settings.max_content_chars:
        settings = replace(settings, max_content_chars=longest)
    memory = stores.memory("kenning", embedder, settings)
    progress(f"longmemeval: ingesting {len(rows)} turns")
    events, _ = ingest_rows(memory, rows, batch=2048)
    turn_of = {e.id: str(e.metadata["turn_id"]) for e in events}
    per_tenant: dict[str, dict[str, str]] = {}
    for e in events:
        per_tenant.setdefault(e.scope.tenant, {})[str(e.metadata["turn_id"])] = e.id
    asked: list[Asked] = []
    for question in questions:
        records = per_tenant.get(lme.tenant_of(question), {})
        k = max(1, min(settings.max_k, len(records)))
        ranking, (head, x) = _search(
            memory, recorder, Scope(lme.tenant_of(question)), question.text, k,
            now=question.question_date,
        )  # fmt: skip
        gold = frozenset(records[t] for t in question.evidence_turns if t in records)
        asked.append(Asked(part_of[question.id], tuple(ranking), Group(head, x, gold)))
    maps = [lme._user_turn_sessions(q) for q in questions]

    def score(indexes: Sequence[int], rankings: list[list[str]]) -> dict[str, Any]:
        return lme.score_longmemeval(
            [questions[i] for i in indexes], [[turn_of[r] for r in rankings[i]] for i in indexes],
            [maps[i] for i in indexes],
        )  # fmt: skip

    return _Dataset(asked, score)


def _in(asked: Sequence[Asked], part: str) -> list[int]:
    return [i for i, a in enumerate(asked) if a.part == part]


def _scores(data: dict[str, _Dataset], model: Reranker | None) -> dict[str, dict[str, Any]]:
    """Per part: each dataset's scores and the objective, had *model* re-ranked."""
    out: dict[str, dict[str, Any]] = {}
    ranked = {name: rankings_of(d.asked, model) for name, d in data.items()}
    for part in PARTS:
        got = {name: d.score(_in(d.asked, part), ranked[name]) for name, d in data.items()}
        out[part] = {**got, "objective": objective(got["locomo"], got["longmemeval"])}
    return out


def _row(name: str, scores: dict[str, dict[str, Any]]) -> list[object]:
    cells: list[object] = [name]
    for part in PARTS:
        lo, lm = scores[part]["locomo"], scores[part]["longmemeval"]
        ms = lm["by_type"].get("multi-session", {}).get("session", {}).get("recall_all@5")
        cells += [
            f"{lo['turn']['recall@10']:.3f} / {lo['session']['ndcg@5']:.3f}",
            f"{lm['session']['recall_all@5']:.3f} / {lm['turn']['recall_all@10']:.3f}"
            + (f" / {ms:.3f}" if ms is not None else ""),
            f"{scores[part]['objective']:.4f}",
        ]
    return cells


def run_rerank_bench(
    locomo: Path,
    longmemeval: Path,
    out: Path,
    *,
    embedder: Embedder,
    l2s: Iterable[float] = DEFAULT_L2,
    depth: int = 30,
    settings: Settings | None = None,
    progress: Callable[[str], None] = lambda line: None,
) -> dict[str, Any]:
    """Fit a re-ranker per L2 strength on the tuning parts, score all on both parts, write the
    one best on validation to ``out/rerank_weights.jsonl`` with report.json and report.md.

    Raises:
        InvalidInput: A part of a file has no scored question, or no tuning question has
            evidence among its candidates.

    Returns:
        The report: per model (``off``, ``shipped``, ``l2=…``) the scores of each part, the
        chosen L2, and the fit of each model.
    """
    started = time.perf_counter()
    recorder = FeatureRecorder(depth)
    base = settings or Settings()
    searching = replace(base, fusion=replace(base.fusion, rerank=True), rerank_model=recorder)
    # Both files are read before anything is embedded: a bad second file fails at once.
    conversations = load_locomo(locomo)
    questions = load_longmemeval(longmemeval)
    stores = BenchStores(None, [loc.TENANT])
    try:
        data = {
            "locomo": _locomo(conversations, stores, embedder, searching, recorder, progress),
            "longmemeval": _longmemeval(questions, stores, embedder, searching, recorder,
                                        progress),
        }  # fmt: skip
    finally:
        stores.close()
    for name, d in data.items():
        for part in PARTS:
            if not _in(d.asked, part):
                raise InvalidInput(f"the {part} part of the {name} file has no scored question")
    models: dict[str, dict[str, Any]] = {"off": {"scores": _scores(data, None)}}
    shipped = RerankModel.load()
    models["shipped"] = {"scores": _scores(data, shipped), "depth": shipped.depth}
    tuning = [[a.group for a in d.asked if a.part == "tuning"] for d in data.values()]
    shares = group_weights(tuning)
    flat_groups = [g for groups in tuning for g in groups]
    flat_shares = [w for ws in shares for w in ws]
    fitted: dict[str, RerankModel] = {}
    for l2 in l2s:
        progress(f"fitting l2={l2:g}")
        try:
            fit = fit_pairwise(flat_groups, flat_shares, l2=l2)
        except ValueError as exc:  # no tuning question has evidence among its candidates
            raise InvalidInput(f"nothing to train on: {exc}") from None
        model = RerankModel(weights=tuple(round(w, 6) for w in fit.weights), depth=depth)
        name = f"l2={l2:g}"
        fitted[name] = model
        models[name] = {
            "scores": _scores(data, model), "l2": l2, "loss": fit.loss, "steps": fit.steps,
            "pairs": fit.pairs, "weights": dict(zip(FEATURES, model.weights, strict=True)),
        }  # fmt: skip
    chosen = max(fitted, key=lambda n: models[n]["scores"]["validation"]["objective"])
    teaching = {
        name: sum(a.group.teaches for a in d.asked if a.part == "tuning")
        for name, d in data.items()
    }
    trained = (
        f"pairwise logistic (linear RankNet), {chosen}, on the top {depth} of the tuning parts "
        f"of {locomo.name} ({teaching['locomo']} questions with evidence among them) and "
        f"{longmemeval.name} ({teaching['longmemeval']}), each question weighing the same and "
        "each dataset half; L2 chosen on the validation parts (kenning bench rerank)"
    )
    out.mkdir(parents=True, exist_ok=True)
    body = {"features": list(FEATURES), "weights": list(fitted[chosen].weights),
            "depth": depth, "trained": trained}  # fmt: skip
    (out / WEIGHTS_FILE).write_text(json.dumps(body) + "\n")
    off = models["off"]["scores"]["validation"]["objective"]
    beats = models[chosen]["scores"]["validation"]["objective"] > off
    report: dict[str, Any] = {
        "locomo": str(locomo),
        "longmemeval": str(longmemeval),
        "depth": depth,
        "questions": {
            name: {part: len(_in(d.asked, part)) for part in PARTS} for name, d in data.items()
        },
        "teaching_tuning_questions": teaching,
        "chosen": chosen,
        "chosen_beats_off_on_validation": beats,
        "models": models,
        "bench_seconds": round(time.perf_counter() - started, 1),
    }
    write_files(out, report, _markdown(report))
    return report


def _markdown(report: dict[str, Any]) -> str:
    lines = [
        *heading("kenning bench rerank"),
        f"Re-ranking the best {report['depth']} candidates. Cells: LoCoMo turn R@10 / session "
        "nDCG@5; LongMemEval session R_all@5 / turn R_all@10 / multi-session session "
        "R_all@5; objective = mean of the four. Models are fitted on the tuning part and "
        f"chosen on validation: **{report['chosen']}**, written to `{WEIGHTS_FILE}` "
        + ("(beats re-ranking off on validation)." if report["chosen_beats_off_on_validation"]
           else "(does not beat re-ranking off on validation)."),
        "",
    ]  # fmt: skip
    header = ["model"]
    for part in PARTS:
        header += [f"{part} LoCoMo", f"{part} LongMemEval", f"{part} objective"]
    rows = [_row(name, m["scores"]) for name, m in report["models"].items()]
    lines += table(header, rows)
    lines += ["", f"Questions: {report['questions']}; bench {report['bench_seconds']} s.", ""]
    return "\n".join(lines)
