"""Does a message refer to the past? (pure) — for the ``past_reference`` retrieval policy.

Retrieval costs time and can distract; an agent may limit it to turns that reach back ("like I
said", "last time", "remember when", "you told me"). The cues are phrases, not single words:
"again" alone ("try again") says nothing about memory.
"""

from __future__ import annotations

import re

__all__ = ["refers_to_past"]

_CUES = re.compile(
    r"\b(?:like|as) I (?:said|mentioned|told you|explained|wrote)\b|"
    r"\bI (?:already |just )?(?:told|mentioned|said|explained|asked)\b|"
    r"\b(?:last|previous|the other) (?:time|session|conversation|chat|call|week|month)\b|"
    r"\b(?:do you |you )?remember\b|\bremind me\b|\brecall\b|"
    r"\b(?:earlier|before|previously|last time) (?:you|I|we)\b|\bwe (?:talked|spoke|discussed|"
    r"agreed|decided)\b|\byou (?:said|told me|suggested|recommended|promised|mentioned)\b|"
    r"\b(?:as|like) (?:before|usual|last time)\b|\bthe same as (?:before|last time)\b|"
    r"\bwhat did (?:I|we|you)\b|\bwhen did (?:I|we|you)\b",
    re.IGNORECASE,
)


def refers_to_past(text: str) -> bool:
    """True if *text* reaches back to something said or done before.

    >>> refers_to_past("Like I said, the order is A-1042")
    True
    >>> refers_to_past("Try again please")
    False
    """
    return bool(_CUES.search(text))
