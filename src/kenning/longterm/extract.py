"""Deterministic fact extraction from what a user says about themselves (pure, no LLM).

Sentences are read one clause at a time. A clause yields a fact only when the user states it
about themselves in the present: "I work at Netflix", "I moved to Lisbon", "I'm allergic to
peanuts", "my favourite colour is green", "call me Dee". A statement about someone else ("my
sister is a vegan") is a fact about that person, never about the user. Nothing is taken from
questions ("am I allergic to nuts?"), hypotheticals ("if I were a vegan", "I wish I lived in
Rome"), reported speech ("she said I'm lazy"), the past ("when I was a kid I lived in Oslo"),
or sarcasm ("yeah right, I love Mondays"). Hedges ("I think I'm allergic") make a fact
``inferred`` with lower confidence. Withdrawals ("I no longer eat meat", "I don't like jazz
anymore", "forget that I live in Berlin") become revocations.

Attributes are named by what they hold: single-valued ones (``employer``, ``location``,
``name``, ``favorite color``) keep one current value; multi-valued ones carry their object
(``preference:jazz`` = likes, ``allergy:peanuts``, ``is_a:nurse``), so liking rock does not
supersede liking jazz, while "I don't like jazz anymore" does.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from kenning.records import USER, Event, FactCategory, FactDraft, FactSource, Role

__all__ = ["extract_facts", "stated_start", "statement", "statement_facts"]


def _r(pattern: str) -> re.Pattern[str]:
    """A case-insensitive pattern: people write "i'm" and "My" as often as "I'm" and "my"."""
    return re.compile(pattern, re.IGNORECASE)


_SENTENCE_RE = re.compile(r"(?<=[.!?;])\s+|\n+")
# Clauses: at a conjunction, and at "and" when a new first-person clause follows.
_CLAUSE_RE = _r(
    r",?\s+(?:but|and then|although|though|whereas|while)\s+|,\s+so\s+|;\s*|,\s+and\s+|"
    r"\s+and\s+(?=I\b|I'm\b|I've\b|my\b)"
)
_MAX_VALUE = 80

_QUESTION_START = _r(
    r"^(?:am|are|is|was|were|do|does|did|have|has|had|can|could|should|would|will|shall|"
    r"may|might|must|what|which|who|whom|whose|where|when|why|how)\b"
)
_HYPOTHETICAL = _r(
    r"\b(?:if|suppose|supposing|imagine|pretend|unless|whether|in case|as if|maybe I)\b|"
    r"\bI\s+(?:wish|would|'d|might|may|could|should|will|'ll|want to be|hope to|plan to|"
    r"am going to|'m going to|used to|am thinking|'m thinking|am looking|'m looking)\b|"
    r"\bI(?:'ll| will)\b|\bwhen I was\b|\bback (?:in|when)\b"
)
_REPORTED = _r(
    r"\b(?:he|she|they|you|someone|people|my \w+|\w+)\s+(?:said|says|told me|thinks|thought|"
    r"believes|claims|claimed|asked|asks|insists|insisted)\b(?:\s+that)?\s+I\b"
)
# A joke marker anywhere in the message withdraws everything in it.
_SARCASM = _r(
    r"\byeah,? right\b|\bas if\b|\bjust kidding\b|\bjk\b|\bkidding\b|/s\b|\bsure,? because\b|"
    r"\btotally not\b|\bnot!"
)
_HEDGE = _r(
    r"\b(?:I think|I guess|I believe|probably|perhaps|I suppose|might be|kind of|sort of)\b"
)
_QUALIFIER = _r(
    r",?\s*\b(?P<q>at work|at home|at the office|for work|on weekends|on weekdays|"
    r"in the mornings?|in the evenings?|at night|when travell?ing|on holiday|on vacation)\b"
)
_NOW_WORDS = _r(
    r"\b(?:now|currently|these days|nowadays|at the moment|right now|anymore|any more|"
    r"actually|really|just|still|also|too|as well|totally|a lot|very much|so much|a bit)\b"
)
_TRAILER = _r(
    r"\s*(?:,(?!\d)|\bbecause\b|\bsince\b|\bwhich\b|\bwho\b|\bwhere\b|\bwith\b|\bfor (?:about|over|"
    r"almost|nearly|the past|\d|a |an |one|two|three|four|five|six|seven|eight|nine|ten|"
    r"several|many|years|months)|\bfrom \d|\band\b|\bbut\b|\bso\b|\bthat is\b|\bif\b|"
    r"\bwhen\b|\bafter\b|\bbefore\b|\bin (?:19|20)\d\d\b|\bin (?:january|february|march|"
    r"april|may|june|july|august|september|october|november|december)\b|\bthese days\b|"
    r"\bnowadays\b|\bnow\b|\banymore\b|\blast (?:week|month|year|night)\b|\byesterday\b|"
    r"\btoday\b|\bthis (?:week|month|year)\b|\b\w+ (?:days|weeks|months|years) ago\b|"
    r"\bmostly\b|\bper se\b).*$"
)
_ARTICLE = _r(r"^(?:a|an|the|some|my|to)\s+")
# Objects that point at the conversation, not at something the user likes in general.
_DEICTIC = _r(
    r"^(?:(?:it|this|that|these|those|them|him|her|you|one|so|think|believe|hope|know|say|"
    r"see|guess|the (?:first|second|third|last|other|next|previous|former|latter|same|new|"
    r"old))\b|.*\b(?:option|idea|version|plan|one)$)"
)
_YEAR_DATE = _r(
    r"\b(?:in|since|from|as of)\s+(?:(?P<month>january|february|march|april|may|june|july|"
    r"august|september|october|november|december)\s+)?(?P<year>(?:19|20)\d\d)\b"
)
_MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december"
)  # fmt: skip

_RELATIONS = (
    "wife|husband|partner|girlfriend|boyfriend|fiance|fiancee|spouse|mother|mom|mum|father|"
    "dad|sister|brother|son|daughter|kid|child|friend|best friend|boss|manager|colleague|"
    "coworker|roommate|flatmate|neighbor|neighbour|grandma|grandmother|grandpa|grandfather|"
    "aunt|uncle|cousin|niece|nephew|dog|cat"
)
_FAMILY = frozenset(
    "wife husband partner girlfriend boyfriend fiance fiancee spouse mother mom mum father "
    "dad sister brother son daughter kid child grandma grandmother grandpa grandfather aunt "
    "uncle cousin niece nephew".split()
)
# "my sister is a vegan" is read as "I am a vegan" about the sister.
_THIRD_PARTY = _r(
    r"^my (?P<rel>" + _RELATIONS + r")(?:'s (?P<attr>[a-z][\w ]{1,30}?) (?P<is>is|are)\b|"
    r"(?: (?P<who>[A-Z][\w'-]+))? (?P<verb>is|'s|works|lives|loves|likes|hates|prefers|"
    r"enjoys|has|doesn't|does not|eats|uses)\b)"
)
_FIRST_PERSON_VERB = {
    "is": "I am", "'s": "I am", "works": "I work", "lives": "I live", "loves": "I love",
    "likes": "I like", "hates": "I hate", "prefers": "I prefer", "enjoys": "I enjoy",
    "has": "I have", "doesn't": "I don't", "does not": "I do not", "eats": "I eat",
    "uses": "I use",
}  # fmt: skip
_CONDITIONS = (
    "diabetes|asthma|adhd|autism|depression|anxiety|celiac disease|coeliac disease|epilepsy|"
    "migraines?|high blood pressure|hypertension|arthritis|insomnia|dyslexia|a heart condition|"
    "cancer|long covid|ibs|crohn'?s disease|lactose intolerance|an? \\w+ allergy|back pain|"
    "tinnitus"
)
_DIETS = "vegan|vegetarian|pescatarian|gluten[- ]free|kosher|halal|keto|teetotal|sober"
_NOT_ROLES = _r(
    r"^(?:bit|little|lot|big|huge|real|total|complete|great|good|bad|fan|member|part|kind|"
    r"sort|type|few|couple|number|new|first|second|last|long|short|hour|minute|day|week|"
    r"month|year|while)\b"
)
_STATUS = "married|single|divorced|engaged|widowed|separated|pregnant"
# What "my X is Y" may name: stable personal data, not the state of an order or a device.
_PERSONAL = (
    r"(?:(?:preferred|native|first|main|primary|home|work|current|usual|personal|mobile|"
    r"github|twitter|slack|legal) )?(?:email(?: address)?|e-mail|phone(?: number)?|number|"
    r"address|birthday|date of birth|time ?zone|shoe size|size|height|blood type|nationality|"
    r"language|pronouns|username|user name|handle|website|company|employer|job title|title|"
    r"role|department|editor|ide|os|operating system|browser|car|hobby|hobbies|middle name|"
    r"last name|surname|first name|nickname|name)"
)


@dataclass(frozen=True, slots=True)
class _Rule:
    pattern: re.Pattern[str]
    attribute: str  # "{obj}" is replaced by the normalised object for multi-valued ones
    value: str  # a fixed value, or "" to take the captured one
    category: FactCategory = FactCategory.GENERAL
    revoke: bool = False


def _rule(
    pattern: str,
    attribute: str,
    value: str = "",
    category: FactCategory = FactCategory.GENERAL,
    *,
    revoke: bool = False,
) -> _Rule:
    return _Rule(_r(pattern), attribute, value, category, revoke)


# A value runs to the end of the clause; a dot inside it (an email, a version) is kept.
_V = r"(?P<v>(?:[^,;!?.]|\.(?=\S))+)"
_MONEY = (
    r"(?P<v>[$€£]?\s?\d[\d,.]*\s?(?:dollars|euros|pounds|k|K|[A-Z]{3})?"
    r"(?:\s(?:a|per)\s(?:year|month|hour|week))?)"
)
# One rule a row: pattern, attribute, value ("" takes the captured one), category.
# fmt: off
_RULES: tuple[_Rule, ...] = (
    # Withdrawals first: they must not also read as statements.
    _rule(r"^I (?:no longer|don'?t|do not) (?:like|love|enjoy) " + _V + r" any ?more\b",
          "preference:{obj}", revoke=True),
    _rule(r"^I (?:no longer|stopped|quit) (?:liking|loving|enjoying|like|love|enjoy) " + _V,
          "preference:{obj}", revoke=True),
    _rule(r"^I (?:no longer|don'?t|do not) (?:work|am working) (?:at|for) " + _V, "employer",
          revoke=True),
    _rule(r"^I (?:quit|left) (?:my job at |my position at |working at |working for )" + _V,
          "employer", revoke=True),
    _rule(r"^I (?:no longer|don'?t|do not) live in " + _V, "location", revoke=True),
    _rule(r"^I(?:'m| am) (?:no longer|not) (?:an? )?(?P<v>" + _DIETS + r")(?: any ?more)?",
          "is_a:{obj}", revoke=True),
    _rule(r"^I(?:'m| am) no longer (?:an? )" + _V, "is_a:{obj}", revoke=True),
    _rule(r"^I(?:'m| am) not (?:an? )" + _V + r" any ?more", "is_a:{obj}", revoke=True),
    _rule(r"^I(?:'m| am) no longer allergic to " + _V, "allergy:{obj}", "", FactCategory.HEALTH,
          revoke=True),
    # Names and identity.
    _rule(r"^my name is (?P<v>[A-Za-z][\w'-]*(?: [A-Z][\w'-]*)*)", "name"),
    _rule(r"^(?:please )?call me (?P<v>[A-Za-z][\w'-]*(?: [A-Z][\w'-]*)?)", "preferred name"),
    _rule(r"^I go by (?P<v>[A-Za-z][\w'-]*)", "preferred name"),
    _rule(r"^I(?:'m| am) (?P<v>\d{1,3})(?: years? old| yo)?(?:$|\s+and\b)", "age"),
    _rule(r"^I(?:'m| am) (?P<v>" + _STATUS + r")\b", "relationship status", "",
          FactCategory.RELATIONSHIP),
    # Work.
    _rule(r"^I(?: work| am working|'m working) as (?:an? )?" + _V, "occupation"),
    _rule(r"^I(?:'m| am) an? (?P<v>[\w -]+?) (?:at|for) [A-Z]", "occupation"),
    _rule(r"^I(?: work| am working|'m working| started working| started a new job|"
          r" got a (?:new )?job| have a (?:new )?job| took a (?:new )?job) (?:at|for|with) " + _V,
          "employer"),
    _rule(r"^I(?:'ve| have)? ?(?:just )?joined (?P<v>[A-Z][^,;!?]*)", "employer"),
    _rule(r"^my (?:job|profession|occupation) is (?:an? )?" + _V, "occupation"),
    # Places.
    _rule(r"^I(?: live|'m living| am living| reside) in " + _V, "location"),
    _rule(r"^I(?:'ve| have) (?:lived|been living) in " + _V, "location"),
    _rule(r"^I(?:'ve| have)? ?(?:just |recently )?(?:moved|relocated) (?:to|into) " + _V,
          "location"),
    _rule(r"^I(?:'m| am) (?:based|located|living) in " + _V, "location"),
    _rule(r"^I(?:'m| am) (?:originally )?from " + _V, "hometown"),
    _rule(r"^I grew up in " + _V, "hometown"),
    # Health and diet.
    _rule(r"^I(?:'m| am) (?:severely |very |mildly )?allergic to " + _V, "allergy:{obj}",
          "allergic", FactCategory.HEALTH),
    _rule(r"^I (?:have|suffer from|was diagnosed with|live with) (?P<v>" + _CONDITIONS + ")",
          "condition:{obj}", "has", FactCategory.HEALTH),
    _rule(r"^I(?:'m| am) (?:an? )?(?P<v>" + _DIETS + r")\b", "is_a:{obj}", "yes"),
    _rule(r"^I (?:don'?t|do not|never|no longer) (?:eat|drink) " + _V, "diet:no {obj}", "yes"),
    # Money.
    _rule(r"^I (?:earn|make) " + _MONEY, "income", "", FactCategory.FINANCE),
    _rule(r"^my (?:salary|income) is " + _MONEY, "income", "", FactCategory.FINANCE),
    _rule(r"^I (?:owe|have a debt of) (?:the bank |my \w+ )?" + _MONEY, "debt", "",
          FactCategory.FINANCE),
    _rule(r"^I bank with " + _V, "bank", "", FactCategory.FINANCE),
    # Preferences and tools.
    _rule(r"^I(?:'m| am) (?:a )?(?:big |huge |massive )?fan of " + _V, "preference:{obj}",
          "likes"),
    _rule(r"^I(?:'m| am) an? (?:big |huge |massive |die-hard )?(?P<v>[\w ]{2,30}) fan$",
          "preference:{obj}", "likes"),
    _rule(r"^I (?:love|adore) " + _V, "preference:{obj}", "loves"),
    _rule(r"^I (?:like|enjoy) " + _V, "preference:{obj}", "likes"),
    _rule(r"^I (?:hate|detest|dislike|can'?t stand|cannot stand|don'?t like|do not like) " + _V,
          "preference:{obj}", "dislikes"),
    _rule(r"^I prefer (?P<v>[^,;!?]+?)(?: (?:to|over|rather than) [^,;!?]+)?$",
          "preference:{obj}", "prefers"),
    _rule(r"^my (?:favou?rite|fave) (?P<a>[\w ]{2,30}?) (?:is|are) " + _V, "favorite {a}"),
    _rule(r"^I (?:use|work with|code in|program in) " + _V, "uses:{obj}", "yes"),
    # Roles: "I'm a nurse", "I'm a mother of two".
    _rule(r"^I(?:'m| am) an? (?P<v>[\w -]{2,40})$", "is_a:{obj}", "yes"),
    # "my email is ...", "my birthday is ...": stable personal data.
    _rule(r"^my (?P<a>" + _PERSONAL + r") (?:is|are) (?:on )?" + _V, "{a}"),
)
# fmt: on

_FORGET = _r(
    r"^(?:please )?(?:forget|delete|remove|erase|disregard)(?: the fact)? that (?P<rest>.+)$"
)
# "I really like", "I do love": the adverb says nothing the rule needs.
_ADVERBS = _r(
    r"^I (?:(?:really|truly|absolutely|totally|genuinely|also|just|still|actually|do|"
    r"definitely|sincerely|kind of|sort of) )+"
)
_FIRST_PERSON = _r(r"\b(?:I|I'm|I've|my|me)\b")
_MULTI = frozenset({"preference:{obj}", "uses:{obj}", "is_a:{obj}", "allergy:{obj}",
                    "condition:{obj}", "diet:no {obj}"})  # fmt: skip


def _clean(value: str) -> str:
    value = _TRAILER.sub("", value)
    value = _NOW_WORDS.sub("", value)
    value = re.sub(r"\s+", " ", value).strip(" '\"-")
    return value[:_MAX_VALUE].strip()


def _object(value: str) -> str:
    return _ARTICLE.sub("", value.lower()).strip()


_RELATIVE = _r(
    r"\b(?:(?P<last>last|past) (?P<unit>week|month|year|spring|summer|autumn|fall|winter)|"
    r"(?P<n>\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten) (?P<units>day|week|"
    r"month|year)s? ago|(?P<yesterday>yesterday))\b"
)
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
            "seven": 7, "eight": 8, "nine": 9, "ten": 10}  # fmt: skip
_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365, "spring": 182, "summer": 182,
         "autumn": 182, "fall": 182, "winter": 182}  # fmt: skip


def stated_start(text: str, said: datetime) -> datetime:
    """When a statement said at *said* starts to hold: a date it names ("since 2019", "in
    March 2021"), a time it counts back ("last month", "two years ago", "yesterday"; months
    count as 30 days), else *said*. Never later than *said*.

    >>> stated_start("I've been vegan since 2020", datetime(2026, 1, 10, tzinfo=UTC)).year
    2020
    >>> stated_start("I moved to Lisbon last month", datetime(2026, 1, 10, tzinfo=UTC)).day
    11
    """
    match = _YEAR_DATE.search(text)
    if match is not None:
        month = _MONTHS.index(match["month"].lower()) + 1 if match["month"] else 1
        start = datetime(int(match["year"]), month, 1, tzinfo=said.tzinfo or UTC)
        return start if start <= said else said
    relative = _RELATIVE.search(text)
    if relative is None:
        return said
    if relative["yesterday"]:
        return said - timedelta(days=1)
    if relative["last"]:
        return said - timedelta(days=_DAYS[relative["unit"].lower()])
    count = relative["n"].lower()
    number = int(count) if count.isdigit() else _NUMBERS[count]
    return said - timedelta(days=number * _DAYS[relative["units"].lower()])


def _valid_from(clause: str, said: datetime) -> datetime:
    """A stated start ("since 2019", "in March 2021") when it is not in the future."""
    match = _YEAR_DATE.search(clause)
    if match is None:
        return said
    month = _MONTHS.index(match["month"].lower()) + 1 if match["month"] else 1
    start = datetime(int(match["year"]), month, 1, tzinfo=UTC)
    return start if start <= said else said


def _clauses(text: str) -> Iterator[str]:
    for sentence in _SENTENCE_RE.split(text):
        sentence = sentence.strip()
        if not sentence:
            continue
        question = sentence.endswith("?")
        for clause in _CLAUSE_RE.split(sentence):
            clause = clause.strip(" ,.!;:-\"'()")
            if clause and not question:
                yield clause


def _opening(clause: str) -> str:
    """The clause from its first-person subject on ("Honestly, I love tea" -> "I love tea")."""
    clause = re.sub(
        r"^(?:oh|well|so|also|and|but|honestly|actually|btw|by the way|fyi|ok|okay|yes|yeah|"
        r"no|hi|hey|hello|as you know|just so you know|for the record|for what it's worth|"
        r"(?:as|like) I (?:said|mentioned|told you)(?: before| earlier)?)"
        r"\b[,!]?\s*",
        "",
        clause,
        flags=re.IGNORECASE,
    )
    return clause


def _rejected(clause: str) -> bool:
    return bool(
        _QUESTION_START.match(clause)
        or _HYPOTHETICAL.search(clause)
        or _REPORTED.search(clause)
        or _SARCASM.search(clause)
    )


def statement_facts(text: str, *, said: datetime) -> list[FactDraft]:
    """The facts the user states about themselves (and people they name) in *text*."""
    if _SARCASM.search(text):
        return []
    out: dict[tuple[str, str, str, bool], FactDraft] = {}
    for raw in _clauses(text):
        clause = _opening(raw)
        forget = _FORGET.match(clause)
        if forget:
            clause = _opening(forget["rest"].strip())
        if not _FIRST_PERSON.search(clause) or _rejected(clause):
            continue
        hedged = bool(_HEDGE.search(clause))
        clause = re.sub(r"^(?:I think|I guess|I believe|I suppose) (?:that )?", "", clause,
                        flags=re.IGNORECASE)  # fmt: skip
        qualifier = ""
        found_q = _QUALIFIER.search(clause)
        if found_q:
            qualifier = found_q["q"].lower()
            clause = (clause[: found_q.start()] + clause[found_q.end() :]).strip(" ,")
        clause = _ADVERBS.sub("I ", clause)
        subject, clause = _about(clause)
        draft = _match(clause, said, subject)
        if draft is None:
            continue
        if forget:
            draft = replace(draft, revoke=True)
        if hedged:
            draft = replace(draft, source=FactSource.INFERRED, confidence=0.6)
        if qualifier:
            text = statement(draft.subject, draft.attribute, draft.value, qualifier)
            draft = replace(draft, qualifier=qualifier, text=text)
        out.setdefault((*draft.key, draft.revoke), draft)
    return list(out.values())


def _about(clause: str) -> tuple[str, str]:
    """Who the clause is about, and the clause as if that one said it ("my sister is a
    vegan" -> ("sister", "I am a vegan"))."""
    match = _THIRD_PARTY.match(clause)
    if match is None:
        return USER, clause
    relation = match["rel"].lower()
    rest = clause[match.end() :].strip()
    if match["attr"]:
        return relation, f"my {match['attr']} {match['is']} {rest}"
    subject = f"{relation} {match['who']}" if match["who"] else relation
    return subject, f"{_FIRST_PERSON_VERB[match['verb'].lower()]} {rest}"


def _match(clause: str, said: datetime, subject: str) -> FactDraft | None:
    for rule in _RULES:
        match = rule.pattern.search(clause)
        if match is None:
            continue
        groups = match.groupdict()
        value = _clean(groups.get("v") or "")
        if len(value) < 2:
            continue
        obj = _object(value)
        if rule.attribute in _MULTI and (_DEICTIC.match(obj) or not obj):
            continue
        if rule.attribute == "is_a:{obj}" and (_NOT_ROLES.match(obj) or len(obj.split()) > 4):
            continue
        category = rule.category
        if subject != USER and subject.split()[0] in _FAMILY:
            category = FactCategory.RELATIONSHIP
        attribute = rule.attribute.replace("{obj}", obj)
        attribute = attribute.replace("{a}", _clean(groups.get("a") or "")).strip().lower()
        if not attribute or attribute.endswith(":"):
            continue
        fixed = rule.value or value
        return FactDraft(
            subject=subject, attribute=attribute, value=fixed,
            text=statement(subject, attribute, fixed), category=category, revoke=rule.revoke,
            valid_from=_valid_from(clause, said),
        )  # fmt: skip
    return None


_TEMPLATES = {
    "employer": "{who} works at {value}",
    "occupation": "{who} works as {value}",
    "location": "{who} lives in {value}",
    "hometown": "{who} is from {value}",
    "name": "{whose} name is {value}",
    "preferred name": "{who} prefers to be called {value}",
    "age": "{who} is {value} years old",
    "relationship status": "{who} is {value}",
    "income": "{who} earns {value}",
    "debt": "{who} owes {value}",
    "bank": "{who} banks with {value}",
    "partner": "{who} has a {value}",
    "nationality": "{who} is {value}",
}
_FAMILIES = {
    "allergy": "{who} is allergic to {thing}",
    "condition": "{who} has {thing}",
    "is_a": "{who} is {article} {thing}",
    "diet": "{who} eats {thing}",
    "uses": "{who} uses {thing}",
    "family": "{who} has {thing}",
    "pet": "{who} has a pet: {thing}",
    "language": "{who} {value} {thing}",
    "hobby": "{who}'s hobbies include {thing}",
    "education": "{who}'s education includes {thing}",
}
# A standing negative ("diet:no pork", "pet:no pets"): the object after "no".
_NEGATIVES = {
    "diet": "{who} does not eat or drink {thing}",
    "language": "{who} does not speak {thing}",
}


def statement(subject: str, attribute: str, value: str, qualifier: str = "") -> str:
    """The fact as a short sentence, e.g. "The user works at Netflix", "The user's sister is a
    vegan", "The user likes jazz (at work)": what a window shows and search matches."""
    who = "The user" if subject == USER else f"The user's {subject}"
    whose = f"{who}'s" if subject != USER else "The user's"
    kind, sep, thing = attribute.partition(":")
    if sep:
        negative = thing.startswith("no ") and kind != "preference"
        thing = thing.removeprefix("no ") if negative else thing
        if kind == "preference":
            text = f"{who} {value} {thing}"
        else:
            article = "an" if thing[:1] in "aeiou" else "a"
            template = (
                _NEGATIVES.get(kind, "{who} has no {thing}")
                if negative
                else _FAMILIES.get(kind, "{who} {kind}: {thing}")
            )
            text = template.format(who=who, thing=thing, article=article, kind=kind, value=value)
    else:
        template = _TEMPLATES.get(attribute, "{whose} {attribute} is {value}")
        text = template.format(who=who, whose=whose, attribute=attribute, value=value)
    return f"{text} ({qualifier})" if qualifier else text


def extract_facts(event: Event) -> list[FactDraft]:
    """Facts in an event: what the user says about themselves in a user turn.

    Tool results and assistant turns are read by
    :func:`kenning.longterm.tool_facts.discovered_facts`. Every draft carries the event as its
    source.
    """
    if event.role is not Role.USER:
        return []
    return [
        replace(d, source_event_id=event.id, valid_from=d.valid_from or event.at)
        for d in statement_facts(event.content, said=event.at)
    ]
