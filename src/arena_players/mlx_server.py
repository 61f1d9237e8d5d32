"""Start a local ``mlx_lm.server`` (OpenAI-compatible) on 127.0.0.1 and wait until it is healthy.

Used by the tests and ``bench/matrix_bench.py --mlx-server`` with the tiny offline model
(:func:`arena_players.tiny_model.ensure_tiny_model`); no download (``HF_HUB_OFFLINE=1``)::

    with mlx_server() as (url, model):
        OpenAIPlayer(base_url=url, model=model, api_key_env="", temperature=1.0)
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["free_port", "mlx_server"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def mlx_server(
    model: str | os.PathLike[str] | None = None, *, startup_s: float = 90.0, extra_args: tuple[str, ...] = ()
) -> Iterator[tuple[str, str]]:
    """Run ``python -m mlx_lm.server`` for ``model`` (default: the tiny offline model) and yield
    ``(base_url, model)`` once ``/health`` answers ok; the server (only the process started
    here, by its PID) is stopped on exit. Raises RuntimeError if it exits or is not healthy
    within ``startup_s``."""
    if model is None:
        from .tiny_model import ensure_tiny_model

        model = ensure_tiny_model()
    model = str(model)
    port = free_port()
    # the server logs every request: its stderr goes to a file, never an unread pipe (a full pipe
    # blocks the server mid-request once ~64 KiB of log has piled up)
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mlx_lm.server",
            "--model",
            model,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            *extra_args,
        ],
        stdout=subprocess.DEVNULL,
        stderr=log,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    try:
        deadline = time.monotonic() + startup_s
        while True:
            if proc.poll() is not None:
                log.seek(0)
                raise RuntimeError(f"mlx_lm.server exited: {log.read().decode(errors='replace')[-2000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as r:
                    if json.loads(r.read()).get("status") == "ok":
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"mlx_lm.server did not become healthy in {startup_s:.0f} s")
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/v1", model
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
