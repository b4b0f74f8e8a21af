"""The PostgreSQL backend (``pip install 'kenning[postgres]'``): see :mod:`.store`.

This package's own module imports no driver, so telling a URL from a file path costs nothing.
"""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["is_postgres_url", "redact"]


def is_postgres_url(location: object) -> bool:
    """True if *location* names a PostgreSQL database (``postgresql://`` or ``postgres://``).

    >>> is_postgres_url("postgresql://kenning@db.internal/kenning"), is_postgres_url("m.db")
    (True, False)
    """
    return isinstance(location, str) and location.startswith(("postgresql://", "postgres://"))


def redact(url: str) -> str:
    """*url* without its password, for messages and reports.

    >>> redact("postgresql://kenning:secret@db:5432/kenning")
    'postgresql://kenning:***@db:5432/kenning'
    """
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return parts._replace(netloc=netloc).geturl()
