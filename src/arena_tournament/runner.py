"""Run a schedule: sequentially, in a local process pool, or on Ray; resumable by game key.

Results are JSON lines: the first line saves the schedule, the settings and each entrant's
resolved identity, then one line per game, appended, flushed and fsynced as each game ends;
each game's full episode goes to ``records.jsonl.gz`` just before its line. Restarting after a
kill skips the games already recorded and drops a half-written last line (and record), so the
file always ends up with exactly the schedule's games, each once. One run at a time writes an
output directory (:class:`~arena_core.outputs.RunLock`).

Failures are data: a player that raises (``SystemExit`` and ``KeyboardInterrupt`` included),
answers garbage, exceeds the per-decision time limit or exhausts its spending cap fails under
the illegal-action policy, with a typed fault in the game's line. A process-pool worker that
dies (``os._exit``, a segfault, the OOM killer) costs only the game it was playing: that game is
recorded as a ``crash`` forfeit of the entrant whose code was running, the worker is replaced
and the run goes on. An entrant whose cap runs out plays no further games: they are recorded
as ``unplayed`` with the reason. Before the first game every entrant is built and, unless
``run.preflight = false``, preflighted (an HTTP player checks its key and endpoint). A real
Ctrl-C stops the run cleanly; rerun the same command to resume.
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
from typing import IO, Any

from arena_core.errors import ArenaError, ConfigError
from arena_core.faults import FaultKind
from arena_core.outputs import RunLock, scrub_and_cut

from .backends import BACKENDS
from .config import RunOptions, TournamentConfig
from .identity import check_no_literal_secrets, entrant_identity, identity_change
from .play import INTERRUPTED, GameContext, UserInterrupt, build_game, build_player, import_object, play_scheduled
from .records import RECORDS_NAME, RecordsFile
from .results import UNPLAYED, GameResult, ResultsFile, ScheduleLine, Settings, append_line, load_results
from .schedule import Schedule, ScheduledGame

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
    """The user stopped the run (Ctrl-C); everything recorded so far stays, resume continues."""


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
    crashes: int = 0  # games whose worker process died, in this run

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def settings_of(options: RunOptions) -> Settings:
    return Settings(
        policy=options.policy,
        turn_cap=options.turn_cap,
        game_time_limit_s=options.game_time_limit_s,
        decision_time_limit_s=options.decision_time_limit_s,
    )


def resolve_schedule(config: TournamentConfig) -> Schedule:
    """The schedule of ``config`` (the game is built here to learn its default player count)."""
    num_players = config.num_players
    if num_players is None:
        if config.game_factory:
            num_players = import_object(config.game_factory)(config.params).num_players
        else:
            from arena_core.registry import make_game

            num_players = make_game(config.game, config.params).num_players
    return config.schedule(num_players)


def check_entrants(schedule: Schedule) -> None:
    """Fail early, in the caller's process, on entrants whose player cannot be found or whose
    config holds a literal secret."""
    from arena_core.registry import load, plugin_info

    for e in schedule.entrants:
        check_no_literal_secrets(e)
        if e.factory:
            import_object(e.factory)
            continue
        assert e.player is not None  # an entrant names a factory or a player
        name = e.player  # the registered name: Entrant parsed the spec
        info = plugin_info("players", name)
        if not info.available:
            raise ConfigError(f"entrant {e.name!r}: player {name!r} is not usable here: {info.reason}")
        load("players", name)  # import errors surface here, and forked workers inherit the module


def preflight_entrants(schedule: Schedule, *, preflight: bool = True, keep: bool = False) -> dict[str, dict[str, Any]]:
    """Build every entrant (and run its ``preflight()`` unless ``preflight`` is False) before
    the first game; a failure is one :class:`ConfigError` line naming the entrant. Returns each
    entrant's resolved identity. ``keep``: reuse the built players in this process's games."""
    from arena_core.players import preflight_player

    from .play import _PLAYER_CACHE

    identities: dict[str, dict[str, Any]] = {}
    for e in schedule.entrants:
        try:
            player = build_player(e, fresh=True)
        except ArenaError as exc:
            raise ConfigError(f"entrant {e.name!r} cannot be built: {_one_line(str(exc))}") from None
        except Exception as exc:
            raise ConfigError(
                f"entrant {e.name!r} cannot be built: {type(exc).__name__}: {_one_line(str(exc))}"
            ) from None
        if preflight:
            try:
                preflight_player(e.name, player)
            except ArenaError as exc:
                raise ConfigError(f"{exc}; skip the check with run.preflight = false or --no-preflight") from None
        identities[e.name] = entrant_identity(e, player)
        if keep:
            _PLAYER_CACHE[e.name] = player
    return identities


def _one_line(text: str, limit: int = 300) -> str:
    return scrub_and_cut(" ".join(text.split()), limit)


class _SigintGuard:
    """While running in the main thread, Ctrl-C raises :class:`UserInterrupt` (a real user
    interrupt, told apart from a ``KeyboardInterrupt`` raised by player code)."""

    def __enter__(self) -> _SigintGuard:
        INTERRUPTED.clear()
        self._previous: Callable[[int, FrameType | None], Any] | int | None = None
        if threading.current_thread() is threading.main_thread():

            def handler(signum: int, frame: FrameType | None) -> None:
                INTERRUPTED.set()
                raise UserInterrupt()

            try:
                self._previous = signal.signal(signal.SIGINT, handler)
            except ValueError:  # pragma: no cover - signals unavailable
                self._previous = None
        return self

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)


def _cap_stops(games: Iterable[GameResult]) -> dict[str, str]:
    """Entrants whose spending cap ran out in these games -> the reason their later games are not played."""
    out: dict[str, str] = {}
    for g in games:
        for f in g.faults:
            if f.kind is FaultKind.CAP_EXHAUSTED and f.player not in out:
                out[f.player] = f"entrant {f.player!r} exhausted its spending cap in game {g.key}"
    return out


def unplayed_result(sg: ScheduledGame, why: str) -> GameResult:
    return GameResult.of(sg, reason=UNPLAYED, returns=None, detail=why)


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
    schedule = resolve_schedule(config)
    build_game(schedule)  # a bad game id or parameter fails here, before any game
    check_entrants(schedule)
    path = Path(results_path) if results_path is not None else Path(config.output) / "results.jsonl"
    with RunLock(path.parent):
        identities = preflight_entrants(
            schedule,
            preflight=getattr(options, "preflight", True),
            keep=not options.fresh_players and options.backend == "sequential",
        )
        return _run_locked(config, schedule, path, options, identities, quiet, max_games)


def _run_locked(
    config: TournamentConfig,
    schedule: Schedule,
    path: Path,
    options: RunOptions,
    identities: dict[str, Any],
    quiet: bool,
    max_games: int | None,
) -> RunReport:
    results = ResultsFile(path)
    results.drop_torn_tail()
    records = RecordsFile(path.parent / RECORDS_NAME)
    records.drop_torn_tail()
    header, recorded = results.read()
    settings = settings_of(options)
    line = ScheduleLine(
        name=config.name,
        schedule=schedule,
        settings=settings,
        identities=identities,
        max_fault_rate=getattr(options, "max_fault_rate", None),
    )
    if header is not None:
        if header.schedule != schedule or header.settings != settings:
            raise ConfigError(
                f"{path} holds results of a different schedule or settings; use another output directory "
                "(or delete the file to start over)"
            )
        if header.format != line.format:
            raise ConfigError(
                f"{path} was written in results format {header.format}; finish it with the arena that wrote it, or use another output directory"
            )
        changed = identity_change(header.identities, identities)
        if changed:
            raise ConfigError(
                f"{path}: {changed}; a resumed run must play the same entrants: use another output directory"
            )
    games = schedule.games()
    known = {g.key for g in games}
    done_keys = {g.key for g in recorded}
    stray = done_keys - known
    if stray:
        raise ConfigError(
            f"{path} holds games not in the schedule (e.g. {sorted(stray)[0]!r}); the file was edited or mixed"
        )
    todo = [g for g in games if g.key not in done_keys]
    if max_games is not None:
        todo = todo[:max_games]
    stop_at_cap = getattr(options, "stop_at_cap", True)
    stopped = _cap_stops(recorded) if stop_at_cap else {}
    skipped: list[ScheduledGame] = []

    def feed() -> Iterator[ScheduledGame]:
        for sg in todo:
            hit = next((n for n in sg.seats if n in stopped), None)
            if hit is not None:
                skipped.append(sg)
                continue
            yield sg

    ctx = GameContext(schedule=schedule, settings=settings, fresh_players=options.fresh_players)
    started = time.perf_counter()
    progress = None
    played = unplayed = crashes = 0
    announced: set[str] = set()

    def flush_skipped(fh: IO[str]) -> int:
        n = 0
        while skipped:
            sg = skipped.pop(0)
            if sg.key in done_keys:
                continue
            who = next(n_ for n_ in sg.seats if n_ in stopped)
            append_line(fh, unplayed_result(sg, f"not played: {stopped[who]}"))
            done_keys.add(sg.key)
            n += 1
        return n

    def say(text: str) -> None:
        if not quiet:
            print(text, file=sys.stderr)

    with results.open_for_append() as fh, records.open_for_append() as rfh, _SigintGuard():
        if header is None:
            append_line(fh, line)
        if todo:
            runner = BACKENDS[options.backend](ctx, feed(), options)
            try:
                for result, record in runner:
                    if progress is None:
                        progress = _Progress(len(games), len(done_keys), quiet, config.name)
                    if result.key in done_keys:
                        continue  # never write a game twice
                    if record is not None:
                        records.append(rfh, record)
                    append_line(fh, result)
                    done_keys.add(result.key)
                    played += 1
                    crashes += result.reason == "crash"
                    progress.advance()
                    if stop_at_cap:
                        for name, why in _cap_stops([result]).items():
                            stopped.setdefault(name, why)
                    unplayed += flush_skipped(fh)
                    for name in set(stopped) - announced:
                        announced.add(name)
                        say(f"{stopped[name]}: its remaining games are not played (listed as unplayed)")
                    if INTERRUPTED.is_set():
                        raise UserInterrupt()
                for _ in feed():  # the feed may hold games of stopped entrants the backend never asked for
                    pass
                unplayed += flush_skipped(fh)
            except UserInterrupt:
                raise RunInterrupted(
                    f"interrupted: {len(done_keys)} of {len(games)} games recorded in {path}; run the same command again to resume"
                ) from None
            finally:
                close = getattr(runner, "close", None)
                if close is not None:
                    close()  # stop the pool's workers now
                if progress is not None:
                    progress.close()
    return RunReport(
        str(path), len(games), len(recorded), played, time.perf_counter() - started, unplayed, dict(stopped), crashes
    )
