"""pgvector's ``vector`` type on psycopg connections: numpy float32 arrays in and out.

Vectors travel in pgvector's binary wire format (a dimension, a reserved word, then big-endian
float32 values) both ways, without a Python float per value; the text form, which pgvector
parses back to exactly the same float32 values, serves text-format COPY and results.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg
from psycopg.adapt import Dumper, Loader
from psycopg.pq import Format
from psycopg.types import TypeInfo

from kenning.errors import StoreError

__all__ = ["register_vector", "vector_text"]

F32 = npt.NDArray[np.float32]


def vector_text(vec: npt.NDArray[Any]) -> str:
    """pgvector's text form of a vector (repr of each value: float32 round-trips exactly)."""
    return "[" + ",".join(map(repr, np.asarray(vec, dtype=np.float32).tolist())) + "]"


class _VectorBinaryLoader(Loader):
    format = Format.BINARY

    def load(self, data: Any) -> F32:
        raw = np.frombuffer(data, dtype=">f4", offset=4)
        return raw.astype(np.float32)


class _VectorTextLoader(Loader):
    def load(self, data: Any) -> F32:
        text = bytes(data).decode("ascii").strip("[]")
        return np.array(text.split(",") if text else [], dtype=np.float32)


def register_vector(conn: psycopg.Connection[Any]) -> None:
    """Teach *conn* pgvector's type: numpy arrays are sent as vectors, vectors come back as
    float32 arrays. The extension must exist in the connection's database."""
    info = TypeInfo.fetch(conn, "vector")
    if info is None:
        raise StoreError("the pgvector extension is not enabled in this database")
    oid = info.oid
    info.register(conn)  # COPY's set_types finds the type by name

    class VectorDumper(Dumper):
        def dump(self, obj: Any) -> bytes:
            return vector_text(obj).encode("ascii")

    class VectorBinaryDumper(Dumper):
        # pgvector's wire format: dimension, a reserved word, big-endian float32 values.
        format = Format.BINARY

        def dump(self, obj: Any) -> bytes:
            arr = np.asarray(obj, dtype=">f4")
            return struct.pack(">HH", arr.shape[0], 0) + arr.tobytes()

    VectorDumper.oid = oid
    VectorBinaryDumper.oid = oid
    conn.adapters.register_dumper(np.ndarray, VectorDumper)
    conn.adapters.register_dumper(np.ndarray, VectorBinaryDumper)
    conn.adapters.register_loader(oid, _VectorTextLoader)
    conn.adapters.register_loader(oid, _VectorBinaryLoader)
