"""Repairs of known misparses of the small English pipeline (pure), made before a sentence
is read.

The small model often reads a compound noun after a verb as two objects of the verb ("I love
blues music": ``blues``/dobj, ``music``/dobj; "an e-bike": ``e``, ``-``, ``bike``, each a
dobj). Two nouns side by side with the same head and the same label, with nothing between
them, are one noun phrase: the ones before the last become its compound modifiers, and what
they governed before the run (an article, a possessive) moves to the last.

It also reads a verbless "my name's Dev" as a possessive ("name" owning "Dev"): where a
sentence has no verb and an "'s" marks the possessor of its root, the "'s" is the verb ("is"),
with the possessor its subject and the root its complement.

And it reads "I have type 1 diabetes", where the model takes "have" for the auxiliary of a
noun ("type") that it took for a verb with its own object ("diabetes"): "have" is the verb,
and the noun's object the head of the noun phrase, with the noun its compound.

And it reads a lower-case imperative of withdrawal at the opening ("scratch what I said about
my job, ...", "forget my birthday") as a noun, often hung on the clause after the comma: the
word is the verb, and the words up to the first comma are its clause.

And it hangs an opening "still on my old ThinkPad, it's slow" (a state told without "I'm",
marked "still", "now" or "currently") on the clause after the comma: the opening is a
fragment of its own.

And it reads "we have a golden retriever called Max", where the model takes "called" for a
clause of its own with the thing (and its modifiers) hung on it: the thing is the verb's
object, and "called Max" a clause on it.

And it reads "my partner and I split last year", where the model takes the noun for the root
and "and I split" for a clause joined to it: the noun and "I" are the verb's subject.

And it reads a place typed in lower case after a verb of moving ("i moved to seattle") as an
infinitive ("to" and a verb "seattle" with nothing of its own): in a sentence without
capitals but "I", a bare word there that is no verb one moves to do ("moved to study") is
the place.

And it keeps the full stop that ends a sentence on a word it knows as an abbreviation ("I
dropped out of my PhD."): the word is the word, and the stop a token of its own.
"""

from __future__ import annotations

from dataclasses import replace

from kenning.longterm.parsing.lexicon import MOVE_VERBS, RETRACT_VERBS
from kenning.longterm.parsing.parsed import Parsed, Token

__all__ = ["repaired"]

_NOMINAL_DEPS = frozenset({"dobj", "pobj", "attr"})
_NOMINAL = frozenset({"NOUN", "PROPN"})


def repaired(p: Parsed) -> Parsed:
    """*p* with each run of side-by-side sibling objects made one noun phrase, and a
    verbless "X's Y" read as "X is Y"."""
    p = _retraction_restored(_opening_state(_called_restored(_final_stop(p))))
    p = _typed_place(p)
    p = _joint_subject(p)
    return _runs_joined(_copula_contracted(_have_restored(p)))


def _joint_subject(p: Parsed) -> Parsed:
    root = next((t for t in p.tokens if t.dep == "ROOT"), None)
    if root is None or root.pos not in _NOMINAL:
        return p
    cc = p.child(root, "cc")
    verbs = [v for v in p.children(root, "conj") if v.pos == "VERB" and v.i > root.i]
    if cc is None or cc.lower != "and" or not verbs:
        return p
    verb = verbs[0]
    me = [s for s in p.children(verb, "nsubj") if s.lower in ("i", "we") and s.i == cc.i + 1]
    if not me or cc.i > me[0].i or any(t.dep == "ROOT" for t in p.tokens if t.i > root.i):
        return p
    changed = {
        verb.i: replace(verb, dep="ROOT", head=verb.i),
        root.i: replace(root, dep="nsubj", head=verb.i),
        me[0].i: replace(me[0], dep="conj", head=root.i),
    }
    tokens = [changed.get(t.i, t) for t in p.tokens]
    # what hung on the noun as the root's (the final stop, other clauses) moves to the verb
    tokens = [replace(t, head=verb.i) if t.head == root.i and t.dep in ("punct", "conj")
              and t.i != me[0].i else t for t in tokens]  # fmt: skip
    return Parsed.of(p.text, tokens)


# What one moves to do, told bare: "we moved to retire", "I moved to study".
_MOVED_TO_DO = frozenset("study work retire teach help live stay be rest heal recover".split())


def _typed_place(p: Parsed) -> Parsed:
    if any(t.text[:1].isupper() for t in p.tokens if t.lower not in ("i", "i'm", "i've")):
        return p
    for x in p.tokens:
        verb, to = p.head(x), p.child(x, "aux")
        if verb is None or to is None or x.dep != "xcomp" or x.tag != "VB":
            continue
        if verb.lemma.lower() not in MOVE_VERBS or to.lower != "to" or x.lower in _MOVED_TO_DO:
            continue
        if len(p.children(x)) != 1 or not x.text.isalpha():
            continue
        changed = {
            to.i: replace(to, pos="ADP", tag="IN", dep="prep", head=verb.i),
            x.i: replace(x, lemma=x.lower, pos="PROPN", tag="NNP", dep="pobj", head=to.i),
        }
        return Parsed.of(p.text, [changed.get(t.i, t) for t in p.tokens])
    return p


def _called_restored(p: Parsed) -> Parsed:
    for x in p.tokens:
        verb = p.head(x)
        if x.lemma.lower() not in ("call", "name") or x.tag != "VBN" or x.dep != "ccomp":
            continue
        things = [t for t in p.children(x, "npadvmod", "nsubj", "nsubjpass")
                  if t.pos == "NOUN" and t.i < x.i]  # fmt: skip
        if verb is None or not things or p.children(verb, "dobj"):
            continue
        thing = things[-1]
        changed = {
            thing.i: replace(thing, dep="dobj", head=verb.i),
            x.i: replace(x, dep="acl", head=thing.i),
        }
        tokens = [changed.get(t.i, t) for t in p.tokens]
        # what came before the thing and hung on "called" ("a", "golden") modifies the thing
        tokens = [replace(t, head=thing.i) if t.head == x.i and t.i < thing.i else t
                  for t in tokens]  # fmt: skip
        return Parsed.of(p.text, tokens)
    return p


def _final_stop(p: Parsed) -> Parsed:
    """ "my PhD." read as one token at the end: "PhD" and "." (not "the U.S.", whose stops
    are its own)."""
    last = p.tokens[-1] if p.tokens else None
    if last is None or len(last.text) < 3 or not last.text.endswith("."):
        return p
    word = last.text[:-1]
    if "." in word or not word.isalpha():
        return p
    lemma = last.lemma[:-1] if last.lemma.endswith(".") else last.lemma
    root = [*p.ancestors(last)][-1] if p.head(last) is not None else last
    stop = Token(i=last.i + 1, text=".", lemma=".", pos="PUNCT", tag=".", dep="punct",
                 head=root.i, ent="", space=False)  # fmt: skip
    return Parsed.of(p.text, [*p.tokens[:-1], replace(last, text=word, lemma=lemma, space=False),
                              stop])  # fmt: skip


# What follows an imperative of withdrawal: "scratch what ...", "forget my ...", "ignore the
# bit about ...", "remove everything about ...".
_RETRACTED_OPENINGS = frozenset({"what", "that", "my", "our", "the", "everything", "all"})


def _retraction_restored(p: Parsed) -> Parsed:
    first = next((t for t in p.tokens if t.dep not in ("intj", "punct")), None)
    if first is None or first.lower not in RETRACT_VERBS or first.pos in ("VERB", "AUX"):
        return p
    if first.i + 1 >= len(p) or p[first.i + 1].lower not in _RETRACTED_OPENINGS:
        return p
    if any(t.pos != "INTJ" and t.dep != "punct" for t in p.tokens[: first.i]):
        return p
    end = next((t.i for t in p.tokens[first.i + 1 :] if t.text in (",", ";")), len(p))
    own = range(first.i, end)
    tokens = []
    for t in p.tokens:
        if t.i == first.i:
            t = replace(t, lemma=t.lower, pos="VERB", tag="VB", dep="ROOT", head=t.i)
        elif t.i in own and t.head not in own:
            t = replace(t, head=first.i, dep="ccomp" if t.pos in ("VERB", "AUX") else "dobj")
        elif t.i < first.i and t.head not in own:
            t = replace(t, head=first.i)
        tokens.append(t)
    return Parsed.of(p.text, tokens)


_NOW_MARKS = frozenset({"still", "now", "currently"})


def _opening_state(p: Parsed) -> Parsed:
    marks = [t for t in p.tokens[:2] if t.lower in _NOW_MARKS]
    prep = p[marks[0].i + 1] if marks and marks[0].i + 1 < len(p) else None
    if prep is None or prep.pos != "ADP" or prep.dep != "prep" or not p.children(prep, "pobj"):
        return p
    comma = next((t.i for t in p.tokens[prep.i :] if t.text in (",", ";")), None)
    if comma is None or prep.head <= comma:
        return p
    # the opening's words the parser hung on the clause after the comma come back to it
    tokens = [
        replace(t, dep="ROOT", head=t.i) if t.i == prep.i
        else replace(t, head=prep.i) if t.i < comma and t.head > comma
        else t
        for t in p.tokens
    ]  # fmt: skip
    return Parsed.of(p.text, tokens)


def _have_restored(p: Parsed) -> Parsed:
    for have in p.tokens:
        noun = p.head(have)
        if have.lemma != "have" or have.dep != "aux" or noun is None:
            continue
        if noun.pos != "NOUN" or noun.dep != "ROOT":
            continue
        inner = p.child(noun, "dobj")
        head = inner if inner is not None and inner.pos in ("NOUN", "PROPN") else noun
        changed = {
            have.i: replace(have, pos="VERB", dep="ROOT", head=have.i),
            head.i: replace(head, dep="dobj", head=have.i),
        }
        if head is not noun:
            changed[noun.i] = replace(noun, dep="compound", head=head.i)
        tokens = []
        for t in p.tokens:
            t = changed.get(t.i, t)
            moved = t.head == noun.i and t.i not in changed and (t.dep in ("nsubj", "punct")
                                                                or t.i < have.i)  # fmt: skip
            tokens.append(replace(t, head=have.i) if moved else t)
        return Parsed.of(p.text, tokens)
    return p


def _copula_contracted(p: Parsed) -> Parsed:
    # the "'s" itself may be tagged AUX while hung as a possessive's case
    if any(t.pos in ("VERB", "AUX") and t.dep != "case" for t in p.tokens):
        return p
    for s in p.tokens:
        owner = p.head(s)
        root = p.head(owner) if owner is not None else None
        if s.lower != "'s" or s.dep != "case" or owner is None or owner.dep != "poss":
            continue
        if root is None or root.dep != "ROOT" or root.i < s.i:
            continue
        changed = {
            s.i: replace(s, lemma="be", pos="AUX", tag="VBZ", dep="ROOT", head=s.i),
            owner.i: replace(owner, dep="nsubj", head=s.i),
            root.i: replace(root, dep="attr", head=s.i),
        }
        tokens = [changed.get(t.i, t) for t in p.tokens]
        tokens = [replace(t, head=s.i) if t.head == root.i and t.i != s.i and t.dep in (
            "punct", "prep", "advmod", "npadvmod") else t for t in tokens]  # fmt: skip
        return Parsed.of(p.text, tokens)
    return p


def _runs_joined(p: Parsed) -> Parsed:
    heads = {t.i: t.head for t in p.tokens}
    deps = {t.i: t.dep for t in p.tokens}
    for run in _runs(p):
        last = run[-1]
        for token in run[:-1]:
            heads[token.i], deps[token.i] = last.i, "compound"
            for child in p.children(token):
                if child.i < run[0].i:
                    heads[child.i] = last.i
    if heads == {t.i: t.head for t in p.tokens}:
        return p
    tokens = [replace(t, head=heads[t.i], dep=deps[t.i]) for t in p.tokens]
    return Parsed.of(p.text, tokens)


def _runs(p: Parsed) -> list[list[Token]]:
    """Runs of two or more adjacent nominal tokens with one head and one object label, the
    words of each joined by spaces or hyphens only."""
    out: list[list[Token]] = []
    run: list[Token] = []
    for token in p.tokens:
        joins = bool(run) and token.head == run[-1].head and token.dep == run[-1].dep
        if joins and token.i == run[-1].i + 1 and _nominal(token):
            run.append(token)
            continue
        if len(run) > 1:
            out.append(run)
        run = [token] if token.dep in _NOMINAL_DEPS and _nominal(token) else []
    if len(run) > 1:
        out.append(run)
    return out


def _nominal(token: Token) -> bool:
    return token.pos in _NOMINAL or token.text == "-"
