"""The Python client of a kenning server (``kenning serve``): :class:`Client` and
:class:`AsyncClient`, with :class:`kenning.Memory`'s method names. Needs only httpx."""

from kenning.client.calls import Identity
from kenning.client.client import AsyncClient, Client

__all__ = ["AsyncClient", "Client", "Identity"]
