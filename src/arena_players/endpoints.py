"""One limit on the requests in flight to a provider endpoint (base URL + model) across a whole run:
every player object, thread and process of a tournament, a study or a training run.

A limit of ``n`` is ``n`` slot files in a directory shared by the run; a request holds one slot
(an ``flock``, which the kernel drops if its holder dies) while it is on the wire, and waits for
a free one otherwise. The directory is ``$ARENA_ENDPOINT_SLOTS``; the first player of a process
without it creates one and exports it, so the worker processes the run starts later (a process
pool, a Ray cluster on this machine) inherit it and share the limit. Players of one endpoint
with different limits share the slots: at most the largest limit is in flight, each player
within its own. On a multi-machine Ray cluster each machine has its own slots (see
docs/tournaments.md). Where ``flock`` does not exist (Windows) the limit holds per process.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]  # no fcntl on Windows: the limit holds per process

#: the environment variable naming the run's slot directory (inherited by the run's workers)
SLOTS_ENV = "ARENA_ENDPOINT_SLOTS"
_lock = threading.Lock()
_local_gates: dict[tuple[str, int], threading.BoundedSemaphore] = {}


def slots_dir() -> Path:
    """The run's slot directory: ``$ARENA_ENDPOINT_SLOTS``, or a new one exported there (and
    removed when this process exits) for this process and the processes it starts."""
    with _lock:
        named = os.environ.get(SLOTS_ENV)
        if named:
            path = Path(named)
            path.mkdir(parents=True, exist_ok=True)
            return path
        made = tempfile.mkdtemp(prefix="arena-endpoint-slots-")
        os.environ[SLOTS_ENV] = made
        atexit.register(_remove_if_owner, made, os.getpid())
        return Path(made)


def _remove_if_owner(path: str, pid: int) -> None:
    if os.getpid() == pid:  # a forked worker exits through atexit too: only the creator removes it
        shutil.rmtree(path, ignore_errors=True)


def endpoint_key(base_url: str, model: str) -> str:
    """A file-name-safe key of an endpoint: the base URL (without a trailing slash) and the model."""
    return hashlib.sha256(f"{base_url.rstrip('/')}\n{model}".encode()).hexdigest()[:24]


class EndpointSlots:
    """At most ``limit`` requests of this player in flight to ``(base_url, model)``, and at most the
    largest limit of any player of that endpoint across the run: ``with slots.hold(): post(...)``."""

    def __init__(self, base_url: str, model: str, limit: int, *, poll_s: float = 0.002):
        if limit < 1:
            raise ValueError(f"a concurrency limit is at least 1, got {limit}")
        self.key = endpoint_key(base_url, model)
        self.limit = int(limit)
        self._poll_s = poll_s
        self._dir = slots_dir() if fcntl is not None else None
        with _lock:
            self._gate = _local_gates.setdefault((self.key, self.limit), threading.BoundedSemaphore(self.limit))

    @contextlib.contextmanager
    def hold(self) -> Iterator[int]:
        """Hold one slot while the block runs (waiting for a free one first); yields its index."""
        with self._gate:  # this process's threads queue here, not on the files
            if self._dir is None:  # pragma: no cover - no flock
                yield 0
                return
            fd, index = self._take()
            try:
                yield index
            finally:
                os.close(fd)  # closing drops the lock

    def _take(self) -> tuple[int, int]:
        assert fcntl is not None and self._dir is not None  # checked by hold
        start = (threading.get_ident() ^ os.getpid()) % self.limit  # spread first tries over the slots
        wait = self._poll_s
        while True:
            for k in range(self.limit):
                index = (start + k) % self.limit
                fd = os.open(self._dir / f"{self.key}-{index}.slot", os.O_RDWR | os.O_CREAT, 0o600)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    os.close(fd)
                    continue
                return fd, index
            time.sleep(wait)
            wait = min(wait * 2, 0.01)


def _forget_gates() -> None:
    _local_gates.clear()  # a forked child starts with free gates, whatever its parent's threads held


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_gates)
