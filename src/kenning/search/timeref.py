"""Time references in a query ("last Friday", "two weeks ago", "in March") as time windows.

A question that names a time ("what did I order 10 days ago?") is about records from that
time, so search can favour them. The parser is rule-based and pure: it reads English
expressions relative to the search's ``now`` and returns half-open UTC windows. It only
fires on an explicit anchor (``ago``, ``last``, ``past``, ``this``, ``yesterday``, a weekday
or month name used as a date); "a 5-day trip" or "how many weeks did it take" name a
duration, not a time, and give nothing.

A bare weekday or month ("on Friday", "in April") can point either way: "what did I buy on
Friday" means the last one, "what time is my flight on Friday" the next one, and a memory cannot
come from the future. So when the named day or month could still be ahead (a weekday; a month
later in the year than ``now``'s), it becomes a window only if the query speaks of the past
(a past-tense verb: "did", "was", "bought", "moved" …).

Windows are generous on purpose: people say "last week" about ten days ago, and the record
of an event is often written a day later. A window is widened by a quarter of its length on
both sides (at least a day), and callers use it as a soft preference, never as a filter.
Times are calendar days of ``now``'s time zone (UTC when ``now`` is naive).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta

__all__ = ["MAX_WINDOWS", "TimeWindow", "time_windows"]

MAX_WINDOWS = 4
"""At most this many windows are read from one query (the first ones it names)."""

_DAY = timedelta(days=1)
_SLACK = 0.25
"""How far past each end a window reaches, as a share of its length (at least a day)."""

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
)  # fmt: skip
_MONTH_ABBR = {m[:3]: i for i, m in enumerate(_MONTHS, start=1)} | {"sept": 9}
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "a couple of": 2, "a couple": 2, "couple of": 2, "a few": 3, "few": 3, "several": 3,
}  # fmt: skip
_UNITS = {"day": 1, "week": 7, "month": 30, "year": 365}

_COUNT = (
    r"(?P<n>\d{1,3}|a couple of|a couple|couple of|a few|few|several|an?|one|two|three|four"
    r"|five|six|seven|eight|nine|ten|eleven|twelve)"
)
_UNIT = r"(?P<unit>day|week|month|year)s?"
_WEEKDAY = r"(?P<wd>" + "|".join(_WEEKDAYS) + r")"
_MONTH = r"(?P<month>" + "|".join(_MONTHS) + r"|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)"

_AGO = re.compile(rf"\b{_COUNT}\s+{_UNIT}\s+(?:ago|back|earlier)\b")
_PAST_N = re.compile(rf"\b(?:last|past|previous|recent)\s+{_COUNT}\s+{_UNIT}\b")
_LAST_UNIT = re.compile(
    r"\b(?P<rel>last|past|previous|this past|this)\s+(?P<unit>day|week|weekend|month|year)\b"
)
_WEEKDAY_REF = re.compile(rf"\b(?P<rel>last|past|this past|previous|on|this)\s+{_WEEKDAY}\b")
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_ORDINAL = r"(?:st|nd|rd|th)?"
# A month used as a date: after a preposition ("in March", "and April"), or with a day or a
# year ("October 13, 2023", "23 January, 2022", "May 2022"). A bare month name is not enough.
_MONTH_REF = re.compile(
    r"\b(?:(?P<rel>in|during|last|this past|since|of|on|early|late|mid|and|or)\s+"
    r"(?:the\s+month\s+of\s+)?)?"
    rf"(?:(?P<day0>\d{{1,2}}){_ORDINAL}\s+(?:of\s+)?)?{_MONTH}\b\.?"
    rf"(?:\s+(?P<day>\d{{1,2}}){_ORDINAL}\b)?(?:,?\s+{_YEAR}\b)?"
)
_MAY_AS_MONTH = frozenset({"in", "during", "last", "since", "early", "late", "mid"})
# The past tense (auxiliaries, regular and common irregular forms): the query looks back.
_PAST = re.compile(
    r"\b(?:did|was|were|had|\w{3,}ed|said|told|went|got|bought|made|saw|met|paid|sent|spent|"
    r"took|gave|came|left|ate|wrote|ran|found|thought|felt|brought|heard|kept|lost|sold|won|"
    r"wore|drove|flew|forgot|spoke|began|sang|swam|taught|caught|built|chose|drank|fell|held|"
    r"knew|led|meant|rode|sat|slept|stood|threw|read)\b"
)
_DAY_WORDS = re.compile(
    r"\b(?P<w>the day before yesterday|yesterday|today|tonight|last night|this morning|"
    r"this afternoon|this evening)\b"
)


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """A half-open UTC interval ``[start, end)`` a query refers to, and the words that named it."""

    start: datetime
    end: datetime
    phrase: str

    def contains(self, at: datetime) -> bool:
        return self.start <= at < self.end


def _count(text: str) -> int:
    text = text.strip()
    return int(text) if text.isdigit() else _NUMBERS[text]


def _add_months(day: datetime, months: int) -> datetime:
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    return day.replace(year=year, month=month + 1, day=1)


def _window(start: datetime, end: datetime, phrase: str) -> TimeWindow:
    pad = max((end - start) * _SLACK, _DAY)
    return TimeWindow(start - pad, end + pad, phrase)


def _ago(match: re.Match[str], today: datetime, now: datetime, past: bool) -> TimeWindow | None:
    n = _count(match["n"])
    unit = _UNITS[match["unit"]]
    if n <= 0 or n * unit > 36_500:
        return None
    if match["unit"] == "month":
        anchor = _add_months(today, -n).replace(day=min(today.day, 28))
        spread = timedelta(days=10)
    elif match["unit"] == "year":
        anchor = today.replace(year=today.year - n, month=1, day=1)
        return _window(anchor, anchor.replace(year=anchor.year + 1), match[0])
    else:
        anchor = today - n * unit * _DAY
        spread = timedelta(days=0 if unit == 1 else 3)
    if match["n"] in ("a few", "few", "several"):
        # A vague count: anything from two units back to a few more.
        return _window(today - 5 * unit * _DAY, today - unit * _DAY, match[0])
    return _window(anchor - spread, anchor + spread + _DAY, match[0])


def _past_n(match: re.Match[str], today: datetime, now: datetime, past: bool) -> TimeWindow:
    n = max(_count(match["n"]), 1)
    days = min(n * _UNITS[match["unit"]], 36_500)
    return _window(today - days * _DAY, now, match[0])


def _last_unit(match: re.Match[str], today: datetime, now: datetime, past: bool) -> TimeWindow:
    rel, unit = match["rel"], match["unit"]
    this = rel == "this"
    if unit == "day":
        return _window(today - _DAY, now, match[0])
    if unit == "weekend":
        # "this weekend" may be the one in progress; "last"/"past" is the latest one over.
        saturday = today - ((today.weekday() - 5) % 7) * _DAY
        if not this and today.weekday() >= 5:
            saturday -= 7 * _DAY
        return _window(saturday, saturday + 2 * _DAY, match[0])
    if unit == "week":
        monday = today - today.weekday() * _DAY
        if this:
            return _window(monday, now, match[0])
        # The previous calendar week, or the last seven days: both are meant.
        return _window(monday - 7 * _DAY, max(now, today + _DAY), match[0])
    if unit == "month":
        first = today.replace(day=1)
        if this:
            return _window(first, now, match[0])
        return _window(_add_months(first, -1), first, match[0])
    first_of_year = today.replace(month=1, day=1)
    if this:
        return _window(first_of_year, now, match[0])
    return _window(first_of_year.replace(year=today.year - 1), first_of_year, match[0])


def _weekday_ref(
    match: re.Match[str], today: datetime, now: datetime, past: bool
) -> TimeWindow | None:
    if match["rel"] in ("on", "this") and not past:
        return None  # "my flight on Friday" is the next one
    wanted = _WEEKDAYS.index(match["wd"])
    back = (today.weekday() - wanted) % 7 or 7
    if match["rel"] in ("on", "this") and today.weekday() == wanted:
        back = 0
    day = today - back * _DAY
    return _window(day, day + _DAY, match[0])


def _month_ref(
    match: re.Match[str], today: datetime, now: datetime, past: bool
) -> TimeWindow | None:
    name, rel = match["month"], match["rel"]
    day_text = match["day"] or match["day0"]
    if rel is None and day_text is None and match["year"] is None:
        return None
    if name == "may" and rel not in _MAY_AS_MONTH and match["year"] is None:
        return None  # "may" is far more often the verb
    month = _MONTHS.index(name) + 1 if name in _MONTHS else _MONTH_ABBR[name]
    if match["year"]:
        year = int(match["year"])
    else:
        if month > today.month and rel not in ("last", "since") and not past:
            return None  # "out of office in April", asked in March: the coming April
        year = today.year if month <= today.month else today.year - 1
        if rel == "last" and month == today.month:
            year -= 1
    if day_text:
        try:  # "February 30" names no day
            day = today.replace(year=year, month=month, day=int(day_text))
        except ValueError:
            return None
        return _window(day, day + _DAY, match[0])
    start = today.replace(year=year, month=month, day=1)
    end = _add_months(start, 1)
    if rel == "since":
        return _window(start, max(now, end), match[0])
    return _window(start, end, match[0])


def _day_words(match: re.Match[str], today: datetime, now: datetime, past: bool) -> TimeWindow:
    word = match["w"]
    if word == "the day before yesterday":
        return _window(today - 2 * _DAY, today - _DAY, word)
    if word == "yesterday":
        return _window(today - _DAY, today, word)
    if word == "last night":  # the evening before, or the small hours of today
        return _window(today - _DAY, today + _DAY, word)
    return _window(today, today + _DAY, word)


_Rule = Callable[[re.Match[str], datetime, datetime, bool], TimeWindow | None]
_RULES: tuple[tuple[re.Pattern[str], _Rule], ...] = (
    (_AGO, _ago),
    (_PAST_N, _past_n),
    (_LAST_UNIT, _last_unit),
    (_WEEKDAY_REF, _weekday_ref),
    (_MONTH_REF, _month_ref),
    (_DAY_WORDS, _day_words),
)


def time_windows(text: str, now: datetime) -> tuple[TimeWindow, ...]:
    """The time windows *text* refers to, relative to *now* (empty when it names no time).

    Every window ends no later than two days after *now*'s day: a memory cannot come from the
    future. Overlapping matches keep the first rule's; at most :data:`MAX_WINDOWS` windows.
    """
    lowered = text.lower()
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    today = datetime.combine(now.date(), time(), tzinfo=now.tzinfo)
    past = _PAST.search(lowered) is not None
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, TimeWindow]] = []
    for pattern, build in _RULES:
        for match in pattern.finditer(lowered):
            span = match.span()
            if any(span[0] < end and start < span[1] for start, end in taken):
                continue
            window = build(match, today, now, past)
            if window is None:
                continue
            taken.append(span)
            latest = min(window.end, today + 2 * _DAY)
            if latest > window.start:
                found.append((span[0], TimeWindow(window.start, latest, window.phrase)))
    # Each window costs the caller a search of its own: the same window named twice counts
    # once, and a query naming many times keeps the first few.
    distinct: dict[tuple[datetime, datetime], TimeWindow] = {}
    for _, window in sorted(found, key=lambda item: item[0]):
        distinct.setdefault((window.start, window.end), window)
    return tuple(distinct.values())[:MAX_WINDOWS]
