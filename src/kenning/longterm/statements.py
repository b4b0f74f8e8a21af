"""What users say about themselves, read from their turns: by parsing, or by the rules.

:class:`ParsedStatements` reads user turns only, and of those only the sentences that pass a
cheap first-person filter (:func:`candidate_sentences`: "I", "we", "my", the speaker's name, or
an opening like "Just moved to Berlin"); it parses them in one batch and reads each with
:func:`~kenning.longterm.parsing.reader.read_statements`. Where spaCy or its pipeline is not
installed it logs one line and reads with the rules
(:func:`~kenning.longterm.extract.extract_facts`) from then on, so a plain ``pip install
kenning`` extracts facts as before.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple, Protocol

from kenning.errors import ModelUnavailable
from kenning.longterm.extract import extract_facts
from kenning.longterm.parsing.clauses import asks, jokes
from kenning.longterm.parsing.fragments import HABIT_VERBS, STATE_VERBS, speaker_restored
from kenning.longterm.parsing.lexicon import DIETS, FAMILY_NOUNS, OCCUPATIONS, PETS, RELATIONS
from kenning.longterm.parsing.parsed import Parsed
from kenning.longterm.parsing.reader import read_continuation, read_statements
from kenning.records import Event, FactDraft, Role

__all__ = [
    "ParsedStatements",
    "RuleStatements",
    "SentenceParser",
    "StatementReader",
    "candidate_sentences",
]

log = logging.getLogger("kenning")

# A spaced dash after a word ends a sentence too: what follows is an aside ("I'm learning
# German now - tough but fun", "I quit my job - best decision ever") that the parser would
# otherwise hang the clause on. A full stop typed without its space ends one as well, where a
# word of lower-case letters comes before it and a capitalised word after ("I moved to
# Lisbon.I love it"; not "Node.js", "St.Mary's" or "e.g.").
_SENTENCE = re.compile(
    r"(?<=[.!?])\s+(?=\S)|\n+|(?<=[^\W\d])\s+[-–—]{1,2}\s+(?=\S)"
    r"|(?<=[a-z][a-z][.!?])(?=(?:I|[A-Z][a-z]+)\b)"
)
# A statement with a question after it, as people type to an assistant: "I live in Brighton so
# there are loads of cafes, which ones are safe?", "I'm allergic to penicillin, what should I
# tell the dentist?". The statement is a sentence of its own; the question stays one.
_TRAILING_QUESTION = re.compile(
    r"[,;]\s+(?:(?:so|and|but|then)\s+)?(?=(?:what|which|who|where|when|why|how|is|are|am|was|"
    r"were|do|does|did|can|could|"
    r"should|would|will|any|anything|thoughts|ideas|tips)\b[^.!]*\?$"
    # A question typed without its mark still inverts: "..., what should I tell the dentist"
    r"|(?:(?:what|which|who|where|when|why|how)(?:\s+\w+)?\s+)?(?:is|are|do|does|did|can|could|"
    r"should|would|will)\s+(?:i|you|it|that|this|there|we|they|he|she)\b[^.!?]*$)",
    re.IGNORECASE,
)
# Not an end of sentence: "St. Mary's", "Dr. Lee", "e.g. this".
_ABBREVIATION = re.compile(r"(?:\b(?i:st|dr|mr|mrs|ms|mt|jr|sr|prof|vs|etc|e\.g|i\.e)|\b[A-Z])\.$")
_SPEAKER = re.compile(r"\b(?:i|i'm|im|i've|ive|i'd|i'll|me|myself|we|we're|we've|us)\b", re.I)
# "my X" states something when X is someone, or with a verb of being or having ("my sister
# lives in Boston", "my email is ...", "my dog died", "Photography is (not) my thing"), or
# withdrawn ("forget my old number"); not in "my order arrived damaged".
_MY = re.compile(
    r"\b(?:my|our)\b(?:[^.,;!?]{0,40}?\b(?:is|are|was|were|'s|'re|has|have|had|lives?|"
    r"works?|moved|just|got|died|passed|turned)\b|\s+(?:"
    + "|".join(sorted(RELATIONS, key=len, reverse=True))
    + r")\b)|\b(?:is|are|'s|forget|ignore|disregard|remove|delete|erase)(?:n't|\s+not)?\s+"
    r"(?:\w+\s+){0,2}?"
    r"(?:my|our)\b",
    re.IGNORECASE,
)
# The speaker asking, wishing or planning: no statement of a fact ("I'd like to change the
# address", "can I cancel?", "I need it before Friday", "I'm moving to Nairobi": the reader
# finds nothing in these either).
_REQUEST = re.compile(
    r"\b(?:I'?d (?:like|love|prefer)|I would|I'?ll|I will|I need|I want|I wanna|I hope|I wish|"
    r"I was wondering|can I|could I|may I|should I|shall I|do I|did I|am I|have I|"
    r"I'?m (?:moving|going|planning|thinking|looking|hoping|considering|getting married))\b",
    re.IGNORECASE,
)
# "Painting is a big part of my life", "Writing's a huge part of me now".
_PART_OF_ME = re.compile(r"\bpart of (?:me|us|my life|our lives)\b", re.IGNORECASE)
# "As a paramedic, what's the best shoe?", "Being allergic to penicillin, what ...?": the
# speaker's role or state, said to frame a question.
_AS_A_ROLE = re.compile(r"^\W*(?:as an?|being) \w", re.IGNORECASE)
_SUBORDINATE = re.compile(r"\b(?:since|because|as|where|so)\s+(?:I|we|my)\b", re.IGNORECASE)
# Subjectless openings that tell of the speaker: "Just moved to Berlin", "Left Google last
# month", "Born and raised in Cork", "Severely allergic to shellfish", "No longer in Seattle",
# "Currently based in Nairobi", "Vegan now", "Not a fan of cilantro".
_OPENING = re.compile(
    r"^\W*(?:(?:just|\w+ly|now|still|also|so+|and|oh|well|ok(?:ay)?|update|fyi|btw|very)\b\W*)*"
    r"(?:\w+ed|been|got|left|quit|grew|born|sold|took|went|began|became|gave|bought|lost|made|found|"
    r"allergic|no longer|no more|"
    r"living|working|studying|"
    r"(?:not\s+)?(?:a\s+)?(?:big\s+|huge\s+)?fan of|"
    + "|".join(sorted((re.escape(w) for w in DIETS), key=len, reverse=True))
    + r")\b",
    re.IGNORECASE,
)
# "Morning person here", "Sam here": the speaker introducing themselves.
# "in Chicago now!!", "at Stripe these days": where the speaker is, without "I'm"
_PLACED_NOW = re.compile(
    r"^\W*(?:in|at)\s+[A-Z][\w&.'-]*(?:\s+[A-Z&][\w&.'-]*){0,3}\s+(?:now|these days|nowadays)\b"
    # "still on my old ThinkPad", "currently at a startup": the mark before
    r"|^\W*(?i:still|now|currently)\s+(?:in|at|on|with)\s+(?:(?i:my|our|a|an)\b|[A-Z])"
)
# "so that makes four grandchildren now", "so two dogs now": a new count of the speaker's
# own, told without "I" or "my".
_COUNT_NOW = re.compile(
    r"\b(?:\d+|two|three|four|five|six|seven|eight|nine|ten)\s+(?:"
    + "|".join(sorted((re.escape(w) for w in FAMILY_NOUNS | PETS), key=len, reverse=True))
    + r")\s+now\b",
    re.IGNORECASE,
)
# "Tokyo is home now", "Home is Dublin these days": where the speaker lives, without "I".
_HOME = re.compile(
    r"^\W*home\b(?:\s+for\s+(?:me|us))?\s+(?:is|'s)\b|^[^,;]{0,40}\b(?:is|'s|has)(?:\s+been)?\s+home\b"
    r"(?!\s+(?:to|of)\b)",
    re.IGNORECASE,
)
_HERE = re.compile(r"^\W*(?:\w+[\s-]+){0,3}\w+\s+here(?:\W*$|\s*[,(])", re.IGNORECASE)
_GREETING_NAME = re.compile(r"^\W*(?:hi|hello|hey)\b.{0,20}\bit'?s\s+[A-Z]", re.IGNORECASE)
# Openers and asides that carry no fact: a greeting with the name it greets ("Hey Nate, "),
# chat noise ("lol", "haha"). Words that change what follows ("actually", "correction",
# "scratch that") are kept.
_NOISE = (
    re.compile(
        r"^\W*(?:hi|hello|hey|hiya|yo)(?: there| again)?(?: [A-Z][a-z]+)?\s*[,!.]\s*"
        r"(?!\s*(?:it'?s|this is)\b)",
        re.IGNORECASE,
    ),
    # Announcements: "update: joined Razorpay", "big news on my side, I moved to ...".
    re.compile(
        r"^\W*(?:(?:ok(?:ay)?|so|and|also)\W+)?(?:(?:big|quick|small|little|massive|huge|good|"
        r"bad|random|life|some|personal|exciting)\s+)*(?:news|update)(?:\s+on my (?:side|end))?"
        r"\s*[:!,.-]+\s*",
        re.IGNORECASE,
    ),
    re.compile(r"[\s,]+(?:lol|lmao|haha+|hehe|rofl|xd)\b", re.IGNORECASE),
    # Trailing asides: "I'm Tomasz btw", "I prefer email, by the way".
    re.compile(
        r"[\s,;-]+(?:btw|fyi|by the way|to be honest|tbh|believe it or not|just saying|"
        r"if you must know|just so you know|for what it'?s worth|if that matters|if that helps|"
        r"in case (?:it|that) matters)(?:\W*$|(?=\s*[,;]))",
        re.IGNORECASE,
    ),
)
_LOWER_I = (
    (re.compile(r"\bi\b"), "I"),
    (re.compile(r"\bim\b", re.IGNORECASE), "I'm"),
    (re.compile(r"\bive\b", re.IGNORECASE), "I've"),
)
_MAX_CHARS = 400
# "not vegan anymore", "not doing CrossFit any more": a withdrawal typed without its "I'm",
# which the parser reads only with it.
_NOT_ANYMORE = re.compile(r"^(?=not\b.*\bany\s?more\b)", re.IGNORECASE)
# "Joined Deloitte in March": a capitalised past before a name reads as one name to the
# tagger; written in lower case it is the verb it is.
_PAST_BEFORE_NAME = re.compile(r"^(?:[A-Z][a-z]+ed|Gave|Sold|Left|Quit|Got|Took)(?=\s+[A-Z])")
# "Engineer at Bosch, based in Stuttgart": a profile line, the role without its "I'm a".
_ROLE_AT = re.compile(
    r"^((?:[\w-]+\s+){0,2}?(?:"
    + "|".join(sorted(OCCUPATIONS, key=len, reverse=True))
    + r"))\s+(?:at|for|with)\s+(?-i:[A-Z])",
    re.IGNORECASE,
)


# "Employer's SAP", "new number: 555-0199", "Mailing address is ...": a profile line, the
# attribute without its "my"; read as "My employer is SAP".
# "The name's Rafael", "Name's Dev": a self-introduction, read as "My name is Rafael".
_THE_NAME = re.compile(r"^\W*(?:[Tt]he\s+)?[Nn]ame's\s+(?=[A-Z][a-z])")
_BARE_ATTRIBUTE = re.compile(
    r"^\W*((?:(?:new|current|mailing|home|work|postal|cell|mobile)\s+)?(?:email|e-mail|number|"
    r"phone number|phone|address|username|handle|employer|pronouns|birthday))\s*(?:'s|is|:)\s+"
    r"(?=\S)",
    re.IGNORECASE,
)

# Discourse openers: chat abbreviations and interjections ("fyi", "btw", "tbh", "ngl", "lol",
# "ok so"), and the asides also said at a sentence's end ("by the way", "to be honest").
_OPENER = re.compile(
    r"^\W*(by the way|to be honest|just so you know|for what it'?s worth|heads up|random(?:ly)?"
    r"|fyi|btw|tbh|tbf|ngl|imo|imho|fwiw|lol|lmao|omg|ugh|welp|yeah|yep|yup|ok(?:ay)?|kk?"
    r"|anyways?|alright|h[ae]h[ae]\w*|hm+|so|well|and|also|plus|oh|ah|but"
    r"|(?:(?:big|quick|small|little|some|good|exciting)\s+)?(?:news|update))\b(?![-'’])"
    r"(\s*[,:;!.…]+)?\s*",
    re.IGNORECASE,
)
_HARD_OPENERS = frozenset(
    "by the way|to be honest|just so you know|for what it's worth|for what its worth|"
    "fyi|btw|tbh|tbf|ngl|imo|imho|fwiw|lol|lmao|omg|ugh|welp|yeah|yep|yup|ok|"
    "okay|k|kk|anyway|anyways|alright".split("|")
)
# After a soft opener ("so", "well", "update"), what shows it was one: the speaker, or a
# withdrawal or a change told without the subject ("so not vegan anymore").
_SPEAKER_FIRST = re.compile(
    r"(?:i|i'm|im|i've|ive|i'd|we|we're|we've|my|our|not|no longer|just|never|still)\b",
    re.IGNORECASE,
)
# An opening verb of state or habit in its bare form, after adverbs of time or degree or a
# "don't": "Live in Seoul", "Really love hiking", "Don't like olives" (not "Lives in Seoul":
# someone else's).
_BARE_VERB = re.compile(
    r"^\W*(?:(?:just|still|also|really|mostly|currently|now|usually|honestly|totally|"
    r"absolutely|kinda|only|actually|genuinely|do(?:n'?t|\s+not)|never)\s+)*(?:"
    + "|".join(sorted(STATE_VERBS | HABIT_VERBS, key=len, reverse=True))
    + r")\b(?!')",
    re.IGNORECASE,
)
_SPEAKER_SUBJECT = re.compile(r"\b(?:i|i'm|im|i've|ive|i'd|we|we're|we've)\b", re.IGNORECASE)
_GERUND = re.compile(
    r"^\W*(?:(?:just|still|also|really|mostly|currently|now|finally|slowly)\s+)*[a-z]{2,}ing\b(?!')",
    re.IGNORECASE,
)
# A sentence about someone else sets the topic of a subjectless one after it.
_SOMEONE_ELSE = re.compile(
    r"\b(?:he|she|they|his|her|their|him|them|he's|she's|they're)\b|\b(?:my|our)\s+(?:\w+\s+)?(?:"
    + "|".join(sorted(RELATIONS, key=len, reverse=True))
    + r")\b",
    re.IGNORECASE,
)
# A short sentence with a preposition that may finish the statement before it ("Engineering
# at Monash."); whether it has no verb and fits is decided on its parse.
_FRAGMENT = re.compile(r"^[^?]*\b(?:at|in|for|with)\b[^?]*$", re.IGNORECASE)


def candidate_sentences(text: str, *, speaker: str | None = None) -> list[str]:
    """The sentences of *text* that may state something about its speaker, as they are
    parsed (a lower-case "i" written "I": the parser reads "i live in austin" better so; an
    opening told without its subject with its "I" written back: "Live in Seoul" as "I live in
    Seoul").

    >>> candidate_sentences("Can you help? Big news: i moved to Lisbon. Thanks!")
    ['I moved to Lisbon.']
    >>> candidate_sentences("btw love hiking on weekends")
    ['I love hiking on weekends.']
    """
    return [c.text for c in _candidates(text, speaker) if c.follows is None]


class _Candidate(NamedTuple):
    """A sentence to parse: a statement, one whose subject was written back (*restored*:
    the sentence as typed, or ``""`` where it states nothing as typed), or a fragment without
    a verb that may finish the statement at index *follows*."""

    text: str
    restored: str | None = None
    follows: int | None = None


def _candidates(text: str, speaker: str | None) -> list[_Candidate]:
    out: list[_Candidate] = []
    last: int | None = None  # the statement made by the sentence before, if any
    before = ""
    for sentence in _sentences(text):
        sentence = _unopened(sentence.strip())
        found: _Candidate | None = None
        if not sentence or len(sentence) > _MAX_CHARS:
            pass
        elif _subject_left_out(sentence, before):
            # "Golf is not my passion anymore": where the "I" does not fit, the sentence is
            # read as it was typed
            typed = _as_parsed(sentence) if _states(sentence, speaker) else ""
            found = _Candidate(_as_parsed(f"I {sentence[:1].lower()}{sentence[1:]}"), typed)
        elif _states(sentence, speaker):
            found = _Candidate(_as_parsed(sentence))
        elif last is not None and _FRAGMENT.match(sentence) and len(sentence.split()) <= 8:
            out.append(_Candidate(_ended(sentence), follows=last))
        elif _gerund_opens(sentence, before):
            found = _Candidate(_as_parsed(f"I'm {sentence[:1].lower()}{sentence[1:]}"), "")
        last = None if found is None else len(out)
        if found is not None:
            out.append(found)
        before = sentence
    return out


def _gerund_opens(sentence: str, before: str) -> bool:
    """A sentence that opens with a gerund told without "I'm" ("doing intermittent fasting,
    16:8", "Recovering from a broken wrist"), under the conditions of
    :func:`_subject_left_out`."""
    if sentence.rstrip().endswith("?") or asks(sentence) or not _GERUND.match(sentence):
        return False
    return not _SOMEONE_ELSE.search(before)


def _as_parsed(sentence: str) -> str:
    """*sentence* as it is parsed: "i" written "I", asides and openers left out, profile
    lines and fragments given the words the parser needs."""
    for pattern, written in _LOWER_I:
        sentence = pattern.sub(written, sentence)
    for noise in _NOISE:
        sentence = noise.sub("", sentence)
    sentence = _NOT_ANYMORE.sub("I'm ", sentence.strip())
    sentence = _PAST_BEFORE_NAME.sub(lambda m: m.group().lower(), sentence)
    sentence = _BARE_ATTRIBUTE.sub(lambda m: f"My {m.group(1).lower()} is ", sentence)
    sentence = _THE_NAME.sub("My name is ", sentence)
    if _ROLE_AT.match(sentence):
        sentence = f"I'm a {sentence[:1].lower()}{sentence[1:]}"
    return _ended(sentence)


def _ended(sentence: str) -> str:
    # The parser learnt from punctuated text: "I can't eat gluten" parses as a sentence once
    # it ends like one.
    return sentence if sentence[-1:] in ".!?" else f"{sentence}."


def _unopened(sentence: str) -> str:
    """*sentence* without the discourse openers it starts with ("fyi", "btw", "tbh", "ok
    so", "lol", "by the way"): they carry no fact, and before a sentence told without its
    subject they make the parser misread it. "so", "well", "and", "also", "oh", "but",
    "random", "heads up" and "update" are openers only before a comma or a colon, another
    opener, the speaker or a "not" ("so I moved ...", "update: not vegan anymore"; not "so
    tired of my job", "Random House")."""
    rest = sentence
    while (found := _OPENER.match(rest)) is not None:
        after = rest[found.end() :]
        if not after.strip():
            break
        word = found.group(1).lower()
        soft = word not in _HARD_OPENERS and not word.startswith(("hm", "ha", "he"))
        soft = soft and not found.group(2)
        if soft and not (_OPENER.match(after) or _SPEAKER_FIRST.match(after)):
            break
        rest = after
    return rest


def _subject_left_out(sentence: str, before: str) -> bool:
    """An opening verb of state or habit told without its subject ("Live in Seoul", "Love
    hiking on weekends", "Don't like olives"), not asked, and not after a sentence about
    someone else ("My parents retired. Live in Spain now." is about them). Whether it is the
    speaker's is decided on its parse (:func:`~kenning.longterm.parsing.fragments.
    speaker_restored`)."""
    if sentence.rstrip().endswith("?") or asks(sentence) or not _BARE_VERB.match(sentence):
        return False
    if _SPEAKER_SUBJECT.search(sentence):
        return False  # "Love it, I live here now": the subject is said
    return not _SOMEONE_ELSE.search(before)


def _states(sentence: str, speaker: str | None) -> bool:
    """Whether *sentence* may state a fact about the speaker or someone close (cheap: no
    parse). A question counts only for a statement inside it ("since I'm vegan, any tips?")."""
    if _AS_A_ROLE.match(sentence):
        return True
    if sentence.rstrip().endswith("?") and not _SUBORDINATE.search(sentence):
        return False
    mentions = len(_SPEAKER.findall(sentence)) + len(_MY.findall(sentence))
    if mentions > len(_REQUEST.findall(sentence)):
        return True
    named = speaker is not None and speaker in sentence
    opening = _OPENING.match(sentence) or _GREETING_NAME.match(sentence) or _HERE.match(sentence)
    opening = opening or _NOT_ANYMORE.match(sentence) or _ROLE_AT.match(sentence)
    opening = opening or _PLACED_NOW.match(sentence) or _COUNT_NOW.search(sentence)
    opening = opening or _HOME.search(sentence) or _BARE_ATTRIBUTE.match(sentence)
    opening = opening or _PART_OF_ME.search(sentence) or _THE_NAME.match(sentence)
    return named or bool(opening)


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    for piece in _SENTENCE.split(text):
        if out and _ABBREVIATION.search(out[-1]):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return [part for piece in out for part in _statement_then_question(piece)]


def _statement_then_question(sentence: str) -> list[str]:
    """*sentence*, or the statement that opens it and the question after it.

    >>> _statement_then_question("I'm allergic to penicillin, what should I tell the dentist?")
    ["I'm allergic to penicillin.", 'what should I tell the dentist?']
    >>> _statement_then_question("Do you think I'm vegan, or what?")
    ["Do you think I'm vegan, or what?"]
    """
    found = _TRAILING_QUESTION.search(sentence)
    if found is None or asks(sentence):
        return [sentence]
    head = sentence[: found.start()].rstrip()
    return [f"{head}.", sentence[found.end() :]]


class StatementReader(Protocol):
    """Reads the facts users state about themselves in a batch of events."""

    @property
    def name(self) -> str: ...

    def read(self, events: Sequence[Event]) -> list[FactDraft]:
        """The drafts of *events*, in the events' order, each with its event as source."""
        ...


class SentenceParser(Protocol):
    """Parses sentences into records (:class:`~kenning.longterm.parsing.parser.SpacyParser`)."""

    @property
    def name(self) -> str: ...

    @property
    def entities(self) -> bool:
        """Whether its parses carry entity types."""
        ...

    def parse(self, texts: Sequence[str]) -> list[Parsed]: ...


class RuleStatements:
    """The phrase rules of :mod:`kenning.longterm.extract`: no model, about 24,000 sentences
    a second, and a narrow reading."""

    name = "rules"

    def read(self, events: Sequence[Event]) -> list[FactDraft]:
        return [d for event in events for d in extract_facts(event)]


class ParsedStatements:
    """Reads user turns by their parse (see the module); the rules where no parser loads.

    Args:
        parser: Parses the candidate sentences.
    """

    def __init__(self, parser: SentenceParser) -> None:
        self._parser = parser
        self._rules = RuleStatements()
        self._fallen_back = False

    @property
    def name(self) -> str:
        return self._rules.name if self._fallen_back else f"parse ({self._parser.name})"

    def read(self, events: Sequence[Event]) -> list[FactDraft]:
        if self._fallen_back:
            return self._rules.read(events)
        users = [e for e in events if e.role is Role.USER and not jokes(e.content)]
        batch: list[tuple[Event, _Candidate]] = []
        for event in users:
            first = len(batch)
            for c in _candidates(event.content, _speaker(event)):
                follows = None if c.follows is None else first + c.follows
                batch.append((event, c._replace(follows=follows)))
        typed = [c.restored for _, c in batch if c.restored]
        try:
            parsed = self._parser.parse([*(c.text for _, c in batch), *typed])
        except ModelUnavailable as exc:
            log.warning("fact extraction reads with the rules: %s", exc)
            self._fallen_back = True
            return self._rules.read(events)
        as_typed = iter(parsed[len(batch) :])
        out: list[FactDraft] = []
        for (event, c), sentence in zip(batch, parsed[: len(batch)], strict=True):
            speaker, entities = _speaker(event), self._parser.entities
            if c.follows is not None:
                drafts = read_continuation(parsed[c.follows], sentence, said=event.at,
                                           speaker=speaker, entities=entities)  # fmt: skip
            else:
                original = next(as_typed) if c.restored else None
                if c.restored is not None and not speaker_restored(sentence):
                    if original is None:
                        continue
                    sentence = original
                drafts = read_statements(sentence, said=event.at, speaker=speaker,
                                         entities=entities)  # fmt: skip
            out.extend(replace(d, source_event_id=event.id) for d in drafts)
        return out


def _speaker(event: Event) -> str | None:
    speaker = event.metadata.get("speaker") if event.metadata else None
    return speaker if isinstance(speaker, str) and speaker.strip() else None
