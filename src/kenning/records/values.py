"""What every backend can store: the checks input passes before anything is written.

Pure functions, called where input enters (events, pins, facts, task state, holds,
procedures, tool calls, windows), so SQLite and PostgreSQL refuse the same values with the
same :class:`~kenning.errors.InvalidInput` instead of failing in their drivers:

* text holds no NUL character (PostgreSQL refuses it in text and ``jsonb``) and no lone
  surrogate (``\\ud800``-``\\udfff``: not encodable as UTF-8, which both drivers need);
* JSON values are nested at most :data:`MAX_JSON_DEPTH` levels deep (deeper ones broke the
  encoders of the store and the server), hold finite numbers only, integers of at most
  :data:`MAX_JSON_INT_BITS` bits, and string keys;
* amounts are finite decimals with at most :data:`MAX_AMOUNT_DIGITS` digits before the point
  and :data:`MAX_AMOUNT_PLACES` after it;
* a time that relative times or retention are counted from (a search's ``now``, an event's
  ``at``) lies in the years :data:`MIN_YEAR`-:data:`MAX_YEAR`, so "three years ago", "next
  week" or "30 days later" stays in the calendar.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from typing import TypeVar

from kenning.errors import InvalidInput

__all__ = [
    "MAX_AMOUNT_DIGITS",
    "MAX_AMOUNT_PLACES",
    "MAX_JSON_DEPTH",
    "MAX_JSON_INT_BITS",
    "MAX_YEAR",
    "MIN_YEAR",
    "check_amount",
    "check_json",
    "check_text",
    "check_year",
    "enum_member",
    "one_line",
    "too_deep",
]

MAX_JSON_DEPTH = 64
"""The deepest nesting of objects and arrays a stored JSON value may have."""

MAX_JSON_INT_BITS = 1024
"""The largest integer a stored JSON value may hold, in bits (about 308 decimal digits)."""

MAX_AMOUNT_DIGITS = 24
"""Digits before the decimal point of an amount (the most the pin rules read, too)."""

MAX_AMOUNT_PLACES = 12
"""Digits after the decimal point of an amount."""

MIN_YEAR = 1000
MAX_YEAR = 8999
"""The years a ``now`` may fall in: a century of relative time either side stays in the
calendar's years 1-9999."""

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def one_line(value: object, what: str, *, allow_empty: bool = False, max_chars: int = 2_000) -> str:
    """A short text field (a task, a hypothesis, a reason) with its spacing collapsed; raise
    :class:`InvalidInput` naming *what* for a non-string, an empty one (unless
    *allow_empty*), one over *max_chars*, or one no backend can store.

    >>> one_line("  Fix   the build ", "task")
    'Fix the build'
    """
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be a string")
    text = " ".join(check_text(value, what).split())
    if not text and not allow_empty:
        raise InvalidInput(f"{what} is empty")
    if len(text) > max_chars:
        raise InvalidInput(f"{what} has {len(text)} characters, over the maximum of {max_chars}")
    return text


def check_text(value: str, what: str) -> str:
    """Return *value* if every backend can store it; raise :class:`InvalidInput` naming
    *what* and the position of a NUL character or a lone surrogate otherwise.

    >>> check_text("fine", "note")
    'fine'
    """
    found = _UNSTORABLE.search(value)
    if found is not None:
        char = "a NUL character" if found.group() == "\x00" else "a lone surrogate"
        raise InvalidInput(
            f"{what} contains {char} (U+{ord(found.group()):04X}) at position {found.start()}, "
            "which no backend can store; remove it, or encode binary data (e.g. base64)"
        )
    return value


def check_json(value: object, what: str, *, max_depth: int = MAX_JSON_DEPTH) -> None:
    """Raise :class:`InvalidInput` unless *value* is JSON that every backend stores the same:
    objects with string keys, arrays (lists or tuples), text :func:`check_text` accepts,
    finite numbers, booleans and null, nested at most *max_depth* levels. The message names
    where in *value* the fault is (``tool_result.order.items[2]``).

    Walks the value with a stack, not recursion, so no depth makes it fail otherwise: first
    a quick pass that keeps no paths, then, only if that one finds fault, the walk that
    names it.

    >>> check_json({"order": {"id": "A-1", "total": 42.5}}, "tool_result")
    """
    if not _plainly_json(value, max_depth):
        # Something is wrong, or of a type the quick pass does not know: walk it again,
        # keeping where each node is to name the fault.
        _walk_json(value, what, max_depth)


def _walk_json(value: object, what: str, max_depth: int) -> None:
    """:func:`check_json`'s full walk, with isinstance's rules and the fault's path."""
    # Each entry: a node, its depth, and where it is as a linked (parent, key) pair.
    stack: list[tuple[object, int, _Where]] = [(value, 0, None)]
    while stack:
        node, depth, where = stack.pop()
        if isinstance(node, str):
            check_text(node, _named(what, where))
        elif node is None or isinstance(node, bool):
            continue
        elif isinstance(node, int):
            if node.bit_length() > MAX_JSON_INT_BITS:
                raise InvalidInput(
                    f"{_named(what, where)} is an integer over {MAX_JSON_INT_BITS} bits"
                )
        elif isinstance(node, float):
            if not math.isfinite(node):
                raise InvalidInput(f"{_named(what, where)} is {node}: JSON numbers are finite")
        elif isinstance(node, Mapping | list | tuple):
            if depth >= max_depth:
                raise too_deep(what, max_depth)
            stack.extend((item, depth + 1, (where, key)) for key, item in _items(node, what))
        else:
            raise InvalidInput(
                f"{_named(what, where)} is a {type(node).__name__}, which is not JSON"
            )


def _plainly_json(value: object, max_depth: int) -> bool:
    """Whether *value* is JSON that :func:`check_json` accepts, built of plain dicts, lists,
    tuples and scalars: one quick pass that keeps no path (False: look again, slowly)."""
    stack: list[tuple[object, int]] = [(value, 0)]
    unstorable = _UNSTORABLE.search
    while stack:
        node, depth = stack.pop()
        # Exact types: a subclass (a bool is an int) takes the slow pass's isinstance rules.
        if type(node) is str:
            if unstorable(node):
                return False
        elif type(node) is dict:
            if depth >= max_depth:
                return False
            for key, item in node.items():
                if type(key) is not str or unstorable(key):
                    return False
                stack.append((item, depth + 1))
        elif type(node) is list or type(node) is tuple:
            if depth >= max_depth:
                return False
            stack.extend((item, depth + 1) for item in node)
        elif type(node) is int:
            if node.bit_length() > MAX_JSON_INT_BITS:
                return False
        elif type(node) is float:
            if not math.isfinite(node):
                return False
        elif node is not None and type(node) is not bool:
            return False
    return True


def too_deep(what: str, max_depth: int = MAX_JSON_DEPTH) -> InvalidInput:
    """The error for *what* nested past *max_depth* levels, or past what a JSON parser reads
    (a parser's RecursionError is this error too)."""
    return InvalidInput(
        f"{what} is nested deeper than {max_depth} levels of objects and arrays; flatten it, "
        "or store the deep part as a JSON string"
    )


#: Where a node is: None for the root, else (where its parent is, its key or index).
_Where = tuple[object, str | int] | None
_Container = Mapping[object, object] | list[object] | tuple[object, ...]


def _items(node: _Container, what: str) -> list[tuple[str | int, object]]:
    if not isinstance(node, Mapping):
        return list(enumerate(node))
    for key in node:
        if not isinstance(key, str):
            raise InvalidInput(f"{what} has the key {key!r:.40}: JSON object keys are strings")
        check_text(key, f"a key of {what}")
    return list(node.items())  # type: ignore[arg-type]  # keys checked above


def _named(what: str, where: _Where) -> str:
    """*what* followed by the path of *where*: ``tool_result.order.items[2]``."""
    keys: list[str | int] = []
    while where is not None:
        parent, key = where
        keys.append(key)
        where = parent  # type: ignore[assignment]
    parts = [f"[{k}]" if isinstance(k, int) else f".{k:.40}" for k in reversed(keys)]
    return what + "".join(parts)


def check_amount(value: Decimal, what: str = "amount") -> Decimal:
    """Return *value* if it is a finite amount of sane magnitude; raise
    :class:`InvalidInput` otherwise (``Decimal("1e999999999")`` is a number, not an amount).

    >>> check_amount(Decimal("42.50"))
    Decimal('42.50')
    """
    if not value.is_finite():
        raise InvalidInput(f"{what} must be finite")
    exponent = value.as_tuple().exponent
    assert isinstance(exponent, int)  # finite
    if value and value.adjusted() >= MAX_AMOUNT_DIGITS:
        raise InvalidInput(
            f"{what} {value:.3E} has more than {MAX_AMOUNT_DIGITS} digits before the point"
        )
    if -exponent > MAX_AMOUNT_PLACES:
        raise InvalidInput(f"{what} has more than {MAX_AMOUNT_PLACES} digits after the point")
    return value


def check_year(value: datetime, what: str) -> datetime:
    """Return *value* if its year is from :data:`MIN_YEAR` to :data:`MAX_YEAR`; raise
    :class:`InvalidInput` otherwise."""
    if not MIN_YEAR <= value.year <= MAX_YEAR:
        raise InvalidInput(
            f"{what} {value.isoformat()} is outside the years {MIN_YEAR}-{MAX_YEAR} that "
            "relative times and retention are counted in"
        )
    return value


_E = TypeVar("_E", bound=enum.Enum)


def enum_member(kind: type[_E], value: object, what: str) -> _E:
    """*value* as a member of *kind*, or :class:`InvalidInput` naming *what* and the values
    it may take.

    >>> from kenning.records import Role
    >>> enum_member(Role, "user", "role") is Role.USER
    True
    >>> enum_member(Role, "robot", "role")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    kenning.errors.InvalidInput: role 'robot' is invalid: use one of ['system', 'user', ...]
    """
    try:
        return kind(value)
    except ValueError as exc:
        raise InvalidInput(
            f"{what} {value!r:.40} is invalid: use one of {[m.value for m in kind]}"
        ) from exc
