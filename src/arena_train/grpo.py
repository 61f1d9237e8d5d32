"""GRPO self-play on MLX: the game outcome is the reward.

One file (over 500 lines) because the step, the loss, the baselines, the evaluation and the checkpoints share one config and one model state; the reusable pieces live in rollout.py, exact.py and lm.py.

One step: for each deal (and each learner seat), draw an opponent table from the pool and let
the learner play that same deal ``group_size`` times with sampled answers (a group). Each
episode's reward comes from the game (outcome, win/loss or squashed margin, minus a penalty
per illegal or unparseable answer); advantages are normalised within the group. The loss is
the clipped policy-gradient surrogate on the exact log-probability of each chosen menu entry
(one forward pass, logits restricted to the menu's tokens) plus ``kl_beta`` times the exact
KL divergence, over the menu, from the magnet (the frozen initial weights, or with
``magnet_every`` a copy of the learner refreshed every N steps). AdamW (or SGD), gradient
accumulation over micro-batches, global-norm clipping.

Every draw is derived from the config's seed and the step (deals, opponent tables, sampling,
data order), so a step's randomness does not depend on what came before it: the same seed
gives the same metrics, and a checkpoint (trainable weights, optimizer state, pool, step,
the evaluation baseline) resumes exactly.

The trainer is a class with injected parts (model, tokenizer, view, opponent factory, metric
sink); :func:`grpo_update` is the pure update on a list of decisions.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mlx.core as mx
import mlx.optimizers as optim
import numpy as np
from mlx.nn.layers.base import Module  # not re-exported by mlx.nn for a type checker
from mlx.nn.utils import value_and_grad
from mlx.utils import tree_map, tree_unflatten

from arena_core.errors import ArenaError, ConfigError
from arena_core.game import Game
from arena_core.players import Player
from arena_core.registry import make_game, make_player
from arena_core.seeding import derive_seed, make_rng
from arena_core.stats import paired_bootstrap

from .config import GRPOConfig, parse_config
from .exact import (
    InfoState,
    PolicyTable,
    average_policy,
    deals_of,
    evaluation_deals,
    exploitability,
    information_states,
)
from .lm import (
    LMPolicy,
    LMRecord,
    SnapshotPlayer,
    Weights,
    flat_arrays,
    grad_norm,
    load_flat,
    load_trainables,
    menu_logprobs,
    records_batch,
    save_flat,
    swapped,
    trainable_model,
    trainables,
)
from .manifest import MetricsLog, build_manifest, checkpoint_dir, claim_run_dir, plot_metrics, write_manifest
from .rollout import (
    EpisodeResult,
    EpisodeSpec,
    Learner,
    RewardSpec,
    centred_advantages,
    per_deal_means,
    play_episodes,
    rotated_specs,
    seat_decision_returns,
    seat_return,
)
from .views import CompactView, Tokenizer, compact_view, menu_view


class SilentPlayerError(ArenaError):
    """The learner's answers were empty, unparseable or illegal above the configured rate: a
    broken run, not a result."""


# ---------------------------------------------------------------------- the update
@dataclass(frozen=True)
class Sample:
    record: LMRecord
    advantage: float
    ref_logprobs: tuple[float, ...]  # over the menu, from the frozen reference


def _loss(
    model: Module,
    tokens: mx.array,
    lengths: mx.array,
    labels: mx.array,
    mask: mx.array,
    inverse: mx.array,
    chosen: mx.array,
    old_lp: mx.array,
    ref_lp: mx.array,
    adv: mx.array,
    clip_eps: float,
    kl_beta: float,
    temperature: float,
    entropy_beta: float,
) -> tuple[mx.array, tuple[mx.array, mx.array, mx.array]]:
    # one forward pass per distinct (prompt, menu); each decision reads its row (exact, and
    # much cheaper when decisions repeat, as in a small game)
    lp_all = menu_logprobs(model, tokens, lengths, labels, mask, temperature)[inverse]
    mask = mask[inverse]
    lp = mx.take_along_axis(lp_all, chosen[:, None], axis=-1)[:, 0]
    ratio = mx.exp(lp - old_lp)
    clipped = mx.clip(ratio, 1.0 - clip_eps, 1.0 + clip_eps)
    surrogate = -mx.minimum(ratio * adv, clipped * adv)
    p = mx.exp(lp_all)
    kl = mx.sum(mx.where(mask, p * (lp_all - ref_lp), 0.0), axis=-1)
    entropy = -mx.sum(mx.where(mask, p * lp_all, 0.0), axis=-1)
    loss = mx.mean(surrogate + kl_beta * kl - entropy_beta * entropy)
    clip_frac = mx.mean((mx.abs(ratio - 1.0) > clip_eps).astype(mx.float32))
    return loss, (mx.mean(kl), clip_frac, mx.mean(entropy))


def grpo_update(
    model: Module,
    optimizer: optim.Optimizer,
    samples: Sequence[Sample],
    *,
    order: np.ndarray,
    grad_accum: int,
    max_grad_norm: float,
    clip_eps: float,
    kl_beta: float,
    temperature: float,
    entropy_beta: float = 0.0,
) -> dict[str, float]:
    """One optimizer update over ``samples`` (in ``order``), split into ``grad_accum``
    micro-batches whose gradients are averaged, then clipped by global norm."""
    loss_and_grad = value_and_grad(model, _loss)
    chunks = [c for c in np.array_split(order, grad_accum) if len(c)]
    total: dict[str, Any] | None = None  # the gradient tree, summed over micro-batches
    losses, kls, clips, ents = [], [], [], []
    for chunk in chunks:
        part = [samples[i] for i in chunk]
        unique, inverse = _distinct([s.record for s in part])
        tokens, lengths, labels, mask = records_batch(unique)
        a = labels.shape[1]
        ref = np.full((len(part), a), -1e9, dtype=np.float32)
        for i, s in enumerate(part):
            ref[i, : len(s.ref_logprobs)] = s.ref_logprobs
        (loss, (kl, clip, ent)), grads = loss_and_grad(
            model,
            tokens,
            lengths,
            labels,
            mask,
            mx.array(inverse, dtype=mx.int32),
            mx.array([s.record.chosen for s in part], dtype=mx.int32),
            mx.array([s.record.logprob for s in part], dtype=mx.float32),
            mx.array(ref),
            mx.array([s.advantage for s in part], dtype=mx.float32),
            clip_eps,
            kl_beta,
            temperature,
            entropy_beta,
        )
        weight = len(part) / len(order)
        grads = tree_map(lambda g, w=weight: g * w, grads)
        total = grads if total is None else tree_map(lambda x, y: x + y, total, grads)
        losses.append(float(loss) * weight)
        kls.append(float(kl) * weight)
        clips.append(float(clip) * weight)
        ents.append(float(ent) * weight)
    if total is None:
        raise ValueError("grpo_update needs at least one sample")
    norm = float(grad_norm(total))
    total, _ = optim.clip_grad_norm(total, max_grad_norm)  # type: ignore[no-untyped-call]  # mlx leaves it unannotated
    optimizer.update(model, total)
    mx.eval(model.parameters(), optimizer.state)  # type: ignore[no-untyped-call]  # mlx leaves Module.parameters unannotated
    return {"loss": sum(losses), "kl": sum(kls), "clip_frac": sum(clips), "entropy": sum(ents), "grad_norm": norm}


def _distinct(records: Sequence[LMRecord]) -> tuple[list[LMRecord], list[int]]:
    """The records with distinct (tokens, labels), and each record's index among them."""
    index: dict[tuple[tuple[int, ...], tuple[int, ...]], int] = {}
    unique: list[LMRecord] = []
    inverse: list[int] = []
    for r in records:
        key = (r.tokens, r.labels)
        if key not in index:
            index[key] = len(unique)
            unique.append(r)
        inverse.append(index[key])
    return unique, inverse


# ---------------------------------------------------------------------- evaluation
@dataclass
class EvalResult:
    per_deal: list[float]  # the learner's own return, per deal averaged over its seats
    mean: float
    win_rate: float
    bad_answer_rate: float
    margin: float  # own return minus the others' mean, averaged over every episode


def evaluate(
    game: Game[Any, Any],
    learner: Learner,
    anchor_factory: Callable[[int, int], Player],
    deal_seeds: Sequence[int],
    key_seed: int,
    weights: Sequence[float] | None = None,
) -> EvalResult:
    """The learner in every seat of every held-out deal against anchor players. ``weights``:
    the deals' probabilities when they are all of the game's deals (exact enumeration); the
    means are then weighted by them."""
    specs = rotated_specs(
        game,
        deal_seeds,
        lambda seat: {s: anchor_factory(s, seat) for s in range(game.num_players) if s != seat},
        key_seed,
    )
    results = play_episodes(game, specs, learner)
    wins, margins = [], []
    for r in results:
        own = r.returns[r.learner_seat]
        others = [v for i, v in enumerate(r.returns) if i != r.learner_seat]
        wins.append(1.0 if own > max(others) else (0.5 if own == max(others) else 0.0))
        margins.append(own - float(np.mean(others)))
    decisions = sum(len(r.steps) for r in results)
    bad = sum(
        1 for r in results for s in r.steps if s.choice.illegal or s.choice.unparseable or s.choice.action is None
    )
    per_deal = per_deal_means(results)
    w = np.full(len(per_deal), 1.0 / len(per_deal)) if weights is None else np.asarray(weights, dtype=np.float64)
    ep_w = np.repeat(w, game.num_players) / game.num_players  # rotated_specs: every deal once per seat, in order
    return EvalResult(per_deal, float(w @ per_deal), float(ep_w @ wins), bad / max(decisions, 1), float(ep_w @ margins))


def silent_status(bad_answer_rate: float, threshold: float) -> str:
    """``"ok"``, or why the run must not be reported (the silent-player guard)."""
    if bad_answer_rate > threshold:
        return f"rejected: silent player ({bad_answer_rate:.0%} of evaluation answers empty, unparseable or illegal > {threshold:.0%})"
    return "ok"


# ---------------------------------------------------------------------- the trainer
@dataclass
class Pool:
    """Opponents: registered player specs and frozen learner snapshots (``(step, weights)``)."""

    players: list[str]
    snapshots: list[tuple[int, Weights]] = field(default_factory=list)

    def entries(self) -> list[tuple[str, str | tuple[int, Weights]]]:
        return [("player", p) for p in self.players] + [("snapshot", s) for s in self.snapshots]

    def describe(self) -> list[str]:
        return list(self.players) + [f"snapshot@{step}" for step, _ in self.snapshots]


@dataclass
class RunSummary:
    run_dir: Path
    run_id: str
    steps: int
    metrics: list[dict[str, Any]]
    final_eval: dict[str, Any] | None
    status: str

    def report(self) -> dict[str, Any]:
        """The run's final numbers; raises :class:`SilentPlayerError` for a silent player."""
        if self.status.startswith("rejected"):
            raise SilentPlayerError(f"{self.run_id}: {self.status}")
        return {"run_id": self.run_id, "steps": self.steps, "final_eval": self.final_eval}


class GRPOTrainer:
    """GRPO self-play trainer. Injected parts (all optional): ``model``/``tokenizer`` (else
    loaded from ``config.model.path``), ``view`` (else the game's compact view), ``progress``
    (a callable ``(step, row)`` or None)."""

    def __init__(
        self,
        config: GRPOConfig | dict[str, Any],
        run_dir: str | Path,
        *,
        model: Module | None = None,
        tokenizer: Tokenizer | None = None,
        view: CompactView | None = None,
        progress: Callable[[int, dict[str, Any]], None] | None = None,
    ) -> None:
        self.config = grpo_config(config)
        cfg = self.config
        self.run_dir = Path(run_dir)
        resume = checkpoint_dir(Path(cfg.resume_from)) if cfg.resume_from else None
        claim_run_dir(self.run_dir, continuing=resume)
        self.game = make_game(cfg.game, cfg.game_params or None, num_players=cfg.num_players)
        self.view = view or (compact_view(self.game) if cfg.view == "auto" else menu_view(self.game))
        self.model, self.tokenizer = trainable_model(
            cfg.model, seed=derive_seed(cfg.seed, "init"), model=model, tokenizer=tokenizer
        )
        parent = cfg.parent_run
        if cfg.init_from:
            src = checkpoint_dir(Path(cfg.init_from))
            load_trainables(self.model, load_flat(src / "trainable.safetensors"))
            parent = parent or str(src.parent.parent)
        self.reference = trainables(self.model)  # frozen copy for the KL penalty and the 'initial' anchor
        lr = learning_rate_schedule(cfg)
        self.optimizer: optim.Optimizer
        if cfg.optim.optimizer == "sgd":
            self.optimizer = optim.SGD(learning_rate=lr, weight_decay=cfg.optim.weight_decay)
        else:
            self.optimizer = optim.AdamW(
                learning_rate=lr, betas=[cfg.optim.beta1, 0.999], weight_decay=cfg.optim.weight_decay
            )
        self.reward = RewardSpec(
            cfg.reward.kind, cfg.reward.margin_scale, cfg.reward.first_bonus, cfg.reward.illegal_penalty
        )
        # the learner's initial weights are the pool's first snapshot when snapshots are enabled
        self.pool = Pool(list(cfg.pool.players), [(0, self.reference)] if cfg.pool.snapshot_every else [])
        self.progress = progress
        self.step = 0
        self.episodes_total = 0
        self.baseline: list[float] | None = None  # per-deal eval values of the initial policy
        self.role_baseline = [0.0] * self.game.num_players  # running mean return per seat (baseline = "role")
        # running mean return per decision prompt (baseline = "infostate"): prompt tokens -> mean
        self.info_baseline: dict[tuple[int, ...], float] = {}
        self._info_returns: dict[tuple[int, ...], list[float]] = {}  # this step's returns per prompt
        # the KL term's reference: the initial weights, or a moving copy of the learner (magnet_every)
        self.magnet = self.reference
        self.policy_tables: list[PolicyTable] = []  # the learner's exact policy at each evaluation (exploitability)
        self.policy_table_steps: list[int] = []  # the step each of them was taken at
        self.log = MetricsLog(self.run_dir / "metrics.jsonl")
        for spec in ([] if cfg.self_play else self.pool.players) + (
            [cfg.eval.anchor] if cfg.eval.anchor != "initial" else []
        ):
            make_player(spec, seed=0)  # fail now, naming the player, rather than mid-run
        # few deals: evaluate every one of them, weighted by its probability; else sampled held-out deals
        self.eval_deals, self.eval_weights = evaluation_deals(
            self.game, [derive_seed(cfg.seed, "eval_deal", i) for i in range(cfg.eval.deals)]
        )
        if cfg.eval.exploitability:
            deals_of(self.game)  # refuses, naming the fix, a game that cannot enumerate its deals
            self._infos = information_states(self.game)
        if resume is not None:
            parent = parent or str(resume.parent.parent)
            self._restore(resume)
        self.manifest = build_manifest(
            cfg.model_dump(mode="json"),
            seeds={"seed": cfg.seed, "eval_deals_seed": derive_seed(cfg.seed, "eval_deal", 0)},
            parent_dir=parent,
            extra={
                "trainer": "grpo",
                "resumed_at_step": self.step if cfg.resume_from else None,
                "init_from": str(checkpoint_dir(Path(cfg.init_from))) if cfg.init_from else None,
            },
        )
        write_manifest(self.run_dir, self.manifest)

    # -------------------------------------------------------------- policies
    def policy(self, *, temperature: float | None = None, weights: Weights | None = None) -> LMPolicy:
        cfg = self.config
        return LMPolicy(
            self.model,
            self.tokenizer,
            self.view,
            temperature=cfg.temperature if temperature is None else temperature,
            include_illegal=cfg.action_space == "all",
            weights=weights,
        )

    def policy_table(self) -> PolicyTable:
        """The learner's sampling policy (training temperature) at every information state, exact."""
        return lm_policy_table(self.game, self.policy(), self._infos)

    def _opponent(self, entry: tuple[str, str | tuple[int, Weights]], seed: int) -> Player:
        _kind, value = entry
        if isinstance(value, str):  # a registered player spec
            return make_player(value, seed=seed)
        return SnapshotPlayer(
            self.policy(temperature=self.config.pool.snapshot_temperature, weights=value[1]), seed=seed
        )

    def _anchor(self, seat: int, learner_seat: int, salt: int = 0) -> Player:
        anchor = self.config.eval.anchor
        seed = derive_seed(self.config.seed, "anchor", seat, *((salt,) if salt else ()))
        if anchor == "initial":
            return SnapshotPlayer(self.policy(temperature=0.0, weights=self.reference), seed=seed)
        return make_player(anchor, seed=seed)

    # -------------------------------------------------------------- one step
    def episode_specs(self, step: int) -> list[tuple[int, EpisodeSpec]]:
        """``(group id, spec)`` for every episode of ``step`` (a pure function of the seed and step)."""
        cfg, game = self.config, self.game
        entries = self.pool.entries()
        specs = []
        group = 0
        for j in range(cfg.deals_per_step):
            deal = derive_seed(cfg.seed, "train_deal", step, j)
            if cfg.self_play:  # the learner in every seat at once: one group per deal
                for k in range(cfg.group_size):
                    specs.append((group, EpisodeSpec(deal, 0, {}, derive_seed(cfg.seed, "sample", step, j, "self", k))))
                group += 1
                continue
            seats = (
                range(game.num_players) if cfg.seats == "all" else [(step * cfg.deals_per_step + j) % game.num_players]
            )
            for seat in seats:
                rng = make_rng(cfg.seed, "table", step, j, seat)
                table = {
                    s: self._opponent(
                        entries[int(rng.integers(len(entries)))], derive_seed(cfg.seed, "opp", step, j, s)
                    )
                    for s in range(game.num_players)
                    if s != seat
                }
                for k in range(cfg.group_size):
                    specs.append(
                        (group, EpisodeSpec(deal, seat, table, derive_seed(cfg.seed, "sample", step, j, seat, k)))
                    )
                group += 1
        return specs

    def samples(
        self, grouped: list[tuple[int, EpisodeSpec]], results: list[EpisodeResult]
    ) -> tuple[list[Sample], list[float]]:
        """One sample per learner decision. A *unit* is an (episode, learner seat) pair with that
        seat's return; its baseline is the mean over its group and seat (``baseline = "group"``)
        or the seat's running mean (``"role"``; :meth:`train_step` updates it after the step)."""
        cfg = self.config
        units = learner_units(results)
        returns = [seat_return(results[i], seat, self.reward) for i, seat in units]
        keys = [(grouped[i][0], seat) for i, seat in units]
        if cfg.baseline == "infostate":
            return self._infostate_samples(results, units), returns
        if cfg.baseline == "role":
            base = np.array([self.role_baseline[seat] for _, seat in units])
            centred = np.asarray(returns, dtype=np.float64) - base
            std = float(np.std(centred)) if len(centred) else 0.0
            scale = std if cfg.advantage_scale != "none" and std > 1e-9 else 1.0
            unit_adv = centred / scale
        else:
            ids = {k: n for n, k in enumerate(dict.fromkeys(keys))}
            unit_adv = centred_advantages(returns, [ids[k] for k in keys], cfg.advantage_scale)
            means = {k: float(np.mean([r for r, kk in zip(returns, keys) if kk == k])) for k in ids}
            base = np.array([means[k] for k in keys])
            centred = np.asarray(returns, dtype=np.float64) - base
            std = float(np.std(centred)) if len(centred) else 0.0
            scale = std if cfg.advantage_scale != "none" and std > 1e-9 else 1.0
        records, advs = [], []
        for u, (i, seat) in enumerate(units):
            steps = [st for st in results[i].steps if st.seat == seat]
            if cfg.advantage == "per_decision":
                # each decision's return (outcome plus the penalties from it on) against the unit's baseline
                dec = seat_decision_returns(results[i], seat, self.reward)
                adv = (np.asarray(dec) - base[u]) / scale
            else:
                adv = np.full(len(steps), unit_adv[u])
            for st, a in zip(steps, adv):
                records.append(st.choice.record)
                advs.append(float(a))
        ref = self._menu_logprobs(records, self.magnet)
        return [Sample(rec, a, tuple(rl)) for rec, a, rl in zip(records, advs, ref)], returns

    def _infostate_samples(self, results: list[EpisodeResult], units: list[tuple[int, int]]) -> list[Sample]:
        """Each decision centred on the running mean return of its own prompt (seat and information
        state), then scaled by the step's std of centred returns (``advantage_scale``)."""
        cfg = self.config
        records, dec_returns = [], []
        for i, seat in units:
            steps = [st for st in results[i].steps if st.seat == seat]
            if cfg.advantage == "per_decision":
                dec = seat_decision_returns(results[i], seat, self.reward)
            else:
                dec = [seat_return(results[i], seat, self.reward)] * len(steps)
            for st, g in zip(steps, dec):
                records.append(st.choice.record)
                dec_returns.append(float(g))
        step_returns: dict[tuple[int, ...], list[float]] = {}
        for rec, g in zip(records, dec_returns):
            step_returns.setdefault(rec.tokens, []).append(g)
        self._info_returns = step_returns
        # a prompt seen for the first time starts from this step's mean there
        base = np.array(
            [self.info_baseline.get(rec.tokens, float(np.mean(step_returns[rec.tokens]))) for rec in records]
        )
        centred = np.asarray(dec_returns, dtype=np.float64) - base
        std = float(np.std(centred)) if len(centred) else 0.0
        scale = std if cfg.advantage_scale != "none" and std > 1e-9 else 1.0
        ref = self._menu_logprobs(records, self.magnet)
        return [Sample(rec, float(a), tuple(rl)) for rec, a, rl in zip(records, centred / scale, ref)]

    def _menu_logprobs(self, records: Sequence[LMRecord], weights: Weights | None) -> list[np.ndarray[Any, Any]]:
        if self.config.kl_beta == 0:  # the reference enters the loss only through the KL term
            return [np.zeros(len(r.labels)) for r in records]
        unique, inverse = _distinct(records)
        rows: list[np.ndarray[Any, Any]] = []
        for start in range(0, len(unique), 256):
            part = unique[start : start + 256]
            with swapped(self.model, weights):
                lp = menu_logprobs(self.model, *records_batch(part), self.config.temperature)
                mx.eval(lp)
            arr = np.array(lp)
            rows.extend(arr[i, : len(r.labels)] for i, r in enumerate(part))
        return [rows[i] for i in inverse]

    def entropy_beta(self, step: int) -> float:
        """The entropy bonus at ``step`` (1-based): entropy_beta, or the linear decay to entropy_final
        (reached at the last step, or at entropy_decay_steps and held from there)."""
        cfg = self.config
        if cfg.entropy_final is None:
            return cfg.entropy_beta
        end = cfg.entropy_decay_steps or cfg.steps
        frac = min(1.0, (step - 1) / max(1, end - 1))
        return cfg.entropy_beta + (cfg.entropy_final - cfg.entropy_beta) * frac

    def train_step(self, step: int) -> dict[str, Any]:
        cfg = self.config
        grouped = self.episode_specs(step)
        results = play_episodes(
            self.game, [s for _, s in grouped], self.policy(), illegal_penalty=cfg.reward.illegal_penalty
        )
        samples, returns = self.samples(grouped, results)
        if cfg.baseline == "role":  # the running mean per seat, after this step's advantages used it
            units = learner_units(results)
            for seat in range(self.game.num_players):
                vals = [r for r, (_, s) in zip(returns, units) if s == seat]
                if vals:
                    d = cfg.baseline_decay
                    self.role_baseline[seat] = d * self.role_baseline[seat] + (1 - d) * float(np.mean(vals))
        if cfg.baseline == "infostate":  # the running mean per prompt, after this step's advantages used it
            d = cfg.baseline_decay
            for key, vals in self._info_returns.items():
                m = float(np.mean(vals))
                self.info_baseline[key] = d * self.info_baseline[key] + (1 - d) * m if key in self.info_baseline else m
        self.episodes_total += len(results)
        row: dict[str, Any] = {
            "step": step,
            "episodes": len(results),
            "episodes_total": self.episodes_total,
            "decisions": len(samples),
            "reward_mean": float(np.mean(returns)),
            "reward_std": float(np.std(returns)),
            "response_tokens": float(np.mean([1.0 for _ in samples]))
            if samples
            else 0.0,  # menu answers: one label token each
            "prompt_tokens": float(np.mean([len(s.record.tokens) for s in samples])) if samples else 0.0,
            "illegal_actions": sum(1 for r in results for s in r.steps if s.choice.illegal),
            "parse_failures": sum(1 for r in results for s in r.steps if s.choice.unparseable),
            "opponent_errors": sum(r.opponent_errors for r in results),
            "truncated": sum(int(r.truncated) for r in results),
        }
        if cfg.baseline == "role":
            row.update({f"baseline_seat{i}": b for i, b in enumerate(self.role_baseline)})
        if samples:
            stats = []
            for epoch in range(cfg.ppo_epochs):
                order = make_rng(cfg.seed, "order", step, epoch).permutation(len(samples))
                stats.append(
                    grpo_update(
                        self.model,
                        self.optimizer,
                        samples,
                        order=order,
                        grad_accum=cfg.optim.grad_accum,
                        max_grad_norm=cfg.optim.max_grad_norm,
                        clip_eps=cfg.clip_eps,
                        kl_beta=cfg.kl_beta,
                        temperature=cfg.temperature,
                        entropy_beta=self.entropy_beta(step),
                    )
                )
            row.update({k: float(np.mean([s[k] for s in stats])) for k in stats[0]})
            row["clip_frac"] = stats[-1]["clip_frac"]
            if cfg.kl_beta == 0:
                del row["kl"]  # the reference is not evaluated then (no KL term in the loss)
        if cfg.magnet_every and step % cfg.magnet_every == 0:
            self.magnet = trainables(self.model)
        if cfg.pool.snapshot_every and step % cfg.pool.snapshot_every == 0:
            self.pool.snapshots.append((step, trainables(self.model)))
            self.pool.snapshots = self.pool.snapshots[-cfg.pool.max_snapshots :]
        return row

    def evaluate(self, step: int = 0) -> dict[str, Any]:
        """The evaluation after training ``step`` (0: the initial policy)."""
        cfg = self.config
        greedy = self.policy(temperature=0.0)
        keys = derive_seed(cfg.seed, "eval_keys")
        res = evaluate(self.game, greedy, self._anchor, self.eval_deals, keys, self.eval_weights)
        if self.baseline is None:
            self.baseline = res.per_deal
        out: dict[str, Any] = {
            "eval_mean": res.mean,
            "eval_win_rate": res.win_rate,
            "eval_margin": res.margin,
            "eval_bad_answer_rate": res.bad_answer_rate,
        }
        exact = False
        if self.eval_weights is not None:
            # every deal enumerated and the learner greedy: exact, if the anchor is deterministic
            # (checked by replaying with the anchors reseeded)
            again = evaluate(
                self.game, greedy, lambda s, ls: self._anchor(s, ls, salt=1), self.eval_deals, keys, self.eval_weights
            )
            exact = again.per_deal == res.per_deal
        if exact:
            diff = float(np.asarray(self.eval_weights) @ (np.asarray(res.per_deal) - np.asarray(self.baseline)))
            out.update(
                {
                    "eval_improvement": diff,
                    "eval_improvement_low": diff,
                    "eval_improvement_high": diff,
                    "eval_deals": len(res.per_deal),
                }
            )
        else:
            iv = paired_bootstrap(
                res.per_deal, self.baseline, seed=derive_seed(cfg.seed, "bootstrap"), resamples=cfg.eval.bootstrap
            )
            out.update(
                {
                    "eval_improvement": iv.mean,
                    "eval_improvement_low": iv.low,
                    "eval_improvement_high": iv.high,
                    "eval_deals": iv.n,
                }
            )
        out["eval_exact"] = exact
        if cfg.eval.exploitability:
            table = self.policy_table()
            self.policy_tables.append(table)
            self.policy_table_steps.append(step)
            last = exploitability(self.game, table)
            avg = exploitability(self.game, self.average_policy())
            out.update(
                {
                    "eval_exploitability": last.exploitability,
                    "eval_avg_exploitability": avg.exploitability,
                    "eval_policy_value_seat0": last.policy_values[0],
                    "eval_snapshots": len(self.policy_tables),
                }
            )
        return out

    def average_policy(self) -> PolicyTable:
        """The realisation-weighted average of the evaluation snapshots, weighted as ``eval.average``
        says (linear: by the snapshot's step; while only the initial policy is in, it alone)."""
        weights = None
        if self.config.eval.average == "linear" and any(self.policy_table_steps):
            weights = [float(s) for s in self.policy_table_steps]
        return average_policy(self.game, self.policy_tables, weights)

    # -------------------------------------------------------------- the loop
    def run(self) -> RunSummary:
        cfg = self.config
        started = time.perf_counter()
        if self.step == 0:
            self.log.path.write_text("")
            self.log.append({"step": 0, "episodes_total": 0, **self.evaluate()})
        final_eval: dict[str, Any] | None = None
        for step in range(self.step + 1, cfg.steps + 1):
            row = self.train_step(step)
            if (cfg.eval.every and step % cfg.eval.every == 0) or step == cfg.steps:
                row.update(self.evaluate(step))
                final_eval = {k: v for k, v in row.items() if k.startswith("eval_")}
            self.step = step
            self.log.append(row)
            if self.progress:
                self.progress(step, row)
            if (cfg.checkpoint_every and step % cfg.checkpoint_every == 0) or step == cfg.steps:
                self.save_checkpoint()
        rows = self.log.rows()
        bad = [r["eval_bad_answer_rate"] for r in rows if "eval_bad_answer_rate" in r]
        status = silent_status(bad[-1] if bad else 0.0, cfg.eval.silent_threshold)
        if cfg.plot:
            keys = ("reward_mean", "kl", "entropy", "eval_mean") + (
                ("eval_exploitability", "eval_avg_exploitability") if cfg.eval.exploitability else ()
            )
            plot_metrics(rows, self.run_dir / "metrics.png", keys=keys, title=self.manifest["run_id"])
        self.manifest.update(
            {
                "status": status,
                "final_eval": final_eval,
                "wall_s": round(time.perf_counter() - started, 2),
                "steps_done": self.step,
            }
        )
        write_manifest(self.run_dir, self.manifest)
        return RunSummary(self.run_dir, self.manifest["run_id"], self.step, rows, final_eval, status)

    # -------------------------------------------------------------- checkpoints
    def save_checkpoint(self) -> Path:
        ckpt = self.run_dir / "checkpoints" / f"step_{self.step:06d}"
        save_flat(ckpt / "trainable.safetensors", trainables(self.model))
        save_flat(ckpt / "reference.safetensors", self.reference)
        if self.config.magnet_every:
            save_flat(ckpt / "magnet.safetensors", self.magnet)
        save_flat(ckpt / "optimizer.safetensors", dict(flat_arrays(self.optimizer.state)))
        for i, (_snap_step, weights) in enumerate(self.pool.snapshots):
            save_flat(ckpt / "pool" / f"snapshot_{i}.safetensors", weights)
        state = {
            "trainer": "grpo",
            "step": self.step,
            "seed": self.config.seed,
            "rng": {"scheme": "derive_seed(seed, purpose, step, ...)", "next_step": self.step + 1},
            "pool": {"players": self.pool.players, "snapshot_steps": [s for s, _ in self.pool.snapshots]},
            "eval_baseline": self.baseline,
            "role_baseline": self.role_baseline,
            "info_baseline": [[list(k), v] for k, v in self.info_baseline.items()],
            "episodes_total": self.episodes_total,
            "policy_tables": self.policy_tables,
            "policy_table_steps": self.policy_table_steps,
            "config": self.config.model_dump(mode="json"),
        }
        (ckpt / "state.json").write_text(json.dumps(state, indent=2))
        return ckpt

    @staticmethod
    def _checkpoint_dir(path: Path) -> Path:
        return checkpoint_dir(path)

    def _restore(self, ckpt: Path) -> None:
        state = json.loads((ckpt / "state.json").read_text())
        if state.get("trainer", "grpo") != "grpo":
            raise ConfigError(
                f"checkpoint {ckpt} is a {state['trainer']} run; resume_from continues a GRPO run (use init_from to start from its weights)"
            )
        if state["seed"] != self.config.seed:
            raise ConfigError(
                f"checkpoint {ckpt} was trained with seed {state['seed']}; an exact resume needs the same seed"
            )
        load_trainables(self.model, load_flat(ckpt / "trainable.safetensors"))
        self.reference = load_flat(ckpt / "reference.safetensors")
        magnet = ckpt / "magnet.safetensors"
        self.magnet = load_flat(magnet) if self.config.magnet_every and magnet.exists() else self.reference
        self.optimizer.state = tree_unflatten(list(load_flat(ckpt / "optimizer.safetensors").items()))
        self.pool = Pool(
            state["pool"]["players"],
            [
                (s, load_flat(ckpt / "pool" / f"snapshot_{i}.safetensors"))
                for i, s in enumerate(state["pool"]["snapshot_steps"])
            ],
        )
        self.step = int(state["step"])
        self.baseline = state["eval_baseline"]
        self.role_baseline = list(state.get("role_baseline", self.role_baseline))
        self.info_baseline = {tuple(k): float(v) for k, v in state.get("info_baseline", [])}
        self.episodes_total = int(state.get("episodes_total", 0))
        self.policy_tables = [
            {k: {int(a): p for a, p in d.items()} for k, d in t.items()} for t in state.get("policy_tables", [])
        ]
        src = ckpt.parent.parent / "metrics.jsonl"
        rows = [r for r in MetricsLog(src).rows() if r.get("step", 0) <= self.step] if src.exists() else []
        # older checkpoints lack the snapshots' steps: the evaluations in the metrics are the snapshots
        steps = state.get("policy_table_steps") or [int(r["step"]) for r in rows if "eval_exploitability" in r]
        if len(steps) != len(self.policy_tables):
            raise ConfigError(
                f"checkpoint {ckpt} keeps {len(self.policy_tables)} policy snapshots but {len(steps)} steps for them; "
                "resume from a checkpoint whose run directory still has its metrics.jsonl"
            )
        self.policy_table_steps = [int(s) for s in steps]
        self.log.path.parent.mkdir(parents=True, exist_ok=True)
        self.log.path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))


def grpo_config(config: GRPOConfig | dict[str, Any]) -> GRPOConfig:
    """``config`` as a validated :class:`GRPOConfig` (a dict is parsed with ``trainer = "grpo"``)."""
    if isinstance(config, GRPOConfig):
        return config
    parsed = parse_config({"trainer": "grpo", **config})
    if not isinstance(parsed, GRPOConfig):
        raise ConfigError(f"the GRPO trainer needs a grpo config, not a {parsed.trainer} one")
    return parsed


def learning_rate_schedule(cfg: GRPOConfig) -> float | Callable[[mx.array], mx.array]:
    """The learning rate per update: optional linear warmup (from 1/N of it) over ``optim.warmup_steps`` = N
    updates, then constant or linear decay to 0 over the remaining updates."""
    o = cfg.optim
    updates = cfg.steps * cfg.ppo_epochs
    warm = min(o.warmup_steps, max(0, updates - 1))
    rest = updates - warm
    if o.schedule == "constant":
        if not warm:
            return o.learning_rate
        main = optim.linear_schedule(o.learning_rate, o.learning_rate, 1)
    else:
        main = optim.linear_schedule(o.learning_rate, 0.0, rest)
        if not warm:
            return main
    return optim.join_schedules([optim.linear_schedule(o.learning_rate / warm, o.learning_rate, warm), main], [warm])


def learner_units(results: Sequence[EpisodeResult]) -> list[tuple[int, int]]:
    """``(episode index, seat)`` for every seat where the learner decided, in order."""
    return [(i, seat) for i, r in enumerate(results) for seat in sorted({s.seat for s in r.steps})]


def lm_policy_table(game: Game[Any, Any], policy: LMPolicy, infos: Sequence[InfoState]) -> PolicyTable:
    """``policy``'s exact distribution over the legal actions at each information state (the
    mass of a menu entry that is illegal goes to the game's default action, as the rollout plays)."""
    menus = [policy.view.menu(game, i.pos, i.seat, include_illegal=policy.include_illegal) for i in infos]
    dists = policy.distributions(menus)
    table: PolicyTable = {}
    for info, menu, lp in zip(infos, menus, dists):
        p = np.exp(lp - lp.max())
        p = p / p.sum()
        row = {game.action_id(a): 0.0 for a in info.actions}
        default = game.action_id(game.default_action(info.pos.state, info.seat))
        for a, legal, q in zip(menu.actions, menu.legal, p):
            row[game.action_id(a) if legal else default] += float(q)
        table[info.key] = row
    return table


def train(
    config: GRPOConfig | dict[str, Any],
    run_dir: str | Path,
    *,
    model: Module | None = None,
    tokenizer: Tokenizer | None = None,
    view: CompactView | None = None,
    progress: Callable[[int, dict[str, Any]], None] | None = None,
) -> RunSummary:
    """Build a :class:`GRPOTrainer` and run it."""
    return GRPOTrainer(config, run_dir, model=model, tokenizer=tokenizer, view=view, progress=progress).run()
