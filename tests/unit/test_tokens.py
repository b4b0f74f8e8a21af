"""Token counting: exact quicktok encodings, model routing, the approximation, chat overhead."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kenning.errors import InvalidInput, KenningError
from kenning.tokens import (
    DEFAULT_CHAT_OVERHEAD,
    ENCODINGS,
    ApproxTokenizer,
    ChatOverhead,
    ExactTokenizer,
    Tokenizer,
    count_messages,
    encoding_for_model,
    exact_tokenizer,
    message_tokens,
    tokenizer_for,
)

# Values published with tiktoken / the OpenAI cookbook, checked against quicktok.
KNOWN_COUNTS = [
    ("cl100k_base", "hello world", 2),
    ("o200k_base", "hello world", 2),
    ("cl100k_base", "tiktoken is great!", 6),
    ("o200k_base", "tiktoken is great!", 6),
    ("cl100k_base", "Hello, world!", 4),
    ("cl100k_base", "The quick brown fox jumps over the lazy dog.", 10),
    ("o200k_base", "The quick brown fox jumps over the lazy dog.", 10),
    ("cl100k_base", "こんにちは世界", 4),
    ("o200k_base", "こんにちは世界", 2),
    # special-token strings typed by a user count as plain text
    ("cl100k_base", "<|endoftext|>", 7),
    ("llama3", "hello world", 2),
    ("qwen3", "hello world", 2),
    ("o200k_harmony", "hello world", 2),
]

# The OpenAI cookbook's num_tokens_from_messages example; the API reports 129 prompt tokens
# for gpt-3.5-turbo / gpt-4 and 124 for gpt-4o / gpt-4o-mini.
COOKBOOK_MESSAGES = [
    {
        "role": "system",
        "content": "You are a helpful, pattern-following assistant that translates corporate "
        "jargon into plain English.",
    },
    {
        "role": "system",
        "name": "example_user",
        "content": "New synergies will help drive top-line growth.",
    },
    {
        "role": "system",
        "name": "example_assistant",
        "content": "Things working well together will increase revenue.",
    },
    {
        "role": "system",
        "name": "example_user",
        "content": "Let's circle back when we have more bandwidth to touch base on "
        "opportunities for increased leverage.",
    },
    {
        "role": "system",
        "name": "example_assistant",
        "content": "Let's talk later when we're less busy about how to do better.",
    },
    {
        "role": "user",
        "content": "This late pivot means we don't have time to boil the ocean for the client "
        "deliverable.",
    },
]


@pytest.mark.parametrize(("encoding", "text", "expected"), KNOWN_COUNTS)
def test_known_counts(encoding: str, text: str, expected: int) -> None:
    assert ExactTokenizer(encoding).count(text) == expected


def test_known_ids_match_tiktoken() -> None:
    import quicktok

    assert quicktok.get_encoding("cl100k_base").encode_ordinary("hello world") == [15339, 1917]
    assert quicktok.get_encoding("o200k_base").encode_ordinary("hello world") == [24912, 2375]


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("gpt-4o", "o200k_base"),
        ("gpt-4o-mini", "o200k_base"),
        ("gpt-4o-2024-08-06", "o200k_base"),
        ("chatgpt-4o-latest", "o200k_base"),
        ("openai/gpt-4o", "o200k_base"),
        ("GPT-4O", "o200k_base"),
        ("gpt-4.1", "o200k_base"),
        ("gpt-4.1-mini", "o200k_base"),
        ("gpt-4.5-preview", "o200k_base"),
        ("gpt-5", "o200k_base"),
        ("gpt-5-mini", "o200k_base"),
        ("gpt-5.1", "o200k_base"),
        ("o1", "o200k_base"),
        ("o1-mini", "o200k_base"),
        ("o3", "o200k_base"),
        ("o3-mini", "o200k_base"),
        ("o4-mini", "o200k_base"),
        ("gpt-4", "cl100k_base"),
        ("gpt-4-0613", "cl100k_base"),
        ("gpt-4-turbo", "cl100k_base"),
        ("gpt-4-turbo-2024-04-09", "cl100k_base"),
        ("gpt-3.5-turbo", "cl100k_base"),
        ("gpt-3.5-turbo-16k", "cl100k_base"),
        ("text-embedding-3-small", "cl100k_base"),
        ("gpt-oss-20b", "o200k_harmony"),
        ("openai/gpt-oss-120b", "o200k_harmony"),
        ("llama-3", "llama3"),
        ("Llama-3.1-8B-Instruct", "llama3"),
        ("meta-llama/Llama-3.3-70B-Instruct", "llama3"),
        ("meta-llama-3-8b", "llama3"),
        ("llama3", "llama3"),
        ("llama3.2:3b", "llama3"),
        ("qwen2-7b", "qwen3"),
        ("qwen2.5-72b-instruct", "qwen3"),
        ("Qwen/Qwen3-8B", "qwen3"),
        ("qwen3:14b", "qwen3"),
        ("cl100k_base", "cl100k_base"),
        ("o200k_base", "o200k_base"),
        ("o200k_harmony", "o200k_harmony"),
        ("llama3", "llama3"),
        ("qwen3", "qwen3"),
    ],
)
def test_model_routing(model: str, encoding: str) -> None:
    assert encoding_for_model(model) == encoding
    tokenizer = tokenizer_for(model, allow_approx=False)
    assert tokenizer.name == encoding
    assert tokenizer.exact is True


@pytest.mark.parametrize(
    "model",
    [
        "claude-3-5-sonnet-20241022",
        "anthropic/claude-sonnet-4",
        "gemini-2.0-flash",
        "mistral-large",
        "llama-2-7b",
        "llama-30b",  # LLaMA 1, not Llama 3
        "llama-4-scout",
        "gpt-45",
        "o1x",
        "qwen-7b",
    ],
)
def test_unknown_families_fall_back_to_labelled_approximation(model: str) -> None:
    assert encoding_for_model(model) is None
    tokenizer = tokenizer_for(model)
    assert isinstance(tokenizer, ApproxTokenizer)
    assert tokenizer.exact is False
    assert "approx" in tokenizer.name


def test_unknown_model_without_approx_raises_invalid_input() -> None:
    with pytest.raises(InvalidInput, match="cl100k_base") as info:
        tokenizer_for("claude-3-opus", allow_approx=False)
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, KenningError)
    assert info.value.code == "invalid_input"


@pytest.mark.parametrize("model", ["", "   "])
def test_empty_model_name_is_rejected(model: str) -> None:
    with pytest.raises(InvalidInput):
        tokenizer_for(model)


def test_unknown_encoding_is_rejected() -> None:
    with pytest.raises(InvalidInput, match="o200k_base"):
        ExactTokenizer("p50k_base")


def test_tokenizers_are_cached_and_satisfy_the_protocol() -> None:
    assert tokenizer_for("gpt-4o") is tokenizer_for("gpt-4o-mini")
    assert tokenizer_for("gpt-4o") is exact_tokenizer("o200k_base")
    assert tokenizer_for("claude-3-haiku") is tokenizer_for("gemini-pro")
    for tokenizer in (tokenizer_for("gpt-4"), tokenizer_for("claude-3-haiku")):
        assert isinstance(tokenizer, Tokenizer)


def test_approx_tokenizer_is_documented_formula() -> None:
    approx = ApproxTokenizer()
    assert approx.exact is False
    assert approx.name == "approx-utf8/4"
    assert approx.count("") == 0
    assert approx.count("abcd") == 1
    assert approx.count("abcde") == 2
    assert approx.count("é" * 4) == 2  # 8 UTF-8 bytes
    assert ApproxTokenizer(bytes_per_token=3.5).name == "approx-utf8/3.5"
    with pytest.raises(InvalidInput):
        ApproxTokenizer(bytes_per_token=0)


def test_count_many_matches_count_including_parallel_path() -> None:
    tokenizer = ExactTokenizer("cl100k_base")
    texts = ["", "hello world", "tiktoken is great!", "x" * 10, "多语言 text"]
    assert tokenizer.count_many(texts) == [tokenizer.count(t) for t in texts]
    big = ["lorem ipsum dolor sit amet " * 20_000, "hello world", "", "<|endoftext|>"]
    assert tokenizer.count_many(big) == [tokenizer.count(t) for t in big]
    assert tokenizer.count_many([]) == []


def test_bad_text_arguments_raise_invalid_input() -> None:
    tokenizer = ExactTokenizer("o200k_base")
    with pytest.raises(InvalidInput):
        tokenizer.count_many("hello")
    with pytest.raises(InvalidInput):
        tokenizer.count_many(["ok", 3])  # type: ignore[list-item]
    with pytest.raises(InvalidInput):
        tokenizer.count(None)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="surrogate"):
        tokenizer.count("a\ud800b")
    with pytest.raises(InvalidInput, match="surrogate"):
        ApproxTokenizer().count("a\ud800b")


@pytest.mark.parametrize("encoding", ENCODINGS)
@given(texts=st.lists(st.text(max_size=200), max_size=8))
def test_count_many_equals_count_property(encoding: str, texts: list[str]) -> None:
    tokenizer = exact_tokenizer(encoding)
    counts = tokenizer.count_many(texts)
    assert counts == [tokenizer.count(t) for t in texts]
    assert all(c >= 0 for c in counts)
    assert tokenizer.count("") == 0


@given(texts=st.lists(st.text(max_size=200), max_size=8))
def test_approx_count_many_equals_count_property(texts: list[str]) -> None:
    approx = ApproxTokenizer()
    assert approx.count_many(texts) == [approx.count(t) for t in texts]


@given(text=st.text(min_size=1, max_size=200))
def test_nonempty_text_has_at_least_one_token(text: str) -> None:
    assert exact_tokenizer("o200k_base").count(text) >= 1
    assert ApproxTokenizer().count(text) >= 1


def test_chat_overhead_defaults_are_the_cookbook_rule() -> None:
    assert ChatOverhead() == DEFAULT_CHAT_OVERHEAD
    assert (DEFAULT_CHAT_OVERHEAD.tokens_per_message, DEFAULT_CHAT_OVERHEAD.tokens_per_name) == (
        3,
        1,
    )
    assert DEFAULT_CHAT_OVERHEAD.reply_priming == 3
    with pytest.raises(InvalidInput):
        ChatOverhead(tokens_per_message=-1)


@pytest.mark.parametrize(("model", "expected"), [("gpt-4", 129), ("gpt-4o", 124)])
def test_count_messages_matches_openai_cookbook(model: str, expected: int) -> None:
    assert count_messages(tokenizer_for(model), COOKBOOK_MESSAGES) == expected


def test_chat_overhead_math() -> None:
    tokenizer = tokenizer_for("gpt-4o")
    plain = {"role": "user", "content": "hello world"}  # "user" 1 + "hello world" 2
    named = {"role": "user", "name": "ann", "content": "hello world"}
    assert message_tokens(tokenizer, plain) == 3 + 1 + 2
    name_tokens = tokenizer.count("ann")
    assert message_tokens(tokenizer, named) == 3 + 1 + name_tokens + 2 + 1
    assert count_messages(tokenizer, []) == 3
    assert count_messages(tokenizer, [plain]) == message_tokens(tokenizer, plain) + 3
    assert count_messages(tokenizer, [plain, named]) == (
        message_tokens(tokenizer, plain) + message_tokens(tokenizer, named) + 3
    )
    custom = ChatOverhead(tokens_per_message=4, tokens_per_name=0, reply_priming=0)
    assert count_messages(tokenizer, [plain, named], overhead=custom) == (
        4 * 2 + 2 * (1 + 2) + name_tokens
    )


def test_count_messages_with_approximation_and_none_content() -> None:
    approx = tokenizer_for("claude-3-haiku")
    messages = [{"role": "assistant", "content": None}, {"role": "user", "content": "abcdefgh"}]
    # "assistant" 9 bytes -> 3, "user" -> 1, "abcdefgh" -> 2
    assert count_messages(approx, messages) == 3 + 3 + (3 + 1 + 2) + 3  # type: ignore[arg-type]


def test_count_messages_rejects_bad_shapes() -> None:
    tokenizer = tokenizer_for("gpt-4o")
    with pytest.raises(InvalidInput):
        count_messages(tokenizer, {"role": "user", "content": "hi"})  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="flatten"):
        parts: list[dict[str, object]] = [{"role": "user", "content": [{"type": "text"}]}]
        count_messages(tokenizer, parts)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        message_tokens(tokenizer, ["role", "user"])  # type: ignore[arg-type]


def test_importing_tokens_does_not_import_quicktok() -> None:
    code = (
        "import sys, kenning.tokens as t; "
        "t.tokenizer_for('gpt-4o'); "
        "assert 'quicktok' not in sys.modules, 'imported at import'; "
        "t.tokenizer_for('gpt-4o').count('hi'); "
        "assert 'quicktok' in sys.modules"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=60)
