"""kenning as a service: the REST API, its auth and limits, metrics, and the MCP endpoint.

Needs the ``server`` extra (``pip install 'kenning[server]'``). ``kenning serve`` runs it;
:func:`create_app` builds the ASGI app for tests or another ASGI server.
"""

from kenning.server.app import create_app
from kenning.server.config import ServerSettings

__all__ = ["ServerSettings", "create_app"]
