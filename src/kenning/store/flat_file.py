"""A flat file of named numpy arrays behind a JSON header, read back memory-mapped.

The header names each array's dtype, shape and offset (64-byte aligned), the file's total size
and a CRC-32 over the header's own values and every array not named as *unchecked*. Reading
maps the file copy-on-write (``mmap.ACCESS_COPY``): the arrays are writable, a write copies
only the page it touches, and pages never read are never loaded. Large arrays may be left out
of the checksum so that opening the file does not read them; a reader checks those some
other way (e.g. a sample of rows against their fingerprints).

A file is written to a temporary name beside its place, flushed to disk, and then renamed
over it: a crash leaves the old file or the new one, never a torn one. Anything that does not
read back as written (another format, a short file, a checksum that differs) raises
:class:`FlatFileError`, and the caller rebuilds instead.

Files that name each other (a snapshot and its graph) are put in place and read under one
advisory lock on their folder (:func:`folder_lock`): writers exclusive, readers shared, so a
reader in any process sees a pair that was put in place together. A temporary file carries
its writer's process id, so one left by a process that died can be told and removed
(:func:`left_by_dead_processes`).
"""

from __future__ import annotations

import fcntl
import json
import mmap
import os
import uuid
import zlib
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "FlatFileError", "MappedArrays", "folder_lock", "left_by_dead_processes", "read_flat",
    "temporary_name", "write_flat",
]  # fmt: skip

_MAGIC = b"KENNING-FLAT\x01\n"
_ALIGN = 64

Arrays = Mapping[str, npt.NDArray[Any]]


class FlatFileError(ValueError):
    """The file is not a complete, unchanged flat file of this format."""


def _aligned(at: int) -> int:
    return (at + _ALIGN - 1) // _ALIGN * _ALIGN


def _layout(arrays: Arrays, start: int) -> tuple[list[dict[str, Any]], int]:
    sections, at = [], start
    for name, arr in arrays.items():
        at = _aligned(at)
        sections.append(
            {"name": name, "dtype": arr.dtype.str, "shape": list(arr.shape), "offset": at}
        )
        at += arr.nbytes
    return sections, at


def _bytes(arr: npt.NDArray[Any]) -> memoryview:
    return np.ascontiguousarray(arr).reshape(-1).view(np.uint8).data


def _crc(meta: Mapping[str, Any], arrays: Arrays, unchecked: Collection[str]) -> int:
    crc = zlib.crc32(json.dumps(meta, sort_keys=True).encode())
    for name, arr in arrays.items():
        if name not in unchecked:
            crc = zlib.crc32(_bytes(arr), crc)
    return crc


def write_flat(
    path: Path, meta: Mapping[str, Any], arrays: Arrays, *, unchecked: Collection[str] = ()
) -> Path:
    """Write *meta* (JSON values) and *arrays* to a temporary file beside *path*, flushed to
    disk; return it (the caller renames it into place, or removes it)."""
    crc = _crc(meta, arrays, unchecked)
    base = {"meta": meta, "crc": crc, "unchecked": sorted(unchecked)}
    start = 0
    while True:  # the header names the offsets, which start past it: until both agree
        sections, size = _layout(arrays, start)
        header = json.dumps({**base, "sections": sections, "size": size}).encode()
        if len(_MAGIC) + 8 + len(header) <= start:
            break
        start = _aligned(len(_MAGIC) + 8 + len(header) + 256)
    tmp = temporary_name(path)
    try:
        with open(tmp, "wb") as out:
            out.write(_MAGIC + len(header).to_bytes(8, "little") + header)
            for section, arr in zip(sections, arrays.values(), strict=True):
                out.write(b"\0" * (section["offset"] - out.tell()))
                out.write(_bytes(arr))
            out.flush()
            os.fsync(out.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


class MappedArrays(dict[str, npt.NDArray[Any]]):
    """A flat file's arrays by name, mapped, and a way to read a few rows of one without the
    mapping.

    A page read through a mapping stays in the process's memory until it exits, and the
    kernel may map a whole large folio of the page cache for one fault (on a file its writer
    has just written, reading 256 rows of a 147 MiB matrix mapped nearly all of it): rows
    read a few at a time, such as a sample checked at load or a search's candidates, are
    read with ``pread`` instead. Only from the file that was mapped: where another process
    has since put a new file in its place (files are replaced by renaming, never changed),
    the rows are read through the mapping. No descriptor is held between reads (a process
    may hold many tenants' snapshots).
    """

    def __init__(
        self, path: Path, arrays: dict[str, npt.NDArray[Any]], offsets: dict[str, int],
        identity: tuple[int, int],
    ) -> None:  # fmt: skip
        super().__init__(arrays)
        self.path = path
        self._offsets = offsets
        self._identity = identity  # (st_dev, st_ino) of the file that was mapped

    def rows(self, name: str, rows: npt.NDArray[np.int64]) -> npt.NDArray[Any]:
        """Rows *rows* of the array *name* (its first axis), read from the file."""
        whole = self[name]
        if rows.size and (int(rows.min()) < 0 or int(rows.max()) >= whole.shape[0]):
            raise IndexError(f"a row of {name!r} is out of range")
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return np.array(whole[rows])  # removed since: the mapping still holds it
        try:
            stat = os.fstat(fd)
            if (stat.st_dev, stat.st_ino) != self._identity:
                return np.array(whole[rows])  # another file put in its place
            return self._pread(fd, name, rows)
        finally:
            os.close(fd)

    def _pread(self, fd: int, name: str, rows: npt.NDArray[np.int64]) -> npt.NDArray[Any]:
        whole = self[name]
        size = whole.dtype.itemsize * int(np.prod(whole.shape[1:], dtype=np.int64))
        out = np.empty((len(rows), *whole.shape[1:]), dtype=whole.dtype)
        for i, row in enumerate(rows.tolist()):
            data = os.pread(fd, size, self._offsets[name] + row * size)
            if len(data) != size:
                raise FlatFileError("flat file is truncated")
            out[i] = np.frombuffer(data, dtype=whole.dtype).reshape(whole.shape[1:])
        return out


def read_flat(path: Path) -> tuple[dict[str, Any], MappedArrays]:
    """The meta and the arrays of a flat file, mapped copy-on-write; raises
    :class:`FlatFileError` for a file that is not whole and unchanged (OSError if it cannot
    be opened)."""
    with open(path, "rb") as f:
        stat = os.fstat(f.fileno())
        if stat.st_size < len(_MAGIC) + 8:
            raise FlatFileError("flat file is truncated")
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
        meta, arrays, offsets = _mapped_arrays(stat.st_size, mapped, f.fileno())
    return meta, MappedArrays(path, arrays, offsets, (stat.st_dev, stat.st_ino))


def _mapped_arrays(
    size: int, mapped: mmap.mmap, fd: int
) -> tuple[dict[str, Any], dict[str, npt.NDArray[Any]], dict[str, int]]:
    """The meta, arrays and their offsets of *mapped* (*fd*: the file it maps, to check)."""
    mapped.madvise(mmap.MADV_RANDOM)
    if mapped[: len(_MAGIC)] != _MAGIC:
        raise FlatFileError("not a kenning flat file of this format")
    at = len(_MAGIC)
    length = int.from_bytes(mapped[at : at + 8], "little")
    try:
        header = json.loads(mapped[at + 8 : at + 8 + length])
        sections, meta = header["sections"], header["meta"]
    except (ValueError, KeyError, TypeError) as exc:
        raise FlatFileError(f"unreadable flat file header: {exc}") from None
    if header.get("size") != size:
        raise FlatFileError(f"flat file is {size} bytes, its header says {header.get('size')}")
    arrays = {s["name"]: _section(mapped, s, size) for s in sections}
    if _file_crc(fd, meta, sections, header["unchecked"]) != header["crc"]:
        raise FlatFileError("flat file checksum differs")
    return meta, arrays, {s["name"]: int(s["offset"]) for s in sections}


def _file_crc(
    fd: int, meta: Mapping[str, Any], sections: list[dict[str, Any]], unchecked: list[str]
) -> int:
    """The checksum :func:`_crc` gave when written, of the mapped file's bytes: read, not
    mapped (pages read through the mapping would count in the process's memory until it
    exits)."""
    crc = zlib.crc32(json.dumps(meta, sort_keys=True).encode())
    buffer = memoryview(bytearray(1 << 20))
    for section in sections:
        if section["name"] in unchecked:
            continue
        count = int(np.prod(section["shape"])) if section["shape"] else 1
        left = count * np.dtype(section["dtype"]).itemsize
        at = int(section["offset"])
        while left:
            got = os.preadv(fd, [buffer[: min(left, len(buffer))]], at)
            if not got:
                raise FlatFileError("flat file is truncated")
            crc = zlib.crc32(buffer[:got], crc)
            left, at = left - got, at + got
    return crc


def _section(mapped: mmap.mmap, section: Mapping[str, Any], size: int) -> npt.NDArray[Any]:
    dtype, shape = np.dtype(section["dtype"]), tuple(int(d) for d in section["shape"])
    count = int(np.prod(shape)) if shape else 1
    offset = int(section["offset"])
    if offset < 0 or offset + count * dtype.itemsize > size:
        raise FlatFileError(f"flat file section {section['name']!r} runs past its end")
    return np.frombuffer(mapped, dtype=dtype, count=count, offset=offset).reshape(shape)


def temporary_name(path: Path, suffix: str = "tmp") -> Path:
    """A name beside *path* that no other writer uses: ``<name>.<pid>-<random>.<suffix>``."""
    return path.with_name(f"{path.name}.{os.getpid()}-{uuid.uuid4().hex}.{suffix}")


def _writer_pid(name: str) -> int | None:
    """The process id a temporary file's name carries (None: not one of ours)."""
    parts = name.split(".")
    if len(parts) < 3 or parts[-1] != "tmp":
        return None
    for part in reversed(parts[:-1]):
        pid, dash, _ = part.partition("-")
        if dash and pid.isdigit():
            return int(pid)
    return None


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: running
    return True


def left_by_dead_processes(folder: Path) -> list[Path]:
    """Temporary files in *folder* whose writer is no longer running (a process killed
    while it wrote): nothing will rename them into place."""
    try:
        names = [entry.name for entry in os.scandir(folder) if entry.is_file()]
    except FileNotFoundError:
        return []
    found = []
    for name in names:
        pid = _writer_pid(name)
        if pid is not None and pid != os.getpid() and not _running(pid):
            found.append(folder / name)
    return found


@contextmanager
def folder_lock(folder: Path, *, shared: bool = False) -> Iterator[None]:
    """Hold an advisory lock on *folder* (``flock`` on its ``.lock`` file): exclusive to put
    files that name each other in place, shared to read them. The lock belongs to an open
    file, so two stores of one process exclude each other as two processes do."""
    folder.mkdir(exist_ok=True)
    fd = os.open(folder / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the file releases its lock
