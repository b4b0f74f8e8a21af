"""Where a write's time goes: the stage timers of the write path, collected only while a
benchmark asks, on real stores with the real model; and the model spends its tokens once
(one-sentence turns are one text, repeated units are not embedded again)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from kenning import Memory, Scope, Settings
from kenning.embed.base import DelegatingEmbedder, Matrix
from kenning.embed.minilm import MiniLMEmbedder
from kenning.longterm.service import LongTermSettings
from kenning.telemetry import collect_stages, stage
from tests.conftest import open_store

CHAT = Scope("acme", "dana", "s1")
LONG = (
    "I finally moved into the flat on Harbour Street last weekend after months of searching. "
    "The landlord agreed to a rent of 1,450 EUR a month, heating included."
)


class Counting(DelegatingEmbedder):
    """The real model, with the texts it was asked to embed written down."""

    def __init__(self, inner: MiniLMEmbedder) -> None:
        super().__init__(inner)
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.texts.extend(texts)
        return self.inner.embed(texts)


@pytest.mark.parametrize("defer", [False, True])
@pytest.mark.parametrize("backend", ["sqlite-file", "postgresql"])
def test_a_write_reports_its_stages_while_collected(
    backend: str, defer: bool, tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    settings = Settings(defer_vectors=defer)
    with Memory(open_store(backend, tmp_path), embedder=minilm, settings=settings) as memory:
        memory.search(Scope("acme", "dana"), "warm", k=1)  # loads the search partition
        memory.add_events(CHAT, [{"role": "user", "content": "warming up"}])
        memory.flush()
        with collect_stages() as times:
            memory.add_events(CHAT, [{"role": "user", "content": LONG}])
            memory.flush()  # deferred: the writer's model call and its catch-up
        memory.add_events(CHAT, [{"role": "user", "content": "not collected"}])
        memory.wait_for_facts()
    seconds = dict(times.seconds)
    for name in ("model", "plan", "pins", "store", "index"):
        assert seconds[name] > 0, name
    # A thread's CPU in a stage: the model's call does work on the thread that makes it.
    assert times.cpu_seconds["model"] > 0
    assert set(times.cpu_seconds) == set(times.seconds)
    if not defer:  # the transaction holds the catch-up of the loaded partition
        assert seconds["store"] > seconds["index"]
    assert seconds == dict(times.seconds)  # nothing was added after the block


def test_stages_cost_nothing_and_record_nothing_when_off() -> None:
    with stage("model"):
        pass
    with collect_stages() as times:
        with stage("model"):
            pass
        with stage("model"):
            pass
    assert set(times.seconds) == {"model"}
    with stage("model"):
        pass
    assert set(times.seconds) == {"model"}


def test_a_stage_own_time_leaves_out_the_stages_nested_in_it_on_its_thread() -> None:
    def elsewhere() -> None:
        with stage("index"):  # another thread's index stage is not inside this store stage
            time.sleep(0.05)

    with collect_stages() as times, stage("store"):
        time.sleep(0.02)
        with stage("index"):
            time.sleep(0.03)
        other = threading.Thread(target=elsewhere)
        other.start()
        other.join()
    assert times.seconds["index"] >= 0.08
    assert times.own_seconds["index"] == times.seconds["index"]
    inner = times.seconds["store"] - times.own_seconds["store"]
    assert 0.03 <= inner <= times.seconds["index"] - 0.05  # its own thread's index only
    assert times.own_seconds["store"] >= 0.02 + 0.05  # the sleep and the wait for the thread


def test_one_sentence_turns_are_one_text_and_repeated_units_are_not_embedded_again(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    counting = Counting(minilm)
    quiet = Settings(longterm=LongTermSettings(extract=False))  # facts would embed too
    with Memory.open(tmp_path / "k.db", embedder=counting, settings=quiet) as memory:
        # Each write's deferred vectors are stored (flush) before the next write looks for
        # them by content hash.
        memory.add_events(CHAT, [{"role": "user", "content": "About two years old."}])
        memory.flush()
        assert len(counting.texts) == 1  # one sentence: the whole turn, once
        memory.add_events(CHAT, [{"role": "user", "content": LONG}])
        memory.flush()
        units = counting.texts[1:]
        assert len(units) == 2  # two units, no whole-turn vector beside them
        memory.add_events(Scope("acme", "dana", "s2"), [{"role": "user", "content": LONG}])
        memory.flush()
        assert counting.texts[3:] == []  # the same units again: their vectors are reused
