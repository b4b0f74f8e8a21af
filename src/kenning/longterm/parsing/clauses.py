"""Clauses of a parsed sentence (pure): who each predicate is about, and whether it states
anything now.

A clause is a predicate (a verb, or "be" with its complement) with its subject. It states a
fact about the speaker when its subject is "I" or "we", the speaker's name, "my X" (the
speaker's own X: "my email is ..."), or nothing at the opening of a message ("Just moved to
Berlin", "Severely allergic to shellfish"); "my sister" makes it a fact about the sister.

It states nothing when it is asked ("am I allergic?"), wished, planned or imagined (a modal:
"I'd love to", "I'll move"; a governing verb: "I'm thinking of moving", "I hope to"; a
condition: "if I lived in Rome"), or someone else's words ("she said I'm lazy"). Its tense is
kept: "used to" and the past perfect held only before; a simple past holds only for a change
("I moved to Lisbon" still holds, "I lived in Oslo" no longer does). Negation, "no longer",
"not ... anymore", a retraction ("forget that I ...") and a correction ("actually I'm not
married") are read for the frames to turn into revocations.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from kenning.longterm.parsing import lexicon as lx
from kenning.longterm.parsing.parsed import Parsed, Token
from kenning.records import USER

__all__ = [
    "Clause",
    "Sentence",
    "asks",
    "clauses",
    "contrastive",
    "follows_from",
    "jokes",
    "sentence_of",
]

_QUESTION_START = re.compile(
    r"^\W*(?:am|are|is|was|were|do|does|did|have|has|had|can|could|should|would|will|shall|"
    r"may|might|must|what|which|who|whom|whose|where|when|why|how)\b(?!')",
    re.IGNORECASE,
)
_CORRECTION = re.compile(
    r"\b(?:actually|correction|scratch that|i was (?:just )?(?:joking|kidding)|i meant|"
    r"to correct|that was a mistake|not true|after all)\b",
    re.IGNORECASE,
)
_SARCASM = re.compile(
    r"\byeah,? right\b|\bas if\b|\bjust kidding\b|\bjk\b|/s\b|\boh sure\b|\bsure,? because\b|"
    r"\btotally not\b|\bnot!",
    re.IGNORECASE,
)
_FUTURE_WORDS = frozenset({"next", "tomorrow", "soon", "tonight", "upcoming", "later"})
_MONTHS = frozenset(
    "january february march april may june july august september october november december".split()
)
_CHILDHOOD = frozenset({"kid", "child", "teenager", "teen", "boy", "girl", "youngster"})
_GOVERNING = frozenset({"xcomp", "ccomp", "pcomp", "pobj", "prep", "acomp", "relcl", "acl",
                        "dobj", "attr", "oprd", "advmod", "npadvmod"})  # fmt: skip


def asks(text: str) -> bool:
    """Whether *text* opens as a question ("do you think ...", "what's ...")."""
    return bool(_QUESTION_START.match(text))


def jokes(text: str) -> bool:
    """Whether *text* marks itself as a joke ("yeah right", "jk", "/s"): nothing in it is
    stated."""
    return bool(_SARCASM.search(text))


@dataclass(frozen=True, slots=True)
class Sentence:
    """What holds for a whole sentence: the parse, who speaks, whether it asks, corrects or
    jokes, and whether entity types were read."""

    parsed: Parsed
    speaker: str | None = None
    question: bool = False
    correcting: bool = False
    sarcastic: bool = False
    entities: bool = True


def sentence_of(parsed: Parsed, *, speaker: str | None = None, entities: bool = True) -> Sentence:
    """*parsed* with what holds for the whole of it."""
    text = parsed.text.strip()
    return Sentence(
        parsed, speaker=speaker,
        question=text.endswith("?") or asks(text),
        correcting=bool(_CORRECTION.search(text)), sarcastic=bool(_SARCASM.search(text)),
        entities=entities,
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Clause:
    """A predicate with its subject, read for what it states.

    Attributes:
        pred: The predicate (a verb; "be" for a copula: "I'm a nurse" has "'m").
        subject: ``user``, or the other person the clause is about ("sister").
        owner: In "my X is Y", the X (what of the speaker's the clause names).
        topic: In "Photography is my thing", the subject that is the value.
        negated: "not", "n't", "never", "no longer".
        withdrawn: "no longer", "anymore": what held does not now.
        retracted: Under "forget that", "ignore what I said about", or negated in a
            correction ("actually, I'm not married").
        hedged: Under "I think", "I guess".
        tense: ``present``, ``perfect`` ("I've lived", "I've been vegan"), ``past``
            (simple or progressive past), ``before`` ("used to", the past perfect, "until",
            "as a kid": held before only).
        stop: Under "stop", "quit", "give up": the clause is withdrawn ("I stopped eating
            meat").
    """

    sentence: Sentence
    pred: Token
    subject: str
    owner: Token | None = None
    topic: Token | None = None
    negated: bool = False
    withdrawn: bool = False
    retracted: bool = False
    hedged: bool = False
    tense: str = "present"
    stop: bool = False

    @property
    def parsed(self) -> Parsed:
        return self.sentence.parsed

    @property
    def entities(self) -> bool:
        return self.sentence.entities


def clauses(sentence: Sentence) -> Iterator[Clause]:
    """The clauses of *sentence* that state something about a person (none when it jokes)."""
    if sentence.sarcastic:
        return
    p = sentence.parsed
    for pred in p.tokens:
        if not _is_predicate(p, pred):
            continue
        who = _subject(sentence, pred)
        if who is None:
            continue
        if _unreal(p, pred) or _reported(p, pred) or _asked(sentence, pred):
            continue
        yield _clause(sentence, pred, who)


def _is_predicate(p: Parsed, token: Token) -> bool:
    if p.child(token, "nsubj", "nsubjpass") is not None and token.pos in ("ADP", "ADJ", "INTJ"):
        # a verb the tagger misread ("I don't actually like olives": like/IN; "I really like
        # falafel": like/UH)
        return True
    if token.pos == "VERB":
        return token.dep not in ("amod", "compound")
    if token.pos == "AUX":
        return token.dep not in ("aux", "auxpass")
    # A fragment without a verb: "Severely allergic to shellfish", "Morning person here",
    # and a state told by its preposition: "in Chicago now", "at Stripe these days".
    if token.dep == "ROOT" and token.pos == "ADP":
        return p.child(token, "pobj") is not None and _told_now(p, token)
    return token.dep == "ROOT" and token.pos in ("ADJ", "NOUN", "PROPN")


def _told_now(p: Parsed, token: Token) -> bool:
    """ "... now", "currently ...", "... these days": said of how things stand."""
    near = [t for t in p.children(token) if t.dep in ("advmod", "npadvmod")]
    return any(t.lower in ("now", "currently", "nowadays", "days", "still") for t in near)


def _clause(sentence: Sentence, pred: Token, who: tuple[str, Token | None, Token | None]) -> Clause:
    p = sentence.parsed
    negated, withdrawn = _negation(p, pred)
    retracted = _retracted(p, pred) or (negated and sentence.correcting and not withdrawn)
    subject, owner, topic = who
    return Clause(
        sentence, pred, subject, owner=owner, topic=topic, negated=negated,
        withdrawn=withdrawn, retracted=retracted, hedged=_hedged(p, pred),
        tense=_tense(p, pred), stop=_stopped(p, pred),
    )  # fmt: skip


# -- the subject ----------------------------------------------------------------------------


def _subject(sentence: Sentence, pred: Token) -> tuple[str, Token | None, Token | None] | None:
    """(subject, owner, topic) of *pred*'s clause; None when it is not about a person the
    sentence names."""
    p = sentence.parsed
    subjects = p.children(pred, "nsubj", "nsubjpass", "csubj")
    subj = next(
        (s for s in subjects if s.lower in lx.FIRST_PERSON), subjects[0] if subjects else None
    )
    if _addressed(p, pred):
        return USER, None, None  # "call me Dee", "you can reach me at ...", "forget my number"
    if subj is None:
        inherited = _inherited(p, pred)
        shared = None if inherited is None else _subject(sentence, inherited)
        # "living in Melbourne now, the light here is unreal": an opening fragment, not a
        # participle of the main clause's subject.
        if shared is None and inherited is not None and pred.i < inherited.i:
            return (USER, None, None) if _opens(p, pred) else None
        if inherited is not None:
            return shared
        return (USER, None, None) if _opens(p, pred) or _retracted(p, pred) else None
    if any(c.lower in ("i", "we") for c in p.children(subj, "conj")):
        return USER, None, None  # "Laura and I divorced", "my wife and I moved to Leeds"
    word = subj.lower
    if word in ("me", "us") and p.children(subj, "conj") and p.child(subj, "cc"):
        return USER, None, None  # "Me and my husband go dancing": the speaker among others
    if word in ("me", "us"):
        # "forget the bit about me liking sushi": a gerund's subject, withdrawn
        if pred.tag == "VBG" and _retracted(p, pred):
            return USER, None, None
        return None  # "help me write a bio", "let us know": a request, not a statement
    if word in lx.FIRST_PERSON or (sentence.speaker and subj.text == sentence.speaker):
        return USER, None, None
    owner = p.child(subj, "poss")
    if owner is not None and owner.lower in lx.POSSESSIVE and subj.pos in ("NOUN", "PROPN"):
        if subj.lemma.lower() in lx.RELATIONS or subj.lower in lx.RELATIONS:
            return _other(p, subj), None, None
        return USER, subj, None
    # "Dutch is my second language": a language tagged as its adjective
    nominal = subj.pos in ("NOUN", "PROPN", "VERB") or subj.lower in lx.LANGUAGES
    if nominal and not p.child(subj, "poss", "det"):
        return USER, None, subj  # "Photography is my thing": a value, if the frame says so
    if word in ("it", "this") and _greeted(p) and pred.lemma == "be":
        return USER, None, None  # "Hi, it's Sam", "Hello, this is Sam"
    return None


def _addressed(p: Parsed, pred: Token) -> bool:
    """Told to the listener about the speaker: "call me Dee", "you can reach me at ...",
    "forget my old number"."""
    lemma = pred.lemma.lower()
    if lemma in ("call", "reach", "contact", "text", "email", "ring"):
        return any(o.lower == "me" for o in p.children(pred, "dobj"))
    subj = p.child(pred, "nsubj")
    return lemma in lx.RETRACT_VERBS and pred.tag == "VB" and (subj is None or subj.lower == "you")


def _inherited(p: Parsed, pred: Token) -> Token | None:
    """The predicate whose subject *pred* shares: the first of two coordinated verbs, the
    verb controlling an infinitive or gerund ("I like to collect", "I stopped eating")."""
    head = p.head(pred)
    if head is None:
        return None
    if pred.dep == "conj" and head.pos in ("VERB", "AUX", "ADJ"):
        return head
    if _listed(p, pred, head):
        return head
    if pred.dep == "pcomp" and (up := p.head(head)) is not None and up.pos in ("NOUN", "PROPN"):
        return None  # "after a year of eating meat": a noun's gerund, not a clause
    if pred.dep == "advcl" and pred.tag == "VB":
        return None  # "Please cancel my subscription, I'm moving": a request, not a statement
    if pred.dep in ("xcomp", "pcomp", "advcl", "acomp") and pred.tag in ("VB", "VBG", "VBN"):
        return next((up for up in [head, *p.ancestors(head)] if up.pos in ("VERB", "AUX")), None)
    return None


def _listed(p: Parsed, pred: Token, head: Token) -> bool:
    """A verb listed after another with only a comma between, in the same tense ("I live in
    Seoul, work remotely for a US company"): the parser leaves it unattached (``dep``), but
    it is coordinated all the same."""
    if pred.dep != "dep" or head.pos != "VERB" or pred.pos != "VERB" or pred.i < head.i:
        return False
    if p.child(pred, "nsubj", "nsubjpass") is not None or p[pred.i - 1].text != ",":
        return False
    present = ("VBP", "VBZ", "VB")
    return pred.tag == head.tag or (pred.tag in present and head.tag in present)


def _opens(p: Parsed, pred: Token) -> bool:
    """A subjectless predicate at the opening of the sentence, told about the speaker:
    "Just moved to Berlin", "Left Google last month", "Severely allergic to shellfish"."""
    run_on = follows_from(p, pred)  # "gave up on knitting, it never clicked"
    # "quit the band in October": "quit" is its own past, whatever the tagger says
    past = pred.tag in ("VBD", "VBN", "VBG") or (pred.lower == "quit" and pred.i == 0)
    if (pred.dep not in ("ROOT", "advcl", "conj") and not run_on) or (
        pred.tag in ("VB", "VBZ", "VBP", "MD") and not past
    ):
        return False
    if pred.pos in ("VERB", "AUX") and not past:
        return False
    own = {t.i for t in p.subtree(pred)}
    before = p.tokens[: pred.i]
    return all(t.dep in ("advmod", "intj", "punct", "cc", "neg", "npadvmod", "amod", "dep")
               or t.i in own or t.head > pred.i for t in before)  # fmt: skip


def _greeted(p: Parsed) -> bool:
    return any(t.lower in lx.GREETINGS for t in p.tokens[:3])


def _other(p: Parsed, noun: Token) -> str:
    """A third person's subject: the relation, with the name the sentence gives."""
    name = p.child(noun, "appos")
    if name is None or name.pos != "PROPN":
        name = next((c for c in p.children(noun, "compound") if c.i > noun.i), None)
    relation = noun.lower
    return f"{relation} {name.text.lower()}" if name is not None else relation


# -- what governs the clause ------------------------------------------------------------------


def _governors(p: Parsed, pred: Token) -> Iterator[tuple[Token, str]]:
    """The words a clause is under, each with the label of the edge it governs through: its
    head, its head's head, ..., skipping the first of two coordinated clauses (coordination
    does not govern), and stopping at an adverbial clause's main clause (which does not make
    it unreal or reported) and at a clause read as governing one before it that it follows
    from ("I'm lactose intolerant, so I'd prefer ...": the parser's ccomp is a "so")."""
    current = pred
    while True:
        head = p.head(current)
        if head is None or current.dep in ("advcl", "parataxis"):
            return
        if follows_from(p, current):
            return
        if current.dep == "relcl" and head.dep in ("nsubj", "nsubjpass"):
            return  # "the charity I work for needs ...": presupposed, whatever is said of it
        if current.dep != "conj":
            yield head, current.dep
        current = head


def follows_from(p: Parsed, clause: Token) -> bool:
    """*clause* is a complement the parser hung before a clause that follows from it ("I'm
    lactose intolerant, so I'd prefer ..."): a "so", "but" or "and", not governance; or one
    typed on before another after a comma ("I'm a vet, I want something quick"), where only
    a hedge or someone's words govern what came before ("I'm a vet, I think"; "..., she
    said")."""
    head = p.head(clause)
    if head is None or clause.dep != "ccomp" or clause.i > head.i:
        return False
    if any(m.lower in ("so", "but", "and") for m in p.children(head, "mark", "advmod", "cc")):
        return True
    end = max(t.i for t in p.subtree(clause))
    comma = any(t.text in (",", ";") for t in p.tokens[end : head.i])
    # "I'm not vegetarian anymore, doctor said I needed iron": the report has its own words.
    own_words = any(c.i > head.i for c in p.children(head, "ccomp", "dobj"))
    governing = head.lemma.lower() in lx.HEDGE_VERBS | lx.REPORT_VERBS and not own_words
    return comma and not governing


def _modal(p: Parsed, token: Token) -> bool:
    for aux in p.children(token, "aux"):
        word = aux.lower
        if aux.tag == "MD" and (word in lx.UNREAL_MODALS or aux.lemma.lower() in lx.UNREAL_MODALS):
            return True
        if word == "'d" and token.tag == "VB":
            return True
        if word == "to" and token.dep == "xcomp" and token.tag == "VB":
            continue
    return False


def _unreal(p: Parsed, pred: Token) -> bool:
    """Wished, planned, imagined, conditional, or not quite done ("I almost moved")."""
    if _modal(p, pred) or _conditional(p, pred) or _future(p, pred):
        return True
    if any(a.lower in ("almost", "nearly") for a in p.children(pred, "advmod")):
        return True
    for gov, via in _governors(p, pred):
        lemma = gov.lemma.lower()
        if _modal(p, gov) or _conditional(p, gov):
            return True
        hedge = via == "ccomp" and _hedge(p, gov)
        # "hoping" lemmatised as "hop": the "-ing" form's own stem is tried too
        stem = gov.lower[:-3] + "e" if gov.lower.endswith("ing") else lemma
        wished = lemma in lx.UNREAL_VERBS or stem in lx.UNREAL_VERBS
        if gov.pos in ("VERB", "AUX") and wished and not hedge:
            if lemma == "go" and pred.dep != "xcomp":
                continue  # "I go climbing" is done, "I'm going to climb" is planned
            return True
        if gov.pos == "ADJ" and lemma in lx.UNREAL_ADJECTIVES:
            return True
    return False


def _conditional(p: Parsed, token: Token) -> bool:
    """ "if I lived in Rome", "for when I have kids" (a "when" in the present is to come)."""
    if any(m.lower in lx.CONDITIONS_MARKS for m in p.children(token, "mark")):
        return True
    whens = [m for m in p.children(token, "mark", "advmod") if m.lower in ("when", "whenever")]
    return bool(whens) and whens[0].i < token.i and token.tag in ("VBP", "VBZ", "VB")


def _future(p: Parsed, pred: Token) -> bool:
    """A present progressive with a time to come ("I'm getting married in June"), or of a
    change that is arranged rather than done ("I'm moving to Nairobi")."""
    auxes = p.children(pred, "aux", "auxpass")
    auxes += [b for a in auxes for b in p.children(a, "aux")]  # "I'm getting married"
    progressive = pred.tag == "VBG" or any(a.tag == "VBG" for a in auxes)
    if not progressive or not any(a.lemma == "be" and a.tag in ("VBP", "VBZ") for a in auxes):
        return False
    if pred.tag == "VBG" and pred.lemma.lower() in lx.ARRANGED_VERBS:
        return True  # "I'm moving to Nairobi", "I'm joining Google": arranged, not yet so
    for token in p.subtree(pred):
        if token.lower in _FUTURE_WORDS:
            return True
        if token.lower in _MONTHS and (h := p.head(token)) is not None and h.lower == "in":
            return not any(t.ent == "DATE" and t.text.isdigit() for t in p.subtree(h))
    return False


def _reported(p: Parsed, pred: Token) -> bool:
    """Someone else's words or belief about the speaker ("people assume I'm vegetarian")."""
    for gov, _ in _governors(p, pred):
        if gov.pos in ("VERB", "AUX") and gov.lemma.lower() in lx.REPORT_VERBS:
            subj = p.child(gov, "nsubj")
            if subj is not None and subj.lower not in lx.FIRST_PERSON:
                return True
    return False


def _asked(sentence: Sentence, pred: Token) -> bool:
    """In a question, only a subordinate statement counts ("since I'm vegan, any tips?")."""
    if not sentence.question:
        return False
    p = sentence.parsed
    marks = {m.lower for m in p.children(pred, "mark")}
    return not (pred.dep == "advcl" and marks & {"since", "because", "as"}) and pred.dep != "relcl"


def _hedge(p: Parsed, gov: Token) -> bool:
    subj = p.child(gov, "nsubj")
    return gov.lemma.lower() in lx.HEDGE_VERBS and subj is not None and subj.lower == "i"


def _hedged(p: Parsed, pred: Token) -> bool:
    if any(a.lower in ("probably", "maybe", "perhaps") for a in p.children(pred, "advmod")):
        return True
    return any(via == "ccomp" and _hedge(p, gov) for gov, via in _governors(p, pred))


def _retracted(p: Parsed, pred: Token) -> bool:
    """Under an imperative that withdraws it: "forget that I like jazz", "ignore what I told
    you about being vegetarian", "don't remember that I'm into crypto"."""
    for gov, _ in _governors(p, pred):
        lemma = gov.lemma.lower()
        negated = p.child(gov, "neg") is not None
        if lemma in lx.RETRACT_VERBS or (lemma in ("remember", "mind") and negated):
            subj = p.child(gov, "nsubj")
            # An imperative: the base form, or the first word ("Disregard"/NN, misread).
            opening = all(t.dep in ("intj", "punct", "neg", "aux") for t in p.tokens[: gov.i])
            # "Scratch that, I work at Google": the "that" is what is withdrawn; the clause
            # after it is the correction.
            after = p[gov.i + 1] if gov.i + 1 < len(p) else None
            # "Scratch that, I'm in Lyon": a "that" before a comma is the object, whatever the
            # parser labelled it.
            pause = gov.i + 2 < len(p) and p[gov.i + 2].text in (",", ";", ":", "-", "!")
            own = (
                after is not None
                and after.lower in ("that", "it", "this")
                and (after.dep != "mark" or pause)
            )
            if (gov.tag == "VB" or opening) and (subj is None or subj.lower == "you") and not own:
                return True
    return False


def _stopped(p: Parsed, pred: Token) -> bool:
    """Under "stop", "quit", "give up": "I stopped eating meat", "I quit smoking"; not a
    statement the parser hung before a request that follows from it ("I'm vegetarian, so
    please stop sending me steak offers")."""
    if follows_from(p, pred):
        return False
    head = p.head(pred)
    if head is not None and head.dep == "prep" and pred.dep == "pcomp":
        head = p.head(head)  # "I gave up on learning French"
    if head is None or pred.dep not in ("xcomp", "dobj", "pcomp", "ccomp"):
        return False
    if any(a.lower == "to" for a in p.children(pred, "aux")):
        return False  # "I left Microsoft to join a startup": what for, not what stopped
    return (
        head.lemma.lower() in lx.STOP_VERBS
        or head.lower == "done"
        or (head.lemma.lower() == "give" and any(c.lower == "up" for c in p.children(head, "prt")))
    )


# -- negation and tense -----------------------------------------------------------------------


def _negation(p: Parsed, pred: Token) -> tuple[bool, bool]:
    """(negated, withdrawn): "not"/"n't"/"never", and "no longer"/"anymore"."""
    negated = withdrawn = False
    # "i'm no longer married": the "no longer" may hang on the auxiliary.
    auxes = [a for a in p.children(pred, "aux", "auxpass") if a.i < pred.i]
    for child in [*p.children(pred), *(t for a in auxes for t in p.children(a, "advmod"))]:
        if child.dep == "neg" and not contrastive(p, child):
            negated = True
        # "I'm not married anymore": the "anymore" may hang on the complement.
        kin = [child, *p.children(child, "advmod")] if child.dep in ("acomp", "attr") else [child]
        if any(t.dep in ("advmod", "npadvmod") and t.lower in ("anymore", "more") for t in kin):
            withdrawn = True
        # "I'm not a vegetarian now", "not into crypto these days": no longer, as now stands
        if child.dep in ("advmod", "npadvmod") and child.lower in ("now", "nowadays", "days"):
            withdrawn = True
        # "No longer in Seattle, I'm in Portland": a "no longer" with its own place is read
        # with that place.
        if child.lower == "longer" and p.child(child, "neg") and not p.child(child, "prep"):
            negated = withdrawn = True
    head = p.head(pred)
    shared = pred.dep == "conj" and head is not None and p.child(pred, "nsubj") is None
    if not negated and shared and head is not None and pred.tag == head.tag:
        return _negation(p, head)
    return negated, withdrawn and negated


def contrastive(p: Parsed, neg: Token) -> bool:
    """A "not" that sets a value against another (", not BASF", "in Lyon not Nice"), not one
    that negates its clause."""
    after = p[neg.i + 1] if neg.i + 1 < len(p) else None
    before = p[neg.i - 1] if neg.i > 0 else None
    set_against = before is not None and (before.text == "," or before.pos in ("PROPN", "NOUN"))
    return set_against and after is not None and after.pos in ("PROPN", "NOUN", "ADJ", "NUM")


def _tense(p: Parsed, pred: Token) -> str:
    """``present``, ``perfect``, ``past`` or ``before`` (see :class:`Clause`)."""
    head = p.head(pred)
    if head is not None and pred.dep == "xcomp" and head.lower == "used" and pred.tag == "VB":
        return "before"  # "I used to live in Oslo"
    if head is not None and pred.dep == "xcomp" and head.lemma.lower() in ("start", "begin"):
        return "perfect"  # "I started working at Deloitte": begun, and going on
    if _before(p, pred):
        return "before"
    if any(t.lower in ("yesterday", "tonight") for t in p.children(pred, "npadvmod", "advmod")):
        return "past"  # an event of a day, not a lasting fact
    auxes = p.children(pred, "aux", "auxpass")
    coordinated = pred.dep == "conj" and head is not None and head.pos in ("VERB", "AUX")
    finite = pred.tag in ("VBP", "VBZ", "VBD")  # "I grew up in Ohio but now live in Texas"
    # "I moved out of Lyon and live in Paris now": a bare form after a simple past is its
    # own present (the past would be "lived"), as is anything said "now".
    if coordinated and head is not None and not auxes and not p.children(head, "aux"):
        finite = finite or (pred.tag == "VB" and head.tag == "VBD")
    finite = finite or any(a.lower == "now" for a in p.children(pred, "advmod"))
    if not auxes and coordinated and head is not None and not finite and not p.child(pred, "nsubj"):
        return _tense(p, head)
    if pred.dep in ("xcomp", "pcomp") and head is not None and not auxes:
        return _tense(p, head) if pred.tag in ("VBG", "VB") else "present"
    have = [a for a in auxes if a.lemma == "have" or a.lower in ("'ve", "ve")]
    if any(a.tag == "VBD" or a.lower == "'d" for a in have):
        return "before"  # "I'd been living in Rome"
    if have:
        return "perfect"
    if any(a.tag == "VBD" for a in auxes):
        return "past"
    if pred.tag == "VBD":
        # "I knit", "I run": a past form that is also the present reads as the present.
        return "present" if pred.lower == pred.lemma.lower() else "past"
    if pred.tag == "VBN" and not auxes:
        if pred.lemma == "be":
            return "perfect"  # "Been at Google for five years": "I've" left out
        if pred.lemma.lower() in lx.STATE_PARTICIPLES:
            return "present"  # "Currently based in Nairobi": a state, not an event
        return "past"  # "Just moved to Berlin", "Born and raised in Cork"
    return "present"


def _back_home(p: Parsed, pred: Token, prep: Token) -> bool:
    """ "I'm back in Leeds": a return to a place named, told in the present (not "back in
    2010", "back in college")."""
    place = p.child(prep, "pobj")
    present = pred.tag in ("VBP", "VBZ")
    return present and place is not None and place.pos == "PROPN" and not place.text.isdigit()


def _before(p: Parsed, pred: Token) -> bool:
    """Held only before: "until last year", "as a kid", "when I was a kid", "back in 2010"."""
    for child in p.children(pred):
        if child.dep == "prep" and child.lower in ("until", "till"):
            return True
        noun = p.child(child, "pobj") if child.dep == "prep" and child.lower == "as" else None
        if noun is not None and noun.lemma.lower() in _CHILDHOOD:
            return True
        when = child.dep == "advcl" and any(m.lower == "when" for m in p.children(child, "mark"))
        if when and (child.tag == "VBD" or any(a.tag == "VBD" for a in p.children(child, "aux"))):
            return True
        back = child.dep == "advmod" and child.lower == "back"
        if back and any(c.lower in ("in", "when") and not _back_home(p, pred, c)
                        for c in p.children(child)):  # fmt: skip
            return True  # "back in 2010", not "moved back to Chicago", "I'm back in Leeds"
    return False
