"""Process-wide memory settings a long-running edge (``kenning serve``, ``kenning bench
memory``) applies once, at its start; nothing here runs at import.

glibc gives each thread that allocates its own malloc arena (up to eight per core), and
memory freed in one arena is reused only by the threads that share it. A server's request,
embedding, extraction and search threads each leave their arena holding their high-water
mark, so the process keeps several copies of its working set (about 50 MB on LoCoMo dev).

glibc also raises its mmap threshold each time a large block is freed (up to 32 MB), after
which the model's per-call buffers and a partition's arrays are carved from the heap instead
of mapped; freed between live blocks, those pages stay in the process. A fixed threshold of
1 MiB keeps every larger block in its own mapping, returned to the system when it is freed.
LoCoMo dev, the first 400 turns, one ``add_events`` each with the model and fact reading: RSS
after the ingest 337-342 MB with the moving threshold, 283-290 with 1 MiB (CPU time +2 %),
273 with 128 KiB (CPU time +9 %: ten times the page faults, every model call mapping its
buffers afresh).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from typing import Any

__all__ = ["MMAP_THRESHOLD", "configure_heap", "limit_malloc_arenas", "release_free_memory"]

# From glibc's malloc.h.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8

#: Blocks of this many bytes or more get their own mapping, unmapped when freed.
MMAP_THRESHOLD = 1024 * 1024


@functools.lru_cache(maxsize=1)
def _libc() -> Any:
    """glibc, or None (another C library, or another system): then both calls do nothing."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
    except OSError:
        return None
    if not hasattr(libc, "mallopt") or not hasattr(libc, "malloc_trim"):
        return None
    return libc


def limit_malloc_arenas(arenas: int = 2) -> bool:
    """Let all threads share at most *arenas* malloc arenas (glibc's ``M_ARENA_MAX``); True
    if set. Call it before the process starts its threads: arenas already made stay."""
    libc = _libc()
    return libc is not None and bool(libc.mallopt(_M_ARENA_MAX, int(arenas)))


def configure_heap(*, arenas: int = 2, mmap_threshold: int = MMAP_THRESHOLD) -> bool:
    """Set up glibc's allocator for a long-running process; True if every setting took.

    At most *arenas* malloc arenas (:func:`limit_malloc_arenas`), and a fixed mmap threshold:
    blocks of *mmap_threshold* bytes or more are mapped on their own and unmapped when freed,
    and the heap's top is given back above the same size. Call it once, before the process
    starts its threads (``kenning serve``, each server worker, ``kenning bench memory``).

    The threshold is 1 MiB unless given:

    >>> MMAP_THRESHOLD == 1 << 20
    True
    """
    libc = _libc()
    if libc is None:
        return False
    arenas_set = limit_malloc_arenas(arenas)
    mapped = bool(libc.mallopt(_M_MMAP_THRESHOLD, int(mmap_threshold)))
    trimmed = bool(libc.mallopt(_M_TRIM_THRESHOLD, int(mmap_threshold)))
    return arenas_set and mapped and trimmed


def release_free_memory() -> bool:
    """Give the heap's free pages back to the system (glibc's ``malloc_trim``); True if some
    were. Lowers the RSS a process holds at rest after a burst of work, never its peak."""
    libc = _libc()
    return libc is not None and bool(libc.malloc_trim(0))
