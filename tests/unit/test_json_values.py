"""check_json's quick pass (no paths kept) agrees with its full walk: it accepts a value only
when the walk accepts it, and accepts every plain JSON value the walk accepts, so a fault is
always found and named by the walk."""

from __future__ import annotations

from collections import OrderedDict
from enum import IntEnum

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kenning.errors import InvalidInput
from kenning.records.values import (
    MAX_JSON_INT_BITS,
    _plainly_json,
    _walk_json,
    check_json,
)


class Level(IntEnum):
    LOW = 1


scalars = st.one_of(
    st.none(), st.booleans(), st.floats(), st.text(max_size=8),
    st.sampled_from(["\x00", "a\ud800", "\udfff", 2**MAX_JSON_INT_BITS, -(2**1100), Level.LOW,
                     b"bytes", 1 + 2j]),
    st.integers(min_value=-(2**1030), max_value=2**1030),
)  # fmt: skip
keys = st.one_of(st.text(max_size=4), st.sampled_from([1, None, "k\x00", "\ud801", 2.5]))
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(keys, inner, max_size=4),
        st.dictionaries(st.text(max_size=3), inner, max_size=3).map(OrderedDict),
    ),
    max_leaves=20,
)


def _walk_accepts(value: object, depth: int) -> bool:
    try:
        _walk_json(value, "v", depth)
    except InvalidInput:
        return False
    return True


def _plain(value: object) -> bool:
    """Built only of the exact types the quick pass reads."""
    if isinstance(value, dict | list | tuple) and type(value) not in (dict, list, tuple):
        return False
    if isinstance(value, dict):
        return all(type(k) is str for k in value) and all(map(_plain, value.values()))
    if isinstance(value, list | tuple):
        return all(map(_plain, value))
    return value is None or type(value) in (str, bool, int, float)


@settings(max_examples=400, deadline=None)
@given(values, st.integers(min_value=1, max_value=4))
def test_the_quick_pass_accepts_exactly_what_the_walk_accepts(value: object, depth: int) -> None:
    accepted = _walk_accepts(value, depth)
    if _plainly_json(value, depth):
        assert accepted
    elif accepted:
        assert not _plain(value)  # only a subclass (an IntEnum, an OrderedDict) goes slowly


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"a": [1, {"b": "x\x00"}]}, "v.a[1].b contains a NUL character"),
        ({"a": float("nan")}, "v.a is nan"),
        ({"a": [2**MAX_JSON_INT_BITS]}, "v.a[0] is an integer over"),
        ({1: "x"}, "v has the key 1"),
        ({"a": {"b": set()}}, "v.a.b is a set"),
        ([[[["deep"]]]], "nested deeper than 3 levels"),
    ],
)
def test_a_fault_is_named_where_it_is(value: object, message: str) -> None:
    with pytest.raises(InvalidInput, match=message.replace("[", r"\[").replace("]", r"\]")):
        check_json(value, "v", max_depth=3)
