"""Self-play for a small numeric policy at scale: many games at once over any two-player game's
numeric encoding, a softmax MLP (:class:`arena_train.pg.NumericPolicy`) trained by REINFORCE
with a baseline, an entropy bonus, a lagged pool of past selves, and the average policy kept.

It is a function over injected parts (:func:`train`: the config, the run directory, the game and
optionally the initial policy and a progress callback), every random choice drawn from the seed
of the config. Each update:

- plays ``batch_games`` games, ``parallel`` at once (one batched forward pass per decision round
  over every game that waits on the same policy). A game is either the current policy against
  itself (both seats learn) or against a past self drawn from the pool (the learner's seat
  learns); with ``respond_to`` the only opponent is that frozen policy (a best-response learner);
- ascends ``mean(A log pi(a|s)) + beta H(pi(.|s))`` with Adam, where the advantage A is the
  deciding seat's outcome G (+1/-1, the game's own returns) minus the baseline b(s): the seat's
  running mean (``"role"``), or a linear value of the encoding fitted online (``"linear"``: the dice
  each seat holds matter more than the seat); with ``gae_lambda < 1`` A is GAE(lambda) over the
  seat's decisions, the baseline as the value (the value moves when a die is lost, so a decision is
  credited mostly with its own round); with ``magnet > 0`` also ``- alpha KL(pi || magnet)``, the
  magnet reset to the current policy every ``magnet_every`` updates (magnetic mirror descent with a
  moving magnet, as R-NaD; ``arena_train.selfplay_pg`` does it for tabular policies);
- every ``pool_every`` updates the current policy joins the pool (the oldest leaves past
  ``pool_size``); from ``average_from`` of the run on, every ``average_every`` updates it joins the
  average policy, a uniform mixture of iterates played by drawing one per game (the behaviour of
  "the average of the policies", not an average of weights).

Logged per update (metrics.jsonl, ``step`` the update's number): entropy, gradient norm, the share of decisions whose
advantage is zero, mean outcome, decisions; every ``eval_every`` updates the win rate of the
current policy (sampled, its mean return) against fixed ``eval_opponents`` on fresh deals. The run is resumable:
``checkpoints/last`` holds everything needed to continue exactly (weights, optimizer, pool, average,
baseline, generator state), written every ``checkpoint_every`` updates and at the end.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field

from arena_core.errors import ConfigError
from arena_core.game import Game, Position
from arena_core.players import BasePlayer, Decision
from arena_core.registry import make_game, make_player
from arena_core.seeding import derive_seed, make_rng

from .manifest import MetricsLog, build_manifest, claim_run_dir, write_manifest
from .pg import Adam, NumericPolicy

Array = npt.NDArray[np.float64]


class SelfPlayConfig(BaseModel):
    """The run, as data (``examples/liars_numeric_selfplay.toml``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    game: str = "liars_dice"
    game_params: dict[str, Any] = Field(default_factory=dict)
    seed: int = Field(0, ge=0)
    games: int = Field(
        100_000, ge=1, description="games played for training (both seats of a self-play game count once)"
    )
    batch_games: int = Field(64, ge=1, description="games per update")
    parallel: int = Field(256, ge=1, description="games played at once")
    hidden: int = Field(128, ge=0, description="tanh hidden units (0: linear)")
    learning_rate: float = Field(3e-4, gt=0)
    entropy: float = Field(0.01, ge=0, description="entropy bonus at the start")
    entropy_final: float | None = Field(None, ge=0, description="anneal the bonus linearly to this (None: constant)")
    baseline: Literal["role", "linear"] = "linear"
    baseline_rate: float = Field(0.01, gt=0, le=1, description="step of the baseline's online fit")
    gae_lambda: float = Field(
        1.0,
        ge=0,
        le=1,
        description="advantages: GAE(lambda) over a seat's decisions with the baseline as the value (1: G - b)",
    )
    magnet: float = Field(0.0, ge=0, description="alpha of a KL(pi || magnet) penalty (0: none)")
    magnet_every: int = Field(100, ge=1, description="updates between resets of the magnet to the current policy")
    self_share: float = Field(0.5, ge=0, le=1, description="share of games against the current policy itself")
    pool_every: int = Field(20, ge=1, description="updates between snapshots into the pool of past selves")
    pool_size: int = Field(20, ge=1)
    average_from: float = Field(0.5, ge=0, le=1, description="share of the run after which iterates join the average")
    average_every: int = Field(20, ge=1)
    respond_to: str | None = Field(
        None, description="a frozen policy (.npz) to learn a best response to: the only opponent"
    )
    start_from: str | None = Field(
        None,
        description="initial weights (.npz; a mixture's last member): a best response starts at the policy it answers",
    )
    eval_every: int = Field(100, ge=0)
    eval_games: int = Field(200, ge=0, description="games per fixed opponent per evaluation (seats alternate)")
    eval_opponents: list[str] = Field(default_factory=lambda: ["random"])
    checkpoint_every: int = Field(100, ge=1)


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


def _copy(policy: NumericPolicy) -> NumericPolicy:
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


# ---------------------------------------------------------------------- baselines
class _Baseline:
    """b(s): the seat's running mean (role), or a linear value of [encoding, seat one-hot, 1]."""

    def __init__(self, kind: str, size: int, seats: int, rate: float):
        self.kind, self.rate, self.seats = kind, rate, seats
        self.w = np.zeros(size + seats + 1) if kind == "linear" else np.zeros(seats)

    def _features(self, x: Array, seat: npt.NDArray[np.int_]) -> Array:
        onehot = np.eye(self.seats)[seat]
        return np.concatenate([x, onehot, np.ones((len(x), 1))], axis=1)

    def __call__(self, x: Array, seat: npt.NDArray[np.int_]) -> Array:
        if self.kind == "role":
            out: Array = self.w[seat]
            return out
        v: Array = self._features(x, seat) @ self.w
        return v

    def fit(self, x: Array, seat: npt.NDArray[np.int_], g: Array) -> None:
        if self.kind == "role":
            for s in range(self.seats):
                here = seat == s
                if here.any():
                    self.w[s] += self.rate * (g[here].mean() - self.w[s])
            return
        f = self._features(x, seat)
        self.w += self.rate * f.T @ (g - f @ self.w) / len(g)


# ---------------------------------------------------------------------- play
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


# ---------------------------------------------------------------------- the trainer
LEARNER = -1


@dataclass
class _State:
    """Everything a resumed run needs."""

    policy: NumericPolicy
    adam: Adam
    pool: list[NumericPolicy]
    average: list[NumericPolicy]
    baseline: _Baseline
    rng: np.random.Generator
    magnet: NumericPolicy | None = None
    update: int = 0
    games: int = 0


def _save_state(path: Path, st: _State) -> None:
    path.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, Any] = {f"policy/{k}": v for k, v in st.policy.params.items()}
    for name, group in (("pool", st.pool), ("average", st.average)):
        arrays.update({f"{name}/{i}/{k}": v for i, m in enumerate(group) for k, v in m.params.items()})
    if st.adam.m is not None and st.adam.v is not None:
        arrays.update({f"adam_m/{k}": v for k, v in st.adam.m.items()})
        arrays.update({f"adam_v/{k}": v for k, v in st.adam.v.items()})
    arrays["baseline"] = st.baseline.w
    if st.magnet is not None:
        arrays.update({f"magnet/{k}": v for k, v in st.magnet.params.items()})
    tmp = path / "state.tmp.npz"
    np.savez(tmp, **arrays)
    meta = {"update": st.update, "games": st.games, "adam_t": st.adam.t, "rng": st.rng.bit_generator.state}
    (path / "meta.tmp.json").write_text(json.dumps(meta))
    tmp.replace(path / "state.npz")
    (path / "meta.tmp.json").replace(path / "meta.json")


def _load_state(path: Path, st: _State) -> None:
    meta = json.loads((path / "meta.json").read_text())
    with np.load(path / "state.npz") as data:
        arrays = {k: data[k].copy() for k in data.files}

    def group(prefix: str) -> dict[str, Array]:
        return {k[len(prefix) + 1 :]: v for k, v in arrays.items() if k.startswith(prefix + "/")}

    def members(prefix: str) -> list[NumericPolicy]:
        found = group(prefix)
        count = 1 + max((int(k.split("/")[0]) for k in found), default=-1)
        return [
            NumericPolicy({k.split("/")[1]: v for k, v in found.items() if k.split("/")[0] == str(i)})
            for i in range(count)
        ]

    st.policy = NumericPolicy(group("policy"))
    st.magnet = NumericPolicy(group("magnet")) if group("magnet") else None
    st.pool, st.average = members("pool"), members("average")
    m, v = group("adam_m"), group("adam_v")
    st.adam.m, st.adam.v, st.adam.t = (m or None), (v or None), int(meta["adam_t"])
    st.baseline.w = arrays["baseline"]
    st.rng.bit_generator.state = meta["rng"]
    st.update, st.games = int(meta["update"]), int(meta["games"])


def _lineups(
    cfg: SelfPlayConfig, st: _State, n: int, frozen: bool
) -> list[tuple[int, tuple[int, ...], tuple[int, ...]]]:
    """The next ``n`` games: deal seeds from the run's seed and the game count; self-play (both
    seats learn) or the learner in a random seat against a past self (or the frozen policy)."""
    out: list[tuple[int, tuple[int, ...], tuple[int, ...]]] = []
    for i in range(n):
        seed = derive_seed(cfg.seed, "selfplay_deal", st.games + i) % 2**31
        if not frozen and (not st.pool or st.rng.random() < cfg.self_share):
            out.append((seed, (LEARNER, LEARNER), (0, 1)))
            continue
        opponent = int(st.rng.integers(len(st.pool)))
        seat = int(st.rng.integers(2))
        out.append((seed, (LEARNER, opponent) if seat == 0 else (opponent, LEARNER), (seat,)))
    return out


def _advantages(v: Array, g: Array, sequences: list[list[int]], lam: float) -> tuple[Array, Array]:
    """GAE(lambda) without discount over each seat's decisions in a game (the value of the next
    decision, or the outcome after the last, minus this one's): the advantages and the
    lambda-returns the baseline is fitted to. ``lam = 1`` gives ``G - v``."""
    adv, target = np.empty_like(v), np.empty_like(v)
    for seq in sequences:
        following, acc = g[seq[-1]], 0.0
        for j in reversed(seq):
            acc = following - v[j] + lam * acc
            adv[j], target[j], following = acc, acc + v[j], v[j]
    return adv, target


def _gradients(
    policy: NumericPolicy,
    x: Array,
    mask: Array,
    actions: npt.NDArray[np.int_],
    adv: Array,
    entropy: float,
    magnet: NumericPolicy | None,
    alpha: float,
) -> tuple[dict[str, Array], float]:
    """The gradient (to ascend) of ``mean(adv log pi(a|s)) + entropy H(pi) - alpha KL(pi || magnet)``
    over the rows, and the mean entropy."""
    h = policy._hidden(x)
    p = policy.probabilities(x, mask)
    onehot = np.zeros_like(p)
    onehot[np.arange(len(actions)), actions] = 1.0
    logp = np.log(np.where(p > 0, p, 1.0))
    ent = -(p * logp).sum(axis=1)
    dlogits = (onehot - p) * adv[:, None] - entropy * p * (logp + ent[:, None])
    if magnet is not None and alpha:
        q = magnet.probabilities(x, mask)
        log_ratio = np.where(p > 0, logp - np.log(np.where(q > 0, q, 1.0)), 0.0)
        kl = (p * log_ratio).sum(axis=1)
        dlogits -= alpha * p * (log_ratio - kl[:, None])
    return policy.logit_gradients(x, dlogits / len(actions), h), float(ent.mean())


def _update(cfg: SelfPlayConfig, st: _State, results: list[Any], progress_share: float) -> dict[str, Any]:
    rows: list[tuple[Array, Array, int, int, float]] = []
    sequences: list[list[int]] = []
    for ret, game_rows in results:
        for seat in sorted({r[3] for r in game_rows}):
            sequences.append(list(range(len(rows), len(rows) + sum(1 for r in game_rows if r[3] == seat))))
            rows += [(x, m, a, s, float(ret[s])) for x, m, a, s in game_rows if s == seat]
    outcome = float(np.mean([ret[s] for ret, game_rows in results for s in {r[3] for r in game_rows}] or [0.0]))
    row: dict[str, Any] = {"step": st.update, "games": st.games, "decisions": len(rows), "learner_outcome": outcome}
    if not rows:
        return row
    x = np.stack([r[0] for r in rows])
    mask = np.stack([r[1] for r in rows])
    actions = np.array([r[2] for r in rows])
    seats = np.array([r[3] for r in rows])
    g = np.array([r[4] for r in rows])
    adv, target = _advantages(st.baseline(x, seats), g, sequences, cfg.gae_lambda)
    st.baseline.fit(x, seats, target)
    beta = cfg.entropy
    if cfg.entropy_final is not None:
        beta = cfg.entropy + (cfg.entropy_final - cfg.entropy) * progress_share
    grads, ent = _gradients(st.policy, x, mask, actions, adv, beta, st.magnet, cfg.magnet)
    st.adam.ascend(st.policy.params, grads)
    norm = float(np.sqrt(sum(float((v**2).sum()) for v in grads.values())))
    row.update(
        {
            "entropy": ent,
            "grad_norm": norm,
            "zero_advantage_share": float(np.mean(np.abs(adv) < 1e-9)),
            "advantage_sd": float(adv.std()),
            "entropy_bonus": beta,
        }
    )
    return row


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


def train(
    config: SelfPlayConfig | Mapping[str, Any],
    run_dir: str | Path,
    *,
    game: Game[Any, Any] | None = None,
    policy: NumericPolicy | None = None,
    progress: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Train (or resume, when ``run_dir/checkpoints/last`` exists) and return the summary: the
    paths of the last iterate (``policy.npz``) and the average (``average.npz``), games, wall time."""
    cfg = config if isinstance(config, SelfPlayConfig) else SelfPlayConfig(**dict(config))
    run = Path(run_dir)
    last = run / "checkpoints" / "last"
    resuming = (last / "meta.json").exists()
    claim_run_dir(run, continuing=last if resuming else None)
    game = game or make_game(cfg.game, cfg.game_params or None, num_players=2)
    if game.num_players != 2 or not game.observation_size:
        raise ConfigError(
            f"numeric self-play needs a two-player game with a numeric encoding; {game.spec.id} is not one"
        )
    size = game.observation_size
    start = policy or (
        Mixture.load(cfg.start_from).members[-1]
        if cfg.start_from
        else NumericPolicy.init(size, game.num_actions, cfg.hidden, derive_seed(cfg.seed, "selfplay_init"))
    )
    frozen = Mixture.load(cfg.respond_to).members if cfg.respond_to else None
    st = _State(
        _copy(start),
        Adam(cfg.learning_rate),
        list(frozen) if frozen else [],
        [],
        _Baseline(cfg.baseline, size, 2, cfg.baseline_rate),
        make_rng(cfg.seed, "selfplay"),
    )
    log = MetricsLog(run / "metrics.jsonl")
    if resuming:
        _load_state(last, st)
        log.truncate_after(st.update)
    else:
        write_manifest(
            run,
            build_manifest(
                cfg.model_dump(mode="json"), seeds={"seed": cfg.seed}, extra={"trainer": "numeric_selfplay"}
            ),
        )
    total_updates = -(-cfg.games // cfg.batch_games)
    started = time.perf_counter()
    while st.games < cfg.games:
        n = min(cfg.batch_games, cfg.games - st.games)
        lineups = _lineups(cfg, st, n, frozen is not None)
        policies = {LEARNER: st.policy, **dict(enumerate(st.pool))}
        results = play(game, policies, lineups, cfg.parallel, st.rng)
        st.games += n
        st.update += 1
        row = _update(cfg, st, results, st.update / total_updates)
        if cfg.magnet and (st.magnet is None or st.update % cfg.magnet_every == 0):
            st.magnet = _copy(st.policy)
        if frozen is None and st.update % cfg.pool_every == 0:
            st.pool = (st.pool + [_copy(st.policy)])[-cfg.pool_size :]
        if st.update >= cfg.average_from * total_updates and st.update % cfg.average_every == 0:
            st.average.append(_copy(st.policy))
        if cfg.eval_every and cfg.eval_games and (st.update % cfg.eval_every == 0 or st.games >= cfg.games):
            found = evaluate(
                game, st.policy, cfg.eval_opponents, cfg.eval_games, derive_seed(cfg.seed, "eval", st.update)
            )
            row.update({f"return_vs_{k}": v for k, v in found.items()})
        row["wall_s"] = round(time.perf_counter() - started, 2)
        log.append(row)
        if progress:
            progress(row)
        if st.update % cfg.checkpoint_every == 0 or st.games >= cfg.games:
            _save_state(last, st)
    st.policy.save(run / "policy.npz")
    Mixture(st.average or [st.policy]).save(run / "average.npz")
    summary = {
        "games": st.games,
        "updates": st.update,
        "policy": str(run / "policy.npz"),
        "average": str(run / "average.npz"),
        "average_members": len(st.average) or 1,
        "wall_s": round(time.perf_counter() - started, 2),
    }
    (run / "summary.json").write_text(json.dumps(summary, indent=2))
    return summary
