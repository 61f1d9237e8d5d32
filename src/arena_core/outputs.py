"""Safe output files: one writer per directory (:class:`RunLock`), atomic rewrites, durable
appends, no secrets (:func:`scrub_secrets`, applied BEFORE any truncation, so that a cut never
leaves a fragment of a key the scrubber no longer recognises)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any, NoReturn

from .errors import ConfigError

LOCK_NAME = ".arena.lock"

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]  # no fcntl on Windows: the run lock does without it


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:  # pragma: no cover
        return False
    return True


def _read_lock_info(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _describe(info: dict[str, Any]) -> str:
    started = info.get("started")
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(started)) if isinstance(started, (int, float)) else "?"
    return f"pid {info.get('pid', '?')} on {info.get('host', '?')}, started {when}"


class RunLock:
    """``with RunLock(directory):`` -- this process is the only writer of ``directory``; a second
    live run raises :class:`~arena_core.errors.ConfigError` naming the holder. The lock (pid, host,
    start time) is an ``flock`` on POSIX, dropped by the kernel when its holder dies; elsewhere a
    lock whose pid is dead on this host is taken over."""

    def __init__(self, directory: str | os.PathLike[str]):
        self.directory = Path(directory)
        self.path = self.directory / LOCK_NAME
        self._fd: int | None = None

    def info(self) -> dict[str, Any]:
        return {"pid": os.getpid(), "host": socket.gethostname(), "started": time.time()}

    def acquire(self) -> RunLock:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(
                f"cannot create the output directory {str(self.directory)!r}: {exc.strerror or exc}; choose a writable --out"
            ) from None
        if fcntl is None:  # pragma: no cover
            self._acquire_by_pid()
            return self
        for _ in range(50):
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise ConfigError(
                    f"cannot write the lock {str(self.path)!r}: {exc.strerror or exc}; choose a writable output directory"
                ) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                self._refuse(_read_lock_info(self.path))
            try:  # the holder may have removed the file between our open and our lock
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            held = _read_lock_info(self.path)
            if held and held.get("host") != socket.gethostname() and held.get("pid") is not None:
                # another machine on a shared filesystem, where flock may not reach: trust the file
                os.close(fd)
                raise ConfigError(
                    f"{self.directory} is locked by a run on another machine ({_describe(held)}); "
                    f"if that run is gone, delete {self.path}"
                )
            os.ftruncate(fd, 0)
            os.write(fd, json.dumps(self.info()).encode())
            os.fsync(fd)
            self._fd = fd
            return self
        raise ConfigError(
            f"could not take the lock {self.path}: it keeps changing; is another run starting?"
        )  # pragma: no cover

    def _refuse(self, held: dict[str, Any]) -> NoReturn:
        raise ConfigError(
            f"another run is writing {self.directory} ({_describe(held)}); wait for it, or use another output directory"
        )

    def _acquire_by_pid(self) -> None:  # pragma: no cover - platforms without flock
        for _ in range(3):
            tmp = self.path.with_name(f"{LOCK_NAME}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(self.info()), encoding="utf-8")
            try:
                os.link(tmp, self.path)
                return
            except FileExistsError:
                held = _read_lock_info(self.path)
                if held.get("host") == socket.gethostname() and not _pid_alive(int(held.get("pid") or 0)):
                    self.path.unlink(missing_ok=True)
                    continue
                self._refuse(held)
            finally:
                tmp.unlink(missing_ok=True)
        self._refuse(_read_lock_info(self.path))

    def release(self) -> None:
        if self._fd is not None:
            try:
                self.path.unlink(missing_ok=True)
            finally:
                os.close(self._fd)  # closing drops the flock
                self._fd = None
        elif fcntl is None and _read_lock_info(self.path).get("pid") == os.getpid():  # pragma: no cover
            self.path.unlink(missing_ok=True)

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def atomic_write_text(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the new one, never half:
    a temporary file beside it, fsynced, then renamed over it."""
    atomic_write_bytes(path, text.encode(encoding))


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """:func:`atomic_write_text` for bytes (a PNG)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp makes the file private (0600); give it the mode an ordinary write would
        try:
            mode = os.stat(path).st_mode & 0o7777
        except OSError:
            mode = _new_file_mode()
        if hasattr(os, "fchmod"):
            os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # make the rename durable (best effort: not every platform opens directories)
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def _new_file_mode() -> int:
    """0o666 less this process's umask (read without changing it, where /proc tells it)."""
    with contextlib.suppress(OSError, ValueError), open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("Umask:"):
                return 0o666 & ~int(line.split()[1], 8)
    return 0o644


def append_jsonl(fh: IO[str], obj: Any) -> None:
    """Append ``obj`` (a pydantic model or JSON-able data) as one line; flush and fsync."""
    append_jsonl_many(fh, (obj,))


def append_jsonl_many(fh: IO[str], objs: Iterable[Any]) -> None:
    """:func:`append_jsonl` for several objects at once: one line each, one flush and fsync
    (durable batch appends: the matrix study writes a batch of trials per fsync)."""
    for obj in objs:
        if hasattr(obj, "model_dump_json"):
            fh.write(obj.model_dump_json() + "\n")
        else:
            fh.write(json.dumps(obj, separators=(",", ":"), ensure_ascii=False) + "\n")
    fh.flush()
    os.fsync(fh.fileno())


# ---------------------------------------------------------------------- secrets
_PATTERNS = [
    re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}"),  # OpenAI-style keys (sk-..., sk-proj-...)
    re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=\-]{6,}"),  # Authorization header values
    re.compile(
        r"(?i)\b((?:api[_-]?key|access[_-]?token|secret|password|authorization)\s*[\"']?\s*[:=]\s*[\"']?)(?!(?:bearer|basic)\s)([^\s\"',;&}]{4,})"
    ),
    re.compile(r"\b(?:ghp|gho|github_pat|xox[abp]|hf)_[A-Za-z0-9_]{8,}"),  # GitHub, Slack, Hugging Face tokens
    re.compile(r"\bAIza[A-Za-z0-9_\-]{20,}"),  # Google API keys
]
_SECRET_ENV = re.compile(r"(?i)(api[_-]?key|token|secret|password)")
REDACTED = "***"


def env_secrets() -> list[str]:
    """Values of environment variables whose names look like credentials (``*_API_KEY``,
    ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``), 8 characters or longer."""
    return [v for k, v in os.environ.items() if _SECRET_ENV.search(k) and len(v) >= 8]


def scrub_secrets(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with API keys replaced by ``***``: the explicit ``secrets``, the values of
    credential-like environment variables, and key-shaped strings (``sk-...``, ``Bearer ...``,
    ``api_key=...``). Apply before truncating."""
    if not text:
        return text
    values = {s for s in secrets if s and len(s) >= 4} | set(env_secrets())
    for value in sorted(values, key=len, reverse=True):
        text = text.replace(value, REDACTED)
    text = _PATTERNS[0].sub(REDACTED, text)
    text = _PATTERNS[1].sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    text = _PATTERNS[2].sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    text = _PATTERNS[3].sub(REDACTED, text)
    text = _PATTERNS[4].sub(REDACTED, text)
    return text


def scrub_and_cut(text: str, limit: int, secrets: Iterable[str | None] = ()) -> str:
    """:func:`scrub_secrets`, then cut to ``limit`` characters (an ellipsis marks the cut)."""
    text = scrub_secrets(text, secrets)
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"
