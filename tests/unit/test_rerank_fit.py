"""Fitting the linear re-ranker: pairs, group weights and Newton's method (pure)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kenning.bench.rerank_fit import Group, _loss, _pairs, fit_pairwise, group_weights
from kenning.search.fusion import Fused


def _group(x: np.ndarray, gold: set[int]) -> Group:
    fused = tuple(Fused(id=f"r{i}", score=1.0 - i / 100, scores={}) for i in range(len(x)))
    return Group(fused=fused, x=np.asarray(x, dtype=np.float64),
                 gold=frozenset(f"r{i}" for i in gold))  # fmt: skip


def _order(group: Group, weights: tuple[float, ...]) -> list[int]:
    return [int(i) for i in np.argsort(-(group.x @ np.asarray(weights)), kind="stable")]


def test_groups_without_both_kinds_teach_nothing_and_datasets_weigh_half_each() -> None:
    x = np.zeros((3, 2))
    a = [_group(x, {0}), _group(x, {1}), _group(x, set())]  # the last has no evidence
    b = [_group(x, {0, 1, 2}), _group(x, {2})]  # the first has nothing but evidence
    assert [g.teaches for g in (*a, *b)] == [True, True, False, False, True]
    weights = group_weights([a, b])
    assert weights == [[0.25, 0.25, 0.0], [0.0, 0.5]]
    assert group_weights([a, [_group(x, set())]]) == [[0.5, 0.5, 0.0], [0.0]]


def test_every_evidence_other_pair_shares_its_groups_weight() -> None:
    g = _group(np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]]), {0, 2})
    d, c = _pairs([g], [0.5])
    assert sorted(map(tuple, d.tolist())) == [(1.0, -1.0), (2.0, 1.0)]
    assert c.tolist() == [0.25, 0.25]
    with pytest.raises(ValueError, match="no group"):
        _pairs([_group(np.zeros((2, 2)), set())], [1.0])


def test_the_fit_learns_which_feature_marks_the_evidence() -> None:
    rng = np.random.default_rng(4)
    groups = []
    for _ in range(40):
        x = rng.normal(size=(10, 3))
        gold = int(rng.integers(10))
        x[gold, 1] += 3.0  # feature 1 marks the evidence; 0 and 2 are noise
        groups.append(_group(x, {gold}))
    fit = fit_pairwise(groups, [1.0] * len(groups), l2=0.001)
    w = np.asarray(fit.weights)
    assert w[1] > 0 and abs(w[1]) > 3 * max(abs(w[0]), abs(w[2]))
    first = sum(_order(g, fit.weights)[0] in {int(i[1:]) for i in g.gold} for g in groups)
    assert first >= 36
    assert fit.pairs == 40 * 9 and 1 <= fit.steps <= 50
    # a stronger ridge pulls the weights in
    assert np.abs(fit_pairwise(groups, [1.0] * 40, l2=10.0).weights).sum() < np.abs(w).sum()


def test_bad_arguments_are_refused() -> None:
    g = _group(np.eye(2), {0})
    with pytest.raises(ValueError, match="l2"):
        fit_pairwise([g], [1.0], l2=0.0)
    with pytest.raises(ValueError, match="one feature row"):
        Group(fused=g.fused, x=np.zeros((3, 2)), gold=g.gold)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    scale=st.floats(1e-3, 1e3),
    column=st.integers(0, 2),
    l2=st.sampled_from([0.001, 0.01, 0.1]),
)
def test_the_fit_descends_and_does_not_depend_on_a_features_scale(
    seed: int, scale: float, column: int, l2: float
) -> None:
    rng = np.random.default_rng(seed)
    groups = [_group(rng.normal(size=(6, 3)), {int(rng.integers(6))}) for _ in range(8)]
    shares = [1.0 / len(groups)] * len(groups)
    fit = fit_pairwise(groups, shares, l2=l2)
    d, c = _pairs(groups, shares)
    scale_of = np.concatenate([g.x for g in groups]).std(axis=0)
    # Never worse than scoring every candidate the same (the start of the descent).
    assert fit.loss <= _loss(d / scale_of, c / c.sum(), np.zeros(3), l2) + 1e-12
    stretched = []
    for g in groups:
        x = g.x.copy()
        x[:, column] *= scale
        stretched.append(Group(fused=g.fused, x=x, gold=g.gold))
    again = fit_pairwise(stretched, shares, l2=l2)
    assert np.allclose(again.weights[column] * scale, fit.weights[column], rtol=1e-5, atol=1e-9)
    for g, s in zip(groups, stretched, strict=True):
        assert np.allclose(s.x @ np.asarray(again.weights), g.x @ np.asarray(fit.weights),
                           rtol=1e-5, atol=1e-8)  # fmt: skip
