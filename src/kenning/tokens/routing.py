"""Map a model name to the tokenizer that counts its tokens."""

from __future__ import annotations

import difflib
import logging
import re
from functools import lru_cache
from typing import Final

from kenning.errors import InvalidInput
from kenning.tokens.base import Tokenizer
from kenning.tokens.encodings import ENCODINGS, ApproxTokenizer, exact_tokenizer

__all__ = ["encoding_for_model", "tokenizer_for"]

log = logging.getLogger("kenning")

# Names a mistyped model is compared with, to suggest the likely one.
_KNOWN: Final = (
    "gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-4.5", "gpt-5", "gpt-5-mini",
    "o1", "o3", "o4-mini", "gpt-4", "gpt-4-turbo", "gpt-3.5-turbo", "gpt-oss", "llama-3",
    "llama3", "qwen3", "qwen2.5",
)  # fmt: skip

# (pattern, encoding), first match wins, so more specific families come first. A family prefix
# must end at a separator ("gpt-4" matches "gpt-4-turbo" and "gpt-4-0613", not "gpt-4o").
_END: Final = r"(?:$|[-.:@_ ])"
_RULES: Final[tuple[tuple[re.Pattern[str], str], ...]] = tuple(
    (re.compile(pattern), encoding)
    for pattern, encoding in (
        (rf"^gpt-oss{_END}", "o200k_harmony"),
        (rf"^(?:chat)?gpt-4o{_END}", "o200k_base"),
        (rf"^gpt-4\.(?:1|5){_END}", "o200k_base"),
        (rf"^gpt-5{_END}", "o200k_base"),
        (rf"^o[134]{_END}", "o200k_base"),
        (rf"^gpt-4{_END}", "cl100k_base"),
        (rf"^gpt-3\.5{_END}", "cl100k_base"),
        (rf"^text-embedding-(?:3-small|3-large|ada-002){_END}", "cl100k_base"),
        (rf"^(?:meta-)?llama-?3{_END}", "llama3"),
        (r"^qwen[23]", "qwen3"),
    )
)


def _normalise(model: str) -> str:
    if not isinstance(model, str) or not model.strip():
        raise InvalidInput(
            f"model must be a non-empty model or encoding name, got {model!r}; "
            f"e.g. 'gpt-4o' or one of {', '.join(ENCODINGS)}"
        )
    # "openai/gpt-4o", "meta-llama/Llama-3.1-8B-Instruct" -> the last path segment
    return model.strip().lower().rsplit("/", 1)[-1]


def encoding_for_model(model: str) -> str | None:
    """Return the exact encoding for *model*, or ``None`` when there is no public tokenizer.

    Accepts model names (``"gpt-4o-mini"``, ``"openai/gpt-4.1"``, ``"Llama-3.1-8B"``,
    ``"qwen2.5:7b"``) and raw encoding names (``"cl100k_base"``); case-insensitive, and an org
    prefix before ``/`` is ignored.

    Raises:
        InvalidInput: *model* is empty or not a string.

    Example:
        >>> encoding_for_model("openai/gpt-4o")
        'o200k_base'
    """
    name = _normalise(model)
    if name in ENCODINGS:
        return name
    for pattern, encoding in _RULES:
        if pattern.match(name):
            return encoding
    return None


@lru_cache(maxsize=256)
def tokenizer_for(model: str, *, allow_approx: bool = True) -> Tokenizer:
    """Return the tokenizer that counts tokens for *model* (instances are cached and shared).

    Routing: gpt-4o, gpt-4.1, gpt-4.5, gpt-5, o1, o3, o4 -> ``o200k_base``; gpt-4, gpt-4-turbo,
    gpt-3.5 -> ``cl100k_base``; gpt-oss -> ``o200k_harmony``; llama-3.x -> ``llama3``; qwen2,
    qwen2.5, qwen3 -> ``qwen3``; a raw encoding name -> itself. Any other family (claude,
    gemini, mistral, ...) has no public offline tokenizer: it gets an :class:`ApproxTokenizer`
    (``exact`` is False) when *allow_approx*, with one warning per model name logged to
    ``kenning`` naming the approximation (and the likely model, for a typo like ``gpt4o``),
    else an error.

    Args:
        model: a model name or an encoding name.
        allow_approx: keyword-only; whether an unknown family may fall back to the estimate.

    Raises:
        InvalidInput: *model* is empty, or unknown while ``allow_approx=False``.

    Example:
        >>> tokenizer_for("gpt-4o-mini").name
        'o200k_base'
        >>> tokenizer_for("claude-sonnet-4").exact
        False
    """
    encoding = encoding_for_model(model)
    if encoding is not None:
        return exact_tokenizer(encoding)
    if allow_approx:
        approx = _approx()
        # Once per model name: tokenizer_for is cached.
        close = difflib.get_close_matches(_normalise(model), _KNOWN, n=1, cutoff=0.75)
        log.warning(
            "no exact tokenizer is known for model %r%s; counting with the approximation %r "
            "(pass a known model name or an encoding: %s)",
            model, f" (did you mean {close[0]!r}?)" if close else "", approx.name,
            ", ".join(ENCODINGS),
        )  # fmt: skip
        return approx
    raise InvalidInput(
        f"no exact tokenizer is known for model {model!r}; pass an encoding name "
        f"({', '.join(ENCODINGS)}), a model of the gpt / o-series / gpt-oss / llama-3 / "
        "qwen2-3 families, or allow_approx=True to accept an approximate count"
    )


@lru_cache(maxsize=1)
def _approx() -> ApproxTokenizer:
    return ApproxTokenizer()
