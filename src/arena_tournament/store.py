"""The files of one tournament run, written only here: ``results.jsonl`` (the schedule line, then
one line per game), ``records.jsonl.gz`` (each game's episode, just before its line) and
``attempts.jsonl`` (the attempts a provider outage cut short, each with its evidence).

:class:`RunFiles` opens them for a run: it cuts what a kill left half-written, refuses a file of
another schedule, settings or entrants, and says which games are recorded and how often each was
cut short. Every write is flushed and fsynced before the next game is asked for; a full disk is
one :class:`DiskFull` line that names the file and says to free space and run the same command.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO

from arena_core.errors import ArenaError, ConfigError
from arena_core.outputs import append_jsonl

from .identity import identity_change
from .records import RECORDS_NAME, RecordsFile
from .results import GameResult, ResultsFile, ScheduleLine
from .schedule import ScheduledGame

ATTEMPTS_NAME = "attempts.jsonl"
#: errors that mean "the disk is full" (no space, or over a quota)
_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}


class DiskFull(ArenaError):
    """A write failed for want of space; everything written before it stays, and the same command resumes."""


class RunFiles:
    """``results.jsonl``, ``records.jsonl.gz`` and ``attempts.jsonl`` of one run, open for appending
    (``with RunFiles(path, line) as files:``)."""

    def __init__(self, path: Path, line: ScheduleLine, games: Sequence[ScheduledGame]):
        self.path = path
        self.line = line
        self.games = list(games)  # the schedule's games
        self._results = ResultsFile(path)
        self._records = RecordsFile(path.parent / RECORDS_NAME)
        self._attempts_path = path.parent / ATTEMPTS_NAME
        self.recorded: list[GameResult] = []
        self.attempts: dict[str, list[str]] = {}  # game key -> the evidence of each attempt an outage cut short
        self._fh: IO[str] | None = None
        self._rfh: IO[bytes] | None = None
        self._afh: IO[str] | None = None

    def __enter__(self) -> RunFiles:
        self._guard(self.path, self._open)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        for fh in (self._fh, self._rfh, self._afh):
            if fh is not None:
                try:
                    fh.close()
                except OSError:  # a full disk may refuse the last flush: the lines that count were fsynced
                    pass

    # -------------------------------------------------------------- opening
    def _open(self) -> None:
        self._results.drop_torn_tail()
        header, self.recorded = self._results.read()
        if header is not None:
            self._check(header)
        self._fh = self._results.open_for_append()
        self._records.drop_torn_tail()
        self._rfh = self._records.open_for_append()
        if header is None:
            append_jsonl(self._fh, self.line)
        self._read_attempts()

    def _check(self, header: ScheduleLine) -> None:
        line, path = self.line, self.path
        if header.schedule != line.schedule or header.settings != line.settings:
            raise ConfigError(
                f"{path} holds results of a different schedule or settings; use another output directory "
                "(or delete the file to start over)"
            )
        if header.format != line.format:
            raise ConfigError(
                f"{path} was written in results format {header.format}; finish it with the arena that wrote it, or use another output directory"
            )
        changed = identity_change(header.identities, line.identities) if header.identities != line.identities else None
        if changed:
            raise ConfigError(
                f"{path}: {changed}; a resumed run must play the same entrants: use another output directory"
            )
        stray = {g.key for g in self.recorded} - {g.key for g in self.games}
        if stray:
            raise ConfigError(
                f"{path} holds games not in the schedule (e.g. {sorted(stray)[0]!r}); the file was edited or mixed"
            )

    def _read_attempts(self) -> None:
        """The attempts log (a torn last line, left by a kill, is cut)."""
        path = self._attempts_path
        if path.exists():
            raw = path.read_bytes()
            whole = raw[: raw.rfind(b"\n") + 1]
            if len(whole) != len(raw):
                with open(path, "rb+") as fh:
                    fh.truncate(len(whole))
            for n, text in enumerate(whole.decode("utf-8").splitlines(), 1):
                try:
                    attempt = GameResult.model_validate_json(text)
                except ValueError:
                    raise ConfigError(f"{path}:{n}: not an attempt line; the file is damaged") from None
                self.attempts.setdefault(attempt.key, []).append(_evidence(attempt))
        self._afh = open(path, "a", encoding="utf-8")

    # -------------------------------------------------------------- writing
    def write(self, result: GameResult, record: str | None) -> None:
        """A game's record, then its line (fsynced; a kill between the two leaves a record
        without a line, which readers ignore and the game is played again)."""

        def both() -> None:
            assert self._fh is not None and self._rfh is not None  # opened by __enter__
            if record is not None:
                RecordsFile.append(self._rfh, record)
            append_jsonl(self._fh, result)

        self._guard(self.path, both)

    def write_attempt(self, result: GameResult) -> list[str]:
        """An attempt an outage cut short; returns the evidence of every such attempt of its game."""

        def one() -> None:
            assert self._afh is not None  # opened by __enter__
            append_jsonl(self._afh, result)

        self._guard(self._attempts_path, one)
        self.attempts.setdefault(result.key, []).append(_evidence(result))
        return self.attempts[result.key]

    def recorded_keys(self) -> set[str]:
        return {g.key for g in self.recorded}

    @staticmethod
    def _guard(path: Path, write: Callable[[], None]) -> None:
        with full_disk_in_one_line(path):
            write()


@contextlib.contextmanager
def full_disk_in_one_line(path: str | os.PathLike[str]) -> Iterator[None]:
    """A full disk inside the block becomes one :class:`DiskFull` line naming the file (or ``path``)."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in _FULL:
            raise
        raise DiskFull(
            f"no space left on the device while writing {exc.filename or path}: free some space (or choose "
            "another --out) and run the same command again; every game recorded so far is kept"
        ) from None


def _evidence(attempt: GameResult) -> str:
    """One line saying why an attempt was lost."""
    return attempt.detail or "; ".join(f.detail for f in attempt.faults) or attempt.reason


def lost_attempts(games: Iterable[GameResult]) -> int:
    """Attempts lost to infrastructure (outages, dead workers) before the games were played again."""
    return sum(len(g.retried) for g in games)


def read_attempts(directory: str | os.PathLike[str]) -> dict[str, int]:
    """Game key -> attempts a provider outage cut short, from a run's ``attempts.jsonl`` (for reports)."""
    path = Path(directory) / ATTEMPTS_NAME
    counts: dict[str, int] = {}
    if not path.exists():
        return counts
    for text in path.read_text(encoding="utf-8").splitlines():
        try:
            key = json.loads(text)["key"]
        except (ValueError, KeyError, TypeError):
            continue  # a torn last line
        counts[key] = counts.get(key, 0) + 1
    return counts
