"""Rule-based extraction of pins from one event. Pure: no I/O, deterministic.

What is extracted, and from where:

* ids (configurable :class:`IdPattern` rules) and money amounts from user, assistant and tool
  text, and id and amount fields of JSON payloads (``tool_result``, a tool event's JSON
  content, and ``tool_args``);
* obligations: requests in user text ("please cancel my subscription") and promises in
  assistant text ("I'll send the label tomorrow");
* approvals, authorizations and human gates **only from tool results** (a tool event's
  ``tool_result`` or text). What a user or assistant types never grants anything, and
  ``tool_args`` are requests, not results. Approvals and authorizations come only from the
  tools the caller names *authoritative* (the tenant's
  :attr:`~kenning.records.TenantPolicy.authoritative_tools`): a ``read_email`` or
  ``web_fetch`` result saying "approved" is text someone else wrote, not a grant. Human
  gates (a tool saying it waits for a person) come from any tool: they only hold the agent
  back.

System events yield nothing; goals and constraints come from explicit API calls only.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Collection, Container, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from types import MappingProxyType
from typing import Any

from kenning.errors import InvalidInput
from kenning.pins.money import (
    DEFAULT_CURRENCIES,
    DEFAULT_CURRENCY_NAMES,
    DEFAULT_CURRENCY_SYMBOLS,
    Money,
    format_amount,
    minor_digits,
    parse_money,
    with_minor_digits,
)
from kenning.records import Event, JSONScalar, PinDraft, PinKind, Role

__all__ = [
    "DEFAULT_ID_PATTERNS",
    "DEFAULT_RULES",
    "GATED_KINDS",
    "GRANT_KINDS",
    "ExtractionRules",
    "IdPattern",
    "TenantTools",
    "extract_pins",
    "listed_tools",
]

GATED_KINDS = frozenset({PinKind.APPROVAL, PinKind.AUTHORIZATION, PinKind.HUMAN_GATE})
#: What only an authoritative tool's result (or the host's API) may pin.
GRANT_KINDS = frozenset({PinKind.APPROVAL, PinKind.AUTHORIZATION})
_ID_KINDS = GATED_KINDS | {PinKind.ENTITY_ID, PinKind.IDEMPOTENCY_KEY}
_NAME_RE = re.compile(r"[a-z][a-z0-9_]{0,63}")


@dataclass(frozen=True, slots=True)
class IdPattern:
    """A rule that finds ids in text; each hit becomes the pin ``"<name>:<id>"``.

    ``pattern`` is a regular expression whose first participating group captures the id.
    With ``require_digit`` (the default) a capture without a digit is dropped, so ordinary
    words are never ids. Pins of gated kinds (approval, authorization, human gate) are only
    taken from tool events.

    Raises:
        InvalidInput: the name, the regex or the kind is not usable.

    >>> IdPattern("rma_id", r"\\b(RMA-\\d+)\\b").regex.pattern
    '\\\\b(RMA-\\\\d+)\\\\b'
    """

    name: str
    pattern: str
    kind: PinKind = PinKind.ENTITY_ID
    require_digit: bool = True
    regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME_RE.fullmatch(self.name):
            raise InvalidInput(
                f"id pattern name {self.name!r:.40} is invalid: use lower-case letters, "
                "digits and '_', starting with a letter (max 64)"
            )
        try:
            regex = re.compile(self.pattern)
        except (re.error, TypeError) as exc:
            raise InvalidInput(f"id pattern {self.name!r} has an invalid regex: {exc}") from exc
        if regex.groups < 1:
            raise InvalidInput(f"id pattern {self.name!r} needs a group that captures the id")
        if self.kind not in _ID_KINDS:
            raise InvalidInput(
                f"id pattern {self.name!r} has kind {self.kind!r}; use one of "
                f"{sorted(k.value for k in _ID_KINDS)}"
            )
        object.__setattr__(self, "regex", regex)


_ID = r"[A-Za-z0-9][A-Za-z0-9-]{0,47}"
# After a bare keyword the id must look like a code ("A-123", "INC0012345") or be 5+ digits:
# "order 2 pizzas" and "order 100 units" are not ids.
_CODE = r"[A-Z][A-Z0-9]*-[A-Z0-9-]*\d[A-Z0-9-]*|[A-Z]+\d[A-Z0-9-]*|\d{5,}"


def _keyword(words: str) -> str:
    return (
        rf"(?i:\b(?:{words}))(?:\s*#\s*({_ID})|\s+(?i:id|number|no|nr|ref)\b\.?\s*[:#]?\s*"
        rf"({_ID})|\s*:?\s*({_CODE}))\b"
    )


DEFAULT_ID_PATTERNS: tuple[IdPattern, ...] = (
    IdPattern("approval_id", _keyword("approvals?"), PinKind.APPROVAL),
    IdPattern("approval_id", r"\b(APR-?\d[A-Z0-9-]*)\b", PinKind.APPROVAL),
    IdPattern("order_id", r"\b(ORD-?\d[A-Z0-9-]*)\b"),
    IdPattern("order_id", _keyword("orders?|purchase order")),
    IdPattern("ticket_id", r"\b(T(?:C?K|KT)-\d[A-Z0-9-]*|INC\d{5,})\b"),
    IdPattern("ticket_id", _keyword("tickets?|case|incident")),
    IdPattern("invoice_id", r"\b(INV-?\d[A-Z0-9-]*)\b"),
    IdPattern("invoice_id", _keyword("invoices?")),
    IdPattern("customer_id", _keyword("customer|client")),
    IdPattern("account_id", _keyword("account|acct")),
    IdPattern(
        "ref",
        r"\b(?!(?:ISO|SHA|UTF|COVID|RFC|PEP|GPT|MD|EN|IEC|ECMA|DIN|ANSI|IEEE|RSA|AES)-)"
        r"([A-Z]{2,6}-\d{3,}(?:-[A-Z0-9]+)*)\b",
    ),
)


def _frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping))


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_ENTITIES = (
    "order ticket invoice customer account refund payment transaction subscription return rma "
    "booking reservation shipment case incident request charge user"
)
_DEFAULT_ID_FIELDS: Mapping[str, PinKind] = _frozen(
    {f"{n}_id": PinKind.ENTITY_ID for n in _ENTITIES.split()}
    | {
        "tracking_number": PinKind.ENTITY_ID,
        "approval_id": PinKind.APPROVAL,
        "idempotency_key": PinKind.IDEMPOTENCY_KEY,
    }
)


@dataclass(frozen=True, slots=True)
class ExtractionRules:
    """Everything :func:`extract_pins` looks for; the defaults suit support and commerce agents.

    Field names of JSON payloads are compared in snake case (``orderId`` and ``Order-Id`` are
    ``order_id``); an ``id`` field inside an object under ``order`` is ``order_id``.

    Args:
        id_patterns: rules for ids in text, tried in order; a span is claimed by the first.
        currencies: ISO-4217 codes accepted as amounts.
        currency_symbols: symbols (``€``, ``US$``) and their code; bare ``$`` is USD.
        currency_names: lower-case currency words after a number (``euros``).
        id_fields: JSON field name -> pin kind (entity id, approval, idempotency key).
        amount_fields: JSON fields holding an amount (also ``<field>_cents``/``_minor``).
        currency_fields: JSON fields naming the currency of the amounts beside them.
        decision_fields: JSON fields whose value may be approved/rejected/pending approval.
        approver_fields: JSON fields naming who decided.
        gate_fields: JSON booleans that, when true, open a human gate.
        authorization_fields: JSON fields holding an authorization decision.
        action_fields: JSON fields naming what an authorization is for.
        text_fields: JSON string fields read as text (ids, amounts, approval phrases).
        obligations: whether to extract requests and promises.
        max_obligation_chars: longest obligation text kept.
    """

    id_patterns: tuple[IdPattern, ...] = DEFAULT_ID_PATTERNS
    currencies: frozenset[str] = DEFAULT_CURRENCIES
    currency_symbols: Mapping[str, str] = field(default_factory=lambda: DEFAULT_CURRENCY_SYMBOLS)
    currency_names: Mapping[str, str] = field(default_factory=lambda: DEFAULT_CURRENCY_NAMES)
    id_fields: Mapping[str, PinKind] = field(default_factory=lambda: _DEFAULT_ID_FIELDS)
    amount_fields: frozenset[str] = _words(
        "amount total refund_amount amount_due amount_paid total_amount price subtotal balance "
        "fee charge_amount value"
    )
    currency_fields: frozenset[str] = _words("currency currency_code ccy")
    decision_fields: frozenset[str] = _words(
        "status decision outcome result state approval_status approval"
    )
    approver_fields: frozenset[str] = _words(
        "approver approved_by reviewer decided_by rejected_by denied_by"
    )
    gate_fields: frozenset[str] = _words(
        "requires_approval needs_approval approval_required pending_approval "
        "requires_human_review human_review_required requires_review"
    )
    authorization_fields: frozenset[str] = _words(
        "authorized is_authorized allowed is_allowed permitted granted authorization "
        "authorization_status auth_status permission access"
    )
    action_fields: frozenset[str] = _words("action operation scope resource")
    text_fields: frozenset[str] = _words(
        "message note notes description text summary comment details reason"
    )
    obligations: bool = True
    max_obligation_chars: int = 200

    def __post_init__(self) -> None:
        if not all(isinstance(p, IdPattern) for p in self.id_patterns):
            raise InvalidInput("id_patterns must be a tuple of IdPattern")
        bad = sorted(c for c in self.currencies if not re.fullmatch(r"[A-Z]{3}", str(c)))
        if bad:
            raise InvalidInput(f"currencies {bad} are not ISO-4217 codes (three capitals)")
        if self.max_obligation_chars < 20:
            raise InvalidInput("max_obligation_chars must be at least 20")
        object.__setattr__(self, "id_fields", _frozen(self.id_fields))


DEFAULT_RULES = ExtractionRules()

_APPROVED = frozenset({"approved", "approve", "accepted", "granted", "authorized"})
_REJECTED = frozenset({"rejected", "reject", "denied", "declined", "refused"})
_GATE_VALUES = _words(
    "pending_approval awaiting_approval needs_approval requires_approval pending_review "
    "awaiting_review waiting_for_approval approval_required"
)
_PENDING = frozenset({"pending", "awaiting", "waiting", "in_review", "under_review", "open"})
_DENY_WORDS = frozenset({"denied", "forbidden", "unauthorized", "rejected", "no", "false"})
_GRANT_WORDS = frozenset({"granted", "allowed", "authorized", "approved", "yes", "true"})

_DECISION_RE = re.compile(
    r"(?<!not )(?<!not yet )(?<!permission )(?<!access )"
    r"\b(?P<outcome>(?i:approved|rejected|denied|declined))\b"
    r"(?:\s+by\s+(?P<who>[A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*)?))?"
)
_GATE_RE = re.compile(
    r"(?i)\b(?:pending|awaiting|requires?|needs?|waiting\s+for)\s+"
    r"(?:(?:human|manager|supervisor|manual)\s+)?(?:approval|review|sign-?off)\b"
)
_AUTH_RE = re.compile(
    r"(?i)\b(?:(?P<deny>not\s+authori[sz]ed|unauthori[sz]ed|permission\s+denied|access\s+denied)"
    r"|(?P<grant>authori[sz]ed|permission\s+granted|access\s+granted))\b"
)
_ACTIONS = (
    r"cancel|refund|return|replace|exchange|send|resend|ship|deliver|change|update|delete|"
    r"remove|close|reopen|reset|unlock|book|reschedule|schedule|call|email|contact|escalate|"
    r"transfer|process|issue|credit|waive|upgrade|downgrade|renew|unsubscribe|fix|repair|expedite"
)
_PROMISES = (
    _ACTIONS + r"|follow\s+up|get\s+back|check|look\s+into|investigate|review|notify|"
    r"let\s+you\s+know|reach\s+out|arrange|confirm|keep\s+you\s+posted"
)
_REQUEST_RES = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        rf"\b(?:please|pls|kindly)\s+(?P<clause>(?:{_ACTIONS})\b.*)",
        rf"\b(?:can|could|would|will)\s+you\s+(?:please\s+|kindly\s+)?(?P<clause>(?:{_ACTIONS})\b.*)",
        rf"\bI(?:\s+would|['’]d|\s+really)?\s+(?:want|like|need|wish)\s+(?:you\s+)?to\s+"
        rf"(?P<clause>(?:{_ACTIONS})\b.*)",
        r"\bI(?:\s+would|['’]d)?\s+(?:want|like|need)\s+"
        r"(?P<clause>(?:a|my)\s+(?:refund|replacement|cancellation|exchange|callback)\b.*)",
    )
)
_PROMISE_RE = re.compile(
    r"\b(?:I|we)(?:['’]ll|\s+will|\s+shall|['’]m\s+going\s+to|\s+am\s+going\s+to|"
    r"['’]re\s+going\s+to|\s+are\s+going\s+to)\s+"
    r"(?:now\s+|also\s+|personally\s+|then\s+|go\s+ahead\s+and\s+)?"
    rf"(?P<clause>(?:{_PROMISES})\b.*)",
    re.IGNORECASE,
)
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD_RE = re.compile(r"[a-z0-9]+(?:['’-][a-z0-9]+)*")
_CAMEL_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_MAX_NODES = 5000
_MAX_DEPTH = 16


#: A tenant's authoritative tools, by tenant (``memory`` reads its policy).
TenantTools = Callable[[str], Collection[str]]


class _Listed(Container[str]):
    """A tenant's authoritative tools, read on the first question only."""

    def __init__(self, tools: TenantTools, tenant: str) -> None:
        self._tools, self._tenant = tools, tenant
        self._names: frozenset[str] | None = None

    def __contains__(self, name: object) -> bool:
        if self._names is None:
            self._names = frozenset(self._tools(self._tenant))
        return name in self._names


def listed_tools(tools: TenantTools, tenant: str) -> Container[str]:
    """*tenant*'s authoritative tools as :func:`extract_pins` takes them: *tools* is asked
    only when an event holds an approval or an authorization."""
    return _Listed(tools, tenant)


def extract_pins(
    event: Event, rules: ExtractionRules = DEFAULT_RULES, *, authoritative: Container[str] = ()
) -> list[PinDraft]:
    """Return the pins found in *event*, de-duplicated by key, in a stable order.

    Every draft carries ``source_event_id=event.id``. Approvals and authorizations are kept
    only when *event* is a tool event whose ``tool_name`` is in *authoritative*; that is
    asked only for an event that holds one, so a container that reads the tenant's policy
    reads it rarely. Never raises on odd content.

    >>> from datetime import UTC, datetime
    >>> from kenning.records import Scope
    >>> ev = Event("e1", Scope("t", "u", "s"), 1, Role.USER,
    ...            "Please refund order A-123, it was €42.50.", datetime.now(UTC))
    >>> [d.key for d in extract_pins(ev)]  # doctest: +ELLIPSIS
    ['order_id:A-123', 'amount:EUR:42.50', 'obligation:...']
    """
    if event.role == Role.SYSTEM:
        return []
    run = _Run(event, rules, authoritative)
    tool = event.role == Role.TOOL
    content = _json(event.content) if tool else None
    if content is None:
        run.text(event.content, gated=tool)
        if rules.obligations and event.role in (Role.USER, Role.ASSISTANT):
            run.obligations(event.content, user=event.role == Role.USER)
    else:
        run.payload(content, gated=True)
    if tool and event.tool_result is not None:
        result = event.tool_result
        if isinstance(result, str):
            parsed = _json(result)
            if parsed is None:
                run.text(result, gated=True)
            result = parsed
        if result is not None:
            run.payload(result, gated=True)
    if event.tool_args is not None:
        run.payload(event.tool_args, gated=False)
    return list(run.out.values())


def _json(text: str) -> Any:
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return None
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError):
        return None


def _snake(name: str) -> str:
    return _CAMEL_RE.sub("_", name.strip()).lower().replace("-", "_").replace(" ", "_")


def _parent_id(parent: str, rules: ExtractionRules) -> str:
    """The field name of an ``id`` under *parent*: ``order``/``orders`` -> ``order_id``."""
    single = parent[:-1] if parent.endswith("s") and not parent.endswith("ss") else parent
    return f"{single}_id" if f"{single}_id" in rules.id_fields else f"{parent}_id"


def _id_value(value: object) -> str | None:
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    text = str(value).strip()
    if not text or len(text) > 128 or any(c.isspace() for c in text):
        return None
    return text


def _decimal(value: object) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    text = repr(value) if isinstance(value, float) else str(value).strip()
    # Negative or exponent amounts are skipped: a pin's text must read back as the same amount.
    if not re.fullmatch(r"\d{1,24}(?:\.\d{1,4})?", text):
        return None
    try:
        return Decimal(text)
    except InvalidOperation:
        return None


class _Run:
    """The drafts of one event, first one per key kept."""

    def __init__(self, event: Event, rules: ExtractionRules, authoritative: Container[str]) -> None:
        self.event, self.rules = event, rules
        self.out: dict[str, PinDraft] = {}
        self.ref = event.tool_name or "tool"
        self._authoritative = authoritative
        self._grants: bool | None = None

    def grants(self) -> bool:
        """Whether this event's tool may grant approvals and authorizations (asked once)."""
        if self._grants is None:
            tool = self.event.tool_name
            self._grants = (
                self.event.role == Role.TOOL and tool is not None and tool in self._authoritative
            )
        return self._grants

    def add(self, kind: PinKind, key: str, value: str, **extra: Any) -> None:
        if kind in GRANT_KINDS and not self.grants():
            return
        meta: dict[str, JSONScalar] = {k: v for k, v in extra.pop("meta", {}).items() if v}
        if key not in self.out:
            self.out[key] = PinDraft(
                kind, key, value, source_event_id=self.event.id, metadata=meta, **extra
            )

    def money(self, money: Money | tuple[Decimal, str], field_name: str | None = None) -> None:
        amount, currency = (money.amount, money.currency) if isinstance(money, Money) else money
        value = format_amount(amount, currency)
        key = f"amount:{currency}:{amount:f}"
        self.add(PinKind.AMOUNT, key, value, amount=amount, currency=currency,
                 meta={"field": field_name})  # fmt: skip

    def text(self, text: str, *, gated: bool, ref: str | None = None) -> None:
        claimed: list[tuple[int, int]] = []
        hits: list[tuple[int, IdPattern, str]] = []
        for rule in self.rules.id_patterns:
            for match in rule.regex.finditer(text):
                group = next((g for g in range(1, rule.regex.groups + 1) if match.group(g)), 0)
                start, end = match.span(group)
                if group == 0 or any(s < end and start < e for s, e in claimed):
                    continue
                value = match.group(group).rstrip("-")
                if rule.require_digit and not any(c.isdigit() for c in value):
                    continue
                claimed.append((start, end))
                hits.append((start, rule, value))
        found: list[tuple[int, int, Any]] = [(s, 0, (r, v)) for s, r, v in hits]
        found += [(m.span[0], 1, m) for m in self._parse_money(text)]
        for _, _, item in sorted(found, key=lambda f: (f[0], f[1])):
            if isinstance(item, Money):
                self.money(item)
            elif gated or item[0].kind not in GATED_KINDS:
                rule, value = item
                self.add(rule.kind, f"{rule.name}:{value}", value, meta={"pattern": rule.name})
        if gated:
            approval_ids = [v for _, r, v in hits if r.kind == PinKind.APPROVAL]
            self.gated_text(text, approval_ids[0] if approval_ids else ref or self.ref)

    def _parse_money(self, text: str) -> list[Money]:
        rules = self.rules
        return parse_money(text, currencies=rules.currencies, symbols=rules.currency_symbols,
                           names=rules.currency_names)  # fmt: skip

    def gated_text(self, text: str, ref: str) -> None:
        for match in _DECISION_RE.finditer(text):
            self.decision(match.group("outcome").lower(), match.group("who"), ref)
        for match in _GATE_RE.finditer(text):
            self.add(PinKind.HUMAN_GATE, f"human_gate:{ref}", " ".join(match.group(0).split()))
        for match in _AUTH_RE.finditer(text):
            decision = "denied" if match.group("deny") else "granted"
            self.add(PinKind.AUTHORIZATION, f"authorization:{ref}", decision,
                     meta={"decision": decision})  # fmt: skip

    def decision(self, outcome: str, who: str | None, ref: str, field_name: str = "") -> None:
        value = f"{outcome} by {who}" if who else outcome
        self.add(PinKind.APPROVAL, f"approval:{ref}", value,
                 meta={"outcome": outcome, "approver": who, "field": field_name})  # fmt: skip

    def obligations(self, text: str, *, user: bool) -> None:
        limit = self.rules.max_obligation_chars
        for sentence in _SENTENCE_RE.split(text):
            sentence = " ".join(sentence.split())
            patterns = _REQUEST_RES if user else (_PROMISE_RE,)
            match = next((m for p in patterns if (m := p.search(sentence))), None)
            if match is None:
                continue
            words = [w for w in _WORD_RE.findall(match.group("clause").lower()) if w != "please"]
            digest = hashlib.blake2b(" ".join(words).encode(), digest_size=8).hexdigest()
            if len(sentence) > limit:
                sentence = sentence[: limit - 1].rsplit(" ", 1)[0] + "…"
            owner = "user_request" if user else "agent_promise"
            action = words[1] if words[0] in ("a", "my") else words[0]
            self.add(PinKind.OBLIGATION, f"obligation:{digest}", sentence,
                     meta={"owner": owner, "action": action})  # fmt: skip

    def payload(self, root: Any, *, gated: bool) -> None:
        for parent, node, ref in _objects(root, self.rules, self.ref):
            self.mapping(parent, node, ref, gated=gated)

    def mapping(self, parent: str, node: Mapping[str, Any], ref: str, *, gated: bool) -> None:
        rules = self.rules
        fields = {_snake(k): v for k, v in node.items() if isinstance(k, str)}
        for name, raw in fields.items():
            if name == "id" and parent:
                name = _parent_id(parent, rules)
            kind = rules.id_fields.get(name)
            value = _id_value(raw)
            if kind is not None and value is not None and (gated or kind not in GATED_KINDS):
                self.add(kind, f"{name}:{value}", value, meta={"field": name})
        self.amounts(fields)
        for name in sorted(rules.text_fields & fields.keys()):
            if isinstance(fields[name], str):
                self.text(fields[name], gated=gated, ref=ref)
        if gated:
            self.gated_fields(parent, fields, ref)

    def amounts(self, fields: Mapping[str, Any]) -> None:
        rules = self.rules
        codes = [str(fields[f]).upper() for f in sorted(rules.currency_fields & fields.keys())]
        currency = next((c for c in codes if c in rules.currencies), None)
        for name, raw in fields.items():
            base = re.sub(r"_(?:cents|minor)$", "", name)
            if base not in rules.amount_fields:
                continue
            amount = _decimal(raw)
            if amount is not None and currency is not None:
                if base != name:
                    amount = amount.scaleb(-minor_digits(currency))
                self.money((with_minor_digits(amount, currency), currency), name)
            elif isinstance(raw, str) and base == name:
                for money in self._parse_money(raw):
                    self.money(money, name)

    def gated_fields(self, parent: str, fields: Mapping[str, Any], ref: str) -> None:
        rules = self.rules
        approver = next(
            (str(fields[f]) for f in sorted(rules.approver_fields & fields.keys())
             if isinstance(fields[f], str) and fields[f].strip()),
            None,
        )  # fmt: skip
        context = "approv" in parent or "review" in parent or approver is not None
        for name in sorted(rules.decision_fields & fields.keys()):
            raw = fields[name]
            if not isinstance(raw, str):
                continue
            word = _snake(raw)
            if word in _APPROVED or word in _REJECTED:
                self.decision("approved" if word in _APPROVED else word, approver, ref, name)
            elif word in _GATE_VALUES or (word in _PENDING and (context or "approv" in name)):
                self.add(PinKind.HUMAN_GATE, f"human_gate:{ref}", word,
                         meta={"field": name, "approver": approver})  # fmt: skip
        if isinstance(fields.get("approved"), bool):
            self.decision("approved" if fields["approved"] else "rejected", approver, ref)
        elif "approved_by" in fields and approver is not None:
            self.decision("approved", approver, ref, "approved_by")
        for name in sorted(rules.gate_fields & fields.keys()):
            if fields[name] is True:
                self.add(PinKind.HUMAN_GATE, f"human_gate:{ref}", name.replace("_", " "),
                         meta={"field": name})  # fmt: skip
        action = next(
            (str(fields[f]) for f in sorted(rules.action_fields & fields.keys())
             if _id_value(fields[f]) is not None),
            ref,
        )  # fmt: skip
        for name in sorted(rules.authorization_fields & fields.keys()):
            raw = fields[name]
            word = _snake(str(raw)) if isinstance(raw, str | bool) else ""
            decision = (
                "granted" if word in _GRANT_WORDS else "denied" if word in _DENY_WORDS else None
            )
            if decision is not None:
                self.add(PinKind.AUTHORIZATION, f"authorization:{action}", decision,
                         meta={"decision": decision, "field": name})  # fmt: skip


def _objects(
    root: Any, rules: ExtractionRules, ref: str
) -> Iterator[tuple[str, Mapping[str, Any], str]]:
    """Yield ``(parent field, object, ref)`` for every JSON object under *root*, depth first.

    ``ref`` names what an approval or authorization in the object is about: its approval id,
    else its first entity id, else the enclosing object's ref.
    """
    stack: list[tuple[str, Any, str, int]] = [("", root, ref, 0)]
    seen = 0
    while stack and seen < _MAX_NODES:
        parent, node, ref, depth = stack.pop()
        seen += 1
        if depth > _MAX_DEPTH:
            continue
        children: list[tuple[str, Any]] = []
        if isinstance(node, Mapping):
            fields = {_snake(k): v for k, v in node.items() if isinstance(k, str)}
            kinds = {
                k: rules.id_fields.get(_parent_id(parent, rules) if k == "id" else k)
                for k in fields
            }
            ids = [_id_value(fields[k]) for k, kind in kinds.items() if kind is PinKind.ENTITY_ID]
            own = _id_value(fields.get("approval_id")) or next((i for i in ids if i), None)
            ref = own or ref
            yield parent, node, ref
            children = [(k, v) for k, v in fields.items() if isinstance(v, Mapping | list)]
        elif isinstance(node, list):
            children = [(parent, v) for v in node if isinstance(v, Mapping | list)]
        stack.extend((k, v, ref, depth + 1) for k, v in reversed(children))
