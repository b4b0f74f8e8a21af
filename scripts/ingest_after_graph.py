"""Ingest rate 0->N1 and N1->N2 events into one tenant with its partition loaded (as a
server's is), vectors from a hash of each text (no model: the rates are the store's).

Usage: PYTHONPATH=src python scripts/ingest_after_graph.py 30000 60000 (docs/scaling.md)."""

import hashlib
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from kenning.bench.synthetic import synthetic_events
from kenning.longterm.service import LongTermSettings
from kenning.memory import Memory
from kenning.records import Scope
from kenning.settings import Settings


class HashEmbedder:
    model_id = "hash-384"
    dimension = 384
    max_tokens = 256
    normalized = True

    def embed(self, texts):
        out = np.empty((len(texts), 384), dtype=np.float32)
        for i, t in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(t.encode(), digest_size=8).digest(), "little")
            v = np.random.default_rng(seed).standard_normal(384).astype(np.float32)
            out[i] = v / np.linalg.norm(v)
        return out


n1, n2 = int(sys.argv[1]), int(sys.argv[2])
settings = Settings(longterm=LongTermSettings(extract=False), track_access=False)
with tempfile.TemporaryDirectory() as tmp:
    mem = Memory.open(Path(tmp) / "r.db", embedder=HashEmbedder(), settings=settings)
    stream = synthetic_events(n2, seed=7)
    done, spent, marks = 0, 0.0, {}
    loaded = False
    for target in (n1, n2):
        t_stage, done_stage = spent, done
        while done < target:
            batch = []
            for _ in range(min(256, target - done)):
                batch.append(next(stream).item())
            t = time.perf_counter()
            mem.ingest(batch)
            spent += time.perf_counter() - t
            done += len(batch)
            if not loaded and done >= 25_000:
                mem.search(Scope("bench"), "refund")
                loaded = True  # the partition follows the writes from now on
            if done % 25_600 == 0:
                print(done, round(done / spent, 1), flush=True)
        marks[target] = (done - done_stage) / (spent - t_stage)
        t = time.perf_counter()
        st = mem.store.vector_index("bench", wait_s=None)
        print(
            f"stage to {target}: {marks[target]:.1f} events/s; index {st.state} nodes "
            f"{st.nodes}, waited {time.perf_counter() - t:.1f} s",
            flush=True,
        )
        q = []
        for i in range(60):
            t = time.perf_counter()
            mem.search(Scope("bench"), f"refund for order A-{i * 37} broken", k=10)
            q.append((time.perf_counter() - t) * 1000)
        print(
            f"  tenant search p50 {np.percentile(q, 50):.1f} p95 {np.percentile(q, 95):.1f} ms",
            flush=True,
        )
    print(f"ratio {marks[n2] / marks[n1]:.3f}")
    mem.close()
