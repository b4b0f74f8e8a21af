"""Reading a query before search: the times it names and whether it has several targets."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kenning.search.plan import plan_query
from kenning.search.timeref import MAX_WINDOWS, TimeWindow, time_windows

# A Wednesday afternoon.
NOW = datetime(2023, 4, 5, 19, 25, tzinfo=UTC)


def day(text: str, hour: int = 12) -> datetime:
    return datetime.fromisoformat(text).replace(hour=hour, tzinfo=UTC)


def inside(windows: tuple[TimeWindow, ...], at: datetime) -> bool:
    return any(w.contains(at) for w in windows)


@pytest.mark.parametrize(
    ("query", "now", "yes", "no"),
    [
        ("Which ticket did I escalate last Friday?", NOW, ["2023-03-31"],
         ["2023-04-05", "2023-03-24"]),
        ("Which monitor did I order 10 days ago?", day("2023-03-25", 18),
         ["2023-03-15"], ["2023-03-20", "2023-03-05"]),
        ("Which laptop was reimaged over the past weekend?", day("2023-03-21", 21),
         ["2023-03-18", "2023-03-19"], ["2023-03-11", "2023-03-14"]),
        ("How many hours did I log on the migration last week?", day("2023-05-30", 21),
         ["2023-05-24", "2023-05-22"], ["2023-05-10"]),
        ("How many standups were skipped in March?", day("2023-04-26"), ["2023-03-15"],
         ["2023-04-20", "2022-03-15"]),
        ("What did we ship in June?", day("2023-04-26"), ["2022-06-15"], ["2023-06-15"]),
        ("What invoice did she send on October 13, 2023?", day("2024-01-02"), ["2023-10-13"],
         ["2023-10-20"]),
        ("What did Omar finish on 14 February, 2022?", NOW, ["2022-02-14"], ["2022-03-01"]),
        ("What happened in May 2022?", NOW, ["2022-05-20"], ["2022-08-01"]),
        ("What did I review with Omar two months ago?", day("2023-04-01"),
         ["2023-02-01"], ["2023-02-20"]),
        ("What did we agree in the meeting on Monday?", NOW, ["2023-04-03"], ["2023-03-27"]),
        ("Who did I call yesterday?", NOW, ["2023-04-04"], ["2023-03-30"]),
        ("Which vendor billed us most in March and April?", day("2023-04-27"),
         ["2023-03-10", "2023-04-10"], ["2023-01-15"]),
        ("How many times did the deploy fail in the past two weeks?", day("2023-05-30"),
         ["2023-05-20"], ["2023-05-01"]),
        ("Conferences I spoke at this year?", day("2023-10-15"), ["2023-02-01"], ["2022-10-01"]),
    ],
)  # fmt: skip
def test_named_times_become_windows(query: str, now: datetime, yes: list[str],
                                    no: list[str]) -> None:  # fmt: skip
    windows = time_windows(query, now)
    assert windows, query
    for text in yes:
        assert inside(windows, day(text)), (query, text, windows)
    for text in no:
        assert not inside(windows, day(text)), (query, text, windows)


@pytest.mark.parametrize(
    "query",
    [
        "How many seats do we need for the 5-day workshop?",
        "How many weeks did it take to migrate every service?",
        "You may want to check the order first.",
        "Which plans have I been on in the past?",
        "What did I say about the week-long outage?",
        "When did Priya approve the old quote?",
        "I may go to the march on Saturday evening",
    ],
)
def test_durations_and_look_alikes_name_no_time(query: str) -> None:
    assert time_windows(query, NOW) == ()


@pytest.mark.parametrize(
    "query",
    [
        "What time is my flight on Friday?",
        "Can you find a slot between 2 and 4 on Thursday?",
        "Which days am I out of office in June?",
        "What's happening this Saturday?",
    ],
)
def test_a_day_or_month_that_may_lie_ahead_names_a_past_time_only_in_the_past_tense(
    query: str,
) -> None:
    # NOW is Wednesday 5 April: the Friday, Thursday, June and Saturday asked about are ahead.
    assert time_windows(query, NOW) == ()
    past = query.replace("is my", "was my").replace("Can you find", "Where did I find")
    past = past.replace("am I", "was I").replace("What's happening", "What happened")
    assert time_windows(past, NOW), past


def test_windows_are_widened_by_a_quarter_of_their_length() -> None:
    (window,) = time_windows("what did I do last month?", day("2023-04-20"))
    # March 2023 (31 days) widened by 7.75 days on each side.
    assert window.start == datetime(2023, 3, 1, tzinfo=UTC) - timedelta(days=7.75)
    assert window.end == datetime(2023, 4, 1, tzinfo=UTC) + timedelta(days=7.75)
    (short,) = time_windows("what did I buy yesterday?", NOW)
    assert short.end - short.start == timedelta(days=3)  # one day, a day of slack each side
    # A date after *now* names no time a memory can come from.
    assert time_windows("what happened on October 13, 2023?", NOW) == ()


def test_a_query_yields_few_distinct_windows() -> None:
    # Each window costs a search: repeats collapse and only the first few are kept.
    assert len(time_windows("in March " * 500, NOW)) == 1
    many = time_windows("in March, in May 2020, in June 2021, in July 2019, last week", NOW)
    assert [w.phrase for w in many] == ["in march", "in may 2020", "in june 2021",
                                        "in july 2019"][:MAX_WINDOWS]  # fmt: skip


@given(st.text(max_size=120), st.datetimes(min_value=datetime(1990, 1, 1),
                                           max_value=datetime(2100, 1, 1)))  # fmt: skip
def test_any_text_gives_sane_windows(text: str, naive_now: datetime) -> None:
    now = naive_now.replace(tzinfo=UTC)
    for window in time_windows(text, now):
        assert window.start < window.end
        assert window.end <= now + timedelta(days=2)


@given(st.sampled_from(["last", "past", "this", "on", "in", "", "3 days", "a few"]),
       st.sampled_from(["friday", "weekend", "week", "month", "year", "march", "may", "ago",
                        "weeks ago", "months ago", "2023", "13, 2021"]),
       st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2090, 1, 1)))  # fmt: skip
def test_time_phrases_never_raise_and_stay_in_the_past(
    first: str, second: str, naive_now: datetime
) -> None:
    now = naive_now.replace(tzinfo=UTC)
    for window in time_windows(f"what did I do {first} {second}?", now):
        assert window.start < window.end <= now + timedelta(days=2)


@pytest.mark.parametrize(
    "query",
    [
        "How many times did I reset the router?",
        "What is the total amount I spent on cloud credits?",
        "Which happened first, the refund or the new invoice?",
        "Which plan did I like better, Basic or Plus?",
        "How long had I been a customer when I upgraded to Pro?",
        "Which editor am I currently using for the frontend?",
        "In what order did I open tickets 17, 18 and 21?",
        "Was the replacement sent before or after I returned the broken one?",
        "What is the average size of my last three orders?",
        "What's the difference between the staging and prod configs?",
        "How often does the nightly job time out?",
        "List all the endpoints we deprecated",
        "Is my subscription still active?",
    ],
)
def test_questions_with_several_targets(query: str) -> None:
    assert plan_query(query, NOW).multi_target


@pytest.mark.parametrize(
    "query",
    [
        "What kind of laptop did Omar order recently?",
        "When did Priya approve the old quote?",
        "How long have I been on the Pro plan?",
        "Where did we hold the week-long offsite with the sales team?",
        "What's the wifi password at the house?",
        # Bare "order", "first", "or", "times", "between", "total" and two quoted phrases
        # mark single targets in ordinary product queries (issue 10).
        "What is the status of my order A-1042?",
        "What was my first job?",
        "Do I prefer tea or coffee?",
        "What are the times you're open on weekends?",
        "Why was I charged $4.99 between my billing dates?",
        "What was the order total?",
        "Did I call it 'Atlas' or 'Orion'?",
        "Why is my parcel still not here?",
        "What do I do every Monday morning?",
    ],
)
def test_questions_with_one_target(query: str) -> None:
    plan = plan_query(query, NOW)
    assert not plan.multi_target
    assert plan.text == query
