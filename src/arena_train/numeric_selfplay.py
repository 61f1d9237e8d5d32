"""Self-play for a small numeric policy at scale: many games at once over any two-player game's
numeric encoding, a softmax MLP (:class:`arena_train.pg.NumericPolicy`) trained by REINFORCE
with a baseline, an entropy bonus, a lagged pool of past selves, and the average policy kept.

It is a trainer on the spine (:func:`train`: the config, the claimed run directory, the parts:
optionally the initial policy and a progress callback), registered as ``numeric_selfplay``, every
random choice drawn from the seed of the config. Play is :mod:`arena_train.numeric_play`. Each update:

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
a checkpoint (``checkpoints/step_N``) holds everything needed to continue exactly (weights, optimizer,
pool, average, baseline, generator state), written every ``checkpoint_every`` updates and at the end;
``resume_from`` continues one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from pydantic import Field

from arena_core.errors import ConfigError
from arena_core.game import Game
from arena_core.registry import make_game
from arena_core.seeding import derive_seed, make_rng

from .config import RunConfig
from .numeric_play import LEARNER, Mixture, copy_policy, evaluate, play
from .pg import Adam, NumericPolicy
from .run import RunDir, read_state
from .trainer import Parts, RunSummary, TrainerPlugin

Array = npt.NDArray[np.float64]


class NumericSelfPlayConfig(RunConfig):
    """The ``numeric_selfplay`` trainer's config (``bench/liars_specialist.py``'s runs; a loop stage)."""

    trainer: Literal["numeric_selfplay"] = "numeric_selfplay"
    name: str = "numeric_selfplay"
    game: str = Field(description="a registered two-player game with a numeric encoding")
    game_params: dict[str, Any] = Field(default_factory=dict)
    simulator: str | None = Field(
        None,
        description="a faster game to train on with the same encoding and action ids (e.g. the native liars_dice "
        "for textarena/LiarsDice-v0); the evaluations play the game itself",
    )
    parent_run: str | None = None
    resume_from: str | None = Field(None, description="a checkpoint (or run directory) of this run to continue")
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

    def resume_checkpoint(self) -> str | None:
        return self.resume_from


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


# ---------------------------------------------------------------------- the trainer
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


def _save_state(run: RunDir, st: _State) -> None:
    """``checkpoints/step_N/``: the arrays (state.npz), then ``state.json`` (complete once it is there)."""
    arrays: dict[str, Any] = {f"policy/{k}": v for k, v in st.policy.params.items()}
    for name, group in (("pool", st.pool), ("average", st.average)):
        arrays.update({f"{name}/{i}/{k}": v for i, m in enumerate(group) for k, v in m.params.items()})
    if st.adam.m is not None and st.adam.v is not None:
        arrays.update({f"adam_m/{k}": v for k, v in st.adam.m.items()})
        arrays.update({f"adam_v/{k}": v for k, v in st.adam.v.items()})
    arrays["baseline"] = st.baseline.w
    if st.magnet is not None:
        arrays.update({f"magnet/{k}": v for k, v in st.magnet.params.items()})
    np.savez(run.checkpoint(st.update) / "state.npz", **arrays)
    meta = {"step": st.update, "games": st.games, "adam_t": st.adam.t, "rng": st.rng.bit_generator.state}
    run.save_state(st.update, meta)


def _load_state(checkpoint: Path, st: _State) -> None:
    meta = read_state(checkpoint)
    with np.load(checkpoint / "state.npz") as data:
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
    st.update, st.games = int(meta["step"]), int(meta["games"])


def _lineups(
    cfg: NumericSelfPlayConfig, st: _State, n: int, frozen: bool
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


def _update(cfg: NumericSelfPlayConfig, st: _State, results: list[Any], progress_share: float) -> dict[str, Any]:
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


def _games(cfg: NumericSelfPlayConfig) -> tuple[Game[Any, Any], Game[Any, Any]]:
    """The game (evaluations) and the one training plays (the simulator, held to the same shape)."""
    game = make_game(cfg.game, cfg.game_params or None, num_players=2)
    if game.num_players != 2 or not game.observation_size:
        raise ConfigError(
            f"numeric self-play needs a two-player game with a numeric encoding; {game.spec.id} is not one"
        )
    if cfg.simulator is None:
        return game, game
    sim = make_game(cfg.simulator, cfg.game_params or None, num_players=2)
    if (sim.observation_size, sim.num_actions) != (game.observation_size, game.num_actions):
        raise ConfigError(
            f"simulator {cfg.simulator!r} does not share {cfg.game!r}'s encoding and actions "
            f"({sim.observation_size}/{sim.num_actions} against {game.observation_size}/{game.num_actions})"
        )
    return game, sim


def _start(cfg: NumericSelfPlayConfig, game: Game[Any, Any], injected: NumericPolicy | None) -> _State:
    size = game.observation_size
    start = injected or (
        Mixture.load(cfg.start_from).members[-1]
        if cfg.start_from
        else NumericPolicy.init(size, game.num_actions, cfg.hidden, derive_seed(cfg.seed, "selfplay_init"))
    )
    frozen = Mixture.load(cfg.respond_to).members if cfg.respond_to else []
    baseline = _Baseline(cfg.baseline, size, 2, cfg.baseline_rate)
    return _State(
        copy_policy(start), Adam(cfg.learning_rate), list(frozen), [], baseline, make_rng(cfg.seed, "selfplay")
    )


def _step(cfg: NumericSelfPlayConfig, st: _State, sim: Game[Any, Any], total_updates: int) -> dict[str, Any]:
    """One update: play a batch, ascend, then the magnet, the pool and the average move on."""
    n = min(cfg.batch_games, cfg.games - st.games)
    lineups = _lineups(cfg, st, n, cfg.respond_to is not None)
    results = play(sim, {LEARNER: st.policy, **dict(enumerate(st.pool))}, lineups, cfg.parallel, st.rng)
    st.games += n
    st.update += 1
    row = _update(cfg, st, results, st.update / total_updates)
    if cfg.magnet and (st.magnet is None or st.update % cfg.magnet_every == 0):
        st.magnet = copy_policy(st.policy)
    if cfg.respond_to is None and st.update % cfg.pool_every == 0:
        st.pool = (st.pool + [copy_policy(st.policy)])[-cfg.pool_size :]
    if st.update >= cfg.average_from * total_updates and st.update % cfg.average_every == 0:
        st.average.append(copy_policy(st.policy))
    return row


def train(config: NumericSelfPlayConfig, run: RunDir, parts: Parts[NumericPolicy]) -> RunSummary:
    """Self-play policy gradient for a numeric MLP over a two-player game's encoding, many games at once.

    Writes the last iterate (``policy.npz``) and the average policy (``average.npz``, a mixture: the
    player ``numeric_mixture{weights = "RUN/average.npz"}``); resumes exactly from a checkpoint."""
    cfg, started = config, time.perf_counter()
    game, sim = _games(cfg)
    st = _start(cfg, game, parts.model)
    if run.resume is not None:
        _load_state(run.resume, st)
        run.metrics.write(run.resumed_metrics(st.update))
    else:
        run.metrics.write([])
    run.start(cfg.model_dump(mode="json"), trainer="numeric_selfplay", seeds={"seed": cfg.seed}, parent=cfg.parent_run)
    total_updates = -(-cfg.games // cfg.batch_games)
    final: dict[str, Any] | None = None
    while st.games < cfg.games:
        row = _step(cfg, st, sim, total_updates)
        if cfg.eval_every and cfg.eval_games and (st.update % cfg.eval_every == 0 or st.games >= cfg.games):
            seed = derive_seed(cfg.seed, "eval", st.update)
            final = {
                f"return_vs_{k}": v
                for k, v in evaluate(game, st.policy, cfg.eval_opponents, cfg.eval_games, seed).items()
            }
            row.update(final)
        row["wall_s"] = round(time.perf_counter() - started, 2)
        run.metrics.append(row)
        parts.report(st.update, row)
        if st.update % cfg.checkpoint_every == 0 or st.games >= cfg.games:
            _save_state(run, st)
    st.policy.save(run.path / "policy.npz")
    Mixture(st.average or [st.policy]).save(run.path / "average.npz")
    run.finish(status="ok", games=st.games, average_members=len(st.average) or 1, final_eval=final)
    files = {"policy": str(run.path / "policy.npz"), "average": str(run.path / "average.npz")}
    return RunSummary(run.path, run.run_id, st.update, run.metrics.rows(), final_eval=final, files=files)


#: the ``numeric_selfplay`` entry point of ``arena.trainers``
TRAINER = TrainerPlugin("numeric_selfplay", NumericSelfPlayConfig, train)
