"""What a failed SQLite write means to a caller: a full disk, or a store that failed.

SQLite reports a full filesystem (``ENOSPC``) as ``SQLITE_FULL``, but a file that reached the
process's size limit (``RLIMIT_FSIZE``: ``EFBIG``) as a plain ``SQLITE_IOERR``. Both mean the
same to a client, "no room to write; what is stored is intact", so both become
:class:`~kenning.errors.StorageFull` (HTTP 507); any other failure stays a
:class:`~kenning.errors.StoreError`.
"""

from __future__ import annotations

import os
import resource
import sqlite3

from kenning.errors import StorageFull, StoreError

__all__ = ["LOW_ROOM_BYTES", "write_failure"]

#: Less room than this (free on the filesystem, or below the file-size limit) counts as full:
#: a page, a WAL frame or a journal write of one transaction rarely needs more.
LOW_ROOM_BYTES = 1 << 20

# The files a write to a database grows: the database, its write-ahead log, its journal.
_SUFFIXES = ("", "-wal", "-journal")


def write_failure(exc: sqlite3.Error, path: str) -> StoreError:
    """kenning's error for *exc*, raised while writing the database at *path* (rolled back)."""
    code = getattr(exc, "sqlite_errorcode", None)
    primary = None if code is None else code & 0xFF  # extended codes keep the primary low
    if primary == sqlite3.SQLITE_FULL or (primary == sqlite3.SQLITE_IOERR and _no_room(path)):
        return StorageFull(
            f"no room left to write {path} (the disk is full or the file reached its size "
            f"limit); the write was rolled back and what is stored is intact: {exc}"
        )
    return StoreError(f"SQLite write failed and was rolled back: {exc}")


def _no_room(path: str) -> bool:
    """Whether a write to the database at *path* could not grow a file: its filesystem has
    less than :data:`LOW_ROOM_BYTES` free, or one of its files is that close to this
    process's ``RLIMIT_FSIZE``."""
    if path == ":memory:":
        return False
    try:
        fs = os.statvfs(os.path.dirname(os.path.abspath(path)))
    except OSError:
        return False
    if fs.f_bavail * fs.f_frsize < LOW_ROOM_BYTES:
        return True
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if limit == resource.RLIM_INFINITY:
        return False
    for suffix in _SUFFIXES:
        try:
            size = os.path.getsize(path + suffix)
        except OSError:
            continue
        if size + LOW_ROOM_BYTES > limit:
            return True
    return False
