"""What a serving process loads, and when: each heavy part only once something needs it.

Issue 32's bound on a small store's process (350 MB with the model) leaves no room for a part
loaded but unused: spaCy's import and pipeline hold ~100 MB, each exact token counter's
vocabulary 25-55 MB. These run real processes over a real SQLite file and the real model.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

_WRITE = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from kenning.embed.minilm import MiniLMEmbedder
    from kenning.memory import Memory
    from kenning.records import NewEvent, Role, Scope
    from kenning.store.sqlite.store import SQLiteStore

    memory = Memory(SQLiteStore(Path(sys.argv[1])), embedder=MiniLMEmbedder(threads=1))
    scope = Scope("acme", "ann", "s1")
    memory.add_events(scope, [NewEvent(Role.ASSISTANT, "Your order ships on Monday.")])
    before = "spacy" in sys.modules
    memory.add_events(scope, [NewEvent(Role.USER, "I moved to Lisbon last spring.")])
    memory.wait_for_facts()
    print(json.dumps({"before": before, "after": "spacy" in sys.modules}))
    memory.close()
""")

_SERVE = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from kenning.embed.minilm import MiniLMEmbedder
    from kenning.memory import Memory
    from kenning.records import Scope
    from kenning.store.sqlite.store import SQLiteStore

    memory = Memory(SQLiteStore(Path(sys.argv[1])), embedder=MiniLMEmbedder(threads=1))
    hits = memory.search(Scope("acme", "ann"), "where does ann live?")
    window = memory.assemble(Scope("acme", "ann", "s1"), budget_tokens=500, model="gpt-4o",
                             system="You are a helpful assistant.")
    import quicktok

    print(json.dumps({
        "hits": len(hits), "spacy": sorted(m for m in sys.modules if m.split(".")[0] == "spacy"),
        "encodings": sorted(name for name, _ in quicktok._CACHE),
    }))
    memory.close()
""")


def _run(script: str, db: Path) -> dict[str, object]:
    env = dict(os.environ, ORT_DISABLE_TELEMETRY="1", HF_HUB_OFFLINE="1")
    done = subprocess.run([sys.executable, "-c", script, str(db)], capture_output=True,
                          text=True, check=True, timeout=300, env=env)  # fmt: skip
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_spacy_loads_with_the_first_statement_and_serving_a_store_loads_one_counter(
    tmp_path: Path,
) -> None:
    db = tmp_path / "memory.db"
    written = _run(_WRITE, db)
    # Writing an assistant's turn reads no statement; a user's statement loads the parser.
    assert written == {"before": False, "after": True}

    served = _run(_SERVE, db)
    assert served["hits"], served
    # Searching and assembling a store never imports spaCy...
    assert served["spacy"] == [], served
    # ...and assembling for gpt-4o loads o200k's vocabulary, no other encoding.
    assert served["encodings"] == ["o200k_base"], served
