"""``search``: determinized Monte Carlo search over any game that can sample hidden worlds.

At each decision the player runs ``simulations`` playouts. Each one draws a complete world
consistent with what this seat has seen (``game.sample_hidden_state``; a perfect-information
game's state is its own world), picks a root action by UCB1 over the candidate actions, plays it,
and lets a *rollout player* (any registered player spec, built with
:func:`arena_core.registry.make_player`) play every seat to the end. The root action with the best
mean return for this seat is played. Commitments other seats have made at a simultaneous move
are never read: each world starts with none pending, and the rollout player answers for them.

Every draw comes from the player's seed, the episode seed, the seat and the ply (no global RNG).
A rollout answer that is not a legal action, and a rollout that outlasts the game's
``max_length``, are counted in the move's telemetry (``rollout_faults``, ``truncated``), never
hidden: a faulty answer is replaced by the game's default action, a truncated rollout scores
0 for every seat.
"""

from __future__ import annotations

import math
import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from arena_core.errors import PlayerError, PlayerOptionsError
from arena_core.game import Game, Position
from arena_core.players import BasePlayer, Decision, Move
from arena_core.seeding import derive_seed, make_rng


class SearchSettings(BaseModel):
    """Options of :class:`SearchPlayer` (``search{simulations = 200, rollout = "random"}``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    simulations: int = Field(200, ge=1, description="playouts per decision (the simulation budget)")
    rollout: str = Field("random", description="player spec of the rollout policy, for every seat")
    exploration: float = Field(1.0, ge=0.0, description="UCB1 constant, in units of the observed spread of returns")
    candidates: int = Field(
        0,
        ge=0,
        description="0: every legal action is a root candidate; k: the rollout policy's own "
        "choice and its k-1 nearest legal actions by action index",
    )
    objective: Literal["return", "margin"] = Field(
        "return", description="what a playout scores: this seat's return, or its return minus the best other seat's"
    )


class SearchPlayer(BasePlayer):
    """Determinized (perfect-information) Monte Carlo search with UCB1 at the root."""

    name = "search"

    def __init__(self, seed: int = 0, **options: Any):
        super().__init__(seed)
        from .llm_common import player_settings

        self.settings = player_settings(SearchSettings, "search", options)
        if self.settings.rollout.split("{")[0].split(":")[0].strip() == "search":
            raise PlayerOptionsError(
                'search: the rollout policy cannot be search itself; name another player, e.g. rollout = "random"'
            )
        self._rollout: dict[int, Any] = {}
        self.stats = {"decisions": 0, "simulations": 0, "seconds": 0.0, "rollout_faults": 0, "truncated": 0}

    # ------------------------------------------------------------------ rollout players
    def _rollout_player(self, seat: int):
        player = self._rollout.get(seat)
        if player is None:
            from arena_core.registry import make_player

            player = self._rollout[seat] = make_player(
                self.settings.rollout, seed=derive_seed(self.seed, "rollout", seat)
            )
        return player

    def _answer(self, game: Game, pos: Position, seat: int, episode_seed: int, faults: list[int]):
        """The rollout player's legal action at ``pos`` (the default action, counted, otherwise)."""
        decision = Decision.at(game, pos, seat, episode_seed)
        try:
            answer = self._rollout_player(seat).act(decision)
            if isinstance(answer, Move):
                answer = answer.action
            if isinstance(answer, str):
                parsed = decision.parse(answer)
                answer = None if parsed.default_used else parsed.action
            if answer is not None and game.is_legal(pos.state, seat, answer):
                return answer
        except Exception:  # a rollout player's crash is counted, never a crash of this player
            pass
        faults[0] += 1
        return game.default_action(pos.state, seat)

    def _playout(self, game: Game, pos: Position, episode_seed: int, faults: list[int]) -> tuple[float, ...] | None:
        for p in game.players_to_act(pos):  # every seat still to commit at this move (none have)
            pos = game.act(pos, p, self._answer(game, pos, p, episode_seed, faults))
        cap = game.spec.max_length
        while not game.is_over(pos):
            if pos.ply > cap:
                return None
            p = game.current_player(pos)
            pos = game.act(pos, p, self._answer(game, pos, p, episode_seed, faults))
        return game.final_returns(pos)

    # ------------------------------------------------------------------ the decision
    def _candidates(self, decision: Decision, faults: list[int]) -> tuple:
        legal = decision.legal_actions
        k = self.settings.candidates
        if k == 0 or k >= len(legal):
            return legal
        game = decision.game
        anchor = decision.view_with(
            lambda g, pos, seat: self._answer(g, Position(pos.state, (), pos.ply), seat, decision.episode_seed, faults)
        )
        aid = game.action_id(anchor)
        return tuple(sorted(legal, key=lambda a: (abs(game.action_id(a) - aid), game.action_id(a)))[:k])

    def act(self, decision: Decision):
        legal = decision.legal_actions
        if len(legal) == 1:
            return Move(legal[0], {"simulations": 0})
        game, seat, s = decision.game, decision.seat, self.settings
        if not game.has_hidden_state_sampler:
            raise PlayerError(
                f"search needs a game that can sample hidden worlds; {game.spec.id} implements no sample_hidden_state"
            )
        if game.spec.chance and type(game).sample_hidden_state is Game.sample_hidden_state:
            raise PlayerError(
                f"search: {game.spec.id} has chance moves but no sample_hidden_state to redraw them; "
                "its state may fix future draws, which a playout must not read"
            )
        for p in range(game.num_players):  # a rollout spec that cannot be built is the user's error, said now
            self._rollout_player(p)
        started = time.perf_counter()
        faults = [0]
        cands = self._candidates(decision, faults)
        rng = make_rng(self.seed, "search", decision.episode_seed, seat, decision.ply)
        n = [0] * len(cands)
        total = [0.0] * len(cands)
        lo, hi = math.inf, -math.inf
        truncated = 0
        for t in range(s.simulations):
            if t < len(cands):
                i = t
            else:
                spread = (hi - lo) if hi > lo else 1.0
                logt = math.log(t)
                i = max(
                    range(len(cands)), key=lambda j: total[j] / n[j] + s.exploration * spread * math.sqrt(logt / n[j])
                )
            world = decision.view_with(lambda g, pos, me: g.sample_hidden_state(pos.state, me, rng))
            pos = game.act(Position(world, (), decision.ply), seat, cands[i])
            ret = self._playout(game, pos, derive_seed(self.seed, decision.episode_seed, seat, decision.ply, t), faults)
            if ret is None:
                truncated += 1
                value = 0.0
            elif s.objective == "margin":
                value = ret[seat] - max(r for p, r in enumerate(ret) if p != seat)
            else:
                value = ret[seat]
            n[i] += 1
            total[i] += value
            lo, hi = min(lo, value), max(hi, value)
        best = max(range(len(cands)), key=lambda j: (total[j] / n[j] if n[j] else -math.inf, n[j]))
        elapsed = time.perf_counter() - started
        st = self.stats
        st["decisions"] += 1
        st["simulations"] += s.simulations
        st["seconds"] += elapsed
        st["rollout_faults"] += faults[0]
        st["truncated"] += truncated
        telemetry = {"simulations": s.simulations, "value": round(total[best] / n[best], 4), "visits": n[best]}
        if faults[0]:
            telemetry["rollout_faults"] = faults[0]
        if truncated:
            telemetry["truncated"] = truncated
        return Move(cands[best], telemetry)

    def simulations_per_second(self) -> float:
        """Playouts per second over every decision this player has made."""
        return self.stats["simulations"] / self.stats["seconds"] if self.stats["seconds"] else 0.0
