"""Turn free user text into a safe FTS5 match expression.

User text is never interpreted as FTS5 syntax: it is split into word tokens, each token is
quoted as a string, and the tokens are joined with ``OR`` so BM25 ranks documents by how many
and how rare the matched words are.
"""

from __future__ import annotations

import re

__all__ = ["STOPWORDS", "match_expression", "query_terms"]

_WORD_RE = re.compile(r"\w+", re.UNICODE)
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
    words = [w.lower() for w in _WORD_RE.findall(text)]
    kept = [w for w in words if w not in STOPWORDS]
    return list(dict.fromkeys(kept or words))[:_MAX_TERMS]


def match_expression(text: str) -> str:
    """An FTS5 MATCH string for *text*: quoted terms joined by OR ('' if no terms).

    >>> match_expression('refund "order" AND NEAR(x)')
    '"refund" OR "order" OR "near" OR "x"'
    """
    terms = query_terms(text)
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
