"""Fitting the linear re-ranker (pure): pairwise logistic loss over recorded candidates.

A question's *group* is what the engine's re-ranker saw for it: its best ``depth`` fused
candidates (after lifts and bonuses), their :data:`~kenning.search.rerank.FEATURES`, and
which of them are evidence. Every (evidence, other) pair of a group asks the model to score
the evidence higher (linear RankNet). Each group's pairs share the group's weight, so a
question with many evidence turns weighs no more than one with a single turn; groups without
both kinds of candidate teach nothing and are skipped. The fit is Newton's method on
standardised features (the loss is convex, so it converges in a few steps); the weights come
back on the features' own scale, the scale :class:`~kenning.search.rerank.RerankModel`
multiplies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kenning.search.fusion import Fused

__all__ = ["FitResult", "Group", "fit_pairwise", "group_weights"]

_STEPS = 50
_TOLERANCE = 1e-10


@dataclass(frozen=True, slots=True)
class Group:
    """One question's candidates as the re-ranker saw them.

    ``fused`` holds the candidates best first (their scores are what re-ordering hands out
    again), ``x`` one feature row per candidate, ``gold`` the candidate ids that are evidence.
    """

    fused: tuple[Fused, ...]
    x: npt.NDArray[np.float64]
    gold: frozenset[str]

    def __post_init__(self) -> None:
        if self.x.shape[0] != len(self.fused):
            raise ValueError("a group needs one feature row per candidate")

    @property
    def teaches(self) -> bool:
        """Whether the group has an evidence candidate and another one (a pair to learn)."""
        held = sum(f.id in self.gold for f in self.fused)
        return 0 < held < len(self.fused)


@dataclass(frozen=True, slots=True)
class FitResult:
    """Fitted weights (on the features' scale), the final loss and the Newton steps taken."""

    weights: tuple[float, ...]
    loss: float
    steps: int
    pairs: int


def group_weights(datasets: Sequence[Sequence[Group]]) -> list[list[float]]:
    """Per dataset, per group: its share of the loss. Every dataset weighs the same in all,
    and within a dataset every teaching group the same (a group that teaches nothing, 0)."""
    teaching = [sum(g.teaches for g in groups) for groups in datasets]
    used = sum(1 for n in teaching if n)
    return [
        [(1.0 / (used * n)) if g.teaches else 0.0 for g in groups]
        for groups, n in zip(datasets, teaching, strict=True)
    ]


def _pairs(
    groups: Sequence[Group], weights: Sequence[float]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Feature differences (evidence minus other) of every pair, and each pair's weight."""
    diffs: list[npt.NDArray[np.float64]] = []
    shares: list[npt.NDArray[np.float64]] = []
    for group, weight in zip(groups, weights, strict=True):
        if weight <= 0 or not group.teaches:
            continue
        gold = np.fromiter((f.id in group.gold for f in group.fused), dtype=bool)
        good, bad = group.x[gold], group.x[~gold]
        d = (good[:, None, :] - bad[None, :, :]).reshape(-1, group.x.shape[1])
        diffs.append(d)
        shares.append(np.full(len(d), weight / len(d)))
    if not diffs:
        raise ValueError("no group has both an evidence candidate and another one")
    return np.concatenate(diffs), np.concatenate(shares)


def fit_pairwise(groups: Sequence[Group], weights: Sequence[float], *, l2: float) -> FitResult:
    """Weights minimising the weighted pairwise logistic loss plus ``l2 * |w|²`` (on
    standardised features: *l2* means the same whatever a feature's scale).

    Args:
        groups: The training questions.
        weights: Each group's share of the loss (see :func:`group_weights`).
        l2: Ridge strength, > 0 (it also keeps constant features at weight 0).

    Raises:
        ValueError: No group teaches anything, or *l2* is not positive.
    """
    if not l2 > 0:
        raise ValueError("l2 must be positive")
    d, c = _pairs(groups, weights)
    c = c / c.sum()
    rows = np.concatenate([g.x for g, w in zip(groups, weights, strict=True) if w > 0])
    scale = rows.std(axis=0)
    scale[scale == 0] = 1.0
    z = d / scale
    beta = np.zeros(z.shape[1])
    steps, loss = 0, _loss(z, c, beta, l2)
    for steps in range(1, _STEPS + 1):  # noqa: B007 - the count is reported
        margin = z @ beta
        p = _sigmoid(-margin)  # each pair's probability of being mis-ordered
        gradient = -(c * p) @ z + 2 * l2 * beta
        hessian = (z * (c * p * (1 - p))[:, None]).T @ z + 2 * l2 * np.eye(len(beta))
        step = np.linalg.solve(hessian, gradient)
        # A halving line search keeps every step a descent even far from the optimum.
        size = 1.0
        while size > 1e-6:
            trial = beta - size * step
            trial_loss = _loss(z, c, trial, l2)
            if trial_loss <= loss:
                break
            size /= 2
        else:
            break
        beta, previous, loss = trial, loss, trial_loss
        if previous - loss < _TOLERANCE:
            break
    return FitResult(
        weights=tuple(float(w) for w in beta / scale), loss=float(loss), steps=steps,
        pairs=len(d),
    )  # fmt: skip


def _sigmoid(v: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    out: npt.NDArray[np.float64] = 0.5 * (1.0 + np.tanh(0.5 * v))
    return out


def _loss(
    z: npt.NDArray[np.float64], c: npt.NDArray[np.float64], beta: npt.NDArray[np.float64],
    l2: float,
) -> float:  # fmt: skip
    # log(1 + e^-m), stable for large |m|
    return float(c @ np.logaddexp(0.0, -(z @ beta)) + l2 * beta @ beta)
