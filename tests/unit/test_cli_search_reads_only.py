"""`kenning search` reads: it opens the memory with fact extraction off, so a cold search
does not start reading the store's unread events with spaCy (at 100k events that took a
search process to 1.2 GB)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kenning.cli import commands
from kenning.cli.main import main
from kenning.settings import Settings
from kenning.store.sqlite.store import SQLiteStore


class _Opened(Exception):
    pass


def test_search_opens_the_memory_without_fact_extraction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "m.db"
    SQLiteStore(db).close()
    seen: list[Settings | None] = []

    def opened(path: Any, *, settings: Settings | None = None, **_: Any) -> Any:
        seen.append(settings)
        raise _Opened

    monkeypatch.setattr(commands.Memory, "open", opened)
    with pytest.raises(_Opened):
        main(["search", "refund", "--db", str(db), "--tenant", "acme"])
    [settings] = seen
    assert settings is not None and settings.longterm.extract is False
    assert settings.ann == Settings().ann  # everything else as a default memory
