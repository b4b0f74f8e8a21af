"""The scripted agent session of ``kenning bench task``: a coding agent debugging a double refund
in a payments service over 300 events, written for kenning (no eval data). Pure data and the
ground truth of what the agent needs to know at each point; no I/O.

The agent reads 30 files and writes 6, greps and runs tests (some calls fail), states 7
hypotheses and rejects 5 of them with reasons, verifies 4 findings, changes its plan halfway
(idempotency keys instead of turning retries off), and quotes the order, refund ids and the
amount. Every fact it records in its task state it also says in its own messages, so a window
that keeps the conversation's text (a summary, a sliding window) can keep it too.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["EVENTS", "Step", "Truth", "script"]

EVENTS = 300
TASK = "Fix the duplicate refund charge for order ORD-88123"
IDS = ("ORD-88123", "RF-55017", "RF-55018", "EUR 1,250.00")
# An amount is present in any of its usual writings ("|" separates them).
_AMOUNTS = {"EUR 1,250.00": "EUR 1,250.00|1,250.00 EUR|EUR 1250.00|1250.00 EUR"}
FIRST_PLAN = "Patch the HTTP client so refund POSTs are not retried"
SECOND_PLAN = "Send an Idempotency-Key header with every refund request"

_DIRS = ("src/payments", "src/refunds", "src/gateway", "src/webhooks", "src/admin", "tests")
_NAMES = (
    "http_client", "worker", "api", "client", "handlers", "forms", "test_refunds", "retry",
    "models", "events", "signing", "views", "test_gateway", "ledger", "queue", "config",
    "errors", "reconcile", "test_webhooks", "serializers", "locks", "currency", "audit",
    "timeouts", "test_worker", "schema", "jobs", "settings", "permissions", "test_http",
)  # fmt: skip
READS = tuple(f"{_DIRS[i % len(_DIRS)]}/{name}.py" for i, name in enumerate(_NAMES))
WRITES = (
    "src/payments/http_client.py", "src/gateway/client.py", "src/refunds/worker.py",
    "src/refunds/keys.py", "tests/test_refund_retry.py", "CHANGELOG.md",
)  # fmt: skip

# (text, reason it was rejected, or "" for the two that stand)
HYPOTHESES = (
    ("the webhook handler processes refund.succeeded twice",
     "the webhook log shows one delivery per event"),
    ("two refund workers race on the same order",
     "the worker holds a row lock (SELECT FOR UPDATE) on the order"),
    ("the admin form double-submits the refund",
     "both refunds were created through the API, not the admin UI"),
    ("a currency conversion adds a second refund line",
     "both charges are in EUR and no conversion ran"),
    ("the nightly reconciliation re-issues failed refunds",
     "reconciliation did not run on the day of the refund"),
    ("the HTTP client retries refund POSTs after a read timeout", ""),
    ("the gateway does not deduplicate repeated refund requests", ""),
)  # fmt: skip
FINDINGS = (
    "gateway logs show two POST /refunds for ORD-88123 2.1 seconds apart",
    "the HTTP client retries every method on ReadTimeout, POST included",
    "the gateway deduplicates requests that carry the same Idempotency-Key",
    "with an idempotency key the retry test creates exactly one refund",
)


@dataclass(frozen=True, slots=True)
class Step:
    """One scripted event, and what the agent records in its task state after it (a
    ``TaskUpdate``'s fields; the session's events referenced by index in ``evidence``)."""

    event: dict[str, Any]
    update: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Truth:
    """What the agent needs to know after some prefix of the session."""

    task: str = ""
    subtask: str = ""
    open: list[str] = field(default_factory=list)  # open or supported
    rejected: list[str] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    actions: list[tuple[str, str]] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)

    def see(self, step: Step) -> None:
        event, update = step.event, step.update
        self.task = update.get("task", self.task)
        self.subtask = update.get("subtask", self.subtask)
        for change in update.get("hypotheses", ()):
            text = change["text"]
            if change.get("status", "open") == "rejected":
                self.open.remove(text)
                self.rejected.append(text)
            elif text not in self.open:
                self.open.append(text)  # open or supported: it stands
        self.findings += [f["text"] for f in update.get("findings", ())]
        if event.get("role") == "assistant" and event.get("tool_name"):
            args = event["tool_args"]
            key = str(next(iter(args.values())))
            self.actions.append((event["tool_name"], key))
            path = args.get("path")
            if path and path not in self.files:
                self.files.append(path)
        self.ids += [i for i in IDS if i in event.get("content", "") and i not in self.ids]

    def probes(self, last: int = 3) -> dict[str, list[tuple[str, ...]]]:
        """The facts by kind, each as the strings a window must all hold to have it (a string
        with ``|`` is held in any of its forms)."""
        return {
            "goal": [(self.task,), (self.subtask,)],
            "open_hypotheses": [(h,) for h in self.open],
            "rejected_hypotheses": [(h,) for h in self.rejected],
            "findings": [(f,) for f in self.findings],
            "files_touched": [(p,) for p in self.files],
            "last_actions": [(tool, key) for tool, key in self.actions[-last:]],
            "ids_amounts": [(_AMOUNTS.get(i, i),) for i in self.ids],
        }


def _code(path: str, n: int) -> str:
    """A file's text as a read returns it: plausible lines, ~90 tokens."""
    stem = path.rsplit("/", 1)[-1].removesuffix(".py")
    return "\n".join([f"# {path}", f"import logging\nlog = logging.getLogger({stem!r})",
                      f"def {stem}_step_{n}(request, session):",
                      f"    value = session.get({stem!r}, {n})",
                      "    if value is None:\n        raise ValueError('missing')",
                      f"    return request.with_value(value + {n % 7})"])  # fmt: skip


class _Script:
    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.calls = 0

    def say(self, role: str, text: str, **update: Any) -> None:
        self.steps.append(Step({"role": role, "content": text}, update))

    def tool(self, name: str, args: dict[str, Any], result: str, *, error: bool = False) -> None:
        self.calls += 1
        call = f"call_{self.calls}"
        shown = ", ".join(f"{k}={v}" for k, v in args.items())
        self.steps.append(Step({"role": "assistant", "content": f"Calling {name}({shown}).",
                                "tool_name": name, "tool_args": args,
                                "metadata": {"tool_call_id": call}}))  # fmt: skip
        meta: dict[str, Any] = {"tool_call_id": call, **({"is_error": True} if error else {})}
        self.steps.append(Step({"role": "tool", "content": result, "tool_name": name,
                                "metadata": meta}))  # fmt: skip

    def read(self, n: int) -> None:
        self.tool("read_file", {"path": READS[n]}, _code(READS[n], n))

    def hypothesis(self, n: int, status: str = "open") -> None:
        text, reason = HYPOTHESES[n]
        said = {"open": f"Hypothesis: {text}.", "supported": f"Evidence supports: {text}.",
                "rejected": f"Ruled out: {text}, because {reason}."}[status]  # fmt: skip
        change = {"text": text, "status": status, **({"reason": reason} if reason else {})}
        self.say("assistant", said, hypotheses=[change])

    def finding(self, n: int) -> None:
        text = FINDINGS[n]
        self.say("assistant", f"Verified: {text}.", findings=[{"text": text}])


def _investigate(s: _Script) -> Iterator[None]:
    """The session's beats; each ``yield`` is a point where filler chatter may go."""
    s.say("user", "Order ORD-88123 was refunded twice: refunds RF-55017 and RF-55018, each "
          "EUR 1,250.00. Find out why and fix it.", task=TASK, subtask="Reproduce the double "
          "refund", status="in_progress")  # fmt: skip
    for n in range(4):
        s.read(n)
    s.tool("grep", {"pattern": "RF-5501"}, "logs/gateway.log: POST /refunds ORD-88123 (x2)")
    yield
    for h in range(5):
        s.hypothesis(h)
        s.read(4 + 2 * h)
        s.read(5 + 2 * h)
        yield
    s.finding(0)
    for h in (0, 1):
        s.tool("grep", {"pattern": f"check-{h}"}, "no match", error=h == 1)
        s.hypothesis(h, "rejected")
        yield
    s.hypothesis(5)
    s.say("assistant", f"Plan: {FIRST_PLAN}.", subtask=FIRST_PLAN)
    for n in range(14, 20):
        s.read(n)
        yield
    s.tool("run_tests", {"k": "refund_retry"}, "1 failed: two refunds created", error=True)
    s.finding(1)
    s.hypothesis(5, "supported")
    s.tool("edit_file", {"path": WRITES[0], "change": "no retry on POST"}, "applied")
    yield
    for h in (2, 3):
        s.hypothesis(h, "rejected")
        s.read(18 + h)
        yield
    s.say("user", "Turning retries off breaks the timeouts we need for slow gateways. Keep "
          "retries.", decisions=[("Keep retries", "slow gateways time out")])  # fmt: skip
    s.say("assistant", f"Changing the plan: {SECOND_PLAN}.", subtask=SECOND_PLAN)
    s.hypothesis(6)
    for n in range(22, 26):
        s.read(n)
        yield
    s.finding(2)
    for w in range(1, 5):
        s.tool("edit_file", {"path": WRITES[w], "change": f"idempotency step {w}"}, "applied")
        yield
    s.hypothesis(4, "rejected")
    for n in range(26, 30):
        s.read(n)
        yield
    s.tool("run_tests", {"k": "refund"}, "48 passed")
    s.finding(3)
    s.tool("edit_file", {"path": WRITES[5], "change": "note the fix"}, "applied")
    s.say("assistant", "RF-55018 must still be reversed by hand: EUR 1,250.00 on ORD-88123.")
    yield


_FILLER = (
    ("assistant", "Let me check how that value flows through the refund path before changing "
                  "anything; the call sites matter more than the definition here."),
    ("user", "Any progress? Support is asking for an update on the customer's refund."),
    ("assistant", "Still narrowing it down. I will keep the change small and covered by a test "
                  "so it is safe to ship today."),
    ("assistant", "Nothing conclusive in that file; the logic there only formats the request "
                  "and logs it."),
)  # fmt: skip


def script(events: int = EVENTS) -> list[Step]:
    """The session: its beats with filler chatter spread between them to *events* steps."""
    beats = _Script()
    gaps = list(_beat_points(beats))
    spare = max(0, events - len(beats.steps))
    out: list[Step] = []
    start, filler = 0, 0
    for n, end in enumerate(gaps):
        out += beats.steps[start:end]
        start = end
        for _ in range(spare // len(gaps) + (1 if n < spare % len(gaps) else 0)):
            role, text = _FILLER[filler % len(_FILLER)]
            out.append(Step({"role": role, "content": text}))
            filler += 1
    return out + beats.steps[start:]


def _beat_points(s: _Script) -> Sequence[int]:
    return [len(s.steps) for _ in _investigate(s)]
