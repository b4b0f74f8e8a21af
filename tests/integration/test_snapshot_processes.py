"""Partition snapshots shared by processes (real SQLite, real processes): two processes that
close one file at the same moments leave a snapshot and a graph that belong together, and a
process killed while it writes leaves nothing a later one reads wrong or keeps for ever."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from kenning.store.flat_file import read_flat
from kenning.store.sqlite.store import SQLiteStore

sys.path.insert(0, str(Path(__file__).parents[1] / "unit"))
from test_partition_snapshot import (
    SYNC,
    answers,
    fill,
    from_snapshot,
    rebuilt_answers,
    same,
    snapshot,
)

_HELPERS = str(Path(__file__).parents[1] / "unit")
_ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([_HELPERS, *sys.path])}

# Two processes (forked before either opens the file) open it, search, write and close in
# lockstep, so that their saves land at the same moments; each counts the opens whose
# partition did not come from the snapshot the other (or itself) saved.
_CLOSE_TOGETHER = textwrap.dedent(
    """
    import json, sys
    from multiprocessing import Barrier, Process, Queue
    from kenning.store.sqlite.store import SQLiteStore
    from test_partition_snapshot import SYNC, answers, fill, from_snapshot

    def run(db, who, rounds, barrier, out):
        rebuilt = 0
        for r in range(rounds):
            barrier.wait()
            store = SQLiteStore(db, ann=SYNC)
            answers(store)
            rebuilt += not from_snapshot(store)
            fill(store, 20, start=10_000 * (who + 1) + 20 * r)
            answers(store)
            barrier.wait()
            store.close()
        out.put(rebuilt)

    db, rounds = sys.argv[1], int(sys.argv[2])
    barrier, out = Barrier(2), Queue()
    workers = [Process(target=run, args=(db, w, rounds, barrier, out)) for w in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    print(json.dumps([out.get() for _ in workers]))
    """
)

# Opens the file, writes rows, starts a save the way a closing store does (a temporary file
# beside the snapshot, half written) and is killed before it renames it or closes.
_KILLED_WHILE_SAVING = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from kenning.store.flat_file import temporary_name
    from kenning.store.sqlite.store import SQLiteStore
    from test_partition_snapshot import SYNC, answers, fill, snapshot

    db = Path(sys.argv[1])
    store = SQLiteStore(db, ann=SYNC)
    answers(store)
    fill(store, 50, start=400)
    temporary_name(snapshot(db)).write_bytes(b"KENNING-FLAT" + bytes(4096))
    os.kill(os.getpid(), signal.SIGKILL)
    """
)


def _seeded(tmp_path: Path) -> Path:
    db = tmp_path / "m.db"
    store = SQLiteStore(db, ann=SYNC)
    fill(store, 400)
    answers(store)
    store.close()
    return db


def test_two_processes_closing_at_once_leave_a_snapshot_that_reads_back(tmp_path: Path) -> None:
    db = _seeded(tmp_path)
    rounds = 40
    done = subprocess.run(
        [sys.executable, "-c", _CLOSE_TOGETHER, str(db), str(rounds)],
        env=_ENV, capture_output=True, text=True, timeout=600, check=True,
    )  # fmt: skip
    # Every open after the first found a snapshot it could read (before saves took the
    # folder's lock, one process removed the graph the other's snapshot named).
    assert json.loads(done.stdout.splitlines()[-1]) == [0, 0]
    folder = snapshot(db).parent
    meta, _ = read_flat(snapshot(db))
    assert sorted(p.name for p in folder.glob("*.graph")) == [meta["graph"]]
    assert not list(folder.glob("*.tmp"))
    store = SQLiteStore(db, ann=SYNC)
    found = answers(store)
    assert from_snapshot(store)
    assert store.partition_status("acme").rows == 400 + 2 * rounds * 20
    store.close()
    same(found, rebuilt_answers(db, tmp_path))


def test_a_process_killed_while_saving_leaves_nothing_read_wrong_or_kept(tmp_path: Path) -> None:
    db = _seeded(tmp_path)
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED_WHILE_SAVING, str(db)], env=_ENV, timeout=600
    )
    assert killed.returncode == -signal.SIGKILL
    folder = snapshot(db).parent
    (left,) = folder.glob("*.tmp")
    store = SQLiteStore(db, ann=SYNC)
    found = answers(store)
    # The snapshot from before the killed process, caught up with the rows it committed.
    assert from_snapshot(store)
    assert store.partition_status("acme").added == 50
    store.close()
    same(found, rebuilt_answers(db, tmp_path))
    # The next save removed what the dead process left half written.
    assert not left.exists() and not list(folder.glob("*.tmp"))
    again = SQLiteStore(db, ann=SYNC)
    assert answers(again) == found and from_snapshot(again)
    assert again.partition_status("acme").added == 0
    again.close()
