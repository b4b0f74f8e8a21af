"""Text analysis for the lexical signal: word tokens, Porter stems, stopwords, query terms.

Shared by the store (which indexes stems) and search (which reads queries), so it sits at the
bottom layer. Tokens follow FTS5's ``porter unicode61``: lower-case, strip diacritics, split
on anything that is not a letter or digit, then stem alphabetic ASCII words of 3-64 letters
with the Porter algorithm — the same rules FTS5's ``porter`` tokenizer applies, so the two
lexical paths agree on nearly every word (on the LoCoMo development turns, 8 of 2,762 turns
tokenize differently, all in stems of rare words).
"""

from __future__ import annotations

import re
import threading
import unicodedata
from functools import lru_cache
from typing import Any

__all__ = ["STOPWORDS", "query_terms", "stem", "words"]

_WORD_RE = re.compile(r"[^\W_]+")


_local = threading.local()


def _stemmer() -> Any:
    # A snowball stemmer keeps its working state on the instance: shared by two threads it
    # mixes their words up or raises IndexError. One per thread.
    found = getattr(_local, "stemmer", None)
    if found is None:
        import snowballstemmer

        found = _local.stemmer = snowballstemmer.stemmer("porter")
    return found


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """Porter stem of a lower-case word (words FTS5 would not stem are returned as they are)."""
    if 3 <= len(word) <= 64 and word.isascii() and word.isalpha():
        return str(_stemmer().stemWord(word))
    return word


def words(text: str) -> list[str]:
    """Lower-cased, diacritic-free word tokens of *text*, unstemmed."""
    lowered = text.lower()
    if not lowered.isascii():
        lowered = "".join(
            ch for ch in unicodedata.normalize("NFKD", lowered) if not unicodedata.combining(ch)
        )
    return _WORD_RE.findall(lowered)


_MAX_TERMS = 48

# Function words that only add noise to an OR query; kept short and generic on purpose.
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its
    itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    s t d ll m re ve don didn doesn isn wasn weren haven hasn won wouldn shouldn couldn
    """.split()
)


def query_terms(text: str) -> list[str]:
    """Lower-cased word tokens of *text* minus stopwords (all tokens if only stopwords)."""
    tokens = words(text)
    kept = [w for w in tokens if w not in STOPWORDS]
    return list(dict.fromkeys(kept or tokens))[:_MAX_TERMS]
