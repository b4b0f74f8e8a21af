"""``kenning`` as its own processes, for tests of what a deployment runs: the command line, a
free port, an environment without the caller's admin token, and ``kenning serve`` started,
awaited until ready and stopped (SIGINT, then kill)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

__all__ = ["Serving", "free_port", "kenning", "kenning_env", "serving"]


def kenning(*args: str) -> list[str]:
    """The command line running ``kenning *args`` with this interpreter."""
    return [sys.executable, "-m", "kenning.cli.main", *args]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def kenning_env(**extra: str) -> dict[str, str]:
    """This process's environment for a child kenning: offline, no telemetry, and no admin
    token unless *extra* names one."""
    env = dict(os.environ, ORT_DISABLE_TELEMETRY="1", HF_HUB_OFFLINE="1", **extra)
    if "KENNING_ADMIN_TOKEN" not in extra:
        env.pop("KENNING_ADMIN_TOKEN", None)
    return env


@dataclass
class Serving:
    url: str
    port: int
    process: subprocess.Popen[bytes]
    log: Path


@contextmanager
def serving(
    *args: str,
    log: Path,
    env: dict[str, str] | None = None,
    preexec_fn: Callable[[], None] | None = None,
    ready_s: float = 60,
) -> Iterator[Serving]:
    """``kenning serve *args`` on a free port of 127.0.0.1 until the block ends, its output in
    *log*; ready once ``/readyz`` answers 200 (a test fails, showing the log, if it exits or
    takes over *ready_s*)."""
    port = free_port()
    with log.open("w") as out:
        process = subprocess.Popen(
            kenning("serve", *args, "--port", str(port)), stdout=out, stderr=subprocess.STDOUT,
            env=env if env is not None else kenning_env(), preexec_fn=preexec_fn,
        )  # fmt: skip
        served = Serving(f"http://127.0.0.1:{port}", port, process, log)
        try:
            _wait_ready(served, ready_s)
            yield served
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_ready(served: Serving, ready_s: float) -> None:
    deadline = time.monotonic() + ready_s
    while True:
        assert served.process.poll() is None, served.log.read_text()
        try:
            if httpx.get(f"{served.url}/readyz").status_code == 200:
                return
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, f"the server did not start: {served.log.read_text()}"
        time.sleep(0.1)
