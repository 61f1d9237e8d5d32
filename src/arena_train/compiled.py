"""A small two-player game compiled to arrays: every deal's tree (nodes, information states,
children, terminal returns), sampled and evaluated exactly as array operations, and the
realisation-weighted average of policy snapshots kept incrementally on it (:class:`ReachAverage`).

Exact exploitability on the compiled tree (:meth:`CompiledGame.exploitability`) equals
:func:`arena_train.exact.exploitability` (tested) and is fast enough to evaluate often (Leduc's
288 information states: 15 ms instead of 2.4 s). The numpy self-play trainer
(:mod:`arena_train.selfplay_pg`) and GRPO's compiled average (``eval.snapshot_every``) use it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from arena_core.errors import ConfigError
from arena_core.game import Game, Position

from .exact import PolicyTable, deals_of, infostate_key
from .rollout import seat_to_act

Array = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
#: per decision node on the walk, the information states and actions its owner took before it
OwnHistory = tuple[tuple[tuple[int, int], ...], ...]


@dataclass
class _Walk:
    """What a depth-first walk of every deal collects, before it becomes arrays."""

    game: Game[Any, Any]
    max_nodes: int
    info_index: dict[str, int] = field(default_factory=dict)
    keys: list[str] = field(default_factory=list)
    seats: list[int] = field(default_factory=list)
    masks: list[Array] = field(default_factory=list)
    feats: list[Array] = field(default_factory=list)
    prefixes: list[tuple[tuple[int, int], ...]] = field(default_factory=list)
    depth_of_info: list[int] = field(default_factory=list)
    node_info: list[int] = field(default_factory=list)
    node_depth: list[int] = field(default_factory=list)
    children: list[list[int]] = field(default_factory=list)
    returns: list[tuple[float, float]] = field(default_factory=list)

    def info(self, pos: Position[Any], seat: int, depth: int, own: OwnHistory) -> int:
        """The index of the information state ``seat`` acts in at ``pos`` (added when new)."""
        game = self.game
        key = infostate_key(game, pos, seat)
        if key not in self.info_index:
            self.info_index[key] = len(self.keys)
            self.keys.append(key)
            self.seats.append(seat)
            m = np.zeros(game.num_actions)
            m[[game.action_id(a) for a in game.legal(pos, seat)]] = 1.0
            self.masks.append(m)
            self.feats.append(np.asarray(game.encode_observation(pos.state, seat), dtype=np.float64))
            self.prefixes.append(own[seat])
            self.depth_of_info.append(depth)
        i = self.info_index[key]
        if self.prefixes[i] != own[seat] or self.depth_of_info[i] != depth:
            raise ConfigError(
                f"{game.spec.id}: information state {key} is reached after two different own histories "
                "or at two depths (not perfect recall); self-play PG needs perfect recall"
            )
        return i

    def walk(self, pos: Position[Any], depth: int, own: OwnHistory) -> int:
        """Add the node at ``pos`` and everything below it; its index."""
        game, n = self.game, len(self.node_info)
        if n >= self.max_nodes:
            raise ConfigError(f"{game.spec.id}: more than {self.max_nodes} nodes to compile")
        self.node_info.append(-1)
        self.node_depth.append(depth)
        self.children.append([-1] * game.num_actions)
        self.returns.append((0.0, 0.0))
        if game.is_over(pos):
            r = game.final_returns(pos)
            self.returns[n] = (float(r[0]), float(r[1]))
            return n
        seat = seat_to_act(game, pos)
        i = self.node_info[n] = self.info(pos, seat, depth, own)
        for a in game.legal(pos, seat):
            aid = game.action_id(a)
            nxt = list(own)
            nxt[seat] = own[seat] + ((i, aid),)
            self.children[n][aid] = self.walk(game.act(pos, seat, a), depth + 1, tuple(nxt))
        return n


class CompiledGame:
    """Every deal's game tree as arrays (nodes in depth-first order, parents before children).

    ``node_info[n]``: the information state acting at node n (-1 at a terminal);
    ``children[n, a]``: the node after action id a (-1 where a is illegal); ``returns[n]``: the
    seats' returns at a terminal; ``roots``/``root_p``: each deal's first node and probability.
    Per information state: ``keys`` (``arena_train.exact.infostate_key``), ``seat``, ``mask``
    (legal action ids), ``features`` (``game.encode_observation``) and the owner's earlier
    (information state, action) pairs, ``prefix_info``/``prefix_act`` (-1 padded), whose
    probabilities multiply to the state's own reach (perfect recall)."""

    def __init__(self, game: Game[Any, Any], *, max_nodes: int = 2_000_000):
        if game.num_players != 2:
            raise ConfigError(f"self-play PG is for two-player games; {game.spec.id} has {game.num_players}")
        self.game = game
        w = _Walk(game, max_nodes)
        roots, root_p = [], []
        for s, p in deals_of(game):
            if p > 0:
                roots.append(w.walk(game.start(s), 0, ((), ())))
                root_p.append(p)
        self.keys = w.keys
        self.seat = np.asarray(w.seats, dtype=np.int64)
        self.mask = np.stack(w.masks)
        self.features = np.stack(w.feats)
        self.node_info = np.asarray(w.node_info, dtype=np.int64)
        self.node_depth = np.asarray(w.node_depth, dtype=np.int64)
        self.node_seat = np.where(self.node_info >= 0, self.seat[np.maximum(self.node_info, 0)], -1)
        self.children = np.asarray(w.children, dtype=np.int64)
        self.returns = np.asarray(w.returns, dtype=np.float64)
        self.roots = np.asarray(roots, dtype=np.int64)
        self.root_p = np.asarray(root_p, dtype=np.float64) / np.sum(root_p)
        width = max(1, max(len(p) for p in w.prefixes))
        self.prefix_info = np.full((len(w.keys), width), -1, dtype=np.int64)
        self.prefix_act = np.full((len(w.keys), width), -1, dtype=np.int64)
        for i, pre in enumerate(w.prefixes):
            for j, (pi, pa) in enumerate(pre):
                self.prefix_info[i, j], self.prefix_act[i, j] = pi, pa
        self.num_infos = len(w.keys)
        self.max_depth = int(self.node_depth.max())
        self._parent = np.full(len(w.node_info), -1, dtype=np.int64)
        self._parent_act = np.full(len(w.node_info), -1, dtype=np.int64)
        for a in range(game.num_actions):
            kids = self.children[:, a]
            has = kids >= 0
            self._parent[kids[has]] = np.nonzero(has)[0]
            self._parent_act[kids[has]] = a

    # -------------------------------------------------------------- policies as arrays
    def table(self, probs: Array) -> PolicyTable:
        """A :mod:`arena_train.exact` policy table from (infostates, actions) probabilities."""
        return {k: {int(a): float(probs[i, a]) for a in np.nonzero(self.mask[i])[0]} for i, k in enumerate(self.keys)}

    def probs_from_table(self, table: PolicyTable) -> Array:
        out = np.zeros_like(self.mask)
        for i, k in enumerate(self.keys):
            for a, p in table[k].items():
                out[i, a] = p
        return out

    def own_reach(self, probs: Array) -> Array:
        """Each information state's reach under its owner's own probabilities only."""
        pad = self.prefix_info < 0
        p = probs[np.maximum(self.prefix_info, 0), np.maximum(self.prefix_act, 0)]
        out: Array = np.where(pad, 1.0, p).prod(axis=1)
        return out

    # -------------------------------------------------------------- sampling
    def sample(self, probs: Array, n: int, rng: np.random.Generator) -> tuple[IntArray, IntArray, IntArray, Array]:
        """``n`` episodes under ``probs`` in both seats: the decisions (episode, information
        state, action id) and every episode's returns (n, 2)."""
        node = self.roots[rng.choice(len(self.roots), size=n, p=self.root_p)]
        last_pos = probs.shape[1] - 1 - np.argmax((probs > 0)[:, ::-1], axis=1)
        cum = np.cumsum(probs, axis=1)
        eps, infos, acts = [], [], []
        active = np.arange(n)
        while active.size:
            info = self.node_info[node[active]]
            live = info >= 0
            active, info = active[live], info[live]
            if not active.size:
                break
            u = rng.random(active.size)
            a = (cum[info] < u[:, None]).sum(axis=1)
            a = np.minimum(a, last_pos[info])
            eps.append(active)
            infos.append(info)
            acts.append(a)
            node[active] = self.children[node[active], a]
        cat = (lambda xs: np.concatenate(xs)) if eps else (lambda xs: np.zeros(0, dtype=np.int64))
        return cat(eps), cat(infos), cat(acts), self.returns[node]

    # -------------------------------------------------------------- exact evaluation
    def _reach(self, probs: Array, exclude: int | None) -> Array:
        """Every node's reach: chance x the seats' probabilities (``exclude``'s left out)."""
        reach = np.zeros(len(self.node_info))
        reach[self.roots] = self.root_p
        order = np.argsort(self.node_depth, kind="stable")
        parent = self._parent[order]
        has = parent >= 0
        # nodes in order of depth, so every parent is filled before its children
        for d in range(1, self.max_depth + 1):
            sel = order[(self.node_depth[order] == d) & has]
            par = self._parent[sel]
            info = self.node_info[par]
            p = probs[info, self._parent_act[sel]]
            if exclude is not None:
                p = np.where(self.seat[info] == exclude, 1.0, p)
            reach[sel] = reach[par] * p
        return reach

    def values(self, probs: Array, br_seat: int | None = None) -> float:
        """Seat 0's expected return under ``probs`` (``br_seat`` None), or ``br_seat``'s
        best-response value against ``probs``."""
        seat_view = 0 if br_seat is None else br_seat
        v = self.returns[:, seat_view].copy()
        w = self._reach(probs, br_seat) if br_seat is not None else None
        for d in range(self.max_depth - 1, -1, -1):
            at = np.nonzero((self.node_depth == d) & (self.node_info >= 0))[0]
            kids = self.children[at]
            q = np.where(kids >= 0, v[np.maximum(kids, 0)], 0.0)
            info = self.node_info[at]
            if br_seat is None:
                v[at] = (probs[info] * q).sum(axis=1)
                continue
            mine = self.seat[info] == br_seat
            v[at[~mine]] = (probs[info[~mine]] * q[~mine]).sum(axis=1)
            if mine.any():
                assert w is not None
                score = np.zeros_like(self.mask)
                np.add.at(score, info[mine], w[at[mine], None] * q[mine])
                score = np.where(self.mask > 0, score, -np.inf)
                best = np.argmax(score, axis=1)
                v[at[mine]] = q[mine][np.arange(mine.sum()), best[info[mine]]]
        return float(self.root_p @ v[self.roots])

    def exploitability(self, probs: Array) -> float:
        """NashConv / 2 of ``probs`` played by both seats (zero-sum: the values cancel)."""
        on0 = self.values(probs)
        br = [self.values(probs, s) for s in (0, 1)]
        return float(((br[0] - on0) + (br[1] + on0)) / 2)


class ReachAverage:
    """The mixture of policy snapshots as one behaviour policy (draw one snapshot per game and play
    it), kept incrementally on a compiled tree: at each information state, the snapshots'
    probabilities weighted by each one's own reach of the state times its weight
    (:func:`arena_train.exact.average_policy`; where no snapshot reaches the state, their weighted
    plain mean, as there). Weights: equal (``"uniform"``) or the step the snapshot was taken at
    (``"linear"``; while only snapshots of weight 0 are in, the average is the latest of them)."""

    def __init__(self, tree: CompiledGame, weighting: Literal["uniform", "linear"] | str = "uniform") -> None:
        if weighting not in ("uniform", "linear"):
            raise ValueError(f"weighting is 'uniform' or 'linear', not {weighting!r}")
        self.tree, self.weighting = tree, weighting
        self.reach_sum = np.zeros_like(tree.mask)
        self.plain_sum = np.zeros_like(tree.mask)
        self.weight = 0.0
        self.unweighted: Array | None = None  # the latest snapshot of weight 0 (the initial policy, linear)
        self.count = 0

    def add(self, probs: Array, step: int = 0) -> None:
        """One snapshot (an (information states, actions) probability array) taken at ``step``."""
        w = 1.0 if self.weighting == "uniform" else float(step)
        if w == 0:
            self.unweighted = probs.copy()
        self.reach_sum += w * self.tree.own_reach(probs)[:, None] * probs
        self.plain_sum += w * probs
        self.weight += w
        self.count += 1

    def policy(self) -> Array:
        if self.weight == 0:  # only weightless snapshots so far: the latest of them
            if self.unweighted is None:
                raise ValueError("the average of no snapshots")
            return self.unweighted
        tot = self.reach_sum.sum(axis=1, keepdims=True)
        out: Array = np.where(tot > 0, self.reach_sum / np.where(tot > 0, tot, 1.0), self.plain_sum / self.weight)
        return out

    def to_json(self) -> dict[str, Any]:
        """The sums as JSON numbers (exact: floats round-trip through JSON), for a checkpoint."""
        unweighted = None if self.unweighted is None else self.unweighted.tolist()
        return {
            "weighting": self.weighting,
            "reach_sum": self.reach_sum.tolist(),
            "plain_sum": self.plain_sum.tolist(),
            "weight": self.weight,
            "unweighted": unweighted,
            "count": self.count,
        }

    @classmethod
    def from_json(cls, tree: CompiledGame, data: dict[str, Any]) -> ReachAverage:
        out = cls(tree, data["weighting"])
        out.reach_sum, out.plain_sum = np.asarray(data["reach_sum"]), np.asarray(data["plain_sum"])
        out.weight, out.count = float(data["weight"]), int(data["count"])
        out.unweighted = None if data["unweighted"] is None else np.asarray(data["unweighted"])
        return out
