"""Players that fail in every way a real one can, for the fault tests (with tournament_toys' game)."""

from __future__ import annotations

import os
import signal
import time

from arena_core.errors import PlayerError
from arena_core.faults import CapExhausted, FaultKind
from arena_core.players import BasePlayer, Decision


class ExitsWorker(BasePlayer):
    """Kills its own process (what ``os._exit``, a segfault or the OOM killer does to a worker)."""

    name = "exits"

    def __init__(self, seed: int = 0, how: str = "exit"):
        super().__init__(seed)
        self.how = how

    def act(self, decision: Decision) -> str:
        if self.how == "segv":
            os.kill(os.getpid(), signal.SIGSEGV)
        elif self.how == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        os._exit(3)


class RaisesBase(BasePlayer):
    """Raises a BaseException that is not an Exception."""

    name = "raises-base"

    def __init__(self, seed: int = 0, what: str = "SystemExit"):
        super().__init__(seed)
        self.what = what

    def act(self, decision: Decision) -> str:
        raise {"SystemExit": SystemExit(0), "KeyboardInterrupt": KeyboardInterrupt(), "GeneratorExit": GeneratorExit()}[
            self.what
        ]


class Capped(BasePlayer):
    """Plays right until its spending cap of ``calls`` decisions (per player object) is used up."""

    name = "capped"
    mode = "constrained"

    def __init__(self, seed: int = 0, calls: int = 3):
        super().__init__(seed)
        self.calls = int(calls)
        self._used = 0

    def act(self, decision: Decision):
        if self._used >= self.calls:
            raise CapExhausted(f"spending cap reached: {self._used} calls of {self.calls}")
        self._used += 1
        return "draw" if decision.observation["card"] < 6 else "stand"


class Leaky(BasePlayer):
    """Fails with an error that quotes a key at a position where a cut would split it."""

    name = "leaky"

    def act(self, decision: Decision) -> str:
        raise PlayerError("x" * 290 + " Authorization: Bearer sk-live-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


class SlowSkilled(BasePlayer):
    """Right play, slowly (for the Ctrl-C test)."""

    name = "slow"

    def __init__(self, seed: int = 0, delay_s: float = 0.05):
        super().__init__(seed)
        self.delay_s = float(delay_s)

    def act(self, decision: Decision) -> str:
        time.sleep(self.delay_s)
        return "draw" if decision.observation["card"] < 6 else "stand"


class Unbuildable(BasePlayer):
    name = "unbuildable"

    def __init__(self, seed: int = 0, **options):
        raise TypeError(f"Unbuildable takes no options {sorted(options)}")


class PreflightFails(BasePlayer):
    name = "preflight-fails"

    def preflight(self) -> None:
        raise PlayerError("endpoint http://127.0.0.1:9/v1 refused the connection")

    def act(self, decision: Decision) -> str:
        return "stand"


class Unstoppable(BasePlayer):
    """Hangs where the in-worker decision timer cannot reach it (SIGALRM blocked, as inside a long C call)."""

    name = "unstoppable"

    def act(self, decision: Decision) -> str:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        time.sleep(3600)
        return "stand"


class ReadTimeout(Exception):
    """What an HTTP client raises on a read timeout (named like httpx's): not a TimeoutError."""


class Fails(BasePlayer):
    """Fails its every decision in one way, for the fault-kind table (tests/test_fault_kinds.py)."""

    name = "fails"

    def __init__(self, seed: int = 0, how: str = "value_error"):
        super().__init__(seed)
        self.how = how

    def act(self, decision: Decision):
        from arena_core.players import Move

        how = self.how
        if how == "value_error":
            raise ValueError("bad state")
        if how == "timeout_error":
            raise TimeoutError("no answer")
        if how == "read_timeout":
            raise ReadTimeout("read timed out")
        if how == "provider_timeout":  # a typed player error that says where it happened
            err = PlayerError("timed out after 1 s waiting for http://127.0.0.1:1/v1")
            err.fault = FaultKind.TIMEOUT  # type: ignore[attr-defined]
            raise err
        if how == "player_error":
            raise PlayerError("HTTP 500 from http://127.0.0.1:1/v1")
        if how == "cap":
            raise CapExhausted("spending cap reached")
        if how == "garbage":
            return "%%% ?"
        if how == "none":
            return None
        if how == "move_none":
            return Move(None)
        if how == "illegal":
            return 99  # an action of the wrong kind: not in any legal set
        if how == "illegal_telemetry":  # the same illegal move, with what an LLM player's telemetry says of its parse
            return Move(99, telemetry={"parse_detail": "read '99'", "parse_method": "unparseable", "valid": False})
        if how == "unavailable":  # the endpoint is down: the provider's outage, not the player's move
            raise ConnectionRefusedError(111, "Connection refused")
        if how == "runtime_error":
            raise RuntimeError("boom")
        raise AssertionError(how)


class KillsWorkerOnce(BasePlayer):
    """SIGKILLs the process it runs in at its first decision of each game, once per game (a flag
    file in ``flags`` remembers): a pool or Ray worker killed mid-game. The replay plays on."""

    name = "kills-once"

    def __init__(self, seed: int = 0, flags: str = "", just_once: bool = False):
        super().__init__(seed)
        self.flags, self.just_once = flags, just_once  # just_once: one kill in the whole run

    def act(self, decision: Decision):
        flag = "once" if self.just_once else f"{decision.episode_seed}-{decision.seat}"
        try:
            os.close(os.open(os.path.join(self.flags, flag), os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            return "stand"
        os.kill(os.getpid(), signal.SIGKILL)


class DiesAtEachPoint(BasePlayer):
    """Its worker dies at a different point of each attempt of a game: begin_episode, then its move,
    then end_episode (never twice at one decision: infrastructure, by the replay rule)."""

    name = "dies-around"

    def __init__(self, seed: int = 0, flags: str = ""):
        super().__init__(seed)
        self.flags = flags

    def _die_at(self, point: int, seed: int, seat: int) -> None:
        done = len([f for f in os.listdir(self.flags) if f.startswith(f"{seed}-{seat}-")])
        if done + 1 == point:
            open(os.path.join(self.flags, f"{seed}-{seat}-{point}"), "w").close()
            os.kill(os.getpid(), signal.SIGKILL)

    def begin_episode(self, game, seat, episode_seed):
        self._seat, self._seed = seat, episode_seed
        self._die_at(1, episode_seed, seat)

    def act(self, decision: Decision):
        self._die_at(2, decision.episode_seed, decision.seat)
        return "stand"

    def end_episode(self, end):
        self._die_at(3, self._seed, self._seat)


class EnvSlowSkilled(BasePlayer):
    """Right play, slowed by $ARENA_TOY_DELAY_S seconds a decision (read when it acts: not part of its
    identity, so a resumed run may go at full speed)."""

    name = "env-slow"

    def act(self, decision: Decision) -> str:
        time.sleep(float(os.environ.get("ARENA_TOY_DELAY_S", "0")))
        return "draw" if decision.observation["card"] < 6 else "stand"
