"""Tuning and validation parts of a development file, chosen deterministically from its order.

Rules and constants are decided on the tuning part; the validation part says whether a change
generalises (one that helps tuning and loses on validation is not kept). Both parts are
reported. The split depends only on the order of the file and on fields every file of the
format has, never on particular ids, names or answers, so any split of the same datasets is
divided the same way:

* **LoCoMo, by conversation.** Questions about one conversation share its speakers, topics and
  phrasing, so a conversation lies wholly in one part: the 1st, 3rd, 5th … conversation of the
  file are tuning, the 2nd, 4th … validation.
* **LongMemEval, halves stratified by question type.** The published files are ordered by
  question type, so the first half of a file would hold other types than the second. Within
  each type, in file order, questions alternate (a stride of two): the 1st, 3rd … question of
  a type are tuning, the 2nd, 4th … validation.

Example::

    >>> split_by_stride(["a", "b", "a", "a", "b"])
    ['tuning', 'tuning', 'validation', 'tuning', 'validation']
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Final, Literal

from kenning.errors import InvalidInput

__all__ = ["PARTS", "Part", "check_part", "in_part", "split_by_stride"]

Part = Literal["tuning", "validation", "all"]
PARTS: Final = ("tuning", "validation")
"""The two parts of a split, in report order."""


def check_part(part: str) -> Part:
    """*part* as a :data:`Part`.

    Raises:
        InvalidInput: *part* is not ``tuning``, ``validation`` or ``all``.
    """
    if part == "tuning":
        return "tuning"
    if part == "validation":
        return "validation"
    if part == "all":
        return "all"
    raise InvalidInput(f"part must be 'tuning', 'validation' or 'all', got {part!r}")


def split_by_stride(strata: Sequence[Hashable]) -> list[Literal["tuning", "validation"]]:
    """The part of each item, given its stratum, in file order.

    Within a stratum items alternate, tuning first, so each part holds half of every stratum
    (the tuning part one more when a stratum is odd). Pass one stratum for all items to
    alternate over the whole file (LoCoMo's conversations), the question type for LongMemEval.
    """
    seen: dict[Hashable, int] = {}
    out: list[Literal["tuning", "validation"]] = []
    for stratum in strata:
        position = seen.get(stratum, 0)
        seen[stratum] = position + 1
        out.append("tuning" if position % 2 == 0 else "validation")
    return out


def in_part(assigned: str, part: Part) -> bool:
    """Whether an item assigned to *assigned* belongs to a run of *part*."""
    return part == "all" or assigned == part
