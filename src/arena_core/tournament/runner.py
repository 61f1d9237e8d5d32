"""Run a schedule: sequentially, in a local process pool, or on Ray; resumable by game key.

Results are JSON lines: the first line saves the schedule and the settings, then one line per
game, appended, flushed and fsynced as each game ends. Restarting after a kill skips the
games already recorded and drops a half-written last line, so the file always ends up with
exactly the schedule's games. A player that crashes, answers garbage or exceeds the
per-decision time limit fails under the illegal-action policy; that is recorded in the game's
line and the tournament goes on.
"""
from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from ..errors import ConfigError
from .config import RunOptions, TournamentConfig
from .play import GameContext, build_game, import_object, play_scheduled
from .results import GameResult, ResultsFile, ScheduleLine, Settings, append_line, load_results
from .schedule import Schedule, ScheduledGame

__all__ = [
    "BACKENDS", "GameContext", "GameResult", "ResultsFile", "RunReport", "ScheduleLine", "Settings",
    "check_entrants", "load_results", "play_scheduled", "resolve_schedule", "run_tournament", "settings_of",
]


# ---------------------------------------------------------------------- backends
_WORKER_CONTEXT: GameContext | None = None


def _init_worker(ctx: GameContext, path: list[str], parent: int) -> None:
    global _WORKER_CONTEXT
    _exit_with_parent(parent)
    for entry in reversed(path):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    _WORKER_CONTEXT = ctx


def _exit_with_parent(parent: int, every_s: float = 0.5) -> None:
    """A pool worker outliving its parent (killed with SIGKILL) would wait forever: watch and exit.
    ``parent`` comes from the parent itself: a worker started just as the parent died must not
    take its new parent (init) for the real one."""
    if os.getppid() != parent:
        os._exit(1)

    def watch():
        while os.getppid() == parent:
            time.sleep(every_s)
        os._exit(1)

    threading.Thread(target=watch, name="arena-parent-watch", daemon=True).start()


def _play_in_worker(sg: ScheduledGame) -> dict:
    return play_scheduled(_WORKER_CONTEXT, sg).model_dump(mode="json")


def _run_sequential(ctx: GameContext, todo: list[ScheduledGame], options: RunOptions) -> Iterator[GameResult]:
    for sg in todo:
        yield play_scheduled(ctx, sg)


def _run_process(ctx: GameContext, todo: list[ScheduledGame], options: RunOptions) -> Iterator[GameResult]:
    import multiprocessing as mp
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    workers = options.workers or os.cpu_count() or 1
    context = mp.get_context(_start_method(options.start_method))
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_init_worker, initargs=(ctx, list(sys.path), os.getpid())) as pool:
        window = 4 * workers
        pending = set()
        games = iter(todo)
        for sg in games:
            pending.add(pool.submit(_play_in_worker, sg))
            if len(pending) >= window:
                break
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                yield GameResult.model_validate(fut.result())
                nxt = next(games, None)
                if nxt is not None:
                    pending.add(pool.submit(_play_in_worker, nxt))


def _start_method(requested: str) -> str:
    """``auto``: fork (fast: workers inherit the loaded game and players) on Linux when this
    process runs no other thread, where forking is safe; spawn otherwise."""
    if requested != "auto":
        return requested
    if sys.platform.startswith("linux") and threading.active_count() == 1:
        return "fork"
    return "spawn"


def _play_with_context(ctx: GameContext, sg: ScheduledGame) -> dict:
    return play_scheduled(ctx, sg).model_dump(mode="json")


def _run_ray(ctx: GameContext, todo: list[ScheduledGame], options: RunOptions) -> Iterator[GameResult]:
    try:
        import ray
    except ImportError:
        raise ConfigError("backend 'ray' needs Ray; fix: pip install 'turn-arena[ray]'") from None
    started_here = not ray.is_initialized()
    if started_here:
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
        if options.ray_address:
            kwargs["address"] = options.ray_address
        else:
            kwargs["num_cpus"] = options.workers or os.cpu_count() or 1
            kwargs["runtime_env"] = {"env_vars": {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}}
        ray.init(**kwargs)
    try:
        remote = ray.remote(num_cpus=1)(_play_with_context)
        ctx_ref = ray.put(ctx)
        window = 4 * int(ray.available_resources().get("CPU", 1) or 1) + 4
        games = iter(todo)
        pending = [remote.remote(ctx_ref, sg) for _, sg in zip(range(window), games)]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                yield GameResult.model_validate(ray.get(ref))
                nxt = next(games, None)
                if nxt is not None:
                    pending.append(remote.remote(ctx_ref, nxt))
    finally:
        if started_here:
            ray.shutdown()


BACKENDS: dict[str, Callable[[GameContext, list[ScheduledGame], RunOptions], Iterable[GameResult]]] = {
    "sequential": _run_sequential,
    "process": _run_process,
    "ray": _run_ray,
}


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
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
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

    def as_dict(self) -> dict:
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
            from ..registry import make_game

            num_players = make_game(config.game, config.params).num_players
    return config.schedule(num_players)


def check_entrants(schedule: Schedule) -> None:
    """Fail early, in the caller's process, on entrants whose player cannot be found."""
    from ..registry import plugin_info

    from ..registry import load

    for e in schedule.entrants:
        if e.factory:
            import_object(e.factory)
            continue
        name = e.player.partition(":")[0].strip()
        info = plugin_info("players", name)
        if not info.available:
            raise ConfigError(f"entrant {e.name!r}: player {name!r} is not usable here: {info.reason}")
        load("players", name)  # import errors surface here, and forked workers inherit the module


def run_tournament(
    config: TournamentConfig,
    *,
    results_path: str | os.PathLike | None = None,
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
    results = ResultsFile(path)
    results.drop_torn_tail()
    header, recorded = results.read()
    settings = settings_of(options)
    line = ScheduleLine(name=config.name, schedule=schedule, settings=settings)
    if header is not None:
        if header.schedule != schedule or header.settings != settings:
            raise ConfigError(
                f"{path} holds results of a different schedule or settings; use another output directory "
                "(or delete the file to start over)"
            )
    games = schedule.games()
    known = {g.key for g in games}
    done_keys = {g.key for g in recorded}
    stray = done_keys - known
    if stray:
        raise ConfigError(f"{path} holds games not in the schedule (e.g. {sorted(stray)[0]!r}); the file was edited or mixed")
    todo = [g for g in games if g.key not in done_keys]
    if max_games is not None:
        todo = todo[:max_games]
    ctx = GameContext(schedule=schedule, settings=settings, fresh_players=options.fresh_players)
    started = time.perf_counter()
    progress = None
    played = 0
    with results.open_for_append() as fh:
        if header is None:
            append_line(fh, line)
        if todo:
            runner = BACKENDS[options.backend](ctx, todo, options)
            try:
                for result in runner:
                    if progress is None:
                        progress = _Progress(len(games), len(done_keys), quiet, config.name)
                    if result.key in done_keys:
                        continue  # never write a game twice
                    append_line(fh, result)
                    done_keys.add(result.key)
                    played += 1
                    progress.advance()
            finally:
                if progress is not None:
                    progress.close()
    return RunReport(str(path), len(games), len(done_keys) - played, played, time.perf_counter() - started)
