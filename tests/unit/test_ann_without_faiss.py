"""faiss is an extra (``kenning[ann]``): without it, partitions over the HNSW threshold are
searched exactly, with the same results, and one warning per process says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from kenning.records import Scope
from kenning.store.ann import AnnConfig
from kenning.store.sqlite.store import SQLiteStore
from tests.unit.test_ann import ALL, MODEL, SYNC, fill, unit_vectors

# Runs with `import faiss` failing: opens a database whose saved HNSW index needs faiss, grows
# a second tenant past the threshold, and prints what its searches found and what was logged.
_WITHOUT_FAISS = """
import json, logging, sys
sys.modules["faiss"] = None  # `import faiss` raises ImportError from here on
records = []
handler = logging.Handler()
handler.emit = records.append
logging.getLogger("kenning").addHandler(handler)
from tests.unit.test_ann_without_faiss import QUERIES, TENANTS, nearest
from tests.unit.test_ann import SYNC, fill, unit_vectors
from kenning.store.sqlite.store import SQLiteStore

store = SQLiteStore(sys.argv[1], ann=SYNC)
fill(store, unit_vectors(300, seed=8), tenant="globex")
fill(store, unit_vectors(300, seed=9), tenant="globex")  # crosses SYNC.min_rows (500)
print(json.dumps({
    "found": [nearest(store, tenant) for tenant in TENANTS],
    "states": [store.vector_index(tenant).state for tenant in TENANTS],
    "faiss_blocked": sys.modules["faiss"] is None,
    "ann_warnings": [r.getMessage() for r in records if r.name == "kenning.store.ann"],
}))
store.close()
"""

QUERIES = unit_vectors(20, seed=7)
TENANTS = ("acme", "globex")


def nearest(store: SQLiteStore, tenant: str) -> list[list[str]]:
    return [
        [c.id for c in store.nearest(Scope(tenant), q, model=MODEL, filters=ALL, limit=10)]
        for q in QUERIES
    ]


def test_search_is_exact_and_warns_once_without_faiss(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with_faiss = SQLiteStore(path, ann=SYNC)
    fill(with_faiss, unit_vectors(1_000))
    assert with_faiss.vector_index("acme").state == "ready"
    with_faiss.close()
    assert list((tmp_path / "m.db.ann").glob("*.hnsw"))  # a saved graph that needs faiss

    env = os.environ | {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    run = subprocess.run(
        [sys.executable, "-c", _WITHOUT_FAISS, str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=True,
    )
    report = json.loads(run.stdout)

    exact = SQLiteStore(path, ann=AnnConfig(enabled=False))
    assert report["found"] == [nearest(exact, tenant) for tenant in TENANTS]
    exact.close()
    assert report["states"] == ["exact", "exact"]  # both over the threshold, both exact
    assert report["faiss_blocked"] is True  # nothing imported faiss behind the block
    assert len(report["ann_warnings"]) == 1, report["ann_warnings"]
    assert "pip install 'kenning[ann]'" in report["ann_warnings"][0]
