"""SIGKILL around a write: a committed event always has its rule-extracted pins."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from kenning import Memory, Scope
from kenning.pins.extract import extract_pins

_ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}

_DIE_AFTER_COMMIT = textwrap.dedent(
    """
    import os, signal, sys
    from kenning import Memory, Scope
    memory = Memory.open(sys.argv[1], embedder=None)
    store = memory.store
    append = store.append_events

    def append_then_die(*args, **kwargs):
        append(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)  # the events are committed; nothing else runs

    store.append_events = append_then_die
    memory.add_events(Scope("acme", "dana", "s1"), [
        {"role": "user", "content": "My order A-1042 was charged twice"},
        {"role": "tool", "tool_name": "refunds",
         "content": '{"refund_id": "RF-7781", "amount": "42.50", "currency": "EUR",'
                    ' "status": "approved"}'},
    ])
    """
)

_KEEP_WRITING = textwrap.dedent(
    """
    import sys
    from kenning import Memory, Scope
    memory = Memory.open(sys.argv[1], embedder=None)
    start = int(sys.argv[2])
    for i in range(start, start + 100_000):
        memory.add_events(Scope("acme", "dana", f"s{i % 7}"), [
            {"role": "user", "content": f"Please look at order A-{i} and ticket T-{i}"},
        ])
        if i == start:
            print("writing", flush=True)
    """
)


def _missing_pins(path: Path) -> list[str]:
    """Ids of stored events whose rule-extracted pins are not all stored."""
    with Memory.open(path, embedder=None) as memory:
        events = memory.store.events(Scope("acme"))
        pinned = {(p.source_event_id, p.key) for p in memory.context.pins(Scope("acme"))}
        return [
            e.id
            for e in events
            if any((e.id, d.key) not in pinned for d in extract_pins(e, memory.settings.pin_rules))
        ]


def test_a_process_killed_right_after_the_commit_leaves_events_with_their_pins(
    tmp_path: Path,
) -> None:
    path = tmp_path / "crash.db"
    done = subprocess.run([sys.executable, "-c", _DIE_AFTER_COMMIT, str(path)], env=_ENV)
    assert done.returncode == -signal.SIGKILL
    with Memory.open(path, embedder=None) as memory:
        assert len(memory.store.events(Scope("acme"))) == 2
        values = {p.value for p in memory.context.pins(Scope("acme"))}
    assert {"A-1042", "RF-7781"} <= values
    assert _missing_pins(path) == []


def test_killed_at_random_moments_no_event_lacks_its_pins(tmp_path: Path) -> None:
    path = tmp_path / "random.db"
    rng = random.Random(17)
    for round_ in range(6):
        child = subprocess.Popen(
            [sys.executable, "-c", _KEEP_WRITING, str(path), str(round_ * 100_000)], env=_ENV,
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        # Killed at a random moment once it writes (a fixed wait could end while a child on a
        # busy machine was still starting: then it had written nothing).
        assert child.stdout is not None and child.stdout.readline() == "writing\n"
        time.sleep(0.5 + rng.random())
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
        assert _missing_pins(path) == []
    with Memory.open(path, embedder=None) as memory:
        assert len(memory.store.events(Scope("acme"))) > 50
