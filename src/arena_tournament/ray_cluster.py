"""The Ray cluster a tournament plays on: an existing one (``run.ray_address``), or one started
for the run on this machine only.

A cluster the run starts binds every server to 127.0.0.1 (Ray would otherwise listen on the
machine's network address: it rewrites a loopback node address to the network one unless its
``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER`` switch is off, which this module turns off for the cluster's
processes); its workers get this process's ``PYTHONPATH`` and ``ARENA_*`` variables (the endpoint
slots of :mod:`arena_players.endpoints`); Ray's own log lines follow ``quiet``; and it goes down
with the run: :func:`connected` shuts it down on every exit path, and a reaper process
(:mod:`.ray_reaper`) kills what is left of it if the driver is killed outright.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

from arena_core.errors import ConfigError

from .config import RunOptions

ray: Any = None
#: a task's worker or node died: infrastructure, not the player (see backends.Replays)
DEATHS: tuple[type[BaseException], ...] = ()
try:
    ray = importlib.import_module("ray")
    DEATHS = tuple(
        getattr(ray.exceptions, name)
        for name in ("WorkerCrashedError", "NodeDiedError", "ObjectLostError", "OwnerDiedError")
        if hasattr(ray.exceptions, name)
    )
except ImportError:  # pragma: no cover - Ray is an extra
    pass

_LOOPBACK = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}  # Ray's switch: keep a new cluster on loopback


@contextlib.contextmanager
def connected(options: RunOptions, *, quiet: bool = False) -> Iterator[ModuleType]:
    """Ray, connected to ``options.ray_address`` or to a new loopback cluster of ``options.workers``
    CPUs; the connection (and a cluster started here) ends with the block."""
    if ray is None:
        raise ConfigError("backend 'ray' needs Ray; fix: pip install 'turn-arena-core[ray]'")
    if ray.is_initialized():  # the caller's own Ray session: use it, leave it running
        yield ray
        return
    ray_logger = logging.getLogger("ray")
    level = ray_logger.level
    if quiet:
        ray_logger.setLevel(logging.CRITICAL)
    forwarded = {k: v for k, v in os.environ.items() if k.startswith("ARENA_")}
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": not quiet, "configure_logging": False}
    saved = {k: os.environ.get(k) for k in _LOOPBACK}
    reaper: subprocess.Popen[bytes] | None = None
    try:
        if options.ray_address:
            kwargs["address"] = options.ray_address
            kwargs["runtime_env"] = {"env_vars": forwarded}
        else:
            os.environ.update(_LOOPBACK)  # the cluster's own processes read it when they start
            _loopback_in_this_process()
            path = os.pathsep.join(p for p in sys.path if p)
            kwargs["num_cpus"] = options.workers or os.cpu_count() or 1
            kwargs["runtime_env"] = {"env_vars": {**forwarded, "PYTHONPATH": path, **_LOOPBACK}}
        ray.init(**kwargs)
        if not options.ray_address:
            reaper = _start_reaper()
        yield ray
    finally:
        try:
            ray.shutdown()
        finally:
            if reaper is not None:
                _stop_reaper(reaper)
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
            ray_logger.setLevel(level)


def _loopback_in_this_process() -> None:
    """The switch is read when Ray is imported: a Ray imported before this run needs it set too."""
    constants: Any = sys.modules.get("ray._private.ray_constants")
    if constants is not None and hasattr(constants, "ENABLE_RAY_CLUSTER"):
        constants.ENABLE_RAY_CLUSTER = False


def _start_reaper() -> subprocess.Popen[bytes] | None:
    """The reaper of this driver's Ray processes (Linux: it reads /proc); None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    return subprocess.Popen(
        [sys.executable, "-m", "arena_tournament.ray_reaper", str(os.getpid())],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        close_fds=True,
    )


def _stop_reaper(reaper: subprocess.Popen[bytes]) -> None:
    """End of the run: the reaper kills any Ray process ``ray.shutdown`` left, then exits."""
    try:
        if reaper.stdin is not None:
            reaper.stdin.close()
        reaper.wait(timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        reaper.kill()
