"""Every number of every settings record refuses a string, a bool and NaN with kenning's typed
error naming the field (a config file or an environment variable hands over strings), and the
defaults stay valid."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest

from kenning.chat import LLMSettings
from kenning.compaction.plan import CompactionSettings
from kenning.context.assembler import ContextSettings
from kenning.context.window import PressureThresholds, TierCaps
from kenning.errors import InvalidInput
from kenning.longterm.service import LongTermSettings
from kenning.records.policy import TenantPolicy
from kenning.search.fusion import FusionConfig
from kenning.server.config import ServerSettings
from kenning.settings import Settings
from kenning.store.ann import AnnConfig

RECORDS: dict[type, dict[str, Any]] = {
    Settings: {}, CompactionSettings: {}, ContextSettings: {}, PressureThresholds: {},
    TierCaps: {}, FusionConfig: {}, AnnConfig: {}, LongTermSettings: {}, ServerSettings: {},
    TenantPolicy: {}, LLMSettings: {"base_url": "http://127.0.0.1:9/v1", "model": "m"},
}  # fmt: skip
NUMBER_TYPES = {"int", "float", "int | None", "float | None"}


def _numbers() -> list[tuple[type, str]]:
    return [
        (record, f.name)
        for record in RECORDS
        for f in dataclasses.fields(record)
        if str(f.type) in NUMBER_TYPES
    ]


@pytest.mark.parametrize("record", list(RECORDS), ids=lambda r: r.__name__)
def test_the_defaults_are_valid(record: type) -> None:
    record(**RECORDS[record])


@pytest.mark.parametrize(("record", "name"), _numbers(), ids=lambda x: getattr(x, "__name__", x))
@pytest.mark.parametrize("bad", ["12", True, math.nan, math.inf, [1]], ids=repr)
def test_a_number_that_is_not_one_is_refused_by_name(record: type, name: str, bad: object) -> None:
    with pytest.raises(InvalidInput, match=name):
        record(**{**RECORDS[record], name: bad})


def test_the_message_names_the_record_the_range_and_the_value() -> None:
    with pytest.raises(InvalidInput) as caught:
        AnnConfig(m="16")  # type: ignore[arg-type]
    assert str(caught.value) == "AnnConfig.m must be an int between 4 and 128, got '16'"
    with pytest.raises(InvalidInput) as caught:
        CompactionSettings(segment=0)
    assert str(caught.value) == "CompactionSettings.segment must be a number in (0, 1], got 0"
    with pytest.raises(InvalidInput) as caught:
        ServerSettings(max_events=-1)
    assert str(caught.value) == "ServerSettings.max_events must be an int >= 0 or None, got -1"
