"""Play one scheduled game under the per-decision and per-game time limits.

A player that raises, answers something that is not an action or runs past the decision
limit fails under the illegal-action policy, and the failure is recorded in the result.
"""
from __future__ import annotations

import importlib
import json
import queue
import signal
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from ..episode import EndReason, PolicyEvent
from ..errors import ConfigError
from ..match import Match
from ..players import Decision
from ..runner import submit_answer
from .results import GameResult, PlayerFault, Settings
from .schedule import Entrant, Schedule, ScheduledGame


@dataclass(frozen=True)
class GameContext:
    """What a worker needs to play any game of the schedule (picklable)."""

    schedule: Schedule
    settings: Settings
    fresh_players: bool = True


_GAME_CACHE: dict[tuple, Any] = {}
_PLAYER_CACHE: dict[str, Any] = {}


def import_object(path: str) -> Any:
    """The object named by 'package.module:attr'."""
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
            _GAME_CACHE[key] = import_object(schedule.game_factory)(schedule.params, num_players=schedule.num_players)
        else:
            from ..registry import make_game

            _GAME_CACHE[key] = make_game(schedule.game, schedule.params, num_players=schedule.num_players)
    return _GAME_CACHE[key]


def build_player(entrant: Entrant, *, fresh: bool = True):
    if not fresh and entrant.name in _PLAYER_CACHE:
        return _PLAYER_CACHE[entrant.name]
    if entrant.factory:
        player = import_object(entrant.factory)(seed=entrant.seed, **entrant.options)
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
    decision = Decision.at(game, pos, seat, match.seed)
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
        answer = exc
    submit_answer(match, decision, answer)
