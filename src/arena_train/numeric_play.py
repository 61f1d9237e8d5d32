"""Numeric policies in play, many games at once: a saved policy or a uniform mixture of them
(:class:`Mixture`, the player ``numeric_mixture``), batched play of many games with one forward
pass per policy and decision round (:func:`play`), and the mean return against fixed opponents
(:func:`evaluate`). The trainer over them is :mod:`arena_train.numeric_selfplay`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from arena_core.errors import ConfigError
from arena_core.game import Game, Position
from arena_core.players import BasePlayer, Decision
from arena_core.registry import make_player
from arena_core.seeding import derive_seed, make_rng

from .pg import NumericPolicy

Array = npt.NDArray[np.float64]


# ---------------------------------------------------------------------- policies as data
@dataclass
class Mixture:
    """A uniform mixture of policies played by drawing one per game (one policy: itself)."""

    members: list[NumericPolicy]

    def save(self, path: str | Path) -> None:
        arrays: dict[str, Any] = {f"{i}/{k}": v for i, m in enumerate(self.members) for k, v in m.params.items()}
        np.savez(path, **arrays)

    @classmethod
    def load(cls, path: str | Path) -> Mixture:
        """A mixture file (``i/name`` arrays) or a single policy (``NumericPolicy.save``)."""
        with np.load(path) as data:
            if all("/" not in k for k in data.files):
                return cls([NumericPolicy({k: data[k].copy() for k in data.files})])
            count = 1 + max(int(k.split("/")[0]) for k in data.files)
            return cls(
                [
                    NumericPolicy({k.split("/")[1]: data[k].copy() for k in data.files if k.split("/")[0] == str(i)})
                    for i in range(count)
                ]
            )


def copy_policy(policy: NumericPolicy) -> NumericPolicy:
    """A copy that training one does not change in the other."""
    return NumericPolicy({k: v.copy() for k, v in policy.params.items()})


class MixturePlayer(BasePlayer):
    """A saved policy or mixture (``numeric_mixture{weights = "PATH"}``): one member drawn per
    episode from the episode seed and the seat; actions sampled from it (``greedy = true``: its
    most likely action)."""

    name = "numeric_mixture"

    def __init__(self, seed: int = 0, weights: str | None = None, greedy: bool = False):
        super().__init__(seed)
        if not weights:
            raise ConfigError(
                "numeric_mixture needs weights=PATH (average.npz or policy.npz written by numeric self-play)"
            )
        try:
            self.mixture = Mixture.load(weights)
        except (OSError, ValueError, KeyError) as exc:
            raise ConfigError(f"numeric_mixture: cannot read {weights!r} ({exc})") from None
        self.greedy = bool(greedy)

    def act(self, decision: Decision) -> Any:
        game = decision.game
        members = self.mixture.members
        member = members[
            int(make_rng(self.seed, "mixture", decision.episode_seed, decision.seat).integers(len(members)))
        ]
        x = decision.encoded_observation()[None, :].astype(np.float64)
        mask = np.zeros((1, game.num_actions))
        mask[0, [game.action_id(a) for a in decision.legal_actions]] = 1.0
        p = member.probabilities(x, mask)[0]
        a = int(np.argmax(p)) if self.greedy else int(decision.rng("numeric_mixture", self.seed).choice(len(p), p=p))
        return game.action_from_id(a)


# ---------------------------------------------------------------------- play
LEARNER = -1  # the policy being trained, in a lineup (pool members are 0, 1, ...)


@dataclass
class _Table:
    """One game being played: its position, who plays each seat (-1: the learner), the seats
    whose decisions train, and the rows recorded for them."""

    seed: int
    pos: Position[Any]
    players: tuple[int, ...]
    learns: tuple[int, ...]
    rows: list[tuple[Array, Array, int, int]]


def _act(
    game: Game[Any, Any],
    tables: Sequence[_Table],
    policies: Mapping[int, NumericPolicy],
    rng: np.random.Generator,
) -> None:
    """One decision in every table: a batched forward pass per policy, then each table moves."""
    by_policy: dict[int, list[tuple[_Table, int]]] = {}
    for t in tables:
        seat = game.current_player(t.pos)
        if seat is not None:
            by_policy.setdefault(t.players[seat], []).append((t, seat))
    for who, waiting in by_policy.items():
        x = np.stack([game.encode_observation(t.pos.state, s) for t, s in waiting]).astype(np.float64)
        mask = np.stack([game.mask(t.pos, s) for t, s in waiting]).astype(np.float64)
        p = policies[who].probabilities(x, mask)
        u = rng.random(len(waiting))[:, None]
        actions = np.minimum((p.cumsum(axis=1) < u).sum(axis=1), p.shape[1] - 1)
        for i, (t, seat) in enumerate(waiting):
            a = int(actions[i])
            if mask[i, a] <= 0:  # rounding at the top of the cumulative sum: take the likeliest legal action
                a = int(np.argmax(p[i]))
            if seat in t.learns:
                t.rows.append((x[i], mask[i], a, seat))
            t.pos = game.act_id(t.pos, seat, a)


def play(
    game: Game[Any, Any],
    policies: Mapping[int, NumericPolicy],
    lineups: Sequence[tuple[int, tuple[int, ...], tuple[int, ...]]],
    parallel: int,
    rng: np.random.Generator,
) -> list[tuple[tuple[float, ...], list[tuple[Array, Array, int, int]]]]:
    """Play one game per lineup ``(deal seed, policy per seat, learning seats)``, ``parallel`` at a
    time; returns each game's returns and the learning seats' rows (encoding, mask, action, seat)."""
    out: list[tuple[tuple[float, ...], list[tuple[Array, Array, int, int]]]] = []
    queue = list(lineups)[::-1]
    active: list[_Table] = []
    while queue or active:
        while queue and len(active) < parallel:
            seed, players, learns = queue.pop()
            active.append(_Table(seed, game.start(seed), players, learns, []))
        _act(game, active, policies, rng)
        still = []
        for t in active:
            if game.is_over(t.pos):
                out.append((game.final_returns(t.pos), t.rows))
            else:
                still.append(t)
        active = still
    return out


def evaluate(
    game: Game[Any, Any], policy: NumericPolicy, opponents: Sequence[str], games: int, seed: int
) -> dict[str, float]:
    """The policy's mean return (sampled) against each fixed opponent on ``games`` fresh deals,
    seats alternating (at Liar's dice, +1 a win and -1 a loss: the win rate is (1 + return) / 2)."""
    from arena_core import play_episode

    out: dict[str, float] = {}
    for spec in opponents:
        total = 0.0
        for i in range(games):
            deal = derive_seed(seed, "selfplay_eval", spec, i) % 2**31
            me = _PolicyPlayer(policy, derive_seed(seed, "selfplay_eval_player", i))
            them = make_player(spec, seed=derive_seed(seed, "selfplay_eval_opponent", i))
            rec = play_episode(game, [me, them] if i % 2 == 0 else [them, me], seed=deal)
            total += rec.end.returns[i % 2] if rec.end and rec.end.returns is not None else 0.0
        out[spec] = total / max(games, 1)
    return out


class _PolicyPlayer(MixturePlayer):
    """A policy held in memory, sampled (the trainer's evaluations)."""

    def __init__(self, policy: NumericPolicy, seed: int):
        BasePlayer.__init__(self, seed)
        self.mixture, self.greedy = Mixture([policy]), False
