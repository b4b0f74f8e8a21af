"""`kenning bench load` refuses a port something already listens on (a server left running
would answer in place of the one the bench starts), and takes one that is free."""

from __future__ import annotations

import socket

import pytest

from kenning.bench.load import check_port_free
from kenning.errors import InvalidInput


def test_a_port_in_use_is_refused_and_a_free_one_taken() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        with pytest.raises(InvalidInput, match=f"port {port} .* in use"):
            check_port_free(port)
    check_port_free(port)  # closed: free again at once
