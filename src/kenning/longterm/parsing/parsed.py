"""A parsed sentence as plain records: what the statement reader reads (pure, no parser here).

The parser shell (:mod:`kenning.longterm.parsing.parser`) turns a parsed sentence into a
:class:`Parsed`: its tokens, each with its lemma, part of speech, fine tag, dependency label,
head and entity type, in the label sets of spaCy's English pipelines (Universal POS tags,
Penn Treebank tags, ClearNLP dependency labels, OntoNotes entity types). Tests build them by
hand, so the reader is tested without a model.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

__all__ = ["Parsed", "Token"]


@dataclass(frozen=True, slots=True)
class Token:
    """One token of a parsed sentence.

    Attributes:
        i: Its index in the sentence.
        text: The word as written.
        lemma: Its dictionary form (``moved`` -> ``move``, ``'m`` -> ``be``).
        pos: The universal part of speech (``VERB``, ``AUX``, ``NOUN``, ``PROPN``, ...).
        tag: The fine tag, which carries tense (``VBD`` past, ``VBN`` participle, ``VBG``,
            ``VBZ``/``VBP`` present, ``MD`` modal).
        dep: The dependency label (``nsubj``, ``dobj``, ``prep``, ``pobj``, ``neg``, ...).
        head: The index of its head (its own index at a root).
        ent: The entity type of the entity it is part of (``GPE``, ``ORG``, ``PERSON``,
            ``NORP``, ...), ``""`` outside entities or when entities are not read.
        space: Whether whitespace follows it.
    """

    i: int
    text: str
    lemma: str
    pos: str
    tag: str
    dep: str
    head: int
    ent: str = ""
    space: bool = True

    @property
    def lower(self) -> str:
        return self.text.lower()


@dataclass(frozen=True, slots=True)
class Parsed:
    """A parsed sentence: its text and tokens, with each token's children precomputed."""

    text: str
    tokens: tuple[Token, ...]
    kids: tuple[tuple[int, ...], ...]

    @classmethod
    def of(cls, text: str, tokens: Sequence[Token]) -> Parsed:
        """The sentence *text* with *tokens* (their ``i`` must be 0, 1, 2, ...)."""
        kids: list[list[int]] = [[] for _ in tokens]
        for token in tokens:
            if token.head != token.i:
                kids[token.head].append(token.i)
        return cls(text, tuple(tokens), tuple(tuple(k) for k in kids))

    def __getitem__(self, i: int) -> Token:
        return self.tokens[i]

    def __len__(self) -> int:
        return len(self.tokens)

    def children(self, token: Token, *deps: str) -> list[Token]:
        """*token*'s children, in order; only those with one of *deps* when given."""
        found = (self.tokens[k] for k in self.kids[token.i])
        return [t for t in found if not deps or t.dep in deps]

    def child(self, token: Token, *deps: str) -> Token | None:
        """*token*'s first child with one of *deps*, if any."""
        return next(iter(self.children(token, *deps)), None)

    def head(self, token: Token) -> Token | None:
        """*token*'s head, None at a root."""
        return None if token.head == token.i else self.tokens[token.head]

    def ancestors(self, token: Token) -> Iterator[Token]:
        """*token*'s head, its head's head, ... up to the root."""
        seen = {token.i}
        current = self.head(token)
        while current is not None and current.i not in seen:
            yield current
            seen.add(current.i)
            current = self.head(current)

    def subtree(self, token: Token) -> list[Token]:
        """*token* and everything below it, in sentence order."""
        out, todo = [], [token.i]
        while todo:
            i = todo.pop()
            out.append(i)
            todo.extend(self.kids[i])
        return [self.tokens[i] for i in sorted(out)]

    def span(self, tokens: Sequence[Token]) -> str:
        """The words from the first to the last of *tokens* as written (with the spacing)."""
        if not tokens:
            return ""
        first, last = min(t.i for t in tokens), max(t.i for t in tokens)
        words = self.tokens[first : last + 1]
        return "".join(t.text + (" " if t.space else "") for t in words).strip()
