"""Self-play policy gradient on a small two-player zero-sum game, in numpy, with a magnet.

The learner is :class:`arena_train.pg.NumericPolicy` (a softmax over action ids of a linear
map, or one tanh layer, of per-information-state features) in both seats at once. Each step
samples ``episodes_per_step`` episodes and ascends

    mean over decisions of  (G - b(s)) log pi(a|s)  -  alpha KL(pi(.|s) || rho(.|s))  +  beta_t H(pi(.|s))

where G is the deciding seat's return, b(s) a running mean of the returns seen at that
information state, rho the *magnet* and beta_t an entropy bonus that may anneal to zero. With
a fixed uniform magnet the KL term is an entropy bonus and self-play settles at the
entropy-regularised (logit) equilibrium, not at Nash: an exploitability floor. Resetting the
magnet to the current policy every ``magnet_every`` steps (magnetic mirror descent with a
moving magnet, as in R-NaD) moves the regularised equilibrium toward Nash phase by phase, so the
floor goes. The *average policy* is realisation-weighted: the running sum of each iterate's
probabilities weighted by its own reach of the information state (the behaviour policy of
"draw one iterate per game and play it"; :func:`arena_train.exact.average_policy` of all
iterates, kept incrementally), optionally with weights growing linearly in the step.

Speed. The game is walked once (:class:`CompiledGame`: every deal's tree as arrays of nodes,
information-state indices, children and terminal returns), so a step samples its episodes as
array operations instead of through the generic rollout; the episodes are still sampled
plays, one deal drawn by the game's deal probabilities and one action drawn from the policy at
every decision, and the learner sees only what those episodes produce (the decisions and the
final returns). Exact exploitability on the compiled tree (:func:`CompiledGame.exploitability`)
equals :func:`arena_train.exact.exploitability` (tested) and is fast enough to evaluate often.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from arena_core.errors import ConfigError
from arena_core.game import Game, Position
from arena_core.seeding import make_rng

from .exact import PolicyTable, deals_of, infostate_key
from .pg import Adam, NumericPolicy
from .rollout import seat_to_act

Array = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


# ---------------------------------------------------------------------- the game as arrays
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
        deals = deals_of(game)
        a_n = game.num_actions
        info_index: dict[str, int] = {}
        keys: list[str] = []
        seats: list[int] = []
        masks: list[Array] = []
        feats: list[Array] = []
        prefixes: list[tuple[tuple[int, int], ...]] = []
        depth_of_info: list[int] = []
        node_info: list[int] = []
        node_depth: list[int] = []
        children: list[list[int]] = []
        returns: list[tuple[float, float]] = []

        def walk(pos: Position[Any], depth: int, own: tuple[tuple[tuple[int, int], ...], ...]) -> int:
            n = len(node_info)
            if n >= max_nodes:
                raise ConfigError(f"{game.spec.id}: more than {max_nodes} nodes to compile")
            node_info.append(-1)
            node_depth.append(depth)
            children.append([-1] * a_n)
            returns.append((0.0, 0.0))
            if game.is_over(pos):
                r = game.final_returns(pos)
                returns[n] = (float(r[0]), float(r[1]))
                return n
            seat = seat_to_act(game, pos)
            key = infostate_key(game, pos, seat)
            legal = game.legal(pos, seat)
            if key not in info_index:
                info_index[key] = len(keys)
                keys.append(key)
                seats.append(seat)
                m = np.zeros(a_n)
                m[[game.action_id(a) for a in legal]] = 1.0
                masks.append(m)
                feats.append(np.asarray(game.encode_observation(pos.state, seat), dtype=np.float64))
                prefixes.append(own[seat])
                depth_of_info.append(depth)
            i = info_index[key]
            if prefixes[i] != own[seat] or depth_of_info[i] != depth:
                raise ConfigError(
                    f"{game.spec.id}: information state {key} is reached after two different own histories "
                    "or at two depths (not perfect recall); self-play PG needs perfect recall"
                )
            node_info[n] = i
            for a in legal:
                aid = game.action_id(a)
                nxt = list(own)
                nxt[seat] = own[seat] + ((i, aid),)
                children[n][aid] = walk(game.act(pos, seat, a), depth + 1, tuple(nxt))
            return n

        roots, root_p = [], []
        for s, p in deals:
            if p > 0:
                roots.append(walk(game.start(s), 0, ((), ())))
                root_p.append(p)
        self.keys = keys
        self.seat = np.asarray(seats, dtype=np.int64)
        self.mask = np.stack(masks)
        self.features = np.stack(feats)
        self.node_info = np.asarray(node_info, dtype=np.int64)
        self.node_depth = np.asarray(node_depth, dtype=np.int64)
        self.node_seat = np.where(self.node_info >= 0, self.seat[np.maximum(self.node_info, 0)], -1)
        self.children = np.asarray(children, dtype=np.int64)
        self.returns = np.asarray(returns, dtype=np.float64)
        self.roots = np.asarray(roots, dtype=np.int64)
        self.root_p = np.asarray(root_p, dtype=np.float64) / np.sum(root_p)
        width = max(1, max(len(p) for p in prefixes))
        self.prefix_info = np.full((len(keys), width), -1, dtype=np.int64)
        self.prefix_act = np.full((len(keys), width), -1, dtype=np.int64)
        for i, pre in enumerate(prefixes):
            for j, (pi, pa) in enumerate(pre):
                self.prefix_info[i, j], self.prefix_act[i, j] = pi, pa
        self.num_infos = len(keys)
        self.max_depth = int(self.node_depth.max())
        self._parent = np.full(len(node_info), -1, dtype=np.int64)
        self._parent_act = np.full(len(node_info), -1, dtype=np.int64)
        for a in range(a_n):
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


# ---------------------------------------------------------------------- the trainer
@dataclass
class SelfPlayConfig:
    """Options of :func:`train_selfplay` (every regulariser off by default: plain REINFORCE)."""

    episodes: int = 300_000
    episodes_per_step: int = 64
    features: Literal["infostate", "encoding"] = "infostate"  # one-hot state (tabular) or the game's encoding
    hidden: int = 0
    optimizer: Literal["sgd", "adam", "rmsprop"] = "sgd"  # rmsprop: Adam without momentum (beta1 = 0)
    adam_eps: float = 1e-8  # Adam/RMSprop's epsilon (larger: smaller steps where gradients are rare)
    per_visit: bool = False  # average each state's gradient over its visits (not over the step's episodes)
    learning_rate: float = 0.1
    lr_final: float | None = None  # linear decay to this over the run (None: constant)
    baseline_decay: float = 0.99  # running mean of returns per information state (0: no baseline)
    entropy: float = 0.0  # entropy bonus at the start ...
    entropy_final: float | None = None  # ... annealed linearly to this (None: constant)
    magnet: float = 0.0  # alpha: KL(pi || rho) penalty; rho uniform until the first reset
    magnet_every: int = 0  # steps between magnet resets to the current policy (0: fixed magnet)
    magnet_mix: float = 0.0  # a reset magnet is (1 - mix) x the current policy + mix x uniform
    average: Literal["uniform", "linear"] = "uniform"  # iterate weights of the realisation-weighted average
    eval_every: int = 50  # steps between exact evaluations (and always the last step)
    seed: int = 0

    def __post_init__(self) -> None:
        if self.episodes < 1 or self.episodes_per_step < 1 or self.learning_rate <= 0:
            raise ConfigError("episodes, episodes_per_step and learning_rate must be positive")
        if min(self.entropy, self.magnet, self.magnet_every, self.baseline_decay, self.hidden) < 0:
            raise ConfigError("entropy, magnet, magnet_every, baseline_decay and hidden must be >= 0")

    @property
    def steps(self) -> int:
        return max(1, self.episodes // self.episodes_per_step)


def schedule(start: float, final: float | None, frac: float) -> float:
    return start if final is None else start + (final - start) * frac


@dataclass
class SelfPlayState:
    """Everything a run needs to continue exactly (``step``, the policy, optimiser, magnet,
    baselines, the average's sums and the RNG)."""

    step: int
    policy: NumericPolicy
    magnet: Array
    baseline: Array
    strategy_sum: Array
    weight_sum: float
    adam: Adam | None
    rng: np.random.Generator
    log: list[dict[str, Any]] = field(default_factory=list)


class SelfPlayPG:
    """Self-play REINFORCE with an optional magnet and annealed entropy on a compiled game."""

    def __init__(self, game: Game[Any, Any] | CompiledGame, config: SelfPlayConfig):
        self.tree = game if isinstance(game, CompiledGame) else CompiledGame(game)
        self.config = config
        t = self.tree
        self.x = np.eye(t.num_infos) if config.features == "infostate" else t.features
        self.state = self.fresh()

    def fresh(self) -> SelfPlayState:
        cfg, t = self.config, self.tree
        policy = NumericPolicy.init(self.x.shape[1], t.mask.shape[1], cfg.hidden, cfg.seed)
        if cfg.features == "infostate" and not cfg.hidden:
            policy.params["W2"][:] = 0.0  # tabular: start exactly uniform
        uniform = t.mask / t.mask.sum(axis=1, keepdims=True)
        return SelfPlayState(
            step=0,
            policy=policy,
            magnet=uniform,
            baseline=np.zeros(t.num_infos),
            strategy_sum=np.zeros_like(t.mask),
            weight_sum=0.0,
            adam=None
            if cfg.optimizer == "sgd"
            else Adam(cfg.learning_rate, beta1=0.9 if cfg.optimizer == "adam" else 0.0, eps=cfg.adam_eps),
            rng=make_rng(cfg.seed, "selfplay_pg"),
        )

    def probs(self) -> Array:
        return self.state.policy.probabilities(self.x, self.tree.mask)

    def average(self) -> Array:
        s = self.state
        if s.weight_sum == 0:
            return self.probs()
        tot = s.strategy_sum.sum(axis=1, keepdims=True)
        uniform = self.tree.mask / self.tree.mask.sum(axis=1, keepdims=True)
        out: Array = np.where(tot > 0, s.strategy_sum / np.where(tot > 0, tot, 1.0), uniform)
        return out

    def accumulate(self, probs: Array, weight: float) -> None:
        """Add one iterate to the realisation-weighted average (weight x its own reach)."""
        s = self.state
        s.strategy_sum += weight * self.tree.own_reach(probs)[:, None] * probs
        s.weight_sum += weight

    def step(self) -> dict[str, Any]:
        cfg, s, t = self.config, self.state, self.tree
        frac = s.step / max(1, cfg.steps - 1)
        p = self.probs()
        if s.step == 0:
            self.accumulate(p, 1.0 if cfg.average == "uniform" else 0.0)
        ep, info, act, ret = t.sample(p, cfg.episodes_per_step, s.rng)
        g = ret[ep, t.seat[info]]
        adv = g - s.baseline[info] if cfg.baseline_decay else g
        n = cfg.episodes_per_step
        # per information state: sum over its decisions of adv * (onehot(a) - p) and the counts
        a_n = t.mask.shape[1]
        w_sa = np.zeros(t.num_infos * a_n)
        np.add.at(w_sa, info * a_n + act, adv)
        w_sa = w_sa.reshape(t.num_infos, a_n)
        count = np.bincount(info, minlength=t.num_infos).astype(np.float64)
        dlogits = w_sa - w_sa.sum(axis=1, keepdims=True) * p
        logp = np.log(np.where(p > 0, p, 1.0))
        beta = schedule(cfg.entropy, cfg.entropy_final, frac)
        if beta:
            ent = -(p * logp).sum(axis=1, keepdims=True)
            dlogits += beta * count[:, None] * (-p * (logp + ent))
        if cfg.magnet:
            logr = np.log(np.where(s.magnet > 0, s.magnet, 1.0))
            kl = (p * (logp - logr)).sum(axis=1, keepdims=True)
            dlogits -= cfg.magnet * count[:, None] * p * (logp - logr - kl)
        scale = np.maximum(count, 1.0)[:, None] if cfg.per_visit else float(n)
        dlogits = np.where(t.mask > 0, dlogits, 0.0) / scale
        grads = s.policy.logit_gradients(self.x, dlogits)
        lr = schedule(cfg.learning_rate, cfg.lr_final, frac)
        if s.adam is not None:
            s.adam.lr = lr
            s.adam.ascend(s.policy.params, grads)
        else:
            for k, gk in grads.items():
                s.policy.params[k] += lr * gk
        if cfg.baseline_decay:
            seen = count > 0
            mean_g = np.bincount(info, weights=g, minlength=t.num_infos)[seen] / count[seen]
            s.baseline[seen] = cfg.baseline_decay * s.baseline[seen] + (1 - cfg.baseline_decay) * mean_g
        s.step += 1
        new = self.probs()
        self.accumulate(new, 1.0 if cfg.average == "uniform" else float(s.step))
        if cfg.magnet_every and s.step % cfg.magnet_every == 0:
            uniform = t.mask / t.mask.sum(axis=1, keepdims=True)
            s.magnet = (1.0 - cfg.magnet_mix) * new + cfg.magnet_mix * uniform
        return {"step": s.step, "episodes": s.step * n, "decisions": int(len(info))}

    def evaluate(self) -> dict[str, Any]:
        s = self.state
        return {
            "step": s.step,
            "episodes": s.step * self.config.episodes_per_step,
            "exploitability": self.tree.exploitability(self.probs()),
            "avg_exploitability": self.tree.exploitability(self.average()),
        }

    def run(
        self, *, until: int | None = None, emit: Callable[[dict[str, Any]], None] | None = None
    ) -> list[dict[str, Any]]:
        """Steps until ``until`` (default: the config's last step), evaluating every
        ``eval_every`` steps and at the last; returns (and emits) the evaluation rows."""
        cfg, s = self.config, self.state
        stop = min(cfg.steps, until if until is not None else cfg.steps)
        rows: list[dict[str, Any]] = []

        def record(row: dict[str, Any]) -> None:
            rows.append(row)
            s.log.append(row)
            if emit:
                emit(row)

        if s.step == 0:
            record(self.evaluate())
        while s.step < stop:
            self.step()
            if (cfg.eval_every and s.step % cfg.eval_every == 0) or s.step == cfg.steps:
                record(self.evaluate())
        return rows

    def config_json(self) -> str:
        return json.dumps(asdict(self.config), sort_keys=True)


def train_selfplay(game: Game[Any, Any] | CompiledGame, config: SelfPlayConfig) -> SelfPlayPG:
    """Run a whole self-play PG run and return the trainer (its ``state.log`` holds the curve)."""
    trainer = SelfPlayPG(game, config)
    trainer.run()
    return trainer
