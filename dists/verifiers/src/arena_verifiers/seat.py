"""One Arena game whose model seats answer through chat messages, the others by Arena players.

    game = ModelSeatGame(SeatTask("matrix", seed=3, seat=0, opponents=("matrix_uniform",)))
    user = game.messages()                      # [system, user]: the snapshot prompt
    while user is not None:
        user = game.reply(call_the_model(...))  # the next user turn (feedback or the new state), None at the end
    game.reward, game.info                      # the seat's return; illegal answers, forfeit, end reason

An opponent spec ``"model"`` (:data:`MODEL`) makes that seat a model seat too (self-play, or a
second model): then ``game.to_answer`` names the model seat to answer now, ``messages(seat)`` and
``reply(text, seat)`` take it, ``reply`` returns the next user message for ``game.to_answer``,
and ``reward_of(seat)`` / ``info_of(seat)`` read each seat. With one model seat nothing changes.

An answer goes through the same door as every Arena player's (``runner.submit_answer``: the
game's text view reads it); an unreadable or illegal one is recorded under the policy
``retry`` ``max_retries`` times, then ``forfeit`` (the game ends, the offender gets the forfeit
return). The model is then asked again with one feedback message naming the legal answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from arena_core.episode import PolicyEvent
from arena_core.faults import fault_of
from arena_core.match import Match
from arena_core.players import Decision, Player, begin_episodes, end_episodes
from arena_core.policy import IllegalActionPolicy
from arena_core.registry import make_game, make_player
from arena_core.runner import step_player, submit_answer
from arena_core.seeding import derive_seed

MODEL = "model"
"""The opponent spec of a seat answered by a model (through :meth:`ModelSeatGame.reply`), not a player."""


@dataclass(frozen=True)
class SeatTask:
    """One rollout: the game and its parameters, the deal seed, the model's seat, and the
    player specs of the other seats in seat order (``"random"`` by default; :data:`MODEL` for a
    seat answered by a model too)."""

    game: str
    seed: int
    seat: int = 0
    opponents: tuple[str, ...] = ()
    params: dict[str, Any] = field(default_factory=dict)
    num_players: int | None = None
    max_retries: int = 2


class ModelSeatGame:
    """The game of one :class:`SeatTask`, advanced one model answer at a time."""

    def __init__(self, task: SeatTask):
        self.task = task
        self.game = make_game(task.game, task.params or None, num_players=task.num_players)
        n = self.game.num_players
        if not 0 <= task.seat < n:
            raise ValueError(f"seat must be in 0..{n - 1}, got {task.seat}")
        specs = list(task.opponents) or ["random"] * (n - 1)
        if len(specs) != n - 1:
            raise ValueError(f"{task.game} with {n} players needs {n - 1} opponents, got {len(specs)}")
        others = [s for s in range(n) if s != task.seat]
        self.model_seats = tuple(sorted([task.seat] + [s for s, spec in zip(others, specs) if spec == MODEL]))
        self.players: dict[int, Player] = {
            s: make_player(spec, seed=derive_seed(task.seed, "opponent", s))
            for s, spec in zip(others, specs)
            if spec != MODEL
        }
        names = [(MODEL if s in self.model_seats else specs[others.index(s)]) for s in range(n)]
        policy = IllegalActionPolicy(mode="retry", max_retries=task.max_retries, after_retries="forfeit")
        self.match = Match(self.game, task.seed, policy=policy, players=names)
        self.faults_by_seat: dict[int, list[str]] = {s: [] for s in self.model_seats}
        begin_episodes(self.players, self.game, task.seed)
        self._advance()

    @property
    def done(self) -> bool:
        return self.match.done

    @property
    def to_answer(self) -> int | None:
        """The model seat whose answer the game waits for (None once the game has ended)."""
        return self.match.to_act()

    @property
    def faults(self) -> list[str]:
        """The fault kinds of the task's seat, in order."""
        return self.faults_by_seat[self.task.seat]

    def messages(self, seat: int | None = None) -> list[dict[str, str]]:
        """The prompt of a model seat (the task's by default) for its current decision
        (system: the rules; user: the state)."""
        if self.done:
            raise RuntimeError("the game has ended")
        seat = self.task.seat if seat is None else seat
        if seat not in self.model_seats:
            raise ValueError(f"seat {seat} is not a model seat {self.model_seats}")
        prompt = Decision.at(self.game, self.match.position, seat, self.task.seed).prompt()
        return prompt.messages()

    def reply(self, text: str, seat: int | None = None) -> str | None:
        """Submit the answer of the model seat to act (the task's seat by default); the next user
        message for :attr:`to_answer` (feedback and the state again, or the new state), or None
        once the game ends."""
        if self.done:
            raise RuntimeError("the game has ended")
        seat = self.task.seat if seat is None else seat
        if seat != self.match.to_act():
            raise ValueError(f"seat {seat} is not to act (seat {self.match.to_act()} is)")
        decision = Decision.at(self.game, self.match.position, seat, self.task.seed)
        before = len(self.match.record.events)
        submit_answer(self.match, decision, text)
        failed = [e for e in self.match.record.events[before:] if isinstance(e, PolicyEvent)]
        self.faults_by_seat[seat] += [fault_of(e).value for e in failed]
        self._advance()
        if (nxt := self.to_answer) is None:
            return None
        state = self.messages(nxt)[-1]["content"]
        if failed and nxt == seat:
            legal = ", ".join(decision.prompt().legal)
            return f"Your answer could not be used ({failed[-1].detail}). Reply with exactly one of: {legal}\n\n{state}"
        return state

    def _advance(self) -> None:
        while (seat := self.match.to_act()) is not None and seat not in self.model_seats:
            step_player(self.match, seat, self.players[seat])
        if self.match.done:
            end_episodes(self.players, self.match)

    @property
    def reward(self) -> float:
        """The task seat's return (see :meth:`reward_of`)."""
        return self.reward_of(self.task.seat)

    def reward_of(self, seat: int) -> float:
        """A seat's return (0 while running or when the game was cut off without a result)."""
        end = self.match.end
        return float(end.returns[seat]) if end is not None and end.returns is not None else 0.0

    @property
    def info(self) -> dict[str, Any]:
        return self.info_of(self.task.seat)

    def info_of(self, seat: int) -> dict[str, Any]:
        """What a model seat's trace records: the deal, the seat, its faults, a forfeit, the end."""
        end = self.match.end
        return {
            "game": self.task.game,
            "seed": self.task.seed,
            "seat": seat,
            "model_seats": list(self.model_seats),
            "faults": list(self.faults_by_seat[seat]),
            "forfeit": end is not None and end.offender == seat,
            "end_reason": end.reason.value if end is not None else "",
        }
