"""Exact evaluation of small two-player zero-sum games by enumerating every deal and every
history: information states, best responses, exploitability (NashConv / 2), the
realisation-equivalent average of several policies, and tabular CFR as a reference curve.

Nothing here samples. A game qualifies when it can list its deals with their probabilities
(``enumerate_deals() -> [(deal seed, probability)]``, e.g. Kuhn poker's 6 equally likely
deals) and its observation is a perfect-recall information state (it includes the player's
own history), which is what keys an information state here: ``json`` of ``observe(pos, seat)``.

A *policy table* maps an information-state key to ``{action_id: probability}``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from arena_core.errors import ConfigError
from arena_core.game import Game, Position

from .rollout import seat_to_act

PolicyTable = dict[str, dict[int, float]]
#: a game's deals with their probabilities
Deals = Sequence[tuple[int, float]]


def deals_of(game: Game[Any, Any]) -> list[tuple[int, float]]:
    """The game's deals and their probabilities; refuses a game that cannot enumerate them."""
    listed = game.enumerate_deals()
    if listed is None:
        raise ConfigError(
            f"{game.spec.id} cannot enumerate its deals (no enumerate_deals()); exact evaluation needs it, use sampled evaluation"
        )
    deals = [(int(s), float(p)) for s, p in listed]
    total = sum(p for _, p in deals)
    if not deals or abs(total - 1.0) > 1e-9:
        raise ConfigError(f"{game.spec.id}.enumerate_deals() probabilities sum to {total}, not 1")
    return deals


def evaluation_deals(game: Game[Any, Any], sampled: Sequence[int]) -> tuple[list[int], list[float] | None]:
    """Every deal of a game that can list them, with their probabilities (exact evaluation);
    else the ``sampled`` held-out deal seeds and None."""
    if game.enumerate_deals() is None:
        return list(sampled), None
    deals = deals_of(game)
    return [d for d, _ in deals], [p for _, p in deals]


def infostate_key(game: Game[Any, Any], pos: Position[Any], seat: int) -> str:
    return json.dumps(game.observe(pos, seat), sort_keys=True)


@dataclass(frozen=True)
class InfoState:
    key: str
    seat: int
    actions: tuple[Any, ...]
    pos: Position[Any]  # one position of this information state (to render it for a learner)


def information_states(game: Game[Any, Any], deals: Deals | None = None) -> list[InfoState]:
    """Every information state reached with positive chance probability, in a fixed order."""
    seen: dict[str, InfoState] = {}

    def walk(pos: Position[Any]) -> None:
        if game.is_over(pos):
            return
        seat = seat_to_act(game, pos)
        key = infostate_key(game, pos, seat)
        if key not in seen:
            seen[key] = InfoState(key, seat, tuple(game.legal(pos, seat)), pos)
        for a in game.legal(pos, seat):
            walk(game.act(pos, seat, a))

    for seed, p in deals if deals is not None else deals_of(game):
        if p > 0:
            walk(game.start(seed))
    return sorted(seen.values(), key=lambda s: (s.seat, len(s.key), s.key))


def _probs(
    table: Mapping[str, Mapping[int, float]], key: str, game: Game[Any, Any], actions: Sequence[Any]
) -> list[tuple[Any, float]]:
    dist = table.get(key)
    if dist is None:
        raise ConfigError(f"the policy table has no entry for information state {key}")
    out = [(a, float(dist.get(game.action_id(a), 0.0))) for a in actions]
    total = sum(p for _, p in out)
    if abs(total - 1.0) > 1e-6:
        raise ConfigError(f"policy at {key} sums to {total}, not 1")
    return out


def expected_values(game: Game[Any, Any], table: PolicyTable, deals: Deals | None = None) -> tuple[float, ...]:
    """Every seat's exact expected return when all seats play ``table``."""
    deals = deals if deals is not None else deals_of(game)

    def value(pos: Position[Any]) -> npt.NDArray[np.float64]:
        if game.is_over(pos):
            return np.asarray(game.final_returns(pos), dtype=np.float64)
        seat = seat_to_act(game, pos)
        acts = game.legal(pos, seat)
        total = np.zeros(game.num_players)
        for a, p in _probs(table, infostate_key(game, pos, seat), game, acts):
            if p > 0:
                total += p * value(game.act(pos, seat, a))
        return total

    total = np.zeros(game.num_players)
    for s, p in deals:
        total += p * value(game.start(s))
    return tuple(float(v) for v in total)


def best_response_value(
    game: Game[Any, Any], table: PolicyTable, br_seat: int, deals: Deals | None = None
) -> tuple[float, dict[str, Any]]:
    """``br_seat``'s best expected return against the others playing ``table``, and the best
    response (information state -> action). Exact: at each of its information states the best
    response maximises the sum over the histories there of (chance x opponents' reach) x value."""
    deals = deals if deals is not None else deals_of(game)
    # histories of each br information state with their weights (chance x opponents' reach)
    members: dict[str, list[tuple[Position[Any], float]]] = {}
    roots: list[tuple[Position[Any], float]] = []

    def collect(pos: Position[Any], w: float) -> None:
        # the same histories as value() walks (every opponent action of positive probability),
        # even where the product of tiny probabilities underflows to a zero weight
        if game.is_over(pos):
            return
        seat = seat_to_act(game, pos)
        acts = game.legal(pos, seat)
        if seat == br_seat:
            members.setdefault(infostate_key(game, pos, seat), []).append((pos, w))
            for a in acts:
                collect(game.act(pos, seat, a), w)
        else:
            for a, p in _probs(table, infostate_key(game, pos, seat), game, acts):
                if p > 0:
                    collect(game.act(pos, seat, a), w * p)

    for s, p in deals:
        roots.append((game.start(s), p))
        collect(game.start(s), p)

    choice: dict[str, Any] = {}

    def best(key: str) -> Any:
        if key not in choice:
            hist = members[key]
            seat = br_seat
            acts = game.legal(hist[0][0], seat)
            scores = [sum(w * value(game.act(pos, seat, a)) for pos, w in hist) for a in acts]
            choice[key] = acts[int(np.argmax(scores))]
        return choice[key]

    def value(pos: Position[Any]) -> float:
        if game.is_over(pos):
            return float(game.final_returns(pos)[br_seat])
        seat = seat_to_act(game, pos)
        key = infostate_key(game, pos, seat)
        if seat == br_seat:
            return value(game.act(pos, seat, best(key)))
        return sum(
            p * value(game.act(pos, seat, a)) for a, p in _probs(table, key, game, game.legal(pos, seat)) if p > 0
        )

    total = sum(p * value(pos) for pos, p in roots)
    for key in members:
        best(key)
    return float(total), {k: game.action_to_str(a) for k, a in choice.items()}


@dataclass(frozen=True)
class Exploitability:
    """``nash_conv`` = sum over seats of (best-response value - the policy's value);
    ``exploitability`` = nash_conv / 2 (for a two-player zero-sum game: the average amount a
    best response wins from the policy per game, 0 exactly at a Nash equilibrium)."""

    nash_conv: float
    exploitability: float
    best_response_values: tuple[float, ...]
    policy_values: tuple[float, ...]


def exploitability(game: Game[Any, Any], table: PolicyTable, deals: Deals | None = None) -> Exploitability:
    """Exact NashConv and exploitability of ``table`` (every seat plays it)."""
    if game.num_players != 2:
        raise ConfigError(
            f"exact exploitability is for two-player games; {game.spec.id} has {game.num_players} players"
        )
    deals = deals if deals is not None else deals_of(game)
    on = expected_values(game, table, deals)
    br = tuple(best_response_value(game, table, s, deals)[0] for s in range(2))
    conv = sum(b - v for b, v in zip(br, on))
    return Exploitability(float(conv), float(conv / 2), br, on)


def table_from(
    game: Game[Any, Any], fn: Callable[[InfoState], Sequence[float]], deals: Deals | None = None
) -> PolicyTable:
    """A policy table from ``fn(infostate) -> probabilities over infostate.actions``."""
    out: PolicyTable = {}
    for info in information_states(game, deals):
        probs = np.asarray(fn(info), dtype=np.float64)
        out[info.key] = {game.action_id(a): float(p) for a, p in zip(info.actions, probs)}
    return out


def own_reach(game: Game[Any, Any], table: PolicyTable, deals: Deals | None = None) -> dict[str, float]:
    """Each information state's reach probability under its owner's own choices only (with
    perfect recall it is the same for every history of the state)."""
    deals = deals if deals is not None else deals_of(game)
    reach: dict[str, float] = {}

    def walk(pos: Position[Any], own: tuple[float, ...]) -> None:
        if game.is_over(pos):
            return
        seat = seat_to_act(game, pos)
        key = infostate_key(game, pos, seat)
        reach.setdefault(key, own[seat])
        for a, p in _probs(table, key, game, game.legal(pos, seat)):
            nxt = list(own)
            nxt[seat] *= p
            walk(game.act(pos, seat, a), tuple(nxt))

    for s, p in deals:
        if p > 0:
            walk(game.start(s), (1.0,) * game.num_players)
    return reach


def average_policy(
    game: Game[Any, Any],
    tables: Sequence[PolicyTable],
    weights: Sequence[float] | None = None,
    deals: Deals | None = None,
) -> PolicyTable:
    """The behaviour policy equivalent to drawing one of ``tables`` per game (uniformly, or by
    ``weights``) and playing it throughout: at each information state, the tables'
    probabilities averaged with weights proportional to each table's own reach there."""
    if not tables:
        raise ValueError("average_policy needs at least one policy")
    w = (
        np.full(len(tables), 1.0 / len(tables))
        if weights is None
        else np.asarray(weights, dtype=np.float64) / np.sum(weights)
    )
    reaches = [own_reach(game, t, deals) for t in tables]
    out: PolicyTable = {}
    for key in tables[0]:
        r = np.array([wk * rk.get(key, 0.0) for wk, rk in zip(w, reaches)])
        coef = r / r.sum() if r.sum() > 0 else w
        actions = sorted({a for t in tables for a in t[key]})
        out[key] = {a: float(sum(c * t[key].get(a, 0.0) for c, t in zip(coef, tables))) for a in actions}
    return out


class CFR:
    """Vanilla tabular CFR (alternating updates, every deal enumerated) on the same tree, as a
    reference curve. One iteration walks every deal once per player: ``traversals_per_iteration``
    = 2 x the number of deals (a traversal = one deal walked to all its terminals)."""

    def __init__(self, game: Game[Any, Any], deals: Deals | None = None):
        self.game = game
        self.deals = deals if deals is not None else deals_of(game)
        self.infos = {i.key: i for i in information_states(game, self.deals)}
        self.regret = {k: np.zeros(len(i.actions)) for k, i in self.infos.items()}
        self.strategy_sum = {k: np.zeros(len(i.actions)) for k, i in self.infos.items()}
        self.iterations = 0
        self.traversals_per_iteration = 2 * len(self.deals)

    def _current(self, key: str) -> npt.NDArray[np.float64]:
        r = np.maximum(self.regret[key], 0.0)
        return r / r.sum() if r.sum() > 0 else np.full(len(r), 1.0 / len(r))

    def _walk(self, pos: Position[Any], player: int, reach: npt.NDArray[np.float64]) -> float:
        game = self.game
        if game.is_over(pos):
            return float(game.final_returns(pos)[player])
        seat = seat_to_act(game, pos)
        key = infostate_key(game, pos, seat)
        sigma = self._current(key)
        acts = self.infos[key].actions
        values = np.zeros(len(acts))
        for i, a in enumerate(acts):
            nxt = reach.copy()
            nxt[seat] *= sigma[i]
            values[i] = self._walk(game.act(pos, seat, a), player, nxt)
        node = float(sigma @ values)
        if seat == player:
            others = float(np.prod(np.delete(reach, seat)))
            self.regret[key] += others * (values - node)
            self.strategy_sum[key] += reach[seat] * sigma
        return node

    def iterate(self, n: int = 1) -> None:
        for _ in range(n):
            for player in range(self.game.num_players):
                for s, p in self.deals:
                    reach = np.ones(self.game.num_players + 1)
                    reach[-1] = p  # chance as the last 'player'
                    self._walk(self.game.start(s), player, reach)
            self.iterations += 1

    def current(self) -> PolicyTable:
        """The last iterate: regret matching on the cumulative regrets."""
        return {
            k: {self.game.action_id(a): float(p) for a, p in zip(info.actions, self._current(k))}
            for k, info in self.infos.items()
        }

    def average(self) -> PolicyTable:
        out: PolicyTable = {}
        for k, info in self.infos.items():
            s = self.strategy_sum[k]
            probs = s / s.sum() if s.sum() > 0 else np.full(len(s), 1.0 / len(s))
            out[k] = {self.game.action_id(a): float(p) for a, p in zip(info.actions, probs)}
        return out
