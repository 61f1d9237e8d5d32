"""The backends that play a tournament's games: this process, a local process pool, or Ray.

Each backend takes the games to play (an iterator the runner may still cut short) and yields
``(GameResult, record text)`` as games end, in any order. The process pool is built for
isolation: one game per worker at a time, a shared-memory marker naming the seat whose code
runs, a replacement for a worker that dies (its game is a ``crash`` of that entrant) and a
watchdog that kills a worker hung where its own decision timer cannot reach (a ``timeout``).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from arena_core.errors import ConfigError
from arena_core.faults import FaultKind

from .config import RunOptions
from .play import GameContext, build_game, play_game
from .results import GameResult, PlayerFault
from .schedule import ScheduledGame

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

#: what a backend yields: a game's result and its record text (None: no record)
Played = tuple[GameResult, "str | None"]


def _run_sequential(ctx: GameContext, todo: Iterable[ScheduledGame], options: RunOptions) -> Iterator[Played]:
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


def _worker_main(conn: Connection, ctx: GameContext, path: list[str], parent: int, seat_marker: Any) -> None:
    """A pool worker: play each game sent, answer (result, record); ``seat_marker`` (a shared
    ctypes array of two doubles) holds the seat whose player code is running, for the parent to read if we die."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops us
    _exit_with_parent(parent)
    for entry in reversed(path):
        if entry not in sys.path:
            sys.path.insert(0, entry)

    def mark(seat: int) -> None:
        seat_marker[1] = time.monotonic()  # system-wide on Linux: the parent compares it with its own clock
        seat_marker[0] = seat

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
        self.marker = context.RawArray("d", [-1.0, 0.0])  # [seat whose code runs, since (monotonic)]
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
    """The line of a game whose worker died (or was killed, hung: ``kind`` TIMEOUT): a forfeit
    of ``seat``'s entrant (it counts as a loss, last place), or, when no player code was running
    (``seat`` -1), a game with no result (``game_error``)."""
    if seat < 0:
        return GameResult.of(
            sg,
            reason="game_error" if kind is FaultKind.CRASH else "time_cap",
            returns=None,
            detail=(
                f"the worker process died outside any player's code, or whose is not known ({why}); the game has no result"
                if kind is FaultKind.CRASH
                else f"{why}; the game has no result"
            ),
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


def _run_process(ctx: GameContext, todo: Iterable[ScheduledGame], options: RunOptions) -> Iterator[Played]:
    """A pool of worker processes, one game each at a time. A worker that dies is replaced; its
    game is recorded as a crash of the entrant whose code was running (shared-memory marker)."""
    import multiprocessing as mp
    from multiprocessing.connection import wait

    n = options.workers or os.cpu_count() or 1
    games = iter(todo)
    limit, game_limit = ctx.settings.decision_time_limit_s, ctx.settings.game_time_limit_s
    watch = limit is not None or game_limit is not None
    workers: list[_Worker] = []
    try:
        for _ in range(n):
            workers.append(_Worker(mp.get_context(_start_method(options.start_method)), ctx))
        exhausted = False
        while True:
            for w in workers:
                if w.game is None and not exhausted:
                    nxt = next(games, None)
                    if nxt is None:
                        exhausted = True
                        break
                    w.game = nxt
                    w.marker[0], w.marker[1] = -1.0, time.monotonic()
                    w.sent = time.monotonic()
                    try:
                        w.conn.send(nxt)
                    except (OSError, ValueError):
                        pass  # a dead worker: its sentinel says so below
            busy = [w for w in workers if w.game is not None]
            if not busy:
                return
            ready = set(wait([w.conn for w in busy] + [w.proc.sentinel for w in busy], timeout=1.0 if watch else None))
            for i, w in enumerate(workers):
                if w.game is None:
                    continue
                if w.conn not in ready and w.proc.sentinel not in ready:
                    stuck = _stuck(w, limit, game_limit)
                    if stuck is not None:  # hung where the in-worker timer cannot reach (a long C call)
                        sg, w.game = w.game, None
                        seat = int(w.marker[0])
                        w.stop(kill=True)
                        workers[i] = _Worker(mp.get_context(_start_method(options.start_method)), ctx)
                        yield crash_result(ctx, sg, seat, stuck, kind=FaultKind.TIMEOUT), None
                    continue
                message = None
                try:
                    if w.conn.poll():
                        message = w.conn.recv()
                except (EOFError, OSError):
                    message = None
                sg, w.game = w.game, None
                if message is not None:
                    status, payload, record = message
                    if status == "error":
                        raise RuntimeError(f"game {sg.key}: {payload}")
                    yield GameResult.model_validate(payload), record
                    continue
                w.proc.join(5)
                seat = int(w.marker[0])
                why = _death(w.proc)
                w.stop(kill=True)
                workers[i] = _Worker(mp.get_context(_start_method(options.start_method)), ctx)
                yield crash_result(ctx, sg, seat, why), None
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


def _marker_file(marker_dir: str, key: str) -> str:
    import hashlib

    return os.path.join(marker_dir, hashlib.sha1(key.encode()).hexdigest())


def _play_with_context(
    ctx: GameContext, sg: ScheduledGame, marker_dir: str | None = None
) -> tuple[dict[str, Any], str | None]:
    """A Ray task. With ``marker_dir`` (a directory of this machine), the seat whose code runs
    is kept in a small file there, for the driver to read if the worker dies."""
    if marker_dir is None:
        result, record = play_game(ctx, sg)
        return result.model_dump(mode="json"), record
    path = _marker_file(marker_dir, sg.key)
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)

    def mark(seat: int) -> None:
        os.pwrite(fd, seat.to_bytes(4, "little", signed=True), 0)

    try:
        mark(-1)
        result, record = play_game(ctx, sg, marker=mark)
    finally:
        os.close(fd)
    os.unlink(path)
    return result.model_dump(mode="json"), record


def _read_marker(marker_dir: str | None, key: str) -> int | None:
    if marker_dir is None:
        return None
    try:
        with open(_marker_file(marker_dir, key), "rb") as fh:
            data = fh.read(4)
        os.unlink(_marker_file(marker_dir, key))
    except OSError:
        return None
    return int.from_bytes(data, "little", signed=True) if len(data) == 4 else None


def _run_ray(ctx: GameContext, todo: Iterable[ScheduledGame], options: RunOptions) -> Iterator[Played]:
    try:
        import ray
    except ImportError:
        raise ConfigError("backend 'ray' needs Ray; fix: pip install 'turn-arena-core[ray]'") from None
    started_here = not ray.is_initialized()
    if started_here:
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
        if options.ray_address:
            kwargs["address"] = options.ray_address
        else:
            kwargs["num_cpus"] = options.workers or os.cpu_count() or 1
            kwargs["runtime_env"] = {"env_vars": {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}}
        ray.init(**kwargs)
    import shutil
    import tempfile

    # on this machine only, workers leave a marker file naming the seat whose code runs
    marker_dir = None if options.ray_address else tempfile.mkdtemp(prefix="arena-ray-markers-")
    try:
        remote = ray.remote(num_cpus=1, max_retries=0)(_play_with_context)
        ctx_ref = ray.put(ctx)
        cpus = ray.available_resources().get("CPU", 1)  # type: ignore[no-untyped-call]  # ray leaves it unannotated
        window = 4 * int(cpus or 1) + 4
        games = iter(todo)
        pending = {}
        for _, sg in zip(range(window), games):
            pending[remote.remote(ctx_ref, sg, marker_dir)] = sg
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                sg = pending.pop(ref)
                try:
                    payload, record = ray.get(ref)
                except ray.exceptions.WorkerCrashedError as exc:
                    seat = _read_marker(marker_dir, sg.key)
                    why = f"the Ray worker died ({type(exc).__name__})"
                    if seat is None:  # a remote cluster: whose code ran is not known here
                        yield (
                            crash_result(
                                ctx, sg, -1, why + "; which player was deciding is not known on a remote cluster"
                            ),
                            None,
                        )
                    else:
                        yield crash_result(ctx, sg, seat, why), None
                else:
                    yield GameResult.model_validate(payload), record
                nxt = next(games, None)
                if nxt is not None:
                    pending[remote.remote(ctx_ref, nxt, marker_dir)] = nxt
    finally:
        if marker_dir is not None:
            shutil.rmtree(marker_dir, ignore_errors=True)
        if started_here:
            ray.shutdown()


BACKENDS: dict[str, Callable[[GameContext, Iterable[ScheduledGame], RunOptions], Iterable[Played]]] = {
    "sequential": _run_sequential,
    "process": _run_process,
    "ray": _run_ray,
}
