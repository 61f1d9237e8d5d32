"""The harness over the pure rules: caps, the illegal-action policy, and the episode record; every
adapter and game loop drives a :class:`Match` (docs/core.md, "The harness")."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .episode import End, EndReason, EpisodeRecord, Header, PolicyEvent, Step, digest
from .errors import GameOverError, IllegalActionError, NotYourTurnError
from .faults import FaultKind
from .game import Game, Position
from .policy import RAISE, IllegalActionPolicy, Verdict


@dataclass(frozen=True)
class Submission:
    """What happened to one submitted action."""

    accepted: bool  # an action was applied (the submitted one or a substitute)
    verdict: Verdict | None = None  # set when the policy was applied
    action: Any = None  # the action applied, if any


class Match:
    """One episode of ``game`` from ``seed`` under a harness configuration."""

    def __init__(
        self,
        game: Game[Any, Any],
        seed: int,
        *,
        policy: IllegalActionPolicy = RAISE,
        turn_cap: int | None = None,
        time_cap_s: float | None = None,
        players: list[str] | None = None,
        sink: Callable[[Any], None] | None = None,
        record_observations: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ):
        if turn_cap is not None and turn_cap < 1:
            raise ValueError("turn_cap must be >= 1")
        self.game = game
        self.seed = int(seed)
        self.policy = policy
        self.turn_cap = turn_cap
        # with no cap given, the game's declared max_length caps it: a longer game is truncated, never a draw
        self._cap = game.spec.max_length if turn_cap is None else turn_cap
        self.time_cap_s = time_cap_s
        self._clock = clock
        self._started = clock()
        self._sink = sink
        self._record_obs = record_observations
        self.position: Position[Any] = game.start(self.seed)
        self.end: End | None = None
        self._failures: dict[int, int] = {}
        self._to_act_pos: Position[Any] | None = None
        self._to_act: int | None = None
        self._players = list(players or [])
        self._events: list[Any] = []  # Step/PolicyEvent, or a raw step tuple until the record is read
        self._record: EpisodeRecord | None = None
        if sink is not None:
            sink(self._header())
        if game.is_over(self.position):
            self._finish(EndReason.NATURAL)

    def _header(self) -> Header:
        return Header(
            game=self.game.spec.id,
            game_version=self.game.spec.version,
            params=self.game.params.model_dump(mode="json"),
            num_players=self.game.num_players,
            seed=self.seed,
            players=self._players,
            policy=self.policy.model_dump(mode="json"),
            turn_cap=self.turn_cap,
            time_cap_s=self.time_cap_s,
        )

    @property
    def record(self) -> EpisodeRecord:
        """The episode so far (built on demand: recording costs nothing until it is read)."""
        if self._record is None:
            self._record = EpisodeRecord(header=self._header())
        events = self._record.events
        for i in range(len(events), len(self._events)):
            event = self._events[i]
            if type(event) is tuple:
                event = self._events[i] = self._step(*event)
            events.append(event)
        self._record.end = self.end
        return self._record

    def _step(
        self, ply: int, player: int, action: Any, substituted: bool, obs_digest: str, telemetry: dict[str, Any]
    ) -> Step:
        return Step(
            ply=ply,
            player=player,
            action=self.game.action_to_str(action),
            action_id=self.game.action_id(action),
            substituted=substituted,
            obs_digest=obs_digest,
            telemetry=telemetry,
        )

    # ---------------------------------------------------------------- queries
    @property
    def done(self) -> bool:
        return self.end is not None

    @property
    def ply(self) -> int:
        return self.position.ply

    def to_act(self) -> int | None:
        if self._to_act_pos is not self.position:
            self._to_act_pos = self.position
            self._to_act = None if self.done else self.game.current_player(self.position)
        return None if self.done else self._to_act

    def legal_actions(self, player: int) -> tuple[Any, ...]:
        return () if self.done else self.game.legal(self.position, player)

    def observation(self, player: int) -> dict[str, Any]:
        return self.game.observe(self.position, player)

    def returns(self) -> tuple[float, ...] | None:
        """Final returns, or None while running and for truncated episodes (never a draw)."""
        return None if self.end is None or self.end.returns is None else tuple(self.end.returns)

    # ---------------------------------------------------------------- actions
    def submit(self, player: int, action: Any, *, telemetry: dict[str, Any] | None = None) -> Submission:
        """Submit ``player``'s action; the policy handles an illegal one."""
        if self.end is not None:
            raise GameOverError(
                f"{self.game.spec.id}: the episode has ended ({self.end.reason.value}); no more actions"
            )
        expected = self.to_act()
        if player != expected:
            raise NotYourTurnError(f"{self.game.spec.id}: player {expected} is to act, not player {player}")
        obs_digest = digest(self.game.observe(self.position, player)) if self._record_obs else ""
        try:
            new_pos = self.game.act(self.position, player, action)
        except IllegalActionError as exc:
            detail = str(exc)
            why = self.game.illegal_reason(self.position.state, player, action) if exc.player == player else None
            if why:
                detail = f"{detail}; reason: {why}"
            return self._apply_policy(player, self.game._describe(action), detail, telemetry, obs_digest)
        self._accept(player, action, new_pos, obs_digest, telemetry, substituted=False)
        return Submission(True, None, action)

    def submit_id(self, player: int, index: int, *, telemetry: dict[str, Any] | None = None) -> Submission:
        """:meth:`submit` with an action index."""
        try:
            action = self.game.action_from_id(int(index))
        except (ValueError, IndexError, KeyError, TypeError):
            return self.fail(
                player,
                f"action index {index!r} is not an action of {self.game.spec.id}",
                attempted=repr(index),
                telemetry=telemetry,
                illegal=True,
                fault=FaultKind.UNPARSEABLE,
            )
        return self.submit(player, action, telemetry=telemetry)

    def fail(
        self,
        player: int,
        detail: str,
        *,
        attempted: str | None = None,
        telemetry: dict[str, Any] | None = None,
        illegal: bool = False,
        fault: FaultKind | None = None,
    ) -> Submission:
        """Record that ``player`` failed to produce a legal action (crash, timeout, garbage);
        ``fault`` is its kind as the caller saw it happen (default: illegal if ``illegal``, else error), never inferred."""
        if self.done:
            raise GameOverError(f"{self.game.spec.id}: the episode has ended; no more actions")
        if player != self.to_act():
            raise NotYourTurnError(f"{self.game.spec.id}: player {self.to_act()} is to act, not player {player}")
        obs_digest = digest(self.game.observe(self.position, player)) if self._record_obs else ""
        kind = fault or (FaultKind.ILLEGAL if illegal else FaultKind.ERROR)
        return self._apply_policy(player, attempted, detail, telemetry, obs_digest, illegal=illegal, fault=kind)

    def truncate(self, reason: EndReason = EndReason.TURN_CAP, detail: str = "") -> None:
        """End the episode from the harness (never a game outcome)."""
        if not reason.truncated:
            raise ValueError(f"{reason} is not a truncation reason")
        if not self.done:
            self._finish(reason, detail=detail)

    def check_clock(self) -> None:
        """Truncate if the wall-clock cap has passed."""
        if not self.done and self.time_cap_s is not None and self._clock() - self._started > self.time_cap_s:
            self._finish(EndReason.TIME_CAP, detail=f"wall clock over {self.time_cap_s} s")

    # ---------------------------------------------------------------- internals
    def _apply_policy(
        self,
        player: int,
        attempted: Any,
        detail: str,
        telemetry: dict[str, Any] | None,
        obs_digest: str,
        *,
        illegal: bool = True,
        fault: FaultKind = FaultKind.ILLEGAL,  # an action the rules refuse: illegal whatever the telemetry says
    ) -> Submission:
        self._failures[player] = self._failures.get(player, 0) + 1
        verdict = self.policy.verdict(self._failures[player])
        if verdict is Verdict.RAISE:
            if illegal:
                raise IllegalActionError(detail, player=player)
            verdict = Verdict.FORFEIT  # a crashed player cannot be "raised" past: it forfeits
        event = PolicyEvent(
            ply=self.ply,
            player=player,
            attempted=attempted,
            verdict=verdict.value,
            illegal=illegal,
            detail=detail,
            telemetry=dict(telemetry or {}),
            fault=fault,
        )
        self._emit_event(event)
        if verdict is Verdict.RETRY:
            return Submission(False, verdict)
        if verdict is Verdict.DEFAULT:
            action = self.game.default_action(self.position.state, player)
            new_pos = self.game.act(self.position, player, action)
            self._accept(player, action, new_pos, obs_digest, {}, substituted=True)
            return Submission(True, verdict, action)
        reason = EndReason.FORFEIT if illegal else EndReason.PLAYER_ERROR
        self._finish(reason, offender=player, detail=detail)
        return Submission(False, verdict)

    def _accept(
        self,
        player: int,
        action: Any,
        new_pos: Position[Any],
        obs_digest: str,
        telemetry: dict[str, Any] | None,
        *,
        substituted: bool,
    ) -> None:
        self._failures[player] = 0
        raw = (self.ply, player, action, substituted, obs_digest, dict(telemetry) if telemetry else {})
        self.position = new_pos
        if self._sink is None:
            self._events.append(raw)
        else:
            self._emit_event(self._step(*raw))
        if self.game.is_over(new_pos):
            self._finish(EndReason.NATURAL)
        elif new_pos.ply >= self._cap:
            self._finish(
                EndReason.TURN_CAP,
                detail=f"turn cap of {self._cap} decisions"
                + ("" if self.turn_cap else " (the game's declared max_length)"),
            )
        else:
            self.check_clock()

    def _finish(self, reason: EndReason, *, offender: int | None = None, detail: str = "") -> None:
        over = self.game.is_over(self.position)
        if reason is EndReason.NATURAL:  # a terminal state: the game says why (usually its rules)
            reason = self.game.end_reason(self.position.state)
            if reason is not EndReason.NATURAL:
                offender = self.game.end_offender(self.position.state)
                detail = detail or f"ended by the game engine: {reason.value}"
        if reason.truncated:
            returns = None  # cut off, never a draw
        elif over:
            returns = list(self.game.final_returns(self.position))
        else:  # the harness ended it: a forfeit under the policy
            returns = list(self.policy.forfeit_returns(self.game.spec, self.game.num_players, offender))
        self.end = End(
            reason=reason,
            terminated=not reason.truncated,
            truncated=reason.truncated,
            returns=returns,
            ply=self.ply,
            offender=offender,
            detail=detail,
        )
        if self._sink is not None:
            self._sink(self.end)

    def _emit_event(self, event: Step | PolicyEvent) -> None:
        self._events.append(event)
        if self._sink is not None:
            self._sink(event)
