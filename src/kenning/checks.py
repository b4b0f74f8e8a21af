"""Range checks for the numbers of settings records, with one rule and one message shape.

A setting read from a config file or an environment variable can arrive as a string, a bool
or NaN; compared with ``<=`` it raised ``TypeError`` (a traceback instead of kenning's typed
error) or, for NaN, passed every check. :func:`check_numbers` refuses all three as
:class:`~kenning.errors.InvalidInput` naming the record and the field.

>>> from dataclasses import dataclass
>>> @dataclass
... class Knobs:
...     workers: object = 1
>>> check_numbers(Knobs(), "workers", low=1, high=64, integer=True)
>>> check_numbers(Knobs("2"), "workers", low=1, high=64, integer=True)
Traceback (most recent call last):
kenning.errors.InvalidInput: Knobs.workers must be an int between 1 and 64, got '2'
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from kenning.errors import InvalidInput

__all__ = ["check_numbers", "is_int", "is_number"]


def is_number(value: object) -> bool:
    """A finite int or float (a bool is not a number here)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def is_int(value: object) -> bool:
    """An int (a bool is not an int here)."""
    return isinstance(value, int) and not isinstance(value, bool)


def check_numbers(
    owner: object,
    names: str | Iterable[str],
    *,
    low: float = -math.inf,
    high: float = math.inf,
    integer: bool = False,
    above: bool = False,
    below: bool = False,
    optional: bool = False,
) -> None:
    """Raise InvalidInput unless each field *names* of *owner* is a finite number (an int with
    *integer*) from *low* to *high*; *above* and *below* leave out the bounds themselves, and
    *optional* lets None pass."""
    for name in [names] if isinstance(names, str) else names:
        value = getattr(owner, name)
        if optional and value is None:
            continue
        typed = is_int(value) if integer else is_number(value)
        if typed and _within(value, low, high, above=above, below=below):
            continue
        kind = "an int" if integer else "a number"
        span = _span(low, high, above=above, below=below)
        extra = " or None" if optional else ""
        raise InvalidInput(
            f"{type(owner).__name__}.{name} must be {kind} {span}{extra}, got {value!r}"
        )


def _within(value: float, low: float, high: float, *, above: bool, below: bool) -> bool:
    over = value > low if above else value >= low
    under = value < high if below else value <= high
    return over and under


def _span(low: float, high: float, *, above: bool, below: bool) -> str:
    if math.isinf(high):
        return f"{'>' if above else '>='} {_shown(low)}"
    if not above and not below:
        return f"between {_shown(low)} and {_shown(high)}"
    return f"in {'(' if above else '['}{_shown(low)}, {_shown(high)}{')' if below else ']'}"


def _shown(bound: float) -> str:
    if float(bound).is_integer() and abs(bound) >= 10_000:
        return f"{int(bound):,}"
    return f"{bound:g}"
