"""Working context end to end on real SQLite: assembly under a budget, pins that survive
compaction, pressure, the audit log and crash safety."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from kenning import Memory, Scope
from kenning.context.assembler import ContextSettings
from kenning.context.window import Pressure, Price, Tier
from kenning.errors import BudgetError, InvalidInput, InvalidScope, NotFound
from kenning.records import PinKind, PinStatus, TaskUpdate, TenantPolicy
from kenning.settings import Settings
from kenning.tokens.chat import count_messages
from kenning.tokens.routing import tokenizer_for
from tests.conftest import MemoEmbedder
from tests.fakes import BlockingSummarizer

ROOT = Path(__file__).resolve().parents[2]
SYSTEM = "You are a careful support agent. Never invent ids or amounts."

REFUND_THREAD = [
    {"role": "user", "content": "Hi, I was charged twice. Please refund my order #A-123."},
    {
        "role": "tool", "tool_name": "get_order", "content": "order lookup",
        "tool_result": {"order_id": "A-123", "amount": "42.50", "currency": "EUR",
                        "status": "delivered"},
    },
    {
        "role": "tool", "tool_name": "request_refund_approval", "content": "approval result",
        "tool_result": {"approval_id": "APR-7781", "status": "approved", "approved_by": "Dana"},
    },
    *[
        {"role": "tool", "tool_name": "order_status",
         "content": '{"order_id": "A-123", "status": "refund pending", "queue": "finance"}'}
        for _ in range(4)
    ],
    {
        "role": "assistant",
        "content": "The refund of €42.50 is approved; I'll confirm once it is paid.",
    },
]  # fmt: skip
#: The host lists its approval tool as authoritative: its approvals become pins.
TRUSTED = TenantPolicy(authoritative_tools=("request_refund_approval",))
CHATTER = (
    "By the way, the weather has been lovely and I have been reading a long novel about "
    "sailors, which is nice but has nothing to do with anything."
)


def _window_text(window) -> str:  # type: ignore[no-untyped-def]
    return json.dumps(window.to_json(), ensure_ascii=False)


def test_refund_scenario_keeps_every_required_value_for_500_turns(
    tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    tokenizer = tokenizer_for("gpt-4o")
    scope = Scope("acme", "cust-1", "refund-1")
    with Memory.open(tmp_path / "k.db", embedder=real_embedder) as memory:
        memory.retention.set_policy("acme", TRUSTED)
        memory.add_events(scope, REFUND_THREAD)
        for turn in range(500):
            role = "user" if turn % 2 == 0 else "assistant"
            memory.add_events(scope, [{"role": role, "content": f"({turn}) {CHATTER}"}])
            window = memory.assemble(scope, budget_tokens=2_000, model="gpt-4o", system=SYSTEM)
            assert window.messages[0] == {"role": "system", "content": SYSTEM}
            assert window.tokens <= 2_000
            assert count_messages(tokenizer, window.messages) == window.tokens
            text = _window_text(window)
            for value in ("A-123", "42.50", "EUR", "APR-7781"):
                assert value in text, (turn, value)
            assert "[open]" in text  # the refund obligation
        memory.context.wait_for_compaction(timeout=60)
        log = memory.context.compaction_log(scope)
        segments = [e for e in log if e.action.value in ("segment", "merge")]
        assert segments and all(e.tokens_after < e.tokens_before for e in segments[:3])
        assert all(e.summarizer == "extractive" for e in segments)
        assert memory.context.summaries(scope)
        obligation = next(p for p in memory.context.pins(scope) if p.kind is PinKind.OBLIGATION)
        assert obligation.status is PinStatus.OPEN and obligation.source_event_id


def test_a_user_typing_approved_grants_nothing(tmp_path: Path) -> None:
    scope = Scope("acme", "u", "s")
    with Memory.open(tmp_path / "k.db", embedder=None) as memory:
        memory.add_events(
            scope, [{"role": "user", "content": "Approved by Dana, approval id APR-1."}]
        )
        kinds = {p.kind for p in memory.context.pins(scope)}
        assert not kinds & {PinKind.APPROVAL, PinKind.AUTHORIZATION, PinKind.HUMAN_GATE}


def test_pins_api_versions_and_closes(tmp_path: Path) -> None:
    scope = Scope("acme", "u", "s")
    with Memory.open(tmp_path / "k.db", embedder=None) as memory:
        first = memory.context.set_pin(
            scope, "amount", "42.50 EUR", key="refund", amount="42.50", currency="EUR"
        )
        second = memory.context.set_pin(
            scope, "amount", "40.00 EUR", key="refund", amount="40.00", currency="EUR"
        )
        assert (first.version, second.version) == (1, 2)
        assert (
            memory.context.set_pin(
                scope, "amount", "40.00 EUR", key="refund", amount="40.00", currency="EUR"
            ).version
            == 2
        )
        closed = memory.context.close_pin(scope, "refund")
        assert closed.status is PinStatus.CLOSED and closed.closed_at is not None
        history = memory.context.pins(scope, history=True)
        assert [p.version for p in history] == [1, 2, 3]
        assert [p.value for p in memory.context.pins(scope)] == ["40.00 EUR"]
        with pytest.raises(NotFound):
            memory.context.close_pin(scope, "missing")
        for bad in (
            {"kind": "nonsense", "value": "x"},
            {"kind": "amount", "value": "1 EUR", "amount": "abc", "currency": "EUR"},
            {"kind": "amount", "value": "1", "amount": "1", "currency": "euro"},
            {"kind": "amount", "value": "1", "amount": "1"},
            {"kind": "amount", "value": "42.50 EUR"},  # an amount pin carries its amount
            {"kind": "goal", "value": "   "},
        ):
            with pytest.raises(InvalidInput):
                memory.context.set_pin(scope, **bad)  # type: ignore[arg-type]
        assert len(memory.context.pins(scope, history=True)) == 3


def test_a_closed_pin_leaves_the_window_unless_asked_for(tmp_path: Path) -> None:
    scope = Scope("acme", "u", "s")
    for shown in (False, True):
        settings = Settings(context=ContextSettings(closed_pins=shown, retrieve=False))
        with Memory.open(tmp_path / f"{shown}.db", embedder=None, settings=settings) as memory:
            memory.add_events(scope, [{"role": "user", "content": "Please call me back."}])
            memory.context.set_pin(scope, "obligation", "call Dana back", key="callback")
            memory.context.set_pin(scope, "entity_id", "A-1042")
            memory.context.close_pin(scope, "callback")
            window = memory.assemble(scope, budget_tokens=500, model="gpt-4o", system=SYSTEM)
            text = json.dumps(window.messages)
            assert "A-1042" in text
            assert ("call Dana back" in text) is shown
            # The history keeps it either way.
            assert [p.status.value for p in memory.context.pins(scope, history=True)][:2] == [
                "open",
                "open",
            ]


def test_task_state_goal_and_tools_enter_the_window(tmp_path: Path) -> None:
    scope = Scope("acme", "u", "s")
    tools = [
        {"type": "function", "function": {"name": f"tool_{i}", "description": "x " * 200}}
        for i in range(6)
    ] + [
        {
            "type": "function",
            "function": {"name": "issue_refund", "description": "Refund an order to the card"},
        }
    ]
    with Memory.open(tmp_path / "k.db", embedder=None) as memory:
        memory.add_events(scope, [{"role": "user", "content": "Can you refund my order?"}])
        memory.context.update_task(
            scope,
            TaskUpdate(
                task="Refund A-123",
                status="in_progress",
                decisions=[("refund to card", "asked by user")],
            ),
        )
        window = memory.assemble(
            scope,
            budget_tokens=1_500,
            model="gpt-4o",
            system=SYSTEM,
            goal="Get the customer refunded",
            tools=tools,
        )
        goal = window.messages[1]["content"]
        assert "Get the customer refunded" in goal and "Refund A-123 (in progress)" in goal
        names = [t["function"]["name"] for t in window.tools]
        assert names[0] == "issue_refund"  # routed first: it matches the request
        assert window.tiers[Tier.TOOLS].skipped  # not all fit under the tools cap
        assert window.tokens <= 1_500
        # When all fit, the caller's order stands (stable prompts cache better).
        few = [tools[0], tools[-1]]
        window = memory.assemble(scope, budget_tokens=4_000, model="gpt-4o", system=SYSTEM,
                                 tools=few)  # fmt: skip
        assert [t["function"]["name"] for t in window.tools] == ["tool_0", "issue_refund"]


def test_bad_input_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    scope = Scope("acme", "u", "s")
    with Memory.open(tmp_path / "k.db", embedder=None) as memory:
        memory.add_events(scope, [{"role": "user", "content": "hello " * 300}])
        for kwargs in (
            {"budget_tokens": 0}, {"budget_tokens": 100, "reserve_output_tokens": 100},
            {"budget_tokens": 100, "system": ""}, {"budget_tokens": 100, "tools": [{"x": 1}]},
            {"budget_tokens": 100, "model": ""}, {"budget_tokens": 100, "query": " "},
        ):  # fmt: skip
            args = {"model": "gpt-4o", "system": SYSTEM, **kwargs}
            with pytest.raises(InvalidInput):
                memory.assemble(scope, **args)  # type: ignore[arg-type]
        with pytest.raises(BudgetError):
            memory.assemble(scope, budget_tokens=50, model="gpt-4o", system=SYSTEM)
        assert memory.context.summaries(scope) == [] and memory.context.compaction_log(scope) == []


def test_hard_pressure_compacts_before_the_window(tmp_path: Path) -> None:
    scope = Scope("acme", "u", "s")
    settings = Settings(context=ContextSettings(background=False, retrieve=False))
    with Memory.open(tmp_path / "k.db", embedder=None, settings=settings) as memory:
        memory.retention.set_policy("acme", TRUSTED)
        memory.add_events(scope, REFUND_THREAD)
        memory.add_events(
            scope, [{"role": "user", "content": f"({i}) {CHATTER}"} for i in range(60)]
        )
        window = memory.assemble(scope, budget_tokens=1_200, model="gpt-4o", system=SYSTEM)
        assert window.pressure is not Pressure.HARD
        assert any("hard pressure" in r for r in window.reasons)
        assert memory.context.pressure_events["hard"] == 1
        assert window.tiers[Tier.SUMMARIES].included >= 1
        text = _window_text(window)
        assert all(v in text for v in ("A-123", "42.50", "APR-7781"))


def test_pending_compaction_survives_a_restart(tmp_path: Path) -> None:
    scope = Scope("acme", "u", "s")
    path = tmp_path / "k.db"
    with Memory.open(path, embedder=None) as memory:
        memory.add_events(
            scope, [{"role": "user", "content": f"({i}) {CHATTER}"} for i in range(40)]
        )
        job = memory.store.enqueue_compaction(
            scope,
            model="gpt-4o",
            budget=1_000,
            reason="test",
            at=_now(),
        )
        assert job is not None
    # A new process-level open picks the queued job up in the background.
    with Memory.open(path, embedder=None) as memory:
        assert memory.context.wait_for_compaction(timeout=60)
        assert memory.context.summaries(scope)
        assert [j.status.value for j in memory.store.compaction_jobs(scope)] == ["done"]


def _now():  # type: ignore[no-untyped-def]
    from datetime import UTC, datetime

    return datetime.now(UTC)


def test_sigkill_between_pin_write_and_summary_write_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "k.db"
    child = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from kenning import Memory, Scope
        from kenning.context.assembler import ContextSettings
        from kenning.settings import Settings
        from tests.fakes import KillingSummarizer
        from tests.integration.test_working_context import CHATTER, REFUND_THREAD, TRUSTED
        scope = Scope("acme", "u", "s")
        # Pins only from compaction: its pin write is the one that must survive the kill.
        settings = Settings(context=ContextSettings(extract_pins=False))
        memory = Memory.open({str(path)!r}, embedder=None, settings=settings,
                             summarizer=KillingSummarizer())
        memory.retention.set_policy("acme", TRUSTED)
        memory.add_events(scope, REFUND_THREAD)
        memory.add_events(scope, [{{"role": "user", "content": CHATTER}} for _ in range(60)])
        memory.context.compact(scope, budget_tokens=1_000, model="gpt-4o")
        """
    )
    result = subprocess.run([sys.executable, "-c", child], cwd=ROOT, timeout=120)
    assert result.returncode == -9
    scope = Scope("acme", "u", "s")
    with Memory.open(path, embedder=None) as memory:
        events = memory.get_session(scope)
        assert [e.seq for e in events] == list(range(1, len(REFUND_THREAD) + 61))
        values = {p.value for p in memory.context.pins(scope)}
        assert {"A-123", "42.50 EUR", "APR-7781"} <= values
        assert memory.context.summaries(scope) == []
        # The interrupted work can simply run again.
        assert memory.context.compact(scope, budget_tokens=1_000, model="gpt-4o")


def test_forget_erases_pins_summaries_and_totals(tmp_path: Path) -> None:
    scope = Scope("acme", "u", "s")
    with Memory.open(tmp_path / "k.db", embedder=None) as memory:
        memory.retention.set_policy("acme", TRUSTED)
        memory.add_events(scope, REFUND_THREAD)
        memory.add_events(scope, [{"role": "user", "content": CHATTER} for _ in range(40)])
        memory.context.compact(scope, budget_tokens=1_000, model="gpt-4o")
        memory.context.update_task(scope, TaskUpdate(task="Refund"))
        assert memory.context.pins(scope) and memory.context.summaries(scope)
        memory.forget(scope)
        assert (
            memory.context.pins(scope, history=True) == [] and memory.context.summaries(scope) == []
        )
        assert memory.context.compaction_log(scope) == [] and memory.context.task_state(scope).empty
        assert memory.store.ledger_head(scope, "o200k_base") == (0, 0)


def test_a_stopped_compaction_keeps_whole_ranges_and_can_resume(tmp_path: Path) -> None:
    from kenning.compaction.compactor import Compactor, Stopped
    from kenning.compaction.extractive import ExtractiveSummarizer
    from kenning.compaction.plan import CompactionSettings
    from kenning.pins.extract import DEFAULT_RULES

    scope = Scope("acme", "u", "s")
    with Memory.open(tmp_path / "k.db", embedder=None) as memory:
        memory.add_events(
            scope, [{"role": "user", "content": f"({i}) {CHATTER}"} for i in range(80)]
        )
        compactor = Compactor(
            memory.store, summarizer=ExtractiveSummarizer(), settings=CompactionSettings(),
            rules=DEFAULT_RULES,
        )  # fmt: skip
        calls = iter([False, True])
        with pytest.raises(Stopped):
            compactor.compact(
                scope, model="gpt-4o", budget=600, reason="t", stop=lambda: next(calls)
            )
        [done] = memory.context.summaries(scope)
        rest = compactor.compact(scope, model="gpt-4o", budget=600, reason="t")
        segments = [s for s in rest if s.level == 1]
        assert segments and min(s.first_seq for s in segments) == done.last_seq + 1


def test_retrieval_reads_the_session_unless_asked_for_more(
    tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    old = Scope("acme", "dana", "old")
    now = Scope("acme", "dana", "now")
    with Memory.open(tmp_path / "k.db", embedder=real_embedder) as memory:
        memory.add_events(
            old, [{"role": "user", "content": "Send my invoices to billing@dana.example"}]
        )
        memory.add_events(
            now, [{"role": "user", "content": f"invoice question number {i}"} for i in range(8)]
        )
        # Two tabs stay apart: the other session is not read by default.
        window = memory.assemble(now, budget_tokens=2_000, model="gpt-4o", system=SYSTEM,
                                 query="where do my invoices go?")  # fmt: skip
        assert window.citations == ()
        assert all("billing@dana.example" not in (m["content"] or "") for m in window.messages)
        # The caller may ask for the user's other sessions.
        window = memory.assemble(now, budget_tokens=2_000, model="gpt-4o", system=SYSTEM,
                                 query="where do my invoices go?",
                                 retrieve_from=Scope("acme", "dana"))  # fmt: skip
        # Even though every turn of the tail matches better, the other session's turn is cited.
        assert [c["session"] for c in window.citations] == ["old"]
        assert "billing@dana.example" in window.messages[-9]["content"]
        # An unrelated question brings no memory just to fill space, and the window says so.
        window = memory.assemble(now, budget_tokens=2_000, model="gpt-4o", system=SYSTEM,
                                 query="write a haiku about autumn leaves",
                                 retrieve_from=Scope("acme", "dana"))  # fmt: skip
        assert window.citations == ()
        assert any(r.startswith("retrieved: none above floor") for r in window.reasons)
        with pytest.raises(InvalidScope):
            memory.assemble(now, budget_tokens=2_000, model="gpt-4o", system=SYSTEM,
                            retrieve_from=Scope("globex", "dana"))  # fmt: skip


def test_retrieval_brings_the_sessions_own_turns_beyond_the_tail(
    tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    chat = Scope("acme", "dana", "long")
    with Memory.open(tmp_path / "k.db", embedder=real_embedder) as memory:
        memory.add_events(
            chat, [{"role": "user", "content": "Send my invoices to billing@dana.example"}]
        )
        memory.add_events(
            chat,
            [
                {"role": "user", "content": f"question {i} about the weather in Porto"}
                for i in range(150)
            ],
        )
        window = memory.assemble(chat, budget_tokens=1_000, model="gpt-4o", system=SYSTEM,
                                 query="where do my invoices go?")  # fmt: skip
        # The first turn was summarized away long ago; retrieval brings it back, cited.
        assert window.citations[0]["session"] == "long" and window.citations[0]["seq"] == 1


@pytest.mark.parametrize("erase", ["events", "session"])
def test_compaction_racing_forget_writes_nothing_from_erased_text(
    tmp_path: Path, erase: str
) -> None:
    scope = Scope("acme", "dana", "race")
    secret = "my card PIN is 4711 and my IBAN is DE89370400440532013000"
    with Memory.open(tmp_path / "race.db", embedder=None) as memory:
        events = memory.add_events(
            scope,
            [{"role": "user", "content": f"{secret} (note {i}) order A-{i}"} for i in range(40)]
            + [{"role": "user", "content": f"weather chat {i}"} for i in range(40)],
        )
        blocking = BlockingSummarizer()
        result: list[object] = []
        worker = threading.Thread(
            target=lambda: result.append(
                memory.context.compact(
                    scope, budget_tokens=600, model="gpt-4o", summarizer=blocking
                )
            )
        )
        worker.start()
        assert blocking.started.wait(30)
        if erase == "events":
            memory.forget(scope, ids=[e.id for e in events[:40]])
        else:
            memory.forget(scope)
        blocking.release.set()
        worker.join(30)
        assert result == [[]]  # the range read before the erase was not written
        summaries = memory.store.summaries(Scope("acme"), include_replaced=True)
        pins = memory.context.pins(Scope("acme"), history=True)
        log = memory.store.audit_log(Scope("acme"))
        assert all("4711" not in s.text for s in summaries)
        assert all(not p.value.startswith("A-") for p in pins)
        assert all("4711" not in a.detail for a in log)
        if erase == "events":
            # What is left compacts normally afterwards.
            assert memory.context.compact(scope, budget_tokens=600, model="gpt-4o")
            assert all("4711" not in s.text for s in memory.store.summaries(Scope("acme")))


def test_window_extras_message_cap_past_reference_policy_usage_and_cost(tmp_path: Path) -> None:
    prices = {"gpt-4o": Price(input_per_mtok=2.5, output_per_mtok=10.0)}
    settings = Settings(context=ContextSettings(
        max_messages=10, retrieval="past_reference", prices=prices, background=False,
    ))  # fmt: skip
    scope = Scope("acme", "u", "extras")
    with Memory.open(tmp_path / "x.db", embedder=None, settings=settings) as memory:
        memory.add_events(scope, [
            {"role": "user", "content": "My order number is A-1042 and it is late."},
            *({"role": "user", "content": f"small talk {i}"} for i in range(60)),
            {"role": "user", "content": "hello again"},
        ])  # fmt: skip
        window = memory.assemble(scope, budget_tokens=8_000, model="gpt-4o", system=SYSTEM,
                                 reserve_output_tokens=500)  # fmt: skip
        assert len(window.messages) <= 10
        assert any(s.reason == "message cap" for s in window.tiers[Tier.TAIL].skipped)
        assert "retrieval: the input does not refer to the past" in window.reasons
        assert window.cost == pytest.approx((window.tokens * 2.5 + 500 * 10.0) / 1e6)
        memory.add_events(scope, [{"role": "user", "content": "Like I said, my order is late."}])
        again = memory.assemble(scope, budget_tokens=8_000, model="gpt-4o", system=SYSTEM)
        assert "retrieval: the input does not refer to the past" not in again.reasons
        memory.context.record_usage(scope, model="gpt-4o", output_tokens=120)
        [usage] = memory.context.usage(scope)
        assert (usage.model, usage.calls) == ("gpt-4o", 2)
        assert usage.input_tokens == window.tokens + again.tokens and usage.output_tokens == 120
        assert usage.cost == pytest.approx(
            ((window.tokens + again.tokens) * 2.5 + 120 * 10.0) / 1e6
        )


def test_compaction_keeps_the_last_turns_raw_and_waits_for_six(tmp_path: Path) -> None:
    scope = Scope("acme", "u", "keep")
    with Memory.open(tmp_path / "k.db", embedder=None) as memory:
        memory.add_events(scope, [{"role": "user", "content": f"turn {i} " * 40} for i in range(5)])
        assert memory.context.compact(scope, budget_tokens=200, model="gpt-4o") == []
        memory.add_events(scope, [{"role": "user", "content": f"more {i} " * 40} for i in range(5)])
        written = memory.context.compact(scope, budget_tokens=200, model="gpt-4o")
        assert written and max(s.last_seq for s in written) <= 10 - 4


CHATTER_TURN = "({n}) The weather has been lovely and I have been reading a novel about sailors."


def test_compaction_that_lags_behind_the_writes_never_grows_a_range(tmp_path: Path) -> None:
    # Events written faster than compaction runs: one run then finds many raw turns at once,
    # and the last range it cuts may be a few turns only. A summary of such a tail would be
    # bigger than the turns it replaces; it must stay raw instead.
    compacted = 0
    with Memory.open(tmp_path / "k.db", embedder=None) as memory:
        for n in range(30, 70):
            scope = Scope("acme", "u", f"lag-{n}")
            memory.add_events(
                scope,
                [{"role": "user" if i % 2 == 0 else "assistant",
                  "content": CHATTER_TURN.format(n=i)} for i in range(n)],
            )  # fmt: skip
            memory.context.compact(scope, budget_tokens=2_000, model="gpt-4o")
            log = memory.context.compaction_log(scope)
            segments = [e for e in log if e.action.value in ("segment", "merge")]
            assert all(e.tokens_before > e.tokens_after for e in segments), (n, segments)
            compacted += bool(segments)
    assert compacted >= 25  # most sessions were long enough to compact
