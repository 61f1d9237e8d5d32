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
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
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
    restore: Callable[[], None] = lambda: None  # noqa: E731  (replaced when the loopback switch is set)
    try:
        if options.ray_address:
            if _on_loopback(options.ray_address):  # a cluster of this machine only (see the module docstring)
                os.environ.update(_LOOPBACK)
                restore = _loopback_in_this_process()
            kwargs["address"] = options.ray_address
            kwargs["runtime_env"] = {"env_vars": forwarded}
        else:
            os.environ.update(_LOOPBACK)  # the cluster's own processes read it when they start
            restore = _loopback_in_this_process()
            path = os.pathsep.join(p for p in sys.path if p)
            kwargs["num_cpus"] = options.workers or os.cpu_count() or 1
            kwargs["runtime_env"] = {"env_vars": {**forwarded, "PYTHONPATH": path, **_LOOPBACK}}
        if options.ray_address:
            check_reachable(options.ray_address)
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
            restore()
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
            ray_logger.setLevel(level)


def _host_port(address: str) -> tuple[str, int] | None:
    """(host, port) of a ``host:port`` address; None for ``auto``, ``ray://...`` and the like."""
    host, sep, port = address.rpartition(":")
    if not sep or "/" in address or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def _on_loopback(address: str) -> bool:
    hp = _host_port(address)
    return hp is not None and (hp[0] in ("localhost", "::1") or hp[0].startswith("127."))


def check_reachable(address: str, timeout_s: float = 10.0) -> None:
    """One :class:`ConfigError` line when nothing answers at ``host:port`` (Ray itself would retry for minutes)."""
    hp = _host_port(address)
    if hp is None:
        return
    try:
        socket.create_connection(hp, timeout=timeout_s).close()
    except OSError as exc:
        raise ConfigError(
            f"no Ray cluster answers at {address} ({exc.strerror or exc}); start one with `ray start --head` "
            "there, or leave run.ray_address unset to start one on this machine"
        ) from None


def _loopback_in_this_process() -> Callable[[], None]:
    """The switch is read when Ray is imported: a Ray imported before this run needs it set too.
    Returns what puts it back."""
    constants: Any = sys.modules.get("ray._private.ray_constants")
    if constants is None or not hasattr(constants, "ENABLE_RAY_CLUSTER"):
        return lambda: None
    before = constants.ENABLE_RAY_CLUSTER
    constants.ENABLE_RAY_CLUSTER = False

    def restore() -> None:
        constants.ENABLE_RAY_CLUSTER = before

    return restore


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
