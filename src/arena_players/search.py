"""``search``: determinized Monte Carlo search over any game that can sample hidden worlds.

At each decision the player runs ``simulations`` playouts. Each one draws a complete world
consistent with what this seat has seen (``game.sample_hidden_state``; a perfect-information
game's state is its own world), picks a root action by UCB1 over the candidate actions, plays it,
and lets a *rollout player* (any registered player spec, built with
:func:`arena_core.registry.make_player`) play every seat to the end. The root action with the best
mean return for this seat is played. Commitments other seats have made at a simultaneous move
are never read: each world starts with none pending, and the rollout player answers for them.

With ``opponents = "learned"`` the other seats are an opponent model the player learns online
from the episodes it plays (stochastic EM): worlds are drawn by replaying the episode under the
model and kept only if this seat would have seen exactly what it saw, and the other seats play
the model in playouts (docs/search.md).

Every draw comes from the player's seed, the episode seed, the seat and the ply (no global RNG).
A rollout answer that is not a legal action, and a rollout that outlasts the game's
``max_length``, are counted in the move's telemetry (``rollout_faults``, ``truncated``), never
hidden: a faulty answer is replaced by the game's default action, a truncated rollout scores
0 for every seat.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer

from arena_core.errors import PlayerError, PlayerOptionsError, RulesError
from arena_core.game import Game, Position
from arena_core.players import BasePlayer, Decision, EpisodeEnd, Move, Player
from arena_core.playerspec import PlayerSpec, parse_player_spec
from arena_core.seeding import derive_seed, make_rng

Observation = dict[str, Any]
#: what a seat sees when an episode ends: its observation and the returns (None when truncated)
Final = tuple[Observation, tuple[float, ...] | None]
#: the other seats' decisions in one replayed world: (their observation's key, action id)
Steps = list[tuple[str, int]]


def _player_spec(value: Any) -> Any:
    """A rollout spec given as text (any spelling) is parsed here, once; a PlayerSpec passes
    (the settings write it back as its inline-table text)."""
    return parse_player_spec(value) if isinstance(value, str) else value


class SearchSettings(BaseModel):
    """Options of :class:`SearchPlayer` (``search{simulations = 200, rollout = "random"}``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    simulations: int = Field(200, ge=1, description="playouts per decision (the simulation budget)")
    rollout: Annotated[PlayerSpec, BeforeValidator(_player_spec), PlainSerializer(str, return_type=str)] = Field(
        default_factory=lambda: PlayerSpec("random"), description="player spec of the rollout policy, for every seat"
    )
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
    opponents: Literal["rollout", "learned"] = Field(
        "rollout",
        description="who the other seats are in a playout: the rollout policy, or an opponent model this "
        "player learns online from the episodes it plays (worlds then weighted by it)",
    )
    model_prior: float = Field(
        0.25, gt=0.0, description="learned opponents: the rollout policy's weight in the model, in pseudo-counts"
    )
    particles: int = Field(
        64, ge=1, description="learned opponents: worlds drawn by replaying the episode under the model"
    )
    tree: Literal["flat", "ismcts"] = Field(
        "flat",
        description="flat: UCB1 over the root moves, every seat played by the rollout policy; ismcts: "
        "information-set MCTS (arena_players.search_tree), every seat choosing by UCB at its own nodes",
    )
    widening: float = Field(
        1.0, gt=0.0, description="ismcts: a node with n visits considers its first ceil(widening * sqrt(n + 1)) moves"
    )
    learn_untold: bool = Field(
        False,
        description="learned opponents: also learn from an episode whose end this player was not told "
        "(only that it was not asked again; the others' unobserved last actions then drift)",
    )


@dataclass
class _Episode:
    """What this seat has seen of one episode: its start (read only through this seat's
    ``sample_hidden_state``) and each of its own decisions (observation, action played)."""

    game: Game[Any, Any]
    seat: int
    seed: int
    root: Position[Any]
    mine: list[tuple[Observation, Any]] = field(default_factory=list)


class SearchPlayer(BasePlayer):
    """Determinized (perfect-information) Monte Carlo search with UCB1 at the root."""

    name = "search"
    MEMORY = 2000  # episodes remembered for the learned opponent model's batch EM steps
    SWEEPS = 2  # batch EM steps each time

    def __init__(self, seed: int = 0, **options: Any):
        super().__init__(seed)
        from .llm_common import player_settings

        self.settings = player_settings(SearchSettings, "search", options)
        if self.settings.rollout.name == "search":
            raise PlayerOptionsError(
                'search: the rollout policy cannot be search itself; name another player, e.g. rollout = "random"'
            )
        if self.settings.tree == "ismcts" and (self.settings.opponents != "rollout" or self.settings.candidates):
            raise PlayerOptionsError(
                'search: tree = "ismcts" models the other seats by its own tree; drop opponents and candidates '
                "(its widening spends the budget on few moves)"
            )
        self._rollout: dict[int, Player] = {}
        self.stats: dict[str, float] = {
            "decisions": 0,
            "simulations": 0,
            "seconds": 0.0,
            "rollout_faults": 0,
            "truncated": 0,
        }
        # the learned opponent model: an opponent's observation (canonical JSON) -> action id -> weight
        self.model: dict[str, dict[int, float]] = {}
        self._episodes: dict[int, _Episode] = {}
        self._memory: list[tuple[_Episode, Final | None]] = []
        self._next_refit = 8
        if self.settings.opponents == "learned":
            self.stats.update(
                {
                    "episodes_learned": 0,
                    "episodes_unexplained": 0,
                    "episodes_untold": 0,
                    "worlds_replayed": 0,
                    "worlds_fallback": 0,
                }
            )

    # ------------------------------------------------------------------ episodes (learned opponents)
    def begin_episode(self, game: Game[Any, Any], seat: int, episode_seed: int) -> None:
        if self.settings.opponents != "learned":
            return
        ended = self._episodes.pop(seat, None)
        if ended is not None:  # no end_episode came: all this seat knows is that it was not asked again
            self.stats["episodes_untold"] += 1
            if self.settings.learn_untold:
                self._learn(ended, None)
        if game.has_hidden_state_sampler and not (
            game.spec.chance and type(game).sample_hidden_state is Game.sample_hidden_state
        ):
            self._episodes[seat] = _Episode(game, seat, episode_seed, game.start(episode_seed))

    def end_episode(self, end: EpisodeEnd) -> None:
        """The episode is over (the game loops call this): what this seat observes at its end and
        the returns (None when truncated). With learned opponents the episode is explained and
        the model updated."""
        ended = self._episodes.pop(end.seat, None)
        if ended is not None and ended.game is end.game and ended.seed == end.episode_seed:
            self._learn(ended, (end.observation, end.returns))

    @staticmethod
    def _key(obs: Observation) -> str:
        return json.dumps(obs, sort_keys=True, default=str)

    def _model_action(
        self,
        game: Game[Any, Any],
        pos: Position[Any],
        p: int,
        rng: np.random.Generator,
        episode_seed: int,
        faults: list[int],
    ) -> tuple[Any, str]:
        """Seat ``p``'s action at ``pos`` under the learned model (its counts at ``p``'s observation,
        mixed with the rollout policy at weight ``model_prior``); returns (action, key)."""
        key = self._key(game.observe(pos, p))
        counts = self.model.get(key)
        if counts:
            n = sum(counts.values())
            if rng.random() * (n + self.settings.model_prior) < n:
                legal = game.legal(pos, p)
                w = [counts.get(game.action_id(a), 0.0) for a in legal]
                z = sum(w)
                if z > 0:
                    r, acc = rng.random() * z, 0.0
                    for a, x in zip(legal, w):
                        acc += x
                        if r < acc:
                            return a, key
        return self._answer(game, pos, p, episode_seed, faults), key

    def _replay(
        self, ep: _Episode, rng: np.random.Generator, now: Observation | None, final: Final | None, faults: list[int]
    ) -> tuple[Position[Any], Steps] | None:
        """One world of ``ep`` under the model: its hidden parts redrawn at the start, this seat's own
        actions replayed, the others' drawn from the model; kept only if this seat would have seen
        exactly what it saw (``now``: its current observation; ``final``: the end's observation and
        returns; both None: the episode ended before this seat was asked again).
        Returns (position, [(key, action id) of the others' decisions]) or None."""
        game, me = ep.game, ep.seat
        pos = Position(game.sample_hidden_state(ep.root.state, me, rng), (), ep.root.ply)
        k, cap = 0, game.spec.max_length
        steps: Steps = []
        seed = int(rng.integers(2**62))  # the rollout policy's draws differ from replay to replay
        while not game.is_over(pos):
            if pos.ply > cap:
                return None
            for p in game.players_to_act(pos):
                if p == me:
                    obs = game.observe(pos, me)
                    if k == len(ep.mine):
                        return (pos, steps) if now is not None and obs == now else None
                    if obs != ep.mine[k][0]:
                        return None
                    pos = game.act(pos, me, ep.mine[k][1])
                    k += 1
                else:
                    a, key = self._model_action(game, pos, p, rng, seed, faults)
                    steps.append((key, game.action_id(a)))
                    pos = game.act(pos, p, a)
        if now is not None or k != len(ep.mine):
            return None
        if final is not None:
            obs, returns = final
            if game.observe(pos, me) != obs:
                return None
            if returns is not None and tuple(float(r) for r in game.final_returns(pos)) != returns:
                return None
        return pos, steps

    def _worlds(
        self, ep: _Episode, rng: np.random.Generator, now: Observation | None, final: Final | None, faults: list[int]
    ) -> list[tuple[Position[Any], Steps]]:
        """Up to ``particles`` replayed worlds consistent with what this seat saw (at most 20 tries
        each; none if the first ``4 x particles`` tries explain nothing)."""
        out: list[tuple[Position[Any], Steps]] = []
        n = self.settings.particles
        for tries in range(1, 20 * n + 1):
            w = self._replay(ep, rng, now, final, faults)
            if w is not None:
                out.append(w)
                if len(out) == n:
                    break
            elif not out and tries >= 4 * n:  # nothing explains it (e.g. chance redrawn at the start): give up
                break
        return out

    def _learn(self, ep: _Episode, final: Final | None) -> None:
        """Stochastic EM. E-step: the others' decisions in worlds that explain the episode under the
        current model, each world weighted 1/(worlds), added to the counts. Whenever the number of
        episodes explained has grown by a quarter (and at least 4), every remembered episode (the
        last ``MEMORY`` explained ones) is explained again under the current model and the counts
        rebuilt from them (``SWEEPS`` batch EM steps), so the guesses made while the model was
        young do not stay in it. An episode nothing explains is counted and forgotten."""
        if not self._explain(ep, final, self.model):
            self.stats["episodes_unexplained"] += 1  # not remembered either
            return
        self.stats["episodes_learned"] += 1
        self._memory.append((ep, final))
        del self._memory[: -self.MEMORY]
        if self.stats["episodes_learned"] >= self._next_refit:
            self._next_refit = max(self._next_refit + 4, int(self._next_refit * 1.25))
            for _ in range(self.SWEEPS):
                model: dict[str, dict[int, float]] = {}
                for old, old_final in self._memory:
                    self._explain(old, old_final, model)
                self.model = model

    def _explain(self, ep: _Episode, final: Final | None, into: dict[str, dict[int, float]]) -> bool:
        worlds = self._worlds(ep, make_rng(self.seed, "learn", ep.seed, ep.seat), None, final, [0])
        w = 1.0 / max(len(worlds), 1)
        for _, steps in worlds:
            for key, aid in steps:
                counts = into.setdefault(key, {})
                counts[aid] = counts.get(aid, 0.0) + w
        return bool(worlds)

    # ------------------------------------------------------------------ rollout players
    def _rollout_player(self, seat: int) -> Player:
        player = self._rollout.get(seat)
        if player is None:
            from arena_core.registry import make_player

            player = self._rollout[seat] = make_player(
                self.settings.rollout, seed=derive_seed(self.seed, "rollout", seat)
            )
        return player

    def _answer(self, game: Game[Any, Any], pos: Position[Any], seat: int, episode_seed: int, faults: list[int]) -> Any:
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

    def _playout(
        self,
        game: Game[Any, Any],
        pos: Position[Any],
        episode_seed: int,
        faults: list[int],
        me: int,
        rng: np.random.Generator,
    ) -> tuple[float, ...] | None:
        learned = self.settings.opponents == "learned"

        def answer(pos: Position[Any], p: int) -> Any:
            if learned and p != me:
                return self._model_action(game, pos, p, rng, episode_seed, faults)[0]
            return self._answer(game, pos, p, episode_seed, faults)

        for p in game.players_to_act(pos):  # every seat still to commit at this move (none have)
            pos = game.act(pos, p, answer(pos, p))
        cap = game.spec.max_length
        while not game.is_over(pos):
            if pos.ply > cap:
                return None
            seat = game.current_player(pos)
            if seat is None:  # pragma: no cover - a game that is not over has someone to act
                raise RulesError(f"search: {game.spec.id} is not over at ply {pos.ply} but nobody is to act")
            pos = game.act(pos, seat, answer(pos, seat))
        return game.final_returns(pos)

    # ------------------------------------------------------------------ the decision
    def _candidates(self, decision: Decision, faults: list[int]) -> tuple[Any, ...]:
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

    def act(self, decision: Decision) -> Move:
        move = self._decide(decision)
        ep = self._episodes.get(decision.seat)
        if ep is not None and ep.game is decision.game and ep.seed == decision.episode_seed:
            ep.mine.append((decision.observation, move.action))
        return move

    def _decide(self, decision: Decision) -> Move:
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
        if s.tree == "ismcts":
            return self._tree_move(decision, faults, started)
        cands = self._candidates(decision, faults)
        rng = make_rng(self.seed, "search", decision.episode_seed, seat, decision.ply)
        n = [0] * len(cands)
        total = [0.0] * len(cands)
        lo, hi = math.inf, -math.inf
        truncated = 0
        worlds: list[Position[Any]] = []
        ep = self._episodes.get(seat)
        if ep is not None and ep.game is game and ep.seed == decision.episode_seed:
            worlds = [w for w, _ in self._worlds(ep, rng, decision.observation, None, faults)]
            self.stats["worlds_replayed" if worlds else "worlds_fallback"] += 1
        for t in range(s.simulations):
            if t < len(cands):
                i = t
            else:
                spread = (hi - lo) if hi > lo else 1.0
                logt = math.log(t)
                i = max(
                    range(len(cands)), key=lambda j: total[j] / n[j] + s.exploration * spread * math.sqrt(logt / n[j])
                )
            if worlds:
                world = worlds[t % len(worlds)].state
            else:
                world = decision.view_with(lambda g, pos, me: g.sample_hidden_state(pos.state, me, rng))
            pos = game.act(Position(world, (), decision.ply), seat, cands[i])
            ret = self._playout(
                game, pos, derive_seed(self.seed, decision.episode_seed, seat, decision.ply, t), faults, seat, rng
            )
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

    def _tree_move(self, decision: Decision, faults: list[int], started: float) -> Move:
        from .search_tree import ismcts

        game, seat, s = decision.game, decision.seat, self.settings
        rng = make_rng(self.seed, "search", decision.episode_seed, seat, decision.ply)

        def playout(pos: Position[Any], t: int) -> tuple[float, ...] | None:
            if s.rollout.name == "random" and not s.rollout.options:  # uniform moves need no Decision
                while not game.is_over(pos) and pos.ply <= game.spec.max_length:
                    p = game.players_to_act(pos)[0]
                    legal = game.legal(pos, p)
                    pos = game.act(pos, p, legal[int(rng.integers(len(legal)))])
                return game.final_returns(pos) if game.is_over(pos) else None
            episode = derive_seed(self.seed, decision.episode_seed, seat, decision.ply, t)
            return self._playout(game, pos, episode, faults, seat, rng)

        found = ismcts(
            decision,
            s.simulations,
            rng,
            playout,
            exploration=s.exploration,
            widening=s.widening,
            cap=game.spec.max_length,
        )
        st = self.stats
        st["decisions"] += 1
        st["simulations"] += s.simulations
        st["seconds"] += time.perf_counter() - started
        st["rollout_faults"] += faults[0]
        st["truncated"] += found.truncated
        telemetry = {"simulations": s.simulations, "value": round(found.value, 4), "visits": found.visits}
        telemetry.update({k: v for k, v in (("rollout_faults", faults[0]), ("truncated", found.truncated)) if v})
        return Move(found.action, telemetry)

    def simulations_per_second(self) -> float:
        """Playouts per second over every decision this player has made."""
        return self.stats["simulations"] / self.stats["seconds"] if self.stats["seconds"] else 0.0
