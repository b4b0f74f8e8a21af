"""The PostgreSQL backend (``pip install 'kenning[postgres]'``): see :mod:`.store`.

This package's own module imports no driver, so telling a URL from a file path costs nothing.
"""

from __future__ import annotations

__all__ = ["is_postgres_url"]


def is_postgres_url(location: object) -> bool:
    """True if *location* names a PostgreSQL database (``postgresql://`` or ``postgres://``).

    >>> is_postgres_url("postgresql://kenning@db.internal/kenning"), is_postgres_url("m.db")
    (True, False)
    """
    return isinstance(location, str) and location.startswith(("postgresql://", "postgres://"))
