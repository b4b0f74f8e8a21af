"""Exact offline tokenizers (backed by quicktok) and the labelled approximate fallback.

``quicktok`` ships the BPE vocabularies in its wheel, so counting never touches the network. It
is imported on the first count, not when this module is imported.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from functools import cache
from typing import Any, Final

from kenning.errors import InvalidInput, ModelUnavailable
from kenning.runtime import release_free_memory

__all__ = [
    "ENCODINGS",
    "ApproxTokenizer",
    "ExactTokenizer",
    "exact_tokenizer",
]

#: Encodings shipped with quicktok that :class:`ExactTokenizer` accepts.
ENCODINGS: Final[tuple[str, ...]] = (
    "cl100k_base",
    "o200k_base",
    "o200k_harmony",
    "llama3",
    "qwen3",
)

# Below this many characters in one count_many call, a plain loop beats quicktok's thread pool
# (whose start-up alone costs milliseconds).
_PARALLEL_MIN_CHARS: Final = 1_000_000


def _check_texts(texts: Sequence[str]) -> None:
    if isinstance(texts, str):
        raise InvalidInput("count_many() takes a sequence of strings, not one string; use count()")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise InvalidInput(
                f"texts[{i}] is {type(text).__name__}, expected str; convert it to text first"
            )


def _check_text(text: str) -> None:
    if not isinstance(text, str):
        raise InvalidInput(f"text is {type(text).__name__}, expected str; convert it to text first")


def _not_unicode() -> InvalidInput:
    # Raised "from None": the underlying error quotes the whole text.
    return InvalidInput(
        "text is not valid Unicode (it holds a lone surrogate); clean it first, e.g. with "
        "text.encode('utf-8', 'replace').decode()"
    )


def _utf8_len(text: str) -> int:
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise _not_unicode() from None


class ExactTokenizer:
    """Exact token counts for one of the :data:`ENCODINGS`, computed offline.

    Counts use tiktoken's ``encode_ordinary`` semantics: a special-token string such as
    ``"<|endoftext|>"`` inside the text is counted as plain text, never as one special token
    (the count of what a user actually typed). The vocabulary loads on the first count.

    Args:
        encoding_name: one of :data:`ENCODINGS`, e.g. ``"cl100k_base"``.

    Raises:
        InvalidInput: the encoding is not one of :data:`ENCODINGS`.
        ModelUnavailable: (on the first count) quicktok or its vocabulary cannot be loaded.

    Example:
        >>> ExactTokenizer("o200k_base").count("hello world")
        2
    """

    def __init__(self, encoding_name: str) -> None:
        if encoding_name not in ENCODINGS:
            raise InvalidInput(
                f"unknown encoding {encoding_name!r}; choose one of {', '.join(ENCODINGS)}"
            )
        self._name = encoding_name
        self._encoding: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ExactTokenizer({self._name!r})"

    @property
    def name(self) -> str:
        """The encoding name, e.g. ``"cl100k_base"``."""
        return self._name

    @property
    def exact(self) -> bool:
        """Always True: counts equal the model's real tokenizer."""
        return True

    def _load(self) -> Any:
        encoding = self._encoding
        if encoding is not None:
            return encoding
        with self._lock:
            if self._encoding is None:
                try:
                    import quicktok

                    self._encoding = quicktok.get_encoding(self._name)
                    release_free_memory()  # what building the vocabulary freed goes back
                except (ImportError, OSError, RuntimeError) as exc:
                    raise ModelUnavailable(
                        f"cannot load the {self._name} tokenizer from quicktok ({exc}); "
                        "install the 'quicktok-v1' package"
                    ) from exc
            return self._encoding

    def count(self, text: str) -> int:
        """Return the number of tokens in *text* (``0`` for ``""``)."""
        _check_text(text)
        if not text:
            return 0
        encoding = self._load()
        try:
            return int(encoding.count(text))
        except (TypeError, UnicodeError):  # quicktok rejects lone surrogates
            raise _not_unicode() from None

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """Return one count per text, in order (parallel for large inputs)."""
        _check_texts(texts)
        if not texts:
            return []
        encoding = self._load()
        try:
            if len(texts) > 1 and sum(map(len, texts)) >= _PARALLEL_MIN_CHARS:
                import quicktok

                counts: list[int] = quicktok.count_batch(encoding, list(texts)).tolist()
                return counts
            return [int(encoding.count(text)) if text else 0 for text in texts]
        except (TypeError, UnicodeError):  # quicktok rejects lone surrogates
            raise _not_unicode() from None


@cache
def exact_tokenizer(encoding_name: str) -> ExactTokenizer:
    """Return the shared :class:`ExactTokenizer` for *encoding_name* (one per encoding).

    Raises:
        InvalidInput: the encoding is not one of :data:`ENCODINGS`.
    """
    return ExactTokenizer(encoding_name)


class ApproxTokenizer:
    """An explicitly approximate count for model families with no public tokenizer.

    The count is ``ceil(utf8_bytes / bytes_per_token)``: about 4 bytes per token matches
    English prose in the OpenAI encodings, under-counts for code and for tokenizers with smaller
    vocabularies (e.g. Claude's, by roughly 10-20%), and over-counts for CJK text. ``exact`` is
    False and ``name`` says ``approx``, so every report built on it can say so; leave headroom
    in budgets that rely on it.

    Args:
        bytes_per_token: UTF-8 bytes assumed per token (keyword-only, > 0; default 4.0).

    Raises:
        InvalidInput: *bytes_per_token* is not a positive finite number.

    Example:
        >>> ApproxTokenizer().count("hello world")
        3
    """

    def __init__(self, *, bytes_per_token: float = 4.0) -> None:
        if not (isinstance(bytes_per_token, int | float) and 0 < bytes_per_token < math.inf):
            raise InvalidInput(
                f"bytes_per_token must be a positive number, got {bytes_per_token!r}"
            )
        self._bytes_per_token = float(bytes_per_token)

    def __repr__(self) -> str:
        return f"ApproxTokenizer(bytes_per_token={self._bytes_per_token:g})"

    @property
    def name(self) -> str:
        """``"approx-utf8/<bytes_per_token>"``, e.g. ``"approx-utf8/4"``."""
        return f"approx-utf8/{self._bytes_per_token:g}"

    @property
    def exact(self) -> bool:
        """Always False: this is an estimate, not the model's tokenizer."""
        return False

    @property
    def bytes_per_token(self) -> float:
        """The UTF-8 bytes assumed per token."""
        return self._bytes_per_token

    def count(self, text: str) -> int:
        """Return the estimated number of tokens in *text* (``0`` for ``""``)."""
        _check_text(text)
        return math.ceil(_utf8_len(text) / self._bytes_per_token)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """Return one estimate per text, in order."""
        _check_texts(texts)
        per = self._bytes_per_token
        return [math.ceil(_utf8_len(text) / per) for text in texts]
