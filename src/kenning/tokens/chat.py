"""Token counts for OpenAI-style chat messages, including the per-message framing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kenning.errors import InvalidInput
from kenning.tokens.base import Tokenizer

__all__ = [
    "DEFAULT_CHAT_OVERHEAD", "ChatOverhead", "count_messages", "message_texts", "message_tokens",
]  # fmt: skip


@dataclass(frozen=True, slots=True)
class ChatOverhead:
    """The tokens a chat format adds around the message texts.

    The defaults are the OpenAI cookbook rule for gpt-3.5-turbo, gpt-4 and gpt-4o
    (``num_tokens_from_messages``): each message costs 3 framing tokens plus its values, a
    ``name`` field one more, and the reply is primed with 3 tokens.

    Attributes:
        tokens_per_message: framing tokens per message (``<|start|>{role}<|message|>...``).
        tokens_per_name: extra tokens when a message carries a ``name``.
        reply_priming: tokens added once per request for the assistant's reply.
    """

    tokens_per_message: int = 3
    tokens_per_name: int = 1
    reply_priming: int = 3

    def __post_init__(self) -> None:
        for field in ("tokens_per_message", "tokens_per_name", "reply_priming"):
            value = getattr(self, field)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise InvalidInput(f"ChatOverhead.{field} must be an int >= 0, got {value!r}")


#: The OpenAI cookbook overhead (3 per message, 1 per name, 3 for the reply).
DEFAULT_CHAT_OVERHEAD = ChatOverhead()


def _values(message: Mapping[str, Any], index: int | None) -> list[str]:
    where = "message" if index is None else f"messages[{index}]"
    if not isinstance(message, Mapping):
        raise InvalidInput(f"{where} is {type(message).__name__}, expected a mapping")
    values: list[str] = []
    for key, value in message.items():
        if value is None:  # e.g. an assistant message that only carries tool calls
            continue
        if key == "tool_calls":
            values.extend(_call_values(value, f"{where}['tool_calls']"))
            continue
        if not isinstance(value, str):
            raise InvalidInput(
                f"{where}[{key!r}] is {type(value).__name__}, expected str; "
                "flatten content parts to text before counting"
            )
        values.append(value)
    return values


def _call_values(calls: object, where: str) -> list[str]:
    """The strings of OpenAI-style tool calls: each call's id, type, function name and
    arguments (OpenAI does not document how it frames them; kenning counts these)."""
    if isinstance(calls, str | Mapping) or not isinstance(calls, Sequence):
        raise InvalidInput(f"{where} must be a list of tool calls")
    values: list[str] = []
    for call in calls:
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping):
            raise InvalidInput(f"{where} holds a call without a function")
        parts = (call.get("id"), call.get("type"), function.get("name"), function.get("arguments"))
        if not all(isinstance(p, str) for p in parts):
            raise InvalidInput(f"{where}: id, type, function name and arguments are strings")
        values.extend(str(p) for p in parts)
    return values


def message_texts(message: Mapping[str, Any]) -> list[str]:
    """The strings of one chat message that its tokens are counted from: every value (the
    role included), a tool call's id, type, name and arguments; ``None`` counts as nothing.

    Raises:
        InvalidInput: the message is not a mapping, or a value is neither a string nor tool
            calls.
    """
    return _values(message, None)


def message_tokens(
    tokenizer: Tokenizer,
    message: Mapping[str, Any],
    *,
    overhead: ChatOverhead = DEFAULT_CHAT_OVERHEAD,
) -> int:
    """Return the tokens one message costs: its framing plus every value (role included).

    Args:
        tokenizer: counts the values (exact or approximate; see ``tokenizer.exact``).
        message: e.g. ``{"role": "user", "content": "hi", "name": "ann"}``; ``None`` values
            count as nothing.
        overhead: keyword-only framing rule.

    Raises:
        InvalidInput: the message is not a mapping or a value is not a string.

    Example:
        >>> from kenning.tokens import tokenizer_for
        >>> message_tokens(tokenizer_for("gpt-4o"), {"role": "user", "content": "hello world"})
        6
    """
    total = overhead.tokens_per_message + sum(tokenizer.count_many(_values(message, None)))
    if message.get("name") is not None:
        total += overhead.tokens_per_name
    return total


def count_messages(
    tokenizer: Tokenizer,
    messages: Sequence[Mapping[str, Any]],
    *,
    overhead: ChatOverhead = DEFAULT_CHAT_OVERHEAD,
) -> int:
    """Return the prompt tokens of a chat request: every message plus the reply priming.

    Equals what the OpenAI API reports as ``prompt_tokens`` for gpt-3.5/4/4o with the default
    overhead and the model's exact tokenizer (no tools or response formats).

    Args:
        tokenizer: counts the values (exact or approximate; see ``tokenizer.exact``).
        messages: OpenAI-style message mappings.
        overhead: keyword-only framing rule.

    Raises:
        InvalidInput: *messages* is not a sequence of mappings of strings.

    Example:
        >>> from kenning.tokens import tokenizer_for
        >>> count_messages(tokenizer_for("gpt-4o"), [{"role": "user", "content": "hello world"}])
        9
    """
    if isinstance(messages, str | Mapping) or not isinstance(messages, Sequence):
        raise InvalidInput("messages must be a sequence of message mappings")
    texts: list[str] = []
    names = 0
    for i, message in enumerate(messages):
        texts.extend(_values(message, i))
        if message.get("name") is not None:
            names += 1
    return (
        sum(tokenizer.count_many(texts))
        + overhead.tokens_per_message * len(messages)
        + overhead.tokens_per_name * names
        + overhead.reply_priming
    )
