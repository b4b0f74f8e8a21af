"""``kenning bench reader``: how well the query reader reads product queries.

The labelled set ships with kenning (``kenning/data/product_queries.jsonl``): queries an agent
built on kenning would search its memory with, written for kenning's users (customer support,
coding agents, personal assistants, scheduling), not taken from any benchmark. One JSON object
per line:

* ``query``, ``domain``, ``now`` (ISO time the query is asked at);
* ``times``: the periods whose records the query asks about, as ``[start, end)`` dates in
  ``now``'s calendar. A time in the future ("tomorrow", "next month", an upcoming Friday) is not
  labelled: records cannot come from there, so a window would only mislead search;
* ``several``: the answer needs two or more records that are usually written at different
  times: counts, totals, averages, comparisons of two things, the order of or the time between
  two events, lists of every X, a state that may have changed ("still", "currently", "these
  days"). A superlative that picks one record ("my first job") is a single target;
* ``note``: optional, why a label is what it is;
* ``part``: ``tuning`` for the queries the reader's cues were narrowed on (its precision there
  is in-sample), ``holdout`` for queries written afterwards and scored as they came.

Scores: precision and recall of ``several``; for times, a labelled period is found when a
window of the plan covers it without being much wider (at most four times its length plus six
days: the reader widens windows on purpose), and a window is right when it covers a labelled
period that way. Both lists of mistakes are reported, so a cue that fires falsely can be seen
and narrowed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any

from kenning.bench.report import heading, table, write_files
from kenning.errors import InvalidInput
from kenning.search.reader import QueryReader, RuleReader
from kenning.search.timeref import TimeWindow

__all__ = ["LabelledQuery", "load_labelled", "run_reader_bench", "score_reader", "window_covers"]

DATA_FILE = "product_queries.jsonl"
_SLACK = timedelta(days=6)


@dataclass(frozen=True, slots=True)
class LabelledQuery:
    """One labelled query: text, domain, when it is asked, the periods it names, several?"""

    query: str
    domain: str
    now: datetime
    times: tuple[tuple[datetime, datetime], ...]
    several: bool
    note: str = ""
    part: str = "tuning"


def _day(text: str, where: str) -> datetime:
    try:
        return datetime.fromisoformat(text).replace(tzinfo=UTC)
    except ValueError as exc:
        raise InvalidInput(f"{where}: {text!r} is not an ISO date") from exc


def load_labelled(path: str | Path | None = None) -> list[LabelledQuery]:
    """The labelled queries of *path* (default: the set shipped with kenning).

    Raises:
        InvalidInput: A line is not a labelled query (the message names the line).
    """
    if path is None:
        text = resources.files("kenning.data").joinpath(DATA_FILE).read_text()
        name = DATA_FILE
    else:
        text = Path(path).read_text()
        name = str(path)
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{name}:{number}"
        try:
            row = json.loads(line)
            now = datetime.fromisoformat(row["now"])
            times = tuple(
                (_day(start, where), _day(end, where)) for start, end in row.get("times", [])
            )
            out.append(
                LabelledQuery(
                    query=str(row["query"]), domain=str(row["domain"]), now=now, times=times,
                    several=bool(row["several"]), note=str(row.get("note", "")),
                    part=str(row.get("part", "tuning")),
                )
            )  # fmt: skip
        except (ValueError, KeyError, TypeError) as exc:
            raise InvalidInput(f"{where}: not a labelled query ({exc})") from exc
    return out


def window_covers(window: TimeWindow, period: tuple[datetime, datetime]) -> bool:
    """Whether *window* covers *period* without being much wider than it."""
    start, end = period
    wide_enough = window.start <= start and window.end >= end
    return wide_enough and window.end - window.start <= 4 * (end - start) + _SLACK


def _ratio(part: int, whole: int) -> float:
    return part / whole if whole else 1.0


def score_reader(reader: QueryReader, cases: Sequence[LabelledQuery]) -> dict[str, Any]:
    """Precision and recall of *reader* on *cases*, overall and per domain, with the mistakes."""
    rows = []
    for case in cases:
        plan = reader.read(case.query, case.now)
        found = sum(1 for p in case.times if any(window_covers(w, p) for w in plan.windows))
        right = sum(1 for w in plan.windows if any(window_covers(w, p) for p in case.times))
        rows.append((case, plan.multi_target, found, right, len(plan.windows)))

    def summary(chosen: list[tuple[LabelledQuery, bool, int, int, int]]) -> dict[str, Any]:
        tp = sum(1 for c, said, *_ in chosen if said and c.several)
        fp = sum(1 for c, said, *_ in chosen if said and not c.several)
        fn = sum(1 for c, said, *_ in chosen if not said and c.several)
        labels = sum(len(c.times) for c, *_ in chosen)
        windows = sum(n for *_, n in chosen)
        return {
            "queries": len(chosen),
            "several": {"labelled": tp + fn, "said": tp + fp, "precision": _ratio(tp, tp + fp),
                        "recall": _ratio(tp, tp + fn)},
            "times": {"labelled": labels, "windows": windows,
                      "recall": _ratio(sum(r[2] for r in chosen), labels),
                      "precision": _ratio(sum(r[3] for r in chosen), windows)},
        }  # fmt: skip

    out = summary(rows)
    parts = sorted({c.part for c in cases}, key=lambda p: (p != "tuning", p))
    out["by_part"] = {p: summary([r for r in rows if r[0].part == p]) for p in parts}
    domains = sorted({c.domain for c in cases})
    out["by_domain"] = {d: summary([r for r in rows if r[0].domain == d]) for d in domains}
    out["mistakes"] = {
        "several_false": [c.query for c, said, *_ in rows if said and not c.several],
        "several_missed": [c.query for c, said, *_ in rows if not said and c.several],
        "times_wrong": [c.query for c, _, _, right, n in rows if right < n],
        "times_missed": [c.query for c, _, found, _, _ in rows if found < len(c.times)],
    }
    return out


def run_reader_bench(
    out: Path, *, reader: QueryReader | None = None, data: str | Path | None = None
) -> dict[str, Any]:
    """Score *reader* (default :class:`RuleReader`) on the labelled set; write report.json/.md.

    Returns:
        The report as written to ``report.json``.
    """
    started = time.perf_counter()
    reader = reader or RuleReader()
    cases = load_labelled(data)
    report: dict[str, Any] = {
        "bench": "reader",
        "data": str(data) if data is not None else f"kenning/data/{DATA_FILE}",
        "reader": type(reader).__name__,
        **score_reader(reader, cases),
    }
    report["bench_seconds"] = round(time.perf_counter() - started, 3)
    write_files(out, report, _markdown(report))
    return report


def _markdown(report: dict[str, Any]) -> str:
    rows = [
        [name, s["queries"], s["several"]["labelled"], s["several"]["said"],
         s["several"]["precision"], s["several"]["recall"], s["times"]["labelled"],
         s["times"]["windows"], s["times"]["precision"], s["times"]["recall"]]
        for name, s in [("all", report), *[(f"part: {p}", v) for p, v in
                                           report["by_part"].items()],
                        *report["by_domain"].items()]
    ]  # fmt: skip
    header = ["subset", "queries", "several labelled", "several said", "precision", "recall",
              "times labelled", "windows", "window precision", "time recall"]  # fmt: skip
    lines = [
        *heading("kenning bench reader"),
        f"Reader `{report['reader']}` on `{report['data']}` ({report['queries']} labelled "
        "product queries). `several`: the reader says the query has several targets; a time "
        "window is right when it covers a labelled period without being more than four times "
        "as long plus six days.",
        "",
        *table(header, rows),
    ]
    for key, title in (
        ("several_false", "Said several targets, labelled single"),
        ("several_missed", "Labelled several targets, not said"),
        ("times_wrong", "A window that covers no labelled period"),
        ("times_missed", "A labelled period no window covers"),
    ):
        found = report["mistakes"][key]
        lines += ["", f"## {title} ({len(found)})", ""]
        lines += [f"- {query}" for query in found] or ["(none)"]
    lines.append("")
    return "\n".join(lines)
