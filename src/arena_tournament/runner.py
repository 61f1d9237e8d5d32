"""Run a schedule: sequentially, in a local process pool, or on Ray; resumable by game key.

Results are JSON lines: the first line saves the schedule, the settings and each entrant's
resolved identity, then one line per game, appended, flushed and fsynced as each game ends;
each game's full episode goes to ``records.jsonl.gz`` just before its line (:mod:`.store`).
Restarting after a kill skips the games already recorded and drops a half-written last line (and
record), so the file always ends up with exactly the schedule's games, each once. One run at a
time writes an output directory (:class:`~arena_core.outputs.RunLock`).

Failures are data: a player that raises (``SystemExit`` and ``KeyboardInterrupt`` included),
answers garbage, exceeds the per-decision time limit or exhausts its spending cap fails under
the illegal-action policy, with a typed fault in the game's line. Infrastructure is nobody's move:
a dead worker's game is played again (:mod:`.backends`), and a game a provider outage cut short is
logged as an attempt and played again on resume, up to ``run.outage_replays`` times (then recorded
with reason ``outage``, not rated). An entrant whose cap runs out plays no further games: they are
recorded as ``unplayed`` with the reason. Before the first game every entrant is built and, unless
``run.preflight = false``, preflighted (an HTTP player checks its key and endpoint). Ctrl-C or
SIGTERM stops the run cleanly (:class:`RunInterrupted`, the lock released); a full disk is one
line naming the file; rerun the same command to resume.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from arena_core.errors import ArenaError
from arena_core.faults import FaultKind
from arena_core.outputs import RunLock

from .backends import BACKENDS
from .config import RunOptions, TournamentConfig
from .entrants import check_entrants, preflight_entrants, prepare, resolve_schedule
from .play import INTERRUPTED, GameContext, UserInterrupt, play_scheduled
from .results import INCOMPLETE, OUTAGE, UNPLAYED, GameResult, ResultsFile, ScheduleLine, Settings, load_results
from .schedule import ScheduledGame
from .store import RunFiles

__all__ = [
    "BACKENDS",
    "GameContext",
    "GameResult",
    "ResultsFile",
    "RunInterrupted",
    "RunReport",
    "ScheduleLine",
    "Settings",
    "check_entrants",
    "load_results",
    "play_scheduled",
    "preflight_entrants",
    "resolve_schedule",
    "run_tournament",
    "settings_of",
]


class RunInterrupted(ArenaError):
    """The user stopped the run (Ctrl-C, or SIGTERM); everything recorded so far stays, resume continues."""

    def __init__(self, message: str, signum: int = signal.SIGINT):
        super().__init__(message)
        self.signum = int(signum)

    @property
    def exit_status(self) -> int:
        """128 + the signal's number, as a shell reports a process a signal stopped (130, 143)."""
        return 128 + self.signum


# ---------------------------------------------------------------------- progress
class _Progress:
    """Games done, rate and ETA on the terminal (rich when installed); silent when quiet."""

    def __init__(self, total: int, done: int, quiet: bool, label: str):
        self.total, self.done, self.quiet = total, done, quiet
        self._bar = None
        self._started = time.perf_counter()
        self._new = 0
        if quiet:
            return
        try:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )
        except ImportError:
            print(f"{label}: {done}/{total} games already recorded", file=sys.stderr)
            return
        self._bar = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            transient=False,
        )
        self._task = self._bar.add_task(label, total=total, completed=done, rate="")
        self._bar.start()

    def advance(self) -> None:
        self.done += 1
        self._new += 1
        if self.quiet:
            return
        rate = self._new / max(time.perf_counter() - self._started, 1e-9)
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done, rate=f"{rate:.1f} games/s")
        elif self.done == self.total or self._new % max(1, self.total // 20) == 0:
            eta = (self.total - self.done) / rate if rate else float("inf")
            print(f"{self.done}/{self.total} games, {rate:.1f}/s, ETA {eta:.0f} s", file=sys.stderr)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


# ---------------------------------------------------------------------- entry point
@dataclass(frozen=True)
class RunReport:
    path: str
    total: int
    already_recorded: int
    played: int
    seconds: float
    unplayed: int = 0  # games recorded as unplayed by this run
    stopped: dict[str, Any] = field(default_factory=dict)  # entrant -> why its remaining games are not played
    crashes: int = 0  # games charged as a crash (a worker died twice at one decision), in this run
    replayed: int = 0  # games this run recorded after attempts lost to infrastructure (dead workers, outages)
    incomplete: int = 0  # games an outage cut short in this run, left to the next run to replay
    outage: int = 0  # games recorded with reason outage (every attempt cut short), in this run

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def settings_of(options: RunOptions) -> Settings:
    return Settings(
        policy=options.policy,
        turn_cap=options.turn_cap,
        game_time_limit_s=options.game_time_limit_s,
        decision_time_limit_s=options.decision_time_limit_s,
    )


def run_tournament(
    config: TournamentConfig,
    *,
    results_path: str | os.PathLike[str] | None = None,
    quiet: bool = False,
    options: RunOptions | None = None,
    max_games: int | None = None,
) -> RunReport:
    """Play every game of ``config``'s schedule not yet in the results file.

    ``max_games`` stops after that many new games (for tests and staged runs).
    """
    options = options or config.run
    path = Path(results_path) if results_path is not None else Path(config.output) / "results.jsonl"
    with _StopSignals() as stop:
        try:
            keep = not options.fresh_players and options.backend == "sequential"
            lineup = prepare(config, preflight=options.preflight, keep=keep)
            line = ScheduleLine(
                name=config.name,
                schedule=lineup.schedule,
                settings=settings_of(options),
                identities=lineup.identities,
                max_fault_rate=options.max_fault_rate,
            )
            with RunLock(path.parent), RunFiles(path, line, lineup.games) as files:
                return _Run(config.name, files, options, quiet, stop).play(max_games)
        except UserInterrupt:  # before the first game (the run's own loop says how far it got)
            raise RunInterrupted(
                f"interrupted before the first game; nothing was lost: run the same command again ({path})", stop.signum
            ) from None


class _StopSignals:
    """While running in the main thread, Ctrl-C and SIGTERM raise :class:`UserInterrupt` (a real
    stop, told apart from a ``KeyboardInterrupt`` raised by player code); ``signum`` says which."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __enter__(self) -> _StopSignals:
        INTERRUPTED.clear()
        self.signum = int(signal.SIGINT)
        self._previous: dict[int, Callable[[int, FrameType | None], Any] | int | None] = {}
        if threading.current_thread() is threading.main_thread():
            for sig in self.SIGNALS:
                try:
                    self._previous[sig] = signal.signal(sig, self._stop)
                except ValueError:  # pragma: no cover - signals unavailable
                    pass
        return self

    def _stop(self, signum: int, frame: FrameType | None) -> None:
        self.signum = signum
        INTERRUPTED.set()
        raise UserInterrupt()

    def __exit__(self, *exc: object) -> None:
        for sig, previous in self._previous.items():
            if previous is not None:
                signal.signal(sig, previous)


class _CapGate:
    """Entrants whose spending cap ran out play no further games: their games are held back here
    and recorded as unplayed, with the reason."""

    def __init__(self, recorded: Iterable[GameResult], enabled: bool):
        self.enabled = enabled
        self.stopped: dict[str, str] = {}
        self.announced: set[str] = set()
        self.held: list[ScheduledGame] = []
        for g in recorded:
            self.update(g)

    def update(self, result: GameResult) -> None:
        if not self.enabled:
            return
        for f in result.faults:
            if f.kind is FaultKind.CAP_EXHAUSTED and f.player not in self.stopped:
                self.stopped[f.player] = f"entrant {f.player!r} exhausted its spending cap in game {result.key}"

    def admit(self, games: Iterable[ScheduledGame]) -> Iterator[ScheduledGame]:
        """``games``, less those of a stopped entrant (held for :meth:`unplayed`)."""
        for sg in games:
            if any(n in self.stopped for n in sg.seats):
                self.held.append(sg)
                continue
            yield sg

    def hold_rest(self, todo: Iterable[ScheduledGame], done: set[str]) -> None:
        """Hold every game of ``todo`` not ``done`` that a stopped entrant sits at."""
        self.held.extend(sg for sg in todo if sg.key not in done and any(n in self.stopped for n in sg.seats))

    def unplayed(self) -> list[GameResult]:
        """The held games' lines: not played, and why."""
        out = []
        while self.held:
            sg = self.held.pop(0)
            who = next(n for n in sg.seats if n in self.stopped)
            out.append(GameResult.of(sg, reason=UNPLAYED, returns=None, detail=f"not played: {self.stopped[who]}"))
        return out

    def news(self) -> list[str]:
        """One line for each entrant stopped since the last call."""
        fresh = [n for n in self.stopped if n not in self.announced]
        self.announced.update(fresh)
        return [f"{self.stopped[n]}: its remaining games are not played (listed as unplayed)" for n in fresh]


class _Run:
    """One run's loop: the backend plays the games not yet recorded, each result is written as it
    ends (an outage's attempt to the attempts log), the gate holds back the games of a capped entrant."""

    def __init__(self, name: str, files: RunFiles, options: RunOptions, quiet: bool, stop: _StopSignals):
        self.name, self.files, self.options, self.quiet, self.stop = name, files, options, quiet, stop
        self.schedule = files.line.schedule
        self.games = files.games
        self.done = files.recorded_keys()
        self.already = len(self.done)
        self.gate = _CapGate(files.recorded, options.stop_at_cap)
        self.counts = {"played": 0, "unplayed": 0, "crashes": 0, "replayed": 0, "incomplete": 0, "outage": 0}
        self.progress: _Progress | None = None

    def play(self, max_games: int | None) -> RunReport:
        started = time.perf_counter()
        todo = [g for g in self.games if g.key not in self.done][:max_games]
        if todo:
            ctx = GameContext(
                schedule=self.schedule, settings=self.files.line.settings, fresh_players=self.options.fresh_players
            )
            backend = BACKENDS[self.options.backend](ctx, self.gate.admit(todo), self.options, self.quiet)
            try:
                for result, record in backend:
                    self._record(result, record)
                    if INTERRUPTED.is_set():
                        raise UserInterrupt()
                self.gate.hold_rest(todo, self.done)  # games of stopped entrants the backend never asked for
                self._write_unplayed()
            except UserInterrupt:
                raise RunInterrupted(
                    f"interrupted: {len(self.done)} of {len(self.games)} games recorded in {self.files.path}; "
                    "run the same command again to resume",
                    self.stop.signum,
                ) from None
            finally:
                close = getattr(backend, "close", None)
                if close is not None:
                    close()  # stop the pool's workers (a generator's finally) now
                if self.progress is not None:
                    self.progress.close()
        c = self.counts
        return RunReport(
            str(self.files.path),
            len(self.games),
            self.already,
            c["played"],
            time.perf_counter() - started,
            c["unplayed"],
            dict(self.gate.stopped),
            c["crashes"],
            c["replayed"],
            c["incomplete"],
            c["outage"],
        )

    def _record(self, result: GameResult, record: str | None) -> None:
        if self.progress is None:
            self.progress = _Progress(len(self.games), len(self.done), self.quiet, self.name)
        if result.key in self.done:
            return  # never write a game twice
        if result.reason == INCOMPLETE:
            lost = self.files.write_attempt(result)
            if len(lost) <= self.options.outage_replays:
                self.counts["incomplete"] += 1
                return
            result = result.model_copy(
                update={
                    "reason": OUTAGE,
                    "faults": [],
                    "detail": f"every one of {len(lost)} attempts was cut short by a provider outage; not rated",
                    "retried": lost,
                }
            )
            record = None
            self.counts["outage"] += 1
        elif result.key in self.files.attempts:
            result = result.model_copy(update={"retried": self.files.attempts[result.key] + result.retried})
        self.files.write(result, record)
        self.done.add(result.key)
        self.counts["played"] += 1
        self.counts["crashes"] += result.reason == "crash"
        self.counts["replayed"] += bool(result.retried) and result.reason != OUTAGE
        self.progress.advance()
        self.gate.update(result)
        self._write_unplayed()

    def _write_unplayed(self) -> None:
        for line in self.gate.unplayed():
            if line.key not in self.done:
                self.files.write(line, None)
                self.done.add(line.key)
                self.counts["unplayed"] += 1
        for text in self.gate.news():
            if not self.quiet:
                print(text, file=sys.stderr)
