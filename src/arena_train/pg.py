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
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from arena_core.errors import ConfigError
from arena_core.game import Game
from arena_core.players import BasePlayer, Decision
from arena_core.registry import make_game, make_player
from arena_core.seeding import derive_seed, make_rng

from .config import PolicyGradientConfig
from .exact import evaluation_deals
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
from .run import RunDir
from .trainer import Parts, RunSummary, TrainerPlugin

Array = npt.NDArray[np.float64]
#: the reward: the learner's own return
REWARD = RewardSpec("outcome")


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
@dataclass
class PGSession:
    """The built parts of a policy-gradient run and what changes as it trains."""

    config: PolicyGradientConfig
    game: Game[Any, Any]
    policy: NumericPolicy
    initial: NumericPolicy
    adam: Adam
    eval_deals: list[int]
    eval_weights: list[float] | None
    baseline: list[float] | None = None  # the initial policy's per-deal evaluation values


def start(cfg: PolicyGradientConfig, run: RunDir, parts: Parts[NumericPolicy]) -> PGSession:
    """The run's parts (``parts.model``: a policy to train, else a fresh one) and its manifest."""
    game = make_game(cfg.game, cfg.game_params or None, num_players=cfg.num_players)
    size = game.observation_size
    if not size:
        raise ConfigError(
            f"{cfg.game} declares no observation_size; the policy-gradient trainer needs the numeric encoding"
        )
    policy = parts.model or NumericPolicy.init(size, game.num_actions, cfg.hidden, cfg.seed)
    initial = NumericPolicy({k: v.copy() for k, v in policy.params.items()})
    for spec in cfg.opponents + ([cfg.eval_anchor] if cfg.eval_anchor else []):
        make_player(spec, seed=0)
    deals, weights = evaluation_deals(game, [derive_seed(cfg.seed, "pg_eval_deal", i) for i in range(cfg.eval_deals)])
    run.start(cfg.model_dump(mode="json"), trainer="policy_gradient", seeds={"seed": cfg.seed}, parent=cfg.parent_run)
    return PGSession(cfg, game, policy, initial, Adam(cfg.learning_rate), deals, weights)


def episode_specs(cfg: PolicyGradientConfig, game: Game[Any, Any], step: int) -> list[EpisodeSpec]:
    """The step's episodes: seats in turn, each with a fresh opponent table drawn from the config's."""
    n = game.num_players
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
        deal = derive_seed(cfg.seed, "pg_deal", step, i // n)
        specs.append(EpisodeSpec(deal, seat, table, derive_seed(cfg.seed, "pg_sample", step, i)))
    return specs


def train_step(session: PGSession, step: int) -> dict[str, Any]:
    """REINFORCE on the step's episodes with a batch-mean baseline, one Adam step; the metrics row."""
    cfg = session.config
    results = play_episodes(session.game, episode_specs(cfg, session.game, step), NumericLearner(session.policy))
    returns = np.array([episode_return(r, REWARD) for r in results])
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
        grads, ent = session.policy.gradients(x, mask, actions, weights, cfg.entropy)
        session.adam.ascend(session.policy.params, grads)
        row.update({"entropy": ent, "grad_norm": float(np.sqrt(sum((g**2).sum() for g in grads.values())))})
    return row


def greedy_values(session: PGSession, policy: NumericPolicy, salt: tuple[int, ...] = ()) -> list[float]:
    """``policy`` (greedy) in every seat of the evaluation deals against the anchor: per-deal means
    (``salt``: the anchors reseeded, to test they are deterministic)."""
    cfg, game = session.config, session.game
    anchor = cfg.eval_anchor or cfg.opponents[0]
    specs = rotated_specs(
        game,
        session.eval_deals,
        lambda seat: {
            s: make_player(anchor, seed=derive_seed(cfg.seed, "pg_anchor", s, *salt))
            for s in range(game.num_players)
            if s != seat
        },
        derive_seed(cfg.seed, "pg_eval_keys"),
    )
    return per_deal_means(play_episodes(game, specs, NumericLearner(policy, greedy=True)))


def evaluate(session: PGSession) -> dict[str, Any]:
    """The greedy policy's mean and its improvement over the initial policy: exact when every deal
    is enumerated and the anchor deterministic, else a paired bootstrap over deals."""
    cfg = session.config
    if session.baseline is None:
        session.baseline = greedy_values(session, session.initial)
    values = greedy_values(session, session.policy)
    if session.eval_weights is not None and greedy_values(session, session.policy, (1,)) == values:
        w = np.asarray(session.eval_weights)
        diff = float(w @ (np.asarray(values) - np.asarray(session.baseline)))
        return {
            "eval_mean": float(w @ values),
            "eval_improvement": diff,
            "eval_improvement_low": diff,
            "eval_improvement_high": diff,
            "eval_exact": True,
        }
    iv = paired_bootstrap(values, session.baseline, seed=derive_seed(cfg.seed, "pg_bootstrap"), resamples=cfg.bootstrap)
    w = np.full(len(values), 1 / len(values)) if session.eval_weights is None else np.asarray(session.eval_weights)
    return {
        "eval_mean": float(w @ values),
        "eval_improvement": iv.mean,
        "eval_improvement_low": iv.low,
        "eval_improvement_high": iv.high,
        "eval_exact": False,
    }


def run_steps(run: RunDir, session: PGSession, parts: Parts[NumericPolicy]) -> RunSummary:
    """Every step, evaluating every ``eval_every`` steps and at the last; then ``policy.npz`` and
    ``summary.json`` (the final evaluation) beside the metrics."""
    cfg = session.config
    started = time.perf_counter()
    run.metrics.write([])
    run.metrics.append({"step": 0, **evaluate(session)})
    for step in range(1, cfg.steps + 1):
        row = train_step(session, step)
        if (cfg.eval_every and step % cfg.eval_every == 0) or step == cfg.steps:
            row.update(evaluate(session))
        run.metrics.append(row)
        parts.report(step, row)
    session.policy.save(run.path / "policy.npz")
    rows = run.metrics.rows()
    run.plot(rows, ("reward_mean", "entropy", "eval_mean"))
    final = {k: v for k, v in rows[-1].items() if k.startswith("eval_")}
    policy = str(run.path / "policy.npz")
    run.finish(status="ok", final_eval=final, wall_s=round(time.perf_counter() - started, 2), policy=policy)
    (run.path / "summary.json").write_text(json.dumps(final, indent=2))
    return RunSummary(run.path, run.run_id, cfg.steps, rows, final_eval=final, files={"policy": policy})


def train(config: PolicyGradientConfig, run: RunDir, parts: Parts[NumericPolicy]) -> RunSummary:
    """REINFORCE of a numpy softmax policy over the game's numeric observation encoding.

    A whole run into ``run`` (``parts.model``: a :class:`NumericPolicy` to train, updated in place)."""
    return run_steps(run, start(config, run, parts), parts)


#: the ``policy_gradient`` entry point of ``arena.trainers``
TRAINER = TrainerPlugin("policy_gradient", PolicyGradientConfig, train)
