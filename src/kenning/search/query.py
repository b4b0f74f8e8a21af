"""Turn free user text into a safe FTS5 match expression.

User text is never interpreted as FTS5 syntax: it is split into word tokens, each token is
quoted as a string, and the tokens are joined with ``OR`` so BM25 ranks documents by how many
and how rare the matched words are.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from kenning.records import Scope
from kenning.search.tokenize import words

__all__ = [
    "STOPWORDS",
    "match_expression",
    "query_terms",
    "scope_match",
    "scope_terms",
    "text_match",
]

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


def match_expression(text: str) -> str:
    """An FTS5 MATCH string for *text*: quoted terms joined by OR ('' if no terms).

    >>> match_expression('refund "order" AND NEAR(x)')
    '"refund" OR "order" OR "near" OR "x"'
    """
    terms = query_terms(text)
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def _id_token(prefix: str, *parts: str) -> str:
    # Digits only after a consonant prefix: the porter stemmer leaves such tokens unchanged.
    digest = hashlib.blake2b("\x1f".join(parts).encode("utf-8"), digest_size=8).digest()
    return f"{prefix}{int.from_bytes(digest, 'big')}"


def scope_terms(tenant: str, user: str | None, session: str | None, role: str, kind: str) -> str:
    """The scope tokens indexed with a record (see :func:`scope_match`)."""
    tokens = [_id_token("t", tenant)]
    if user is not None:
        tokens.append(_id_token("u", tenant, user))
    if session is not None:
        tokens.append(_id_token("s", tenant, session))
    tokens += [f"r{role}", f"k{kind}"]
    return " ".join(tokens)


def scope_match(scope: Scope, *, roles: Sequence[str] = (), kinds: Sequence[str] = ()) -> str:
    """An FTS5 expression that selects exactly the records of *scope* (and roles, kinds).

    ANDed with the text terms, it makes the full-text engine rank only in-scope rows, so a
    ``LIMIT`` after ranking is still a limit over the scope, never over other tenants.
    """
    parts = [f'scope_terms : "{_id_token("t", scope.tenant)}"']
    if scope.user is not None:
        parts.append(f'scope_terms : "{_id_token("u", scope.tenant, scope.user)}"')
    if scope.session is not None:
        parts.append(f'scope_terms : "{_id_token("s", scope.tenant, scope.session)}"')
    for prefix, values in (("r", roles), ("k", kinds)):
        if values:
            alternatives = " OR ".join(f'"{prefix}{v}"' for v in values)
            parts.append(f"scope_terms : ({alternatives})")
    return " AND ".join(parts)


def text_match(text: str) -> str:
    """The text terms of *text* restricted to the text and label columns ('' if none)."""
    terms = match_expression(text)
    return f"{{text label}} : ({terms})" if terms else ""
