"""Play one scheduled game under the per-decision and per-game time limits.

A player that raises (any ``BaseException``: ``SystemExit`` and ``KeyboardInterrupt`` raised by
player code too), answers something that is not an action, runs past the decision limit or
exhausts its spending cap fails under the illegal-action policy; the failure is recorded in the
result with its :class:`~arena_core.faults.FaultKind`. Only a real Ctrl-C of the user (the
runner's SIGINT handler raises :class:`UserInterrupt`) stops the game.

A ``marker(seat, ply)`` callback is told whose code is about to run and at which decision
(seat -1: none; ply -1: before the first move); the process backend keeps it in shared memory,
so when a worker dies the parent knows whose decision it was, and whether a replayed game died
at the same one.

A provider outage is nobody's move: when a decision fails ``unavailable`` (the endpoint down,
its retries spent) for an entrant with ``on_outage = "replay"`` (the default), the game stops
there and comes back with reason ``incomplete``: the runner records it as an attempt, not a
result, and plays it again on resume. An entrant with ``on_outage = "default"`` has the failure
handled by the illegal-action policy like any other, and the game counts.
"""

from __future__ import annotations

import queue
import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import FrameType
from typing import Any

from arena_core.episode import EndReason, PolicyEvent
from arena_core.faults import FaultKind, fault_of, fault_of_exception
from arena_core.match import Match
from arena_core.outputs import scrub_and_cut
from arena_core.players import Decision, Move, episode_end, warn_hook_failed
from arena_core.runner import submit_answer

from .entrants import build_game, build_player
from .results import INCOMPLETE, GameResult, PlayerFault, Settings
from .schedule import Schedule, ScheduledGame


@dataclass(frozen=True)
class GameContext:
    """What a worker needs to play any game of the schedule (picklable)."""

    schedule: Schedule
    settings: Settings
    fresh_players: bool = True


#: set by the runner's SIGINT handler: the user pressed Ctrl-C (not a player raising KeyboardInterrupt)
INTERRUPTED = threading.Event()
DETAIL_CHARS = 300


class UserInterrupt(KeyboardInterrupt):
    """A real Ctrl-C of the user, raised by the runner's SIGINT handler: it stops the run
    (resumable); a ``KeyboardInterrupt`` raised by player code is a fault of that player."""


def _user_interrupted(exc: BaseException) -> bool:
    return isinstance(exc, UserInterrupt) or INTERRUPTED.is_set()


def _no_marker(seat: int, ply: int = -1) -> None:
    pass


class _Outage(Exception):
    """A decision of an entrant that replays outages failed ``unavailable``: the game stops, incomplete."""

    def __init__(self, seat: int, ply: int, detail: str):
        super().__init__(detail)
        self.seat, self.ply, self.detail = seat, ply, detail


Marker = Callable[..., None]  # marker(seat, ply=-1): whose code runs, at which decision


class DecisionTimerExpired(TimeoutError):
    """The tournament's own decision timer ran out (a player's own ``TimeoutError``, say from
    its HTTP client, is an ordinary fault of that decision, not a hung player)."""


class _TimedCaller:
    """Runs calls on a worker thread with a timeout; a hung worker is abandoned (daemon)."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Any] | None = None

    def _start(self) -> queue.SimpleQueue[Any]:
        jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()

        def work() -> None:
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

    def call(self, fn: Callable[..., Any], args: tuple[Any, ...], timeout: float | None) -> Any:
        """``fn(*args)``; raises DecisionTimerExpired past ``timeout`` seconds, re-raises fn's error."""
        if timeout is None:
            return fn(*args)
        if self._jobs is None:
            self._jobs = self._start()
        box: list[Any] = []
        done = threading.Event()
        self._jobs.put((fn, args, box, done))
        if not done.wait(timeout):
            self._jobs.put(None)  # the worker exits once the hung call returns, if ever
            self._jobs = None
            raise DecisionTimerExpired(f"no answer within {timeout:g} s")
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

    def __init__(self) -> None:
        self._armed = False
        self._previous = signal.signal(signal.SIGALRM, self._ring)

    def _ring(self, signum: int, frame: FrameType | None) -> None:
        if self._armed:
            self._armed = False
            raise _DecisionTimeout()

    def call(self, fn: Callable[..., Any], args: tuple[Any, ...], timeout: float | None) -> Any:
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
            raise DecisionTimerExpired(f"no answer within {timeout:g} s") from None
        return value

    def close(self) -> None:
        self._armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self._previous)


def _make_caller(needs_timeouts: bool) -> _TimedCaller | _AlarmCaller:
    """The alarm caller in a main thread on POSIX, a worker-thread caller elsewhere."""
    if needs_timeouts and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread():
        try:
            return _AlarmCaller()
        except ValueError:  # signals unavailable here (an embedded interpreter)
            pass
    return _TimedCaller()


def play_scheduled(ctx: GameContext, sg: ScheduledGame) -> GameResult:
    """Play one scheduled game; every player failure is recorded, never raised."""
    return play_game(ctx, sg)[0]


def play_game(
    ctx: GameContext, sg: ScheduledGame, *, marker: Marker = _no_marker, record: bool = True
) -> tuple[GameResult, str | None]:
    """Play one scheduled game: its result, and (``record``) its episode record as the
    compact JSON text :mod:`.records` stores. ``marker(seat, ply)`` is called before code of
    ``seat``'s player runs and ``marker(-1)`` after. A game stopped by a provider outage comes
    back ``incomplete`` (see the module docstring), without a record."""
    started = time.perf_counter()
    try:
        return _play(ctx, sg, marker, record, started)
    except _Outage as stop:
        name = sg.seats[stop.seat]
        detail = f"stopped at ply {stop.ply}: {name!r} (seat {stop.seat}) could not reach its provider: {stop.detail}"
        fault = PlayerFault(
            seat=stop.seat,
            player=name,
            verdict="replay",
            kind=FaultKind.UNAVAILABLE,
            detail=scrub_and_cut(stop.detail, DETAIL_CHARS),
            ply=stop.ply,
        )
        result = GameResult.of(
            sg, reason=INCOMPLETE, returns=None, faults=[fault], detail=scrub_and_cut(detail, DETAIL_CHARS)
        )
        return result.model_copy(update={"duration_s": round(time.perf_counter() - started, 6)}), None


def _play(
    ctx: GameContext, sg: ScheduledGame, marker: Marker, record: bool, started: float
) -> tuple[GameResult, str | None]:
    schedule, settings = ctx.schedule, ctx.settings
    game = build_game(schedule)
    by_name = {e.name: e for e in schedule.entrants}
    broken: dict[int, tuple[FaultKind, str]] = {}
    players: list[Any] = []
    for seat, name in enumerate(sg.seats):
        marker(seat)
        try:
            players.append(build_player(by_name[name], fresh=ctx.fresh_players))
        except BaseException as exc:  # an entrant that cannot be built fails its seat, as data
            if _user_interrupted(exc):
                raise UserInterrupt() from None
            players.append(None)
            broken[seat] = (FaultKind.ERROR, f"player could not be built: {type(exc).__name__}: {exc}")
        finally:
            marker(-1)
    from arena_core.policy import IllegalActionPolicy

    policy = IllegalActionPolicy.parse(settings.policy)
    match = Match(
        game,
        sg.seed,
        policy=policy,
        turn_cap=settings.turn_cap,
        time_cap_s=settings.game_time_limit_s,
        players=list(sg.seats),
        record_observations=record,
    )
    tally = _Tally(len(sg.seats))
    game_deadline = None if settings.game_time_limit_s is None else time.monotonic() + settings.game_time_limit_s
    caller = _make_caller(settings.decision_time_limit_s is not None or settings.game_time_limit_s is not None)
    try:
        for seat, player in enumerate(players):
            begin = getattr(player, "begin_episode", None)
            if begin is None or seat in broken:
                continue
            marker(seat)
            try:
                caller.call(begin, (game, seat, sg.seed), settings.decision_time_limit_s)
            except DecisionTimerExpired as exc:
                broken[seat] = (FaultKind.TIMEOUT, f"begin_episode hung: {exc}")
            except BaseException as exc:
                if _user_interrupted(exc):
                    raise UserInterrupt() from None
                kind, detail = fault_of_exception(exc), f"begin_episode raised {type(exc).__name__}: {exc}"
                if kind is FaultKind.UNAVAILABLE and by_name[sg.seats[seat]].on_outage == "replay":
                    raise _Outage(seat, -1, detail) from None
                broken[seat] = (kind, detail)
            finally:
                marker(-1)
        while not match.done:
            to_act = match.to_act()
            assert to_act is not None  # the match is running
            seat = to_act
            tally.decisions[seat] += 1
            if seat in broken:
                kind, detail = broken[seat]
                match.fail(seat, detail, telemetry={"error_type": "broken", "fault": kind.value}, fault=kind)
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
            marker(seat, match.ply)
            try:
                replay = by_name[sg.seats[seat]].on_outage == "replay"
                _decide(match, seat, players[seat], caller, limit, game_bound, broken, settings, tally, replay)
            finally:
                marker(-1)
        for seat, player in enumerate(players):  # the result stands whatever an end hook does
            hook = getattr(player, "end_episode", None)
            if hook is None or seat in broken:
                continue
            marker(seat, match.ply)
            try:
                caller.call(hook, (episode_end(match, seat),), settings.decision_time_limit_s)
            except BaseException as exc:
                if _user_interrupted(exc):
                    raise UserInterrupt() from None
                warn_hook_failed(player, seat, exc)
            finally:
                marker(-1)
    finally:
        caller.close()
    end = match.end
    assert end is not None  # the loop above runs the match to its end
    for e in match.record.events:  # the record carries each failure's kind as a field too
        if isinstance(e, PolicyEvent):
            e.telemetry.setdefault("fault", fault_kind(e).value)
    faults = [
        PlayerFault(
            seat=e.player,
            player=sg.seats[e.player],
            verdict=e.verdict,
            kind=fault_kind(e),
            detail=scrub_and_cut(e.detail, DETAIL_CHARS),
            ply=e.ply,
        )
        for e in match.record.events
        if isinstance(e, PolicyEvent)
    ]
    returns = (
        None if end.returns is None else rank_offender_last([float(x) for x in end.returns], end.offender, end.reason)
    )
    result = GameResult.of(
        sg,
        reason=end.reason.value,
        returns=returns,
        offender=end.offender,
        plies=end.ply,
        faults=faults,
        decisions=tally.decisions,
        modes=tally.modes(),
        duration_s=round(time.perf_counter() - started, 6),
    )
    text = None
    if record:
        from .records import encode_record

        text = encode_record(sg.key, match.record)
    return result, text


_FORFEITS = (EndReason.FORFEIT.value, EndReason.PLAYER_ERROR.value, "crash")


def rank_offender_last(returns: list[float], offender: int | None, reason: EndReason | str) -> list[float]:
    """A forfeit or a crash is a loss: its offender must finish strictly last. The policy's
    forfeit returns give it the game's lowest reward and the others what keeps the declared sum
    (or 0); where that would not put the offender strictly below everyone (a general-sum game
    whose lowest reward is 0, a penalty of 0), its return is lowered to one below the lowest
    other return, so a crash when behind can never pay."""
    value = reason.value if isinstance(reason, EndReason) else reason
    if offender is None or value not in _FORFEITS or len(returns) < 2:
        return returns
    others = [r for i, r in enumerate(returns) if i != offender]
    if returns[offender] < min(others):
        return returns
    out = list(returns)
    out[offender] = min(others) - 1.0
    return out


#: the kind of the failure a policy event records: the core's one classifier
fault_kind = fault_of


class _Tally:
    """Per seat: decisions asked, and whether answers came as text (free) or actions (constrained)."""

    def __init__(self, seats: int):
        self.decisions = [0] * seats
        self.free = [0] * seats
        self.constrained = [0] * seats
        self.declared: list[str | None] = [None] * seats

    def answered(self, seat: int, answer: Any, legal: Sequence[Any] = ()) -> None:
        """Count one answer: text for the game to parse (free), or a legal action itself (constrained:
        a bot or a checkpoint naming one of a title's action strings is not answering in free text)."""
        if isinstance(answer, Move):
            mode = answer.telemetry.get("mode") if answer.telemetry else None
            if mode in ("free", "constrained"):
                self.declared[seat] = mode
            answer = answer.action
        if isinstance(answer, str) and not _is_one_of(answer, legal):
            self.free[seat] += 1
        elif answer is not None:
            self.constrained[seat] += 1

    def modes(self) -> list[str | None]:
        out: list[str | None] = []
        for seat in range(len(self.decisions)):
            if self.declared[seat]:
                out.append(self.declared[seat])
            elif self.free[seat] or self.constrained[seat]:
                out.append("free" if self.free[seat] >= self.constrained[seat] else "constrained")
            else:
                out.append(None)
        return out


def _is_one_of(answer: str, legal: Sequence[Any]) -> bool:
    return any(isinstance(a, str) and a == answer for a in legal)


def _decide(
    match: Match,
    seat: int,
    player: Any,
    caller: _TimedCaller | _AlarmCaller,
    limit: float | None,
    game_bound: bool,
    broken: dict[int, tuple[FaultKind, str]],
    settings: Settings,
    tally: _Tally,
    replay_outage: bool = False,
) -> None:
    game, pos = match.game, match.position
    decision = Decision.at(game, pos, seat, match.seed)
    try:
        answer = caller.call(player.act, (decision,), limit)
    except DecisionTimerExpired:
        if game_bound:
            match.truncate(
                EndReason.TIME_CAP, f"wall clock over {settings.game_time_limit_s} s (player {seat} was deciding)"
            )
            return
        detail = f"player hung: no answer within {limit:g} s (decision time limit)"
        broken[seat] = (FaultKind.TIMEOUT, detail)
        match.fail(
            seat, detail, telemetry={"error_type": "timeout", "fault": FaultKind.TIMEOUT.value}, fault=FaultKind.TIMEOUT
        )
        return
    except BaseException as exc:  # a crash is data, SystemExit and KeyboardInterrupt from player code too
        if _user_interrupted(exc):
            raise UserInterrupt() from None
        kind = fault_of_exception(exc)
        detail = f"player raised {type(exc).__name__}: {exc}"
        if kind is FaultKind.UNAVAILABLE and replay_outage:
            raise _Outage(seat, match.ply, detail) from None
        if kind is FaultKind.CAP_EXHAUSTED:
            broken[seat] = (kind, detail)  # no further calls: its cap will not come back
        match.fail(seat, detail, telemetry={"error_type": type(exc).__name__, "fault": kind.value}, fault=kind)
        return
    tally.answered(seat, answer, decision.legal_actions)
    if answer is None or (isinstance(answer, Move) and answer.action is None):
        match.fail(
            seat,
            "answer is not an action: None",
            attempted="None",
            telemetry={"fault": FaultKind.UNPARSEABLE.value},
            illegal=True,
            fault=FaultKind.UNPARSEABLE,
        )
        return
    submit_answer(match, decision, answer)
