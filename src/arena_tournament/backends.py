"""The backends that play a tournament's games: this process, a local process pool, or Ray.

Each backend takes the games to play (an iterator the runner may still cut short) and yields
``(GameResult, record text)`` as games end, in any order. The process pool is built for
isolation: one game per worker at a time, a shared-memory marker naming the seat whose code
runs and the decision (ply), a replacement for a worker that dies, and a watchdog that kills a
worker hung where its own decision timer cannot reach (a ``timeout`` of that seat).

A dead worker (process pool or Ray: ``os._exit``, a segfault, the OOM killer, a SIGKILL, a lost
node) is infrastructure until shown otherwise (:class:`Replays`): its game is played again on a
fresh worker, the lost attempt listed in the result's ``retried``. Only a second death at the same
decision of the same seat is charged, as a ``crash`` forfeit of the entrant whose code was
running, with both deaths as evidence; deaths at different decisions (or outside any player's
code, or on a remote node where whose code ran is not known) are replayed up to
:data:`MAX_DEATHS` times, then the game is recorded without a result (``game_error``), charged to
nobody.

Ray: a cluster the run starts is this machine's only, bound to 127.0.0.1 (``run.ray_address``
joins an existing one instead); Ray's own log lines are shown only without ``--quiet``; and the
cluster goes down with the run on every exit path: normally, on an error or a signal, and when
the driver is killed outright (a small reaper process, :mod:`.ray_reaper`, watches the driver).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from arena_core.faults import FaultKind

from .config import RunOptions
from .entrants import build_game
from .play import GameContext, play_game
from .results import GameResult, PlayerFault
from .schedule import ScheduledGame

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

#: what a backend yields: a game's result and its record text (None: no record)
Played = tuple[GameResult, "str | None"]


def _run_sequential(
    ctx: GameContext, todo: Iterable[ScheduledGame], options: RunOptions, quiet: bool = False
) -> Iterator[Played]:
    for sg in todo:
        yield play_game(ctx, sg)


def _exit_with_parent(parent: int, every_s: float = 0.5) -> None:
    """A pool worker outliving its parent (killed with SIGKILL) would wait forever: watch and exit.
    ``parent`` comes from the parent itself: a worker started just as the parent died must not
    take its new parent (init) for the real one."""
    if os.getppid() != parent:
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every_s)
        os._exit(1)

    threading.Thread(target=watch, name="arena-parent-watch", daemon=True).start()


def _worker_main(conn: Connection, ctx: GameContext, path: list[str], parent: int, marker: Any) -> None:
    """A pool worker: play each game sent, answer (result, record); ``marker`` (a shared ctypes
    array of three doubles: seat, since, ply) says whose code runs at which decision, for the
    parent to read if we die. Ctrl-C and SIGTERM are the parent's to handle: it stops us."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _exit_with_parent(parent)
    for entry in reversed(path):
        if entry not in sys.path:
            sys.path.insert(0, entry)

    def mark(seat: int, ply: int = -1) -> None:
        marker[1] = time.monotonic()  # system-wide on Linux: the parent compares it with its own clock
        marker[2] = ply
        marker[0] = seat

    while True:
        try:
            sg = conn.recv()
        except (EOFError, OSError):
            return
        if sg is None:
            return
        try:
            result, record = play_game(ctx, sg, marker=mark)
            conn.send(("ok", result.model_dump(mode="json"), record))
        except BaseException as exc:  # the game engine itself failed: the parent raises it
            conn.send(("error", f"{type(exc).__name__}: {exc}", None))


class _Worker:
    def __init__(self, context: Any, ctx: GameContext) -> None:  # context: from mp.get_context(method)
        self.marker = context.RawArray("d", [-1.0, 0.0, -1.0])  # [seat whose code runs, since (monotonic), ply]
        self.conn, child = context.Pipe()
        self.proc = context.Process(
            target=_worker_main,
            args=(child, ctx, list(sys.path), os.getpid(), self.marker),
            daemon=True,
            name="arena-worker",
        )
        self.proc.start()
        child.close()
        self.game: ScheduledGame | None = None
        self.sent = 0.0

    def send(self, sg: ScheduledGame) -> None:
        self.game = sg
        self.marker[0], self.marker[1], self.marker[2] = -1.0, time.monotonic(), -1.0
        self.sent = time.monotonic()
        try:
            self.conn.send(sg)
        except (OSError, ValueError):
            pass  # a dead worker: its sentinel says so

    def stop(self, kill: bool = False) -> None:
        try:
            if kill:
                self.proc.kill()
            else:
                self.conn.send(None)
        except (OSError, ValueError):
            pass
        self.proc.join(2 if not kill else 5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5)
        self.conn.close()


def _stuck(w: _Worker, limit: float | None, game_limit: float | None) -> str | None:
    """Why worker ``w`` is past all patience, or None. The worker's own timer handles ordinary
    hangs; this catches a player stuck where no signal reaches (a long C call, SIGALRM
    blocked): a decision over its limit by half as much again plus 2 s, a game likewise."""
    now = time.monotonic()
    seat, since = int(w.marker[0]), float(w.marker[1])
    if limit is not None and seat >= 0 and now - since > 1.5 * limit + 2.0:
        return f"no answer within {limit:g} s, and the worker could not be interrupted; it was killed after {now - since:.1f} s"
    if game_limit is not None and now - w.sent > 1.5 * game_limit + 2.0:
        return f"the game ran over {game_limit:g} s and the worker could not be interrupted; it was killed after {now - w.sent:.1f} s"
    return None


def crash_result(
    ctx: GameContext, sg: ScheduledGame, seat: int, why: str, *, kind: FaultKind = FaultKind.CRASH
) -> GameResult:
    """The line of a game whose worker was killed hung (``kind`` TIMEOUT) or died twice at one
    decision (``kind`` CRASH): a forfeit of ``seat``'s entrant (a loss, last place), or, when no
    player code was running (``seat`` -1), a game with no result."""
    if seat < 0:
        return GameResult.of(
            sg,
            reason="game_error" if kind is FaultKind.CRASH else "time_cap",
            returns=None,
            detail=f"{why}; the game has no result",
        )
    from arena_core.policy import IllegalActionPolicy

    from .play import rank_offender_last

    game = build_game(ctx.schedule)
    policy = IllegalActionPolicy.parse(ctx.settings.policy)
    returns = rank_offender_last(list(policy.forfeit_returns(game.spec, game.num_players, seat)), seat, "crash")
    if kind is FaultKind.CRASH:
        detail = f"the worker process died while {sg.seats[seat]!r} (seat {seat}) was deciding: {why}"
    else:
        detail = f"{sg.seats[seat]!r} (seat {seat}) hung: {why}"
    return GameResult.of(
        sg,
        reason="crash" if kind is FaultKind.CRASH else "player_error",
        returns=returns,
        offender=seat,
        faults=[PlayerFault(seat=seat, player=sg.seats[seat], verdict="forfeit", kind=kind, detail=detail)],
        detail=detail,
    )


#: deaths of one game's workers before it is recorded without a result (unless two of them came at one decision)
MAX_DEATHS = 3


@dataclass(frozen=True)
class Death:
    """A worker that died while playing a game: whose code ran (seat -1: none, or not known) at which ply."""

    seat: int
    ply: int
    why: str

    def evidence(self, seats: Sequence[str]) -> str:
        if self.seat < 0:
            return f"the worker died outside any player's code, or whose code ran is not known: {self.why}"
        where = "before its first move" if self.ply < 0 else f"at ply {self.ply}"
        return f"the worker died {where} while {seats[self.seat]!r} (seat {self.seat}) was deciding: {self.why}"


@dataclass
class Replays:
    """The dead workers of each game and what follows: play it again (first death), charge the seat
    (a second death at the same decision), or record it without a result (:data:`MAX_DEATHS`)."""

    ctx: GameContext
    deaths: dict[str, list[Death]] = field(default_factory=dict)

    def after_death(self, sg: ScheduledGame, death: Death) -> GameResult | None:
        """None: play ``sg`` again on a fresh worker; else the game's final line."""
        seen = self.deaths.setdefault(sg.key, [])
        again = death.seat >= 0 and any(d.seat == death.seat and d.ply == death.ply for d in seen)
        seen.append(death)
        evidence = [d.evidence(sg.seats) for d in seen]
        if again:
            why = f"it died twice at the same decision ({'; '.join(d.why for d in seen if d.seat == death.seat and d.ply == death.ply)})"
            return crash_result(self.ctx, sg, death.seat, why).model_copy(update={"retried": evidence[:-1]})
        if len(seen) >= MAX_DEATHS:
            why = f"its worker died {len(seen)} times, never twice at one decision: infrastructure, charged to nobody"
            return crash_result(self.ctx, sg, -1, why).model_copy(update={"retried": evidence})
        return None

    def finished(self, result: GameResult) -> GameResult:
        """``result`` with the attempts its dead workers cost, if any."""
        seen = self.deaths.pop(result.key, [])
        if not seen:
            return result
        return result.model_copy(update={"retried": [d.evidence(result.seats) for d in seen] + result.retried})


def _death(proc: BaseProcess) -> str:
    code = proc.exitcode
    if code is None:
        return "no exit status"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def _run_process(
    ctx: GameContext, todo: Iterable[ScheduledGame], options: RunOptions, quiet: bool = False
) -> Iterator[Played]:
    """A pool of worker processes, one game each at a time. A worker that dies is replaced, and its
    game goes by :class:`Replays` (played again first, charged only after a second death at one decision)."""
    import multiprocessing as mp
    from multiprocessing.connection import wait

    n = options.workers or os.cpu_count() or 1
    context = mp.get_context(_start_method(options.start_method))
    games = iter(todo)
    again: deque[ScheduledGame] = deque()  # games whose worker died: played next, on a fresh worker
    replays = Replays(ctx)
    limit, game_limit = ctx.settings.decision_time_limit_s, ctx.settings.game_time_limit_s
    watch = limit is not None or game_limit is not None
    workers: list[_Worker] = []
    try:
        workers = [_Worker(context, ctx) for _ in range(n)]
        exhausted = False
        while True:
            for w in workers:
                if w.game is None and (again or not exhausted):
                    nxt = again.popleft() if again else next(games, None)
                    if nxt is None:
                        exhausted = True
                        continue
                    w.send(nxt)
            busy = [w for w in workers if w.game is not None]
            if not busy:
                return
            ready = set(wait([w.conn for w in busy] + [w.proc.sentinel for w in busy], timeout=1.0 if watch else None))
            for i, w in enumerate(workers):
                sg = w.game
                if sg is None:
                    continue
                if w.conn not in ready and w.proc.sentinel not in ready:
                    stuck = _stuck(w, limit, game_limit)
                    if stuck is not None:  # hung where the in-worker timer cannot reach (a long C call)
                        seat = int(w.marker[0])
                        w.game = None
                        w.stop(kill=True)
                        workers[i] = _Worker(context, ctx)
                        yield replays.finished(crash_result(ctx, sg, seat, stuck, kind=FaultKind.TIMEOUT)), None
                    continue
                message = None
                try:
                    if w.conn.poll():
                        message = w.conn.recv()
                except (EOFError, OSError):
                    message = None
                w.game = None
                if message is not None:
                    status, payload, record = message
                    if status == "error":
                        raise RuntimeError(f"game {sg.key}: {payload}")
                    yield replays.finished(GameResult.model_validate(payload)), record
                    continue
                w.proc.join(5)
                death = Death(int(w.marker[0]), int(w.marker[2]), _death(w.proc))
                w.stop(kill=True)
                workers[i] = _Worker(context, ctx)
                final = replays.after_death(sg, death)
                if final is None:
                    again.append(sg)
                else:
                    yield final, None
    finally:
        for w in workers:
            w.stop(kill=w.game is not None)


def _start_method(requested: str) -> str:
    """``auto``: fork (fast: workers inherit the loaded game and players) on Linux when this
    process runs no other thread, where forking is safe; spawn otherwise."""
    if requested != "auto":
        return requested
    if sys.platform.startswith("linux") and threading.active_count() == 1:
        return "fork"
    return "spawn"


# ---------------------------------------------------------------------- Ray
def _marker_file(marker_dir: str, key: str) -> str:
    import hashlib

    return os.path.join(marker_dir, hashlib.sha1(key.encode()).hexdigest())


def _play_with_context(
    ctx: GameContext, sg: ScheduledGame, marker_dir: str | None = None
) -> tuple[dict[str, Any], str | None]:
    """A Ray task. With ``marker_dir`` (a directory of this machine), the seat whose code runs
    and the ply are kept in a small file there, for the driver to read if the worker dies."""
    if marker_dir is None:
        result, record = play_game(ctx, sg)
        return result.model_dump(mode="json"), record
    path = _marker_file(marker_dir, sg.key)
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)

    def mark(seat: int, ply: int = -1) -> None:
        os.pwrite(fd, seat.to_bytes(4, "little", signed=True) + ply.to_bytes(4, "little", signed=True), 0)

    try:
        mark(-1)
        result, record = play_game(ctx, sg, marker=mark)
    finally:
        os.close(fd)
    os.unlink(path)
    return result.model_dump(mode="json"), record


def _read_marker(marker_dir: str | None, key: str) -> tuple[int, int]:
    """(seat, ply) a dead Ray task left in its marker file; (-1, -1) when not known here."""
    if marker_dir is None:
        return -1, -1
    try:
        with open(_marker_file(marker_dir, key), "rb") as fh:
            data = fh.read(8)
        os.unlink(_marker_file(marker_dir, key))
    except OSError:
        return -1, -1
    if len(data) != 8:
        return -1, -1
    return int.from_bytes(data[:4], "little", signed=True), int.from_bytes(data[4:], "little", signed=True)


def _run_ray(
    ctx: GameContext, todo: Iterable[ScheduledGame], options: RunOptions, quiet: bool = False
) -> Iterator[Played]:
    """Games as Ray tasks, a window of them in flight; a task whose worker or node died goes by
    :class:`Replays`, like a pool worker's game."""
    from . import ray_cluster

    with ray_cluster.connected(options, quiet=quiet) as ray:
        import shutil
        import tempfile

        # on this machine only, workers leave a marker file naming the seat whose code runs
        marker_dir = None if options.ray_address else tempfile.mkdtemp(prefix="arena-ray-markers-")
        try:
            remote = ray.remote(num_cpus=1, max_retries=0)(_play_with_context)
            ctx_ref = ray.put(ctx)
            cpus = ray.available_resources().get("CPU", 1)
            window = 4 * int(cpus or 1) + 4
            games = iter(todo)
            replays = Replays(ctx)
            pending = {}
            for _, sg in zip(range(window), games):
                pending[remote.remote(ctx_ref, sg, marker_dir)] = sg
            while pending:
                done, _ = ray.wait(list(pending), num_returns=1)
                for ref in done:
                    sg = pending.pop(ref)
                    try:
                        payload, record = ray.get(ref)
                    except ray_cluster.DEATHS as exc:
                        seat, ply = _read_marker(marker_dir, sg.key)
                        why = f"the Ray worker died ({type(exc).__name__})"
                        final = replays.after_death(sg, Death(seat, ply, why))
                        if final is None:  # played again on a fresh worker
                            pending[remote.remote(ctx_ref, sg, marker_dir)] = sg
                            continue
                        yield final, None
                    else:
                        yield replays.finished(GameResult.model_validate(payload)), record
                    nxt = next(games, None)
                    if nxt is not None:
                        pending[remote.remote(ctx_ref, nxt, marker_dir)] = nxt
        finally:
            if marker_dir is not None:
                shutil.rmtree(marker_dir, ignore_errors=True)


#: backend name -> ``backend(ctx, games, options, quiet) -> (result, record)`` as games end
BACKENDS: dict[str, Callable[[GameContext, Iterable[ScheduledGame], RunOptions, bool], Iterable[Played]]] = {
    "sequential": _run_sequential,
    "process": _run_process,
    "ray": _run_ray,
}
