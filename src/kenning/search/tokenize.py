"""Word tokens for the in-memory BM25 index, modelled on FTS5's ``porter unicode61``.

Lower-case, strip diacritics, split on anything that is not a letter or digit, then stem
alphabetic ASCII words of 3-64 letters with the Porter algorithm — the same rules FTS5's
``porter`` tokenizer applies, so the two lexical paths agree on nearly every word (on the
LoCoMo development turns, 8 of 2,762 turns tokenize differently, all in stems of rare words).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = ["stem", "words"]

_WORD_RE = re.compile(r"[^\W_]+")


@lru_cache(maxsize=1)
def _stemmer() -> object:
    import snowballstemmer

    return snowballstemmer.stemmer("porter")


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """Porter stem of a lower-case word (words FTS5 would not stem are returned as they are)."""
    if 3 <= len(word) <= 64 and word.isascii() and word.isalpha():
        return str(_stemmer().stemWord(word))  # type: ignore[attr-defined]
    return word


def words(text: str) -> list[str]:
    """Lower-cased, diacritic-free word tokens of *text*, unstemmed."""
    lowered = text.lower()
    if not lowered.isascii():
        lowered = "".join(
            ch for ch in unicodedata.normalize("NFKD", lowered) if not unicodedata.combining(ch)
        )
    return _WORD_RE.findall(lowered)
