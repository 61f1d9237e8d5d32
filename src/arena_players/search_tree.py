"""Information-set Monte Carlo tree search for the ``search`` player (``tree = "ismcts"``).

Single-observer IS-MCTS (Cowling, Powley and Whitehouse, 2012): one tree over the moves played
from the decision, shared by every world; each simulation draws a world consistent with what the
deciding seat has seen (``game.sample_hidden_state``), walks the tree in that world, and every
seat chooses at its own nodes by UCB over what its moves earned it across the worlds. So the
other seats are not uniform-random in a playout: each plays the move that has done best for
it so far, on average over the worlds the deciding seat considers possible (a consistent opponent
model, not a peek at the world drawn). Below the tree the rollout policy plays on.

The budget goes to few candidates: a node with n visits considers only its first
``ceil(widening * sqrt(n + 1))`` legal moves in the game's order (progressive widening), so a
decision with forty legal moves spends its simulations on the handful the visits reach. Moves are
told apart by their canonical string; a move legal in one world but not another keeps its own
count of how often it was on offer (availability), which UCB uses in place of the parent's visits.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from arena_core.game import Game, Position
from arena_core.players import Decision

#: a playout from a position to the end: the returns, or None when cut off (scored 0 for every seat)
Playout = Callable[[Position[Any], int], "tuple[float, ...] | None"]


@dataclass
class _Node:
    """What the seat to act at this node earned with each move (visits, total return, times on offer)."""

    visits: dict[str, int] = field(default_factory=dict)
    total: dict[str, float] = field(default_factory=dict)
    offered: dict[str, int] = field(default_factory=dict)
    children: dict[str, _Node] = field(default_factory=dict)
    n: int = 0


@dataclass(frozen=True)
class TreeResult:
    action: Any
    value: float
    visits: int
    truncated: int
    nodes: int


def ismcts(
    decision: Decision,
    simulations: int,
    rng: np.random.Generator,
    playout: Playout,
    *,
    exploration: float,
    widening: float,
    cap: int,
) -> TreeResult:
    """Choose the deciding seat's move by ``simulations`` IS-MCTS iterations (module docstring).
    ``playout(position, t)`` plays a position below the tree to the end with the rollout policy."""
    game: Game[Any, Any] = decision.game
    root = _Node()
    truncated = 0
    nodes = 1
    spread = 2.0 * max(abs(game.spec.reward_bounds[0]), abs(game.spec.reward_bounds[1])) or 1.0
    c = exploration * spread
    for t in range(simulations):
        world = decision.view_with(lambda g, pos, seat: g.sample_hidden_state(pos.state, seat, rng))
        pos: Position[Any] = Position(world, (), decision.ply)
        node = root
        path: list[tuple[_Node, str, int]] = []
        expanded = False
        while not game.is_over(pos) and not expanded and pos.ply <= cap:
            seat = game.current_player(pos)
            if seat is None:  # pragma: no cover - a game that is not over has someone to act
                break
            legal = game.legal(pos, seat)
            allowed = legal[: max(1, math.ceil(widening * math.sqrt(node.n + 1)))]
            keys = [game.action_to_str(a) for a in allowed]
            for k in keys:
                node.offered[k] = node.offered.get(k, 0) + 1
            fresh = [i for i, k in enumerate(keys) if k not in node.visits]
            if fresh:
                i = fresh[0]
                expanded = True
            else:
                i = max(
                    range(len(keys)),
                    key=lambda j: (
                        node.total[keys[j]] / node.visits[keys[j]]
                        + c * math.sqrt(math.log(node.offered[keys[j]]) / node.visits[keys[j]])
                    ),
                )
            key = keys[i]
            node.n += 1
            path.append((node, key, seat))
            pos = game.act(pos, seat, allowed[i])
            child = node.children.get(key)
            if child is None:
                child = node.children[key] = _Node()
                nodes += 1
            node = child
        returns = None if pos.ply > cap else (game.final_returns(pos) if game.is_over(pos) else playout(pos, t))
        if returns is None:
            truncated += 1
        for at, key, seat in path:
            at.visits[key] = at.visits.get(key, 0) + 1
            at.total[key] = at.total.get(key, 0.0) + (0.0 if returns is None else returns[seat])
    legal = decision.legal_actions
    keys = [game.action_to_str(a) for a in legal]
    best = max(
        range(len(legal)),
        key=lambda j: (root.visits.get(keys[j], 0), root.total.get(keys[j], 0.0) / max(root.visits.get(keys[j], 0), 1)),
    )
    n = root.visits.get(keys[best], 0)
    value = root.total.get(keys[best], 0.0) / n if n else 0.0
    return TreeResult(legal[best], value, n, truncated, nodes)
