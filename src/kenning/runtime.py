"""Process-wide memory settings a long-running edge (``kenning serve``, ``kenning bench
memory``) applies once, at its start; nothing here runs at import.

glibc gives each thread that allocates its own malloc arena (up to eight per core), and
memory freed in one arena is reused only by the threads that share it. A server's request,
embedding, extraction and search threads each leave their arena holding their high-water
mark, so the process keeps several copies of its working set (about 50 MB on LoCoMo dev).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from typing import Any

__all__ = ["limit_malloc_arenas", "release_free_memory"]

_M_ARENA_MAX = -8  # from glibc's malloc.h


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


def release_free_memory() -> bool:
    """Give the heap's free pages back to the system (glibc's ``malloc_trim``); True if some
    were. Lowers the RSS a process holds at rest after a burst of work, never its peak."""
    libc = _libc()
    return libc is not None and bool(libc.malloc_trim(0))
