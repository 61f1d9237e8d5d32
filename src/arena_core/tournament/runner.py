"""Run a schedule: sequentially, in a local process pool, or on Ray; resumable by game key.

Results are JSON lines: the first line saves the schedule and the settings, then one line per
game, appended, flushed and fsynced as each game ends. Restarting after a kill skips the
games already recorded and drops a half-written last line, so the file always ends up with
exactly the schedule's games. A player that crashes, answers garbage or exceeds the
per-decision time limit fails under the illegal-action policy; that is recorded in the game's
line and the tournament goes on.
"""
from __future__ import annotations

import importlib
import json
import os
import queue
import signal
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..episode import EndReason, PolicyEvent
from ..errors import ConfigError
from ..match import Match
from ..players import Decision, Move
from ..runner import _GARBAGE, resolve_answer
from .config import RunOptions, TournamentConfig
from .schedule import Entrant, Schedule, ScheduledGame

FORMAT = "arena.tournament/1"


class Settings(BaseModel):
    """What decides a game's outcome besides the schedule (must match on resume)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    policy: str
    turn_cap: int | None = None
    game_time_limit_s: float | None = None
    decision_time_limit_s: float | None = None


class ScheduleLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["schedule"] = "schedule"
    format: str = FORMAT
    name: str = "tournament"
    schedule: Schedule
    settings: Settings


class PlayerFault(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seat: int
    player: str
    verdict: str
    detail: str


class GameResult(BaseModel):
    """One finished (or truncated) game; ``returns`` is None for a truncated game."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["game"] = "game"
    key: str
    cluster: str
    table: int
    deal: int
    seed: int
    rotation: int
    seats: list[str]
    reason: str
    returns: list[float] | None
    offender: int | None = None
    plies: int
    faults: list[PlayerFault] = Field(default_factory=list)
    duration_s: float = 0.0

    def outcome(self) -> dict:
        """Everything but the timing: equal across backends for the same schedule and seeds."""
        return self.model_dump(exclude={"duration_s"})


# ---------------------------------------------------------------------- results file
class ResultsFile:
    """The append-only JSON-lines results of one tournament."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)

    def read(self) -> tuple[ScheduleLine | None, list[GameResult]]:
        """The saved schedule line and every complete game line (a torn last line is ignored)."""
        if not self.path.exists():
            return None, []
        header: ScheduleLine | None = None
        games: list[GameResult] = []
        with open(self.path, encoding="utf-8") as fh:
            lines = fh.read().split("\n")
        for n, raw in enumerate(lines[:-1], 1):  # the text after the last newline is torn or empty
            if not raw.strip():
                continue
            try:
                data = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{self.path}:{n}: not a JSON line ({exc}); the file is damaged") from None
            kind = data.get("type")
            if kind == "schedule":
                if header is not None:
                    raise ConfigError(f"{self.path}:{n}: a second schedule line; one results file holds one tournament")
                header = ScheduleLine.model_validate(data)
            elif kind == "game":
                games.append(GameResult.model_validate(data))
            else:
                raise ConfigError(f"{self.path}:{n}: unknown line type {kind!r}")
        return header, games

    def drop_torn_tail(self) -> None:
        """Cut a half-written last line (left by a kill during a write)."""
        if not self.path.exists():
            return
        with open(self.path, "rb+") as fh:
            data = fh.read()
            end = data.rfind(b"\n") + 1
            if end != len(data):
                fh.truncate(end)
                fh.flush()
                os.fsync(fh.fileno())

    def open_for_append(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return open(self.path, "a", encoding="utf-8")


def _append(fh, model: BaseModel) -> None:
    fh.write(model.model_dump_json() + "\n")
    fh.flush()
    os.fsync(fh.fileno())


def load_results(path: str | os.PathLike) -> tuple[ScheduleLine, list[GameResult]]:
    """The schedule line and games of a results file (or of ``<dir>/results.jsonl``)."""
    path = Path(path)
    if path.is_dir():
        path = path / "results.jsonl"
    if not path.exists():
        raise ConfigError(f"no results file at {str(path)!r}; run `arena tournament CONFIG` first")
    header, games = ResultsFile(path).read()
    if header is None:
        raise ConfigError(f"{path}: no schedule line; this is not a tournament results file")
    return header, games


# ---------------------------------------------------------------------- one game
@dataclass(frozen=True)
class GameContext:
    """What a worker needs to play any game of the schedule (picklable)."""

    schedule: Schedule
    settings: Settings
    fresh_players: bool = True


_GAME_CACHE: dict[tuple, Any] = {}
_PLAYER_CACHE: dict[str, Any] = {}


def _import(path: str) -> Any:
    module, _, attr = path.partition(":")
    try:
        obj = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"cannot import {path!r}: {exc}; check the module is importable (installed or on PYTHONPATH)") from None
    return obj


def build_game(schedule: Schedule):
    key = (schedule.game, schedule.game_factory, json.dumps(schedule.params, sort_keys=True), schedule.num_players)
    if key not in _GAME_CACHE:
        if schedule.game_factory:
            _GAME_CACHE[key] = _import(schedule.game_factory)(schedule.params, num_players=schedule.num_players)
        else:
            from ..registry import make_game

            _GAME_CACHE[key] = make_game(schedule.game, schedule.params, num_players=schedule.num_players)
    return _GAME_CACHE[key]


def build_player(entrant: Entrant, *, fresh: bool = True):
    if not fresh and entrant.name in _PLAYER_CACHE:
        return _PLAYER_CACHE[entrant.name]
    if entrant.factory:
        player = _import(entrant.factory)(seed=entrant.seed, **entrant.options)
    else:
        from ..registry import make_player

        player = make_player(entrant.player, seed=entrant.seed, **entrant.options)
    if not fresh:
        _PLAYER_CACHE[entrant.name] = player
    return player


class _TimedCaller:
    """Runs calls on a worker thread with a timeout; a hung worker is abandoned (daemon)."""

    def __init__(self):
        self._jobs: queue.SimpleQueue | None = None

    def _start(self) -> queue.SimpleQueue:
        jobs: queue.SimpleQueue = queue.SimpleQueue()

        def work():
            while True:
                job = jobs.get()
                if job is None:
                    return
                fn, args, box, done = job
                try:
                    box.append((True, fn(*args)))
                except BaseException as exc:  # handed back to the caller as data
                    box.append((False, exc))
                done.set()

        threading.Thread(target=work, name="arena-decision", daemon=True).start()
        return jobs

    def call(self, fn: Callable, args: tuple, timeout: float | None) -> Any:
        """``fn(*args)``; raises TimeoutError past ``timeout`` seconds, re-raises fn's error."""
        if timeout is None:
            return fn(*args)
        if self._jobs is None:
            self._jobs = self._start()
        box: list = []
        done = threading.Event()
        self._jobs.put((fn, args, box, done))
        if not done.wait(timeout):
            self._jobs.put(None)  # the worker exits once the hung call returns, if ever
            self._jobs = None
            raise TimeoutError(f"no answer within {timeout:g} s")
        ok, value = box[0]
        if not ok:
            raise value
        return value

    def close(self) -> None:
        if self._jobs is not None:
            self._jobs.put(None)
            self._jobs = None


class _DecisionTimeout(BaseException):
    """Raised inside a player by the alarm; a BaseException so the player's own
    ``except Exception`` (retry loops) cannot swallow it."""


class _AlarmCaller:
    """Runs calls in this (main) thread under a SIGALRM interval timer: no thread hand-off per
    decision. The alarm interrupts Python code, sleeps and blocking I/O; a player stuck inside
    one long C call is interrupted when that call returns."""

    def __init__(self):
        self._armed = False
        self._previous = signal.signal(signal.SIGALRM, self._ring)

    def _ring(self, signum, frame) -> None:
        if self._armed:
            self._armed = False
            raise _DecisionTimeout()

    def call(self, fn: Callable, args: tuple, timeout: float | None) -> Any:
        if timeout is None:
            return fn(*args)
        try:
            self._armed = True
            signal.setitimer(signal.ITIMER_REAL, max(timeout, 1e-6))
            try:
                value = fn(*args)
                self._armed = False
            finally:
                self._armed = False
                signal.setitimer(signal.ITIMER_REAL, 0)
        except _DecisionTimeout:
            raise TimeoutError(f"no answer within {timeout:g} s") from None
        return value

    def close(self) -> None:
        self._armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self._previous)


def _make_caller(needs_timeouts: bool):
    """The alarm caller in a main thread on POSIX, a worker-thread caller elsewhere."""
    if needs_timeouts and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread():
        try:
            return _AlarmCaller()
        except ValueError:  # signals unavailable here (an embedded interpreter)
            pass
    return _TimedCaller()


def play_scheduled(ctx: GameContext, sg: ScheduledGame) -> GameResult:
    """Play one scheduled game; every player failure is recorded, never raised."""
    started = time.perf_counter()
    schedule, settings = ctx.schedule, ctx.settings
    game = build_game(schedule)
    by_name = {e.name: e for e in schedule.entrants}
    broken: dict[int, str] = {}
    players: list[Any] = []
    for seat, name in enumerate(sg.seats):
        try:
            players.append(build_player(by_name[name], fresh=ctx.fresh_players))
        except Exception as exc:  # an entrant that cannot be built fails its seat, as data
            players.append(None)
            broken[seat] = f"player could not be built: {type(exc).__name__}: {exc}"
    from ..policy import IllegalActionPolicy

    policy = IllegalActionPolicy.parse(settings.policy)
    match = Match(
        game,
        sg.seed,
        policy=policy,
        turn_cap=settings.turn_cap,
        time_cap_s=settings.game_time_limit_s,
        players=list(sg.seats),
        record_observations=False,
    )
    game_deadline = None if settings.game_time_limit_s is None else time.monotonic() + settings.game_time_limit_s
    caller = _make_caller(settings.decision_time_limit_s is not None or settings.game_time_limit_s is not None)
    try:
        for seat, player in enumerate(players):
            begin = getattr(player, "begin_episode", None)
            if begin is None or seat in broken:
                continue
            try:
                caller.call(begin, (game, seat, sg.seed), settings.decision_time_limit_s)
            except TimeoutError as exc:
                broken[seat] = f"begin_episode hung: {exc}"
            except Exception as exc:
                broken[seat] = f"begin_episode raised {type(exc).__name__}: {exc}"
        while not match.done:
            seat = match.to_act()
            if seat in broken:
                match.fail(seat, broken[seat], telemetry={"error_type": "broken"})
                continue
            limit = settings.decision_time_limit_s
            game_bound = False
            if game_deadline is not None:
                left = game_deadline - time.monotonic()
                if left <= 0:
                    match.truncate(EndReason.TIME_CAP, f"wall clock over {settings.game_time_limit_s} s")
                    break
                if limit is None or left < limit:
                    limit, game_bound = left, True
            _decide(match, seat, players[seat], caller, limit, game_bound, broken, settings)
    finally:
        caller.close()
    end = match.end
    faults = [
        PlayerFault(seat=e.player, player=sg.seats[e.player], verdict=e.verdict, detail=e.detail[:300])
        for e in match.record.events
        if isinstance(e, PolicyEvent)
    ]
    return GameResult(
        key=sg.key,
        cluster=sg.cluster,
        table=sg.table,
        deal=sg.deal,
        seed=sg.seed,
        rotation=sg.rotation,
        seats=list(sg.seats),
        reason=end.reason.value,
        returns=None if end.returns is None else [float(x) for x in end.returns],
        offender=end.offender,
        plies=end.ply,
        faults=faults,
        duration_s=round(time.perf_counter() - started, 6),
    )


def _decide(match: Match, seat: int, player: Any, caller: _TimedCaller, limit, game_bound: bool, broken: dict, settings: Settings) -> None:
    game, pos = match.game, match.position
    decision = Decision(
        game=game,
        seat=seat,
        observation=game.observe(pos, seat),
        legal_actions=game.legal(pos, seat),
        ply=pos.ply,
        episode_seed=match.seed,
        _position=pos,
    )
    try:
        answer = caller.call(player.act, (decision,), limit)
    except TimeoutError:
        if game_bound:
            match.truncate(EndReason.TIME_CAP, f"wall clock over {settings.game_time_limit_s} s (player {seat} was deciding)")
            return
        broken[seat] = f"player hung: no answer within {limit:g} s (decision time limit)"
        match.fail(seat, broken[seat], telemetry={"error_type": "timeout"})
        return
    except Exception as exc:  # a crash is data
        match.fail(seat, f"player raised {type(exc).__name__}: {exc}", telemetry={"error_type": type(exc).__name__})
        return
    telemetry: dict[str, Any] = {}
    if isinstance(answer, Move):
        telemetry.update(answer.telemetry)
        answer = answer.action
    action = resolve_answer(decision, answer, telemetry)
    if action is _GARBAGE:
        match.fail(seat, f"answer is not an action: {answer!r:.200}", attempted=repr(answer)[:200], telemetry=telemetry, illegal=True)
        return
    match.submit(seat, action, telemetry=telemetry)


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
            num_players = _import(config.game_factory)(config.params).num_players
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
            _import(e.factory)
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
            _append(fh, line)
        if todo:
            runner = BACKENDS[options.backend](ctx, todo, options)
            try:
                for result in runner:
                    if progress is None:
                        progress = _Progress(len(games), len(done_keys), quiet, config.name)
                    if result.key in done_keys:
                        continue  # never write a game twice
                    _append(fh, result)
                    done_keys.add(result.key)
                    played += 1
                    progress.advance()
            finally:
                if progress is not None:
                    progress.close()
    return RunReport(str(path), len(games), len(done_keys) - played, played, time.perf_counter() - started)
