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
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from pydantic import Field, model_validator

from arena_core.errors import ConfigError
from arena_core.game import Game
from arena_core.registry import make_game
from arena_core.seeding import make_rng

from .compiled import CompiledGame, ReachAverage
from .config import RunConfig
from .pg import Adam, NumericPolicy
from .run import RunDir
from .trainer import Parts, RunSummary, TrainerPlugin

Array = npt.NDArray[np.float64]


# ---------------------------------------------------------------------- the trainer
class SelfPlayConfig(RunConfig):
    """Options of :class:`SelfPlayPG` (every regulariser off by default: plain REINFORCE)."""

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

    @model_validator(mode="after")
    def _bounded(self) -> SelfPlayConfig:
        """Out-of-range options are a ConfigError (one line), as the trainer's other errors."""
        if self.episodes < 1 or self.episodes_per_step < 1 or self.learning_rate <= 0:
            raise ConfigError("episodes, episodes_per_step and learning_rate must be positive")
        if min(self.entropy, self.magnet, self.magnet_every, self.baseline_decay, self.hidden) < 0:
            raise ConfigError("entropy, magnet, magnet_every, baseline_decay and hidden must be >= 0")
        return self

    @property
    def steps(self) -> int:
        return max(1, self.episodes // self.episodes_per_step)


class SelfPlayPGConfig(SelfPlayConfig):
    """The ``selfplay_pg`` trainer's config: the options and the game they train on."""

    trainer: Literal["selfplay_pg"] = "selfplay_pg"
    name: str = "selfplay_pg"
    game: str = Field(description="a registered two-player zero-sum game that lists its deals (e.g. Kuhn poker)")
    game_params: dict[str, Any] = Field(default_factory=dict)
    parent_run: str | None = None


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
    average: ReachAverage  # the realisation-weighted average of the iterates
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
            average=ReachAverage(t, cfg.average),
            adam=None
            if cfg.optimizer == "sgd"
            else Adam(cfg.learning_rate, beta1=0.9 if cfg.optimizer == "adam" else 0.0, eps=cfg.adam_eps),
            rng=make_rng(cfg.seed, "selfplay_pg"),
        )

    def probs(self) -> Array:
        return self.state.policy.probabilities(self.x, self.tree.mask)

    def average(self) -> Array:
        """The realisation-weighted average of the iterates so far (before the first step: the policy)."""
        return self.state.average.policy() if self.state.average.count else self.probs()

    def step(self) -> dict[str, Any]:
        cfg, s, t = self.config, self.state, self.tree
        frac = s.step / max(1, cfg.steps - 1)
        p = self.probs()
        if s.step == 0:
            s.average.add(p, 0)
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
        s.average.add(new, s.step)
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
        return json.dumps(self.config.model_dump(), sort_keys=True)


def train(config: SelfPlayPGConfig, run: RunDir, parts: Parts[Any]) -> RunSummary:
    """Numpy self-play policy gradient with a magnet on a small two-player zero-sum game.

    A whole run into ``run``: every evaluation row in the metrics, then the last iterate
    (``policy.npz``) and the average policy (``average.json``, a policy table)."""
    started = time.perf_counter()
    trainer = SelfPlayPG(make_game(config.game, config.game_params or None), SelfPlayConfig(**_options(config)))
    run.start(
        config.model_dump(mode="json"), trainer="selfplay_pg", seeds={"seed": config.seed}, parent=config.parent_run
    )
    run.metrics.write([])

    def emit(row: Mapping[str, Any]) -> None:
        run.metrics.append(row)
        parts.report(int(row["step"]), row)

    rows = trainer.run(emit=emit)
    trainer.state.policy.save(run.path / "policy.npz")
    (run.path / "average.json").write_text(json.dumps(trainer.tree.table(trainer.average()), indent=1))
    final = {k: rows[-1][k] for k in ("exploitability", "avg_exploitability")}
    run.plot(rows, ("exploitability", "avg_exploitability"))
    run.finish(status="ok", final_eval=final, wall_s=round(time.perf_counter() - started, 2))
    files = {"policy": str(run.path / "policy.npz"), "average": str(run.path / "average.json")}
    return RunSummary(run.path, run.run_id, trainer.state.step, rows, final_eval=final, files=files)


def _options(config: SelfPlayPGConfig) -> dict[str, Any]:
    return config.model_dump(include=set(SelfPlayConfig.model_fields))


#: the ``selfplay_pg`` entry point of ``arena.trainers``
TRAINER = TrainerPlugin("selfplay_pg", SelfPlayPGConfig, train)
