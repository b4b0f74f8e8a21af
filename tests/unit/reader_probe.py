"""The reader's development probe: everyday sentences written for kenning's statement reader
(``data/reader_probe.jsonl``: each with the round it was written in and the facts about its
speaker that it states, as ``[attribute, value, revoke]``), read by
``tests/unit/test_reader_generalises.py`` (see there for how it is split and used).

The rounds: 1, every family, with assertions, negations, the past, withdrawals and sentences
that state nothing; 2, a second batch written after the first round's fixes; 3, several facts
to a sentence, openers, asides and chat; 4, withdrawals and corrections in many wordings.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

Facts = set[tuple[str, str, bool]]

_DATA = Path(__file__).parent / "data" / "reader_probe.jsonl"


def _load() -> list[tuple[str, Facts]]:
    out = []
    for line in _DATA.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        out.append((row["text"], {(a, v, bool(r)) for a, v, r in row["facts"]}))
    return out


PROBE: list[tuple[str, Facts]] = _load()
"""(sentence, the facts about the speaker it states: (attribute, value, revoke)), in kenning's
attribute names (see :mod:`kenning.longterm.parsing.reader`)."""


def half(text: str) -> str:
    """ "fix" or "check", by the sentence's SHA-256."""
    return "fix" if int(hashlib.sha256(text.encode()).hexdigest(), 16) % 2 == 0 else "check"
