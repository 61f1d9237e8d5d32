"""A policy-gradient trainer that is not a language model: a softmax policy (linear, or one
tanh hidden layer) over a game's numeric observation encoding, trained with REINFORCE, a
batch-mean baseline and Adam, all in numpy.

It shares the rollout, reward, evaluation and manifest code with the GRPO trainer, which is
the point: the trainer protocol is not tied to LLMs. It is also a fast baseline opponent:
a saved policy plays as the registered player ``numeric_policy:weights=PATH``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from arena_core.errors import ConfigError
from arena_core.players import BasePlayer, Decision
from arena_core.registry import make_game, make_player
from arena_core.seeding import derive_seed, make_rng

from .config import PolicyGradientConfig, trainer_config
from .exact import evaluation_deals
from .manifest import MetricsLog, build_manifest, claim_run_dir, plot_metrics, write_manifest
from .rollout import (
    Choice,
    EpisodeSpec,
    Request,
    RewardSpec,
    episode_return,
    paired_bootstrap,
    per_deal_means,
    play_episodes,
    rotated_specs,
)

Array = npt.NDArray[np.float64]


# ---------------------------------------------------------------------- the policy
@dataclass
class NumericPolicy:
    """Softmax over legal action ids of ``W2 . h + b2``, ``h = x`` (linear) or ``tanh(W1 x + b1)``."""

    params: dict[str, Array]

    @classmethod
    def init(cls, obs_size: int, num_actions: int, hidden: int, seed: int) -> NumericPolicy:
        rng = make_rng(seed, "numeric_policy_init")
        if hidden:
            return cls(
                {
                    "W1": rng.standard_normal((obs_size, hidden)) / np.sqrt(obs_size),
                    "b1": np.zeros(hidden),
                    "W2": rng.standard_normal((hidden, num_actions)) * 0.01,
                    "b2": np.zeros(num_actions),
                }
            )
        return cls({"W2": rng.standard_normal((obs_size, num_actions)) * 0.01, "b2": np.zeros(num_actions)})

    def _hidden(self, x: Array) -> Array:
        if "W1" not in self.params:
            return x
        h: Array = np.tanh(x @ self.params["W1"] + self.params["b1"])
        return h

    def probabilities(self, x: Array, mask: Array) -> Array:
        """(B, A) action probabilities, zero outside the mask."""
        logits = self._hidden(x) @ self.params["W2"] + self.params["b2"]
        logits = np.where(mask > 0, logits, -np.inf)
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        out: Array = p / p.sum(axis=1, keepdims=True)
        return out

    def gradients(
        self, x: Array, mask: Array, actions: npt.NDArray[np.int_], weights: Array, entropy: float = 0.0
    ) -> tuple[dict[str, Array], float]:
        """Gradient of ``mean(weights * log p(action)) + entropy * mean(H)`` (to ascend), and H."""
        h = self._hidden(x)
        p = self.probabilities(x, mask)
        onehot = np.zeros_like(p)
        onehot[np.arange(len(actions)), actions] = 1.0
        dlogits = (onehot - p) * weights[:, None]
        logp = np.log(np.where(p > 0, p, 1.0))
        ent = -(p * logp).sum(axis=1)
        if entropy:
            dlogits += entropy * (-p * (logp + ent[:, None]))  # d H / d logits
        dlogits /= len(actions)
        return self.logit_gradients(x, dlogits, h), float(ent.mean())

    def logit_gradients(self, x: Array, dlogits: Array, h: Array | None = None) -> dict[str, Array]:
        """The parameters' gradient of ``sum(dlogits * logits(x))`` (backpropagate a gradient
        with respect to the logits of the rows ``x``; ``h``: their hidden layer if known)."""
        h = self._hidden(x) if h is None else h
        grads = {"W2": h.T @ dlogits, "b2": dlogits.sum(axis=0)}
        if "W1" in self.params:
            dh = (dlogits @ self.params["W2"].T) * (1.0 - h**2)
            grads.update({"W1": x.T @ dh, "b1": dh.sum(axis=0)})
        return grads

    def save(self, path: str | Path) -> None:
        arrays: dict[str, Any] = dict(self.params)  # numpy's stub would read a key as savez's allow_pickle
        np.savez(path, **arrays)

    @classmethod
    def load(cls, path: str | Path) -> NumericPolicy:
        with np.load(path) as data:
            return cls({k: data[k].copy() for k in data.files})


@dataclass
class Adam:
    lr: float
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    t: int = 0
    m: dict[str, Array] | None = None
    v: dict[str, Array] | None = None

    def ascend(self, params: dict[str, Array], grads: dict[str, Array]) -> None:
        if self.m is None or self.v is None:
            self.m = {k: np.zeros_like(v) for k, v in params.items()}
            self.v = {k: np.zeros_like(v) for k, v in params.items()}
        m, v = self.m, self.v
        self.t += 1
        for k, g in grads.items():
            m[k] = self.beta1 * m[k] + (1 - self.beta1) * g
            v[k] = self.beta2 * v[k] + (1 - self.beta2) * g * g
            mhat = m[k] / (1 - self.beta1**self.t)
            vhat = v[k] / (1 - self.beta2**self.t)
            params[k] = params[k] + self.lr * mhat / (np.sqrt(vhat) + self.eps)


@dataclass(frozen=True)
class NumericRecord:
    obs: Array
    mask: Array
    action: int


class NumericLearner:
    """A :class:`~arena_train.rollout.Learner` over the observation encoding (sampled or greedy)."""

    def __init__(self, policy: NumericPolicy, *, greedy: bool = False):
        self.policy, self.greedy = policy, greedy

    def decide(self, requests: Sequence[Request]) -> list[Choice]:
        if not requests:
            return []
        game = requests[0].game
        x = np.stack([r.game.encode_observation(r.pos.state, r.seat) for r in requests]).astype(np.float64)
        mask = np.stack([r.game.mask(r.pos, r.seat) for r in requests]).astype(np.float64)
        p = self.policy.probabilities(x, mask)
        out: list[Choice] = []
        for i, r in enumerate(requests):
            a = int(np.argmax(p[i])) if self.greedy else int(make_rng(r.key, "numeric").choice(p.shape[1], p=p[i]))
            out.append(Choice(game.action_from_id(a), record=NumericRecord(x[i], mask[i], a)))
        return out


class NumericPolicyPlayer(BasePlayer):
    """A saved :class:`NumericPolicy` as an arena player (``numeric_policy:weights=PATH``)."""

    name = "numeric_policy"

    def __init__(self, seed: int = 0, weights: str | None = None, greedy: bool = True):
        super().__init__(seed)
        if not weights:
            raise ConfigError("numeric_policy needs weights=PATH (a policy.npz written by the policy_gradient trainer)")
        self.policy = NumericPolicy.load(weights)
        self.greedy = bool(greedy)

    def act(self, decision: Decision) -> Any:
        game = decision.game
        x = decision.encoded_observation()[None, :].astype(np.float64)
        mask = np.zeros((1, game.num_actions))
        mask[0, [game.action_id(a) for a in decision.legal_actions]] = 1.0
        p = self.policy.probabilities(x, mask)[0]
        a = int(np.argmax(p)) if self.greedy else int(decision.rng("numeric_policy", self.seed).choice(len(p), p=p))
        return game.action_from_id(a)


# ---------------------------------------------------------------------- the trainer
class PolicyGradientTrainer:
    """REINFORCE over the numeric encoding; parts injectable (``policy``, ``progress``)."""

    def __init__(
        self,
        config: PolicyGradientConfig | Mapping[str, Any],
        run_dir: str | Path,
        *,
        policy: NumericPolicy | None = None,
        progress: Callable[[int, dict[str, Any]], None] | None = None,
    ):
        self.config = trainer_config(PolicyGradientConfig, config)
        cfg = self.config
        self.run_dir = Path(run_dir)
        claim_run_dir(self.run_dir)
        self.game = make_game(cfg.game, cfg.game_params or None, num_players=cfg.num_players)
        size = self.game.observation_size
        if not size:
            raise ConfigError(
                f"{cfg.game} declares no observation_size; the policy-gradient trainer needs the numeric encoding"
            )
        self.policy = policy or NumericPolicy.init(size, self.game.num_actions, cfg.hidden, cfg.seed)
        self.initial = NumericPolicy({k: v.copy() for k, v in self.policy.params.items()})
        self.adam = Adam(cfg.learning_rate)
        self.reward = RewardSpec("outcome")
        self.progress = progress
        for spec in cfg.opponents + ([cfg.eval_anchor] if cfg.eval_anchor else []):
            make_player(spec, seed=0)
        self.eval_deals, self.eval_weights = evaluation_deals(
            self.game, [derive_seed(cfg.seed, "pg_eval_deal", i) for i in range(cfg.eval_deals)]
        )
        self.log = MetricsLog(self.run_dir / "metrics.jsonl")
        self.manifest = build_manifest(
            cfg.model_dump(mode="json"),
            seeds={"seed": cfg.seed},
            parent_dir=cfg.parent_run,
            extra={"trainer": "policy_gradient"},
        )
        write_manifest(self.run_dir, self.manifest)
        self.baseline: list[float] | None = None

    def episode_specs(self, step: int) -> list[EpisodeSpec]:
        cfg, n = self.config, self.game.num_players
        specs: list[EpisodeSpec] = []
        for i in range(cfg.episodes_per_step):
            seat = i % n
            rng = make_rng(cfg.seed, "pg_table", step, i)
            table = {
                s: make_player(
                    cfg.opponents[int(rng.integers(len(cfg.opponents)))],
                    seed=derive_seed(cfg.seed, "pg_opp", step, i, s),
                )
                for s in range(n)
                if s != seat
            }
            specs.append(
                EpisodeSpec(
                    derive_seed(cfg.seed, "pg_deal", step, i // n),
                    seat,
                    table,
                    derive_seed(cfg.seed, "pg_sample", step, i),
                )
            )
        return specs

    def train_step(self, step: int) -> dict[str, Any]:
        cfg = self.config
        results = play_episodes(self.game, self.episode_specs(step), NumericLearner(self.policy))
        returns = np.array([episode_return(r, self.reward) for r in results])
        adv = returns - returns.mean()
        if adv.std() > 1e-9:
            adv = adv / adv.std()
        rows = [(s.choice.record, a) for r, a in zip(results, adv) for s in r.steps]
        row: dict[str, Any] = {
            "step": step,
            "episodes": len(results),
            "decisions": len(rows),
            "reward_mean": float(returns.mean()),
        }
        if rows:
            x = np.stack([rec.obs for rec, _ in rows])
            mask = np.stack([rec.mask for rec, _ in rows])
            actions = np.array([rec.action for rec, _ in rows])
            weights = np.array([a for _, a in rows])
            grads, ent = self.policy.gradients(x, mask, actions, weights, cfg.entropy)
            self.adam.ascend(self.policy.params, grads)
            row.update({"entropy": ent, "grad_norm": float(np.sqrt(sum((g**2).sum() for g in grads.values())))})
        return row

    def evaluate(self) -> dict[str, Any]:
        cfg = self.config
        anchor = cfg.eval_anchor or cfg.opponents[0]
        game = self.game

        def run(policy: NumericPolicy, salt: tuple[int, ...] = ()) -> list[float]:
            specs = rotated_specs(
                game,
                self.eval_deals,
                lambda seat: {
                    s: make_player(anchor, seed=derive_seed(cfg.seed, "pg_anchor", s, *salt))
                    for s in range(game.num_players)
                    if s != seat
                },
                derive_seed(cfg.seed, "pg_eval_keys"),
            )
            return per_deal_means(play_episodes(game, specs, NumericLearner(policy, greedy=True)))

        if self.baseline is None:
            self.baseline = run(self.initial)
        values = run(self.policy)
        if self.eval_weights is not None and run(self.policy, (1,)) == values:
            # every deal, a greedy learner and a deterministic anchor (same values reseeded): exact
            w = np.asarray(self.eval_weights)
            diff = float(w @ (np.asarray(values) - np.asarray(self.baseline)))
            return {
                "eval_mean": float(w @ values),
                "eval_improvement": diff,
                "eval_improvement_low": diff,
                "eval_improvement_high": diff,
                "eval_exact": True,
            }
        iv = paired_bootstrap(
            values, self.baseline, seed=derive_seed(cfg.seed, "pg_bootstrap"), resamples=cfg.bootstrap
        )
        w = np.full(len(values), 1 / len(values)) if self.eval_weights is None else np.asarray(self.eval_weights)
        return {
            "eval_mean": float(w @ values),
            "eval_improvement": iv.mean,
            "eval_improvement_low": iv.low,
            "eval_improvement_high": iv.high,
            "eval_exact": False,
        }

    def run(self) -> dict[str, Any]:
        cfg = self.config
        started = time.perf_counter()
        self.log.path.write_text("")
        self.log.append({"step": 0, **self.evaluate()})
        for step in range(1, cfg.steps + 1):
            row = self.train_step(step)
            if (cfg.eval_every and step % cfg.eval_every == 0) or step == cfg.steps:
                row.update(self.evaluate())
            self.log.append(row)
            if self.progress:
                self.progress(step, row)
        self.policy.save(self.run_dir / "policy.npz")
        rows = self.log.rows()
        plot_metrics(
            rows,
            self.run_dir / "metrics.png",
            keys=("reward_mean", "entropy", "eval_mean"),
            title=self.manifest["run_id"],
        )
        final = {k: v for k, v in rows[-1].items() if k.startswith("eval_")}
        self.manifest.update(
            {
                "status": "ok",
                "final_eval": final,
                "wall_s": round(time.perf_counter() - started, 2),
                "policy": str(self.run_dir / "policy.npz"),
            }
        )
        write_manifest(self.run_dir, self.manifest)
        (self.run_dir / "summary.json").write_text(json.dumps(final, indent=2))
        return {
            "run_id": self.manifest["run_id"],
            "metrics": rows,
            "final_eval": final,
            "policy": self.run_dir / "policy.npz",
        }
