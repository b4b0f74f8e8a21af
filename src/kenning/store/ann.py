"""HNSW approximate nearest neighbours (faiss) for large partitions.

An :class:`HnswIndex` is a graph over unit vectors searched by inner product. Node ``i`` is
the ``i``-th vector added. A partition adds each *distinct* vector once, however many of its
rows share it (repeated texts embed identically, and a crowd of identical nodes fills each
other's neighbour lists and cuts the graph into pieces a search cannot cross); it keeps the
mapping from nodes to rows itself. The index remembers a fingerprint of each node's vector, so
that a partition rebuilt from the database can check which nodes still describe a stored
record. Nodes are never removed from the graph: a partition excludes nodes left without rows
inside the graph search (a faiss ``IDSelectorBitmap``), clears their codes and fingerprint
(:meth:`HnswIndex.clear`), and rebuilds the index once they are a large share of it.

The graph holds 8-bit codes of the vectors. The persisted form (:meth:`HnswIndex.dumps`) holds
the graph, the fingerprints and the codes' ranges but not the vectors: those stay in the
database only, and are encoded again from it on load.

faiss is imported when the first index is made, never at import. It is an extra
(``pip install 'kenning[ann]'``): without it every search is exact, and the first partition
that crosses ``AnnConfig.min_rows`` logs one warning per process (:func:`hnsw_available`).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from kenning.checks import check_numbers

__all__ = [
    "AnnConfig", "HnswIndex", "evenly_spaced", "fingerprints", "hnsw_available", "nodes_to_fetch",
]  # fmt: skip

_log = logging.getLogger(__name__)

F32 = npt.NDArray[np.float32]
_MAGIC = b"KENNING-HNSW\x01\n"
# 3: the graph's vectors are 8-bit codes, with the quantiser's ranges in the file (2: float32;
# 2 and 3: one node per distinct vector, fingerprints only; 1 held a node per row and its rowid).
_FORMAT = 3
# Odd 64-bit multipliers, one per vector component (fixed: fingerprints are persisted).
_WEIGHTS_SEED = 0x6B656E6E
_LOAD_CHUNK = 16_384


@dataclass(frozen=True, slots=True)
class AnnConfig:
    """When and how a partition's vectors get an HNSW index.

    ``enabled=False`` keeps every search exact. A partition with at least ``min_rows`` vectors
    builds an index (in a background thread when ``background``; exact search serves until
    it is ready) and adds later rows to it incrementally. A query uses the index only when its
    row mask (user, session, role, kind, time, filters) selects at least ``min_rows`` rows and
    at least ``min_fraction`` of the partition; narrower queries are exact over the mask, and
    a mask is always applied inside the graph search, never to a cut result list. Candidates
    found by the graph are re-scored exactly. ``m``, ``ef_construction`` and ``ef_search`` are
    the HNSW parameters (``ef_search`` is raised to the requested depth when that is larger).
    ``persist`` saves a built index beside an on-disk database so a restart does not rebuild.
    ``build_threads`` bounds the OpenMP threads of a build (one by default: on a small machine
    the other cores keep serving searches, and oversubscribed OpenMP builds were slower).
    The index needs faiss (``pip install 'kenning[ann]'``); without it searches stay exact.

    >>> AnnConfig(min_rows=50_000).ef_search
    512
    """

    enabled: bool = True
    min_rows: int = 20_000
    min_fraction: float = 0.25
    m: int = 32
    ef_construction: int = 200
    ef_search: int = 512
    background: bool = True
    persist: bool = True
    build_threads: int = 1

    def __post_init__(self) -> None:
        check_numbers(self, "min_rows", low=1, high=1_000_000_000, integer=True)
        check_numbers(self, "min_fraction", low=0, high=1)
        check_numbers(self, "m", low=4, high=128, integer=True)
        check_numbers(self, ("ef_construction", "ef_search"), low=8, high=4096, integer=True)
        check_numbers(self, "build_threads", low=1, high=256, integer=True)


def _weights(dimension: int) -> npt.NDArray[np.uint64]:
    rng = np.random.default_rng(_WEIGHTS_SEED)
    return rng.integers(1, 2**63, size=dimension, dtype=np.uint64) * np.uint64(2) + np.uint64(1)


def evenly_spaced(n: int, count: int) -> npt.NDArray[np.int64]:
    """At most *count* distinct indices spread evenly over ``range(n)``, ascending.

    The indices come sorted, so repeats are dropped without ``np.unique``, which imports
    ``numpy.ma`` on its first call (20 ms of a cold search).

    >>> evenly_spaced(10, 4).tolist()
    [0, 3, 6, 9]
    >>> evenly_spaced(3, 5).tolist()
    [0, 1, 2]
    """
    spots = np.linspace(0, max(n - 1, 0), min(count, n), dtype=np.int64)
    if spots.size < 2:
        return spots
    keep = np.ones(spots.size, dtype=np.bool_)
    keep[1:] = spots[1:] != spots[:-1]
    return spots[keep]


def nodes_to_fetch(k: int) -> int:
    """How many nodes a search of the 8-bit graph returns for *k* results: the codes rank
    near-ties in another order than the float32 rows, so the rows re-rank a wider set.

    >>> nodes_to_fetch(10)
    26
    """
    return max(2 * k, k + 16)


def fingerprints(vectors: F32, *, chunk: int = 512) -> npt.NDArray[np.uint64]:
    """A 64-bit fingerprint of each row's exact bytes (a multiply-add hash, not a digest)."""
    # Each chunk is widened to uint64 twice over (16 bytes a dimension): 512 rows hold 3 MB
    # at a time, where 8,192 held 50 MB, the peak of loading a partition; and run faster.
    out = np.zeros(vectors.shape[0], dtype=np.uint64)
    if vectors.shape[0] == 0 or vectors.shape[1] == 0:
        return out
    weights = _weights(vectors.shape[1])
    bits = np.ascontiguousarray(vectors, dtype=np.float32).view(np.uint32)
    for start in range(0, bits.shape[0], chunk):
        block = bits[start : start + chunk].astype(np.uint64)
        out[start : start + chunk] = (block * weights).sum(axis=1, dtype=np.uint64)
    return out


@functools.cache
def _faiss_installed() -> bool:
    """Whether faiss can be imported, found without importing it: a partition over the
    threshold asks on every add, and the import itself waits for the building thread."""
    try:
        return importlib.util.find_spec("faiss") is not None
    except (ImportError, ValueError):
        return False


_warn_lock = threading.Lock()


@functools.cache
def _warn_exact() -> None:
    _log.warning(
        "faiss is not installed (pip install 'kenning[ann]'): partitions over "
        "AnnConfig.min_rows vectors are searched exactly, without an HNSW index"
    )


def hnsw_available() -> bool:
    """True when faiss is installed; otherwise log, once per process, that partitions over
    ``AnnConfig.min_rows`` vectors are searched exactly, and return False.

    A partition asks this only when it has crossed the threshold.
    """
    if _faiss_installed():
        return True
    with _warn_lock:  # the cache alone could let two threads log
        _warn_exact()
    return False


def _faiss() -> Any:
    try:
        import faiss  # heavy native module: loaded when the first index is made
    except ImportError as exc:
        # RuntimeError: a saved index that cannot be read without faiss is skipped, not fatal.
        raise RuntimeError("faiss is not installed (pip install 'kenning[ann]')") from exc
    return faiss


class HnswIndex:
    """An HNSW graph (faiss ``IndexHNSWSQ``, inner product) over unit vectors.

    The graph holds each vector as 8-bit codes (faiss's scalar quantiser, a range per
    component learnt by :meth:`train`): a quarter of float32, which is what a process maps
    or holds for the graph (a 100k-event tenant's graph file: 158 to 58 MB). The codes only
    choose the candidates: the partition scores them with its own float32 rows, and asks
    for more than it keeps (:func:`nodes_to_fetch`).

    Not thread-safe: the owning partition serialises ``add`` against ``search``.

    >>> index = HnswIndex(2, m=8, ef_construction=16)
    >>> index.add(np.eye(2, dtype=np.float32))
    >>> index.search(np.array([0.0, 1.0], dtype=np.float32), 1, ef_search=16).tolist()
    [1]
    """

    def __init__(self, dimension: int, *, m: int, ef_construction: int) -> None:
        faiss = _faiss()
        self._dim = dimension
        self._m = m
        self._index = faiss.IndexHNSWSQ(
            dimension, faiss.ScalarQuantizer.QT_8bit, m, faiss.METRIC_INNER_PRODUCT
        )
        self._index.hnsw.efConstruction = ef_construction
        self._storage: Any = None
        self._mapped = False  # vectors mapped from a file (read only), see read
        self.prints = np.zeros(0, dtype=np.uint64)

    def __len__(self) -> int:
        return int(self.prints.shape[0])

    @staticmethod
    def build_threads(threads: int) -> int:
        """Set the calling thread's OpenMP thread count for faiss; returns the previous one.
        (OpenMP keeps this per thread, so other threads are not affected.)"""
        faiss = _faiss()
        previous = int(faiss.omp_get_max_threads())
        faiss.omp_set_num_threads(threads)
        return previous

    @property
    def dimension(self) -> int:
        return self._dim

    def train(self, vectors: F32) -> None:
        """Learn the codes' range of each component from *vectors* (a sample of the rows the
        graph is built from); a no-op once trained. Later vectors outside a range are
        clipped to it, which moves only which candidates are found."""
        if self._index.is_trained or vectors.shape[0] == 0:
            return
        self._index.train(self._block(vectors))

    def _block(self, vectors: F32) -> F32:
        if vectors.ndim != 2 or vectors.shape[1] != self._dim:
            raise ValueError(f"expected vectors of dimension {self._dim}")
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def add(self, vectors: F32, prints: npt.NDArray[np.uint64] | None = None) -> None:
        """Append a node for each of *vectors* (unit rows); *prints*, when given, are their
        :func:`fingerprints` (computed otherwise). An index not trained yet learns its
        ranges from these vectors first."""
        if vectors.shape[0] == 0:
            return
        block = self._block(vectors)
        self._own()
        self.train(block)
        if prints is None:
            prints = fingerprints(block)
        elif prints.shape[0] != block.shape[0]:
            raise ValueError(f"expected {block.shape[0]} fingerprints")
        self._index.add(block)
        self.prints = np.concatenate([self.prints, prints.astype(np.uint64)])

    def clear(self, nodes: npt.NDArray[np.int64]) -> None:
        """Zero the codes and fingerprints of *nodes*: an excluded node keeps its place in
        the graph (its links still lead a search through it) but nothing of what it held."""
        if nodes.size == 0:
            return
        self._own()
        self._codes()[nodes] = 0
        self.prints[nodes] = 0

    def search(
        self,
        query: F32,
        k: int,
        *,
        ef_search: int,
        allowed: npt.NDArray[np.bool_] | None = None,
    ) -> npt.NDArray[np.int64]:
        """Up to *k* node numbers, best first; *allowed* (one flag per node) is applied inside
        the graph search, so excluded nodes never take a place in the result."""
        faiss = _faiss()
        n = len(self)
        if n == 0 or k <= 0:
            return np.zeros(0, dtype=np.int64)
        params = faiss.SearchParametersHNSW()
        params.efSearch = max(ef_search, k)
        bitmap = None
        if allowed is not None:
            bitmap = np.packbits(allowed, bitorder="little")
            selector = faiss.IDSelectorBitmap(n, faiss.swig_ptr(bitmap))
            params.sel = selector
        q = np.ascontiguousarray(query, dtype=np.float32).reshape(1, self._dim)
        _, found = self._index.search(q, min(k, n), params=params)
        del bitmap  # kept alive until the search returned: faiss reads it by pointer
        nodes: npt.NDArray[np.int64] = found[0]
        return nodes[nodes >= 0]

    def dumps(self) -> bytes:
        """The graph, the fingerprints and the quantiser's ranges, without the vectors."""
        faiss = _faiss()
        writer = faiss.VectorIOWriter()
        faiss.write_index(self._index, writer, faiss.IO_FLAG_SKIP_STORAGE)
        graph = faiss.vector_to_array(writer.data).tobytes()
        ranges = faiss.vector_to_array(self._storage_index().sq.trained).tolist()
        header = json.dumps(
            {
                "format": _FORMAT,
                "dimension": self._dim,
                "m": self._m,
                "count": len(self),
                "ranges": ranges,
            }
        ).encode()
        return b"".join(
            [
                _MAGIC,
                len(header).to_bytes(8, "little"),
                header,
                self.prints.astype("<u8").tobytes(),
                graph,
            ]
        )

    def write(self, path: Path) -> None:
        """Write the whole index, codes included, to *path* and flush it to disk (a
        partition snapshot's graph: read back by :meth:`read` without the rows)."""
        _faiss().write_index(self._index, str(path))
        with open(path, "rb+") as f:
            os.fsync(f.fileno())

    @classmethod
    def read(
        cls, path: Path, prints: npt.NDArray[np.uint64], *, m: int,
        exact: Callable[[npt.NDArray[np.int64]], F32],
    ) -> HnswIndex:  # fmt: skip
        """The index :meth:`write` wrote, whose nodes' fingerprints are *prints*; *exact*
        gives the float32 vectors of live nodes (the rows that hold them). Raises ValueError
        where it is not that index: another kind, node count or dimension, or a sample of
        its codes that are not those of their nodes' vectors (a damaged file)."""
        faiss = _faiss()
        # The codes stay in the file, mapped: read as a search visits them (pages another
        # process reads too are shared), copied out only when the graph changes.
        graph = faiss.read_index(str(path), faiss.IO_FLAG_MMAP_IFC)
        if not isinstance(graph, faiss.IndexHNSWSQ) or graph.ntotal != prints.shape[0]:
            raise ValueError("saved graph does not match its snapshot")
        index = cls.__new__(cls)
        index._dim, index._m, index._index = int(graph.d), m, graph
        index._storage, index._mapped = None, True
        index.prints = np.array(prints, dtype=np.uint64)
        live = np.flatnonzero(index.prints)
        sample = live[evenly_spaced(live.size, 256)]
        if live.size and not index.holds(sample, exact(sample)):
            raise ValueError("saved graph's codes differ from its nodes' vectors")
        return index

    def _own(self) -> None:
        """Before a change: copy a mapped index (graph and vectors are read-only views of
        its file) into memory of its own, and let the mapping go."""
        if not self._mapped:
            return
        faiss = _faiss()
        self._index = faiss.deserialize_index(faiss.serialize_index(self._index))
        self._mapped = False

    def _storage_index(self) -> Any:
        return _faiss().downcast_index(self._index.storage)

    def _codes(self) -> npt.NDArray[np.uint8]:
        """The nodes' codes, one row a node (a view of the graph's storage)."""
        storage = self._storage_index()
        flat = _faiss().rev_swig_ptr(storage.codes.data(), storage.ntotal * storage.code_size)
        codes: npt.NDArray[np.uint8] = flat.reshape(-1, storage.code_size)
        return codes

    def holds(self, nodes: npt.NDArray[np.int64], vectors: F32) -> bool:
        """Whether the codes of *nodes* are those of *vectors* under this graph's ranges."""
        encoded = self._storage_index().sa_encode(self._block(vectors))
        return bool(np.array_equal(encoded, self._codes()[nodes]))

    @classmethod
    def loads(cls, blob: bytes, vectors_for: Any) -> HnswIndex:
        """Rebuild an index from :meth:`dumps` output. ``vectors_for(prints)`` returns each
        node's vector (from a stored row with that fingerprint) or zeros where no row has it;
        it is called for successive slices of the nodes. Raises ``ValueError`` if *blob* is
        not a readable index (a file of another format version included: it is rebuilt,
        never misread)."""
        faiss = _faiss()
        if not blob.startswith(_MAGIC):
            raise ValueError("not a kenning HNSW file")
        at = len(_MAGIC)
        size = int.from_bytes(blob[at : at + 8], "little")
        at += 8
        header = json.loads(blob[at : at + size])
        at += size
        if header.get("format") != _FORMAT:
            raise ValueError(f"unsupported HNSW file format {header.get('format')!r}")
        dim, count = int(header["dimension"]), int(header["count"])
        if len(blob) < at + 8 * count:
            raise ValueError("HNSW file is truncated")
        prints = np.frombuffer(blob, dtype="<u8", count=count, offset=at).astype(np.uint64)
        at += 8 * count
        reader = faiss.VectorIOReader()
        faiss.copy_array_to_vector(np.frombuffer(blob, dtype=np.uint8, offset=at), reader.data)
        graph = faiss.read_index(reader, faiss.IO_FLAG_SKIP_STORAGE)
        if graph.ntotal != count or graph.d != dim:
            raise ValueError("HNSW file header does not match its graph")
        storage = faiss.IndexScalarQuantizer(
            dim, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
        )
        ranges = np.asarray(header.get("ranges", ()), dtype=np.float32)
        if ranges.shape != (2 * dim,):
            raise ValueError("HNSW file header lacks the quantiser's ranges")
        faiss.copy_array_to_vector(ranges, storage.sq.trained)
        storage.is_trained = True
        # In steps: the vectors are encoded into the graph's storage, never held whole.
        for at in range(0, count, _LOAD_CHUNK):
            vectors = np.ascontiguousarray(vectors_for(prints[at : at + _LOAD_CHUNK]), np.float32)
            if vectors.shape != (min(_LOAD_CHUNK, count - at), dim):
                raise ValueError("vectors for the HNSW nodes have the wrong shape")
            storage.add(vectors)
        graph.storage = storage
        graph.own_fields = False
        index = cls.__new__(cls)
        index._dim = dim
        index._m = int(header["m"])
        index._index = graph
        index._storage = storage  # the graph borrows it; keep it alive as long as the graph
        index._mapped = False
        index.prints = prints
        return index
