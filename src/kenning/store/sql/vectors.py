"""The embedding model a store's vectors belong to, and vectors checked before they are
stored, on every SQL backend."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt

from kenning.errors import InvalidInput, ModelMismatch
from kenning.store.records import ModelInfo
from kenning.store.sql.dialect import Dialect, Tx

__all__ = ["check_model", "checked_vector", "claim_model", "stored_model"]


def stored_model(tx: Tx) -> ModelInfo | None:
    """The embedding model the database's vectors belong to (None before the first vector)."""
    row = tx.execute(
        "SELECT model_id, dimension, normalized FROM embedding_model WHERE id = 1"
    ).fetchone()
    if row is None:
        return None
    return ModelInfo(model_id=row[0], dimension=int(row[1]), normalized=bool(row[2]))


def claim_model(tx: Tx, d: Dialect, model: ModelInfo) -> ModelInfo | None:
    """Make *model* the store's if it has none yet; return the store's model."""
    tx.execute(
        "INSERT INTO embedding_model (id, model_id, dimension, normalized, created_at)"
        " VALUES (1, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
        (model.model_id, model.dimension, model.normalized, d.time(datetime.now(UTC))),
    )
    return stored_model(tx)


def check_model(tx: Tx, d: Dialect, model: ModelInfo, *, claim: bool) -> None:
    """ModelMismatch if the store holds vectors of another model; with *claim*, a store
    without vectors yet takes *model* as its own."""
    stored = claim_model(tx, d, model) if claim else stored_model(tx)
    if stored is not None and stored != model:
        raise ModelMismatch(
            f"this store holds vectors of {stored.model_id} ({stored.dimension}-d); "
            f"refusing {model.model_id} ({model.dimension}-d). Use the same embedder or a "
            "new database"
        )


def checked_vector(
    vec: npt.NDArray[np.float32], model: ModelInfo | None, digest: str
) -> npt.NDArray[np.float32]:
    """*vec* as contiguous float32; InvalidInput if its shape is not *model*'s or it holds a
    NaN or an infinity."""
    arr = np.ascontiguousarray(vec, dtype=np.float32)
    if model is not None and arr.shape != (model.dimension,):
        raise InvalidInput(
            f"vector for {digest} has shape {arr.shape}, expected ({model.dimension},)"
        )
    if not np.isfinite(arr).all():
        raise InvalidInput(f"vector for {digest} holds a NaN or an infinity")
    return arr
