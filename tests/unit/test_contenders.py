"""Only the contenders need loading: bonuses added to them give the same top k as bonuses
added to every fused candidate (kenning.search.fusion.contenders)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from kenning.search.fusion import Fused, FusionConfig, ItemStats, add_bonuses, contenders
from kenning.search.timeref import TimeWindow

NOW = datetime(2026, 1, 1, tzinfo=UTC)
WINDOW = TimeWindow(NOW - timedelta(days=10), NOW - timedelta(days=5), "last week")
INSIDE = (NOW - timedelta(days=7)).timestamp()
OUTSIDE = (NOW - timedelta(days=30)).timestamp()


def _fused(scores: dict[str, float]) -> list[Fused]:
    return sorted((Fused(key, s) for key, s in scores.items()), key=lambda f: (-f.score, f.id))


def test_without_a_named_time_the_bar_is_the_kth_score_less_the_largest_bonus() -> None:
    config = FusionConfig(access_weight=0.02, recency_weight=0.0)
    fused = _fused({"a": 0.9, "b": 0.8, "c": 0.79, "d": 0.77})
    assert contenders(fused, k=2, config=config) == ["a", "b", "c"]
    assert contenders(fused, k=2, config=config, depth=4) == ["a", "b", "c", "d"]


def test_a_record_outside_the_named_time_cannot_ride_its_bonus() -> None:
    config = FusionConfig(access_weight=0.02, time_weight=0.2)
    fused = _fused({"in1": 0.6, "in2": 0.55, "out": 0.7, "far": 0.6, "unknown": 0.5})
    times = {"in1": INSIDE, "in2": INSIDE, "out": OUTSIDE, "far": OUTSIDE}
    # Floors: in1 .8, in2 .75: the bar for k=2 is .75. "far" reaches .62 at most; "out"
    # .72; "unknown" may be inside: .72.
    assert contenders(fused, k=2, config=config, windows=[WINDOW], times=times) == [
        "in1", "in2"
    ]  # fmt: skip
    # Without times every record may be inside the window: all stay.
    assert len(contenders(fused, k=2, config=config, windows=[WINDOW])) == 5


def test_the_head_counts_the_time_bonus_a_record_will_surely_get() -> None:
    config = FusionConfig(access_weight=0.0, time_weight=0.2)
    fused = _fused({"a": 0.9, "b": 0.5, "c": 0.45, "d": 0.4})
    times = {"a": OUTSIDE, "b": OUTSIDE, "c": OUTSIDE, "d": INSIDE}
    # d's floor .6 puts it second: with depth 2 it is loaded though it ranks last by score.
    assert contenders(fused, k=1, config=config, windows=[WINDOW], times=times, depth=2) == [
        "a", "d"
    ]  # fmt: skip


scores = st.dictionaries(
    st.text("abcdefgh", min_size=1, max_size=2),
    st.floats(0, 1, allow_nan=False),
    min_size=1,
    max_size=12,
)


@given(
    scores,
    st.data(),
    st.integers(1, 5),
    st.sampled_from([0.0, 0.02, 0.1]),
    st.sampled_from([0.0, 0.2, 0.5]),
    st.booleans(),
)
def test_bonuses_on_the_contenders_give_the_top_k_of_bonuses_on_all(
    base: dict[str, float],
    data: st.DataObject,
    k: int,
    access: float,
    time_weight: float,
    named: bool,
) -> None:
    config = FusionConfig(access_weight=access, time_weight=time_weight, recency_weight=0.0)
    fused = _fused(base)
    when = {key: data.draw(st.sampled_from([INSIDE, OUTSIDE, WINDOW.start.timestamp()]))
            for key in base}  # fmt: skip
    known = {key: at for key, at in when.items() if data.draw(st.booleans())}
    counts = {key: data.draw(st.integers(0, 200)) for key in base}
    stats = {r: ItemStats(datetime.fromtimestamp(at, UTC), counts[r]) for r, at in when.items()}
    windows = [WINDOW] if named else []
    everything = add_bonuses(fused, config=config, stats=stats, now=NOW, windows=windows)
    wanted = set(contenders(fused, k=k, config=config, windows=windows, times=known))
    loaded = {key: s for key, s in stats.items() if key in wanted}
    some = add_bonuses(
        [f for f in fused if f.id in wanted], config=config, stats=loaded, now=NOW, windows=windows
    )
    assert some[:k] == everything[:k]


def _reference(
    fused: list[Fused],
    *,
    k: int,
    config: FusionConfig,
    windows: list[TimeWindow],
    times: dict[str, float],
    depth: int,
) -> list[str]:
    """contenders() as first written: a plain loop over every candidate, no pruning."""
    other = config.recency_weight + config.access_weight
    bonus = config.time_weight if windows else 0.0
    if bonus == 0.0:
        floor = fused[min(k, len(fused)) - 1].score - other
        head = {f.id for f in fused[:depth]}
        return [f.id for f in fused if f.score >= floor or f.id in head]
    edge = 0.001
    spans = [(w.start.timestamp(), w.end.timestamp()) for w in windows]
    floors, reach = [], []
    for f in fused:
        at = times.get(f.id)
        surely = at is not None and any(s + edge <= at < e - edge for s, e in spans)
        perhaps = at is None or any(s - edge <= at < e + edge for s, e in spans)
        floors.append(f.score + bonus if surely else f.score)
        reach.append(other + bonus if perhaps else other)
    order = sorted(range(len(fused)), key=floors.__getitem__, reverse=True)
    bar = floors[order[min(k, len(fused)) - 1]]
    head = {fused[i].id for i in order[:depth]}
    return [
        f.id
        for f, up in zip(fused, reach, strict=True)
        if f.score + up + 1e-12 >= bar or f.id in head
    ]


@given(
    scores,
    st.data(),
    st.integers(1, 5),
    st.integers(0, 12),
    st.sampled_from([0.0, 0.02, 0.1]),
    st.sampled_from([0.0, 0.2, 0.5]),
    st.booleans(),
)
def test_contenders_and_their_head_match_a_plain_loop_over_every_candidate(
    base: dict[str, float],
    data: st.DataObject,
    k: int,
    depth: int,
    access: float,
    time_weight: float,
    named: bool,
) -> None:
    config = FusionConfig(access_weight=access, time_weight=time_weight, recency_weight=0.0)
    fused = _fused(base)
    when = {key: data.draw(st.sampled_from([INSIDE, OUTSIDE, WINDOW.start.timestamp()]))
            for key in base}  # fmt: skip
    known = {key: at for key, at in when.items() if data.draw(st.booleans())}
    windows = [WINDOW] if named else []
    got = contenders(fused, k=k, config=config, windows=windows, times=known, depth=depth)
    assert got == _reference(fused, k=k, config=config, windows=windows, times=known, depth=depth)
