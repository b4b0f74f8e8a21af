"""Build the 100k-event SQLite file of docs/scaling.md's "Cold starts": synthetic support
turns (tenant 'bench', seed 7, as `kenning bench store` generates them), MiniLM vectors, fact
extraction off; the partition is loaded once its rows are in, and the store is closed once
the graph has every row (closing saves the graph beside the file).

Usage: PYTHONPATH=src python scripts/cold_start_store.py FILE 100000
Then: /usr/bin/time -v kenning search --db FILE --tenant bench "my refund for the broken order"
"""

import sys
import time
from pathlib import Path

from kenning.bench.synthetic import synthetic_events
from kenning.longterm.service import LongTermSettings
from kenning.memory import Memory
from kenning.records import Scope
from kenning.settings import Settings

path, n = Path(sys.argv[1]), int(sys.argv[2])
settings = Settings(longterm=LongTermSettings(extract=False), track_access=False)
mem = Memory.open(path, settings=settings)
stream = synthetic_events(n, seed=7)
done, t0 = 0, time.time()
while done < n:
    batch = []
    for _ in range(min(256, n - done)):
        batch.append(next(stream).item())
    mem.ingest(batch)
    done += len(batch)
    if done % 5120 == 0:
        print(done, round(done / (time.time() - t0), 1), flush=True)
mem.search(Scope("bench"), "refund")
st = mem.store.vector_index("bench", wait_s=None)
print("index", st.state, st.nodes, flush=True)
mem.close()
print("done", round(time.time() - t0, 1), flush=True)
