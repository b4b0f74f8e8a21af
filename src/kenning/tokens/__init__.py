"""Token counting: the :class:`Tokenizer` protocol and exact offline encodings.

Nothing heavy loads here: quicktok is imported on the first count.
"""

from kenning.tokens.base import Tokenizer
from kenning.tokens.chat import DEFAULT_CHAT_OVERHEAD, ChatOverhead, count_messages, message_tokens
from kenning.tokens.encodings import ENCODINGS, ApproxTokenizer, ExactTokenizer, exact_tokenizer
from kenning.tokens.routing import encoding_for_model, tokenizer_for

__all__ = [
    "DEFAULT_CHAT_OVERHEAD",
    "ENCODINGS",
    "ApproxTokenizer",
    "ChatOverhead",
    "ExactTokenizer",
    "Tokenizer",
    "count_messages",
    "encoding_for_model",
    "exact_tokenizer",
    "message_tokens",
    "tokenizer_for",
]
