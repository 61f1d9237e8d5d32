"""GRPO on MLX: the game outcome is the reward; ``train(config, run, parts)`` over injected parts.

One step: for each deal index (and each learner seat), draw an opponent table from the pool and
let the learner play ``group_size`` times with sampled answers, each play with its own deal and
opponents' draws unless ``group_draws`` shares them (a group; :mod:`arena_train.grpo_rollout`). Each
episode's reward comes from the game (outcome, win/loss or squashed margin, minus a penalty
per illegal or unparseable answer); advantages are centred within the group or on a running
baseline (:mod:`arena_train.grpo_rollout`). The loss is the clipped policy-gradient surrogate on
the exact log-probability of each chosen menu entry plus ``kl_beta`` times the exact KL
divergence, over the menu, from the magnet (the frozen initial weights, or with ``magnet_every``
a copy of the learner refreshed every N steps); AdamW (or SGD), gradient accumulation,
global-norm clipping (:mod:`arena_train.grpo_loss`). Evaluations: :mod:`arena_train.grpo_eval`.

Every draw is derived from the config's seed and the step (deals, opponent tables, sampling,
data order), so a step's randomness does not depend on what came before it: the same seed
gives the same metrics, and a checkpoint (trainable weights, optimizer state, pool, step,
baselines, the evaluation baseline and policy snapshots) resumes exactly.

The stages are functions: :func:`start` builds the parts and the state (restoring a checkpoint,
writing the manifest), :func:`train_step` plays and updates once, :func:`evaluate_step`
evaluates, :func:`save_checkpoint` saves, and :func:`train` runs them all. The session and its
state live in :mod:`arena_train.grpo_state`, the checkpoints in :mod:`arena_train.grpo_checkpoint`
(both re-exported here).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from typing import Any

import mlx.core as mx
import mlx.optimizers as optim
import numpy as np
from mlx.nn.layers.base import Module  # not re-exported by mlx.nn for a type checker

from arena_core.errors import ConfigError
from arena_core.registry import make_game, make_player
from arena_core.seeding import derive_seed, make_rng

from .compiled import Array, CompiledGame, ReachAverage
from .config import GRPOConfig
from .exact import PolicyTable, deals_of, evaluation_deals, information_states
from .grpo_checkpoint import restore as restore  # re-exported: the stages are grpo's functions
from .grpo_checkpoint import save_checkpoint as save_checkpoint
from .grpo_eval import average_of, evaluation_row, exploitability_row, lm_policy_table, silent_status
from .grpo_loss import Sample, grpo_update, reference_logprobs
from .grpo_rollout import (
    Advantages,
    Baselines,
    Pool,
    advantages,
    flat_groups,
    group_plans,
    group_plays,
    update_baselines,
    zero_advantage_share,
)
from .grpo_state import GRPOSession as GRPOSession
from .grpo_state import GRPOState as GRPOState
from .lm import (
    LMPolicy,
    PromptCache,
    load_flat,
    load_trainables,
    trainable_model,
    trainables,
)
from .rollout import EpisodeResult, EpisodeSpec, RewardSpec, play_episodes
from .run import RunDir, checkpoint_dir
from .text_policy import records_of
from .trainer import Parts, RunSummary, StalledRunError, StalledRunWarning, TrainerPlugin
from .views import compact_view, menu_view


# ---------------------------------------------------------------------- building the parts
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


def make_optimizer(cfg: GRPOConfig) -> optim.Optimizer:
    """AdamW (or SGD) with the config's learning-rate schedule."""
    lr = learning_rate_schedule(cfg)
    if cfg.optim.optimizer == "sgd":
        return optim.SGD(learning_rate=lr, weight_decay=cfg.optim.weight_decay)
    return optim.AdamW(learning_rate=lr, betas=[cfg.optim.beta1, 0.999], weight_decay=cfg.optim.weight_decay)


def start(cfg: GRPOConfig, run: RunDir, parts: Parts[Module]) -> GRPOSession:
    """The run's parts (game, view, model, optimizer, evaluation deals) built from the config where
    ``parts`` leaves them out, its initial state (or the checkpoint it resumes), and its manifest.
    Every player the config names is built once here, so a bad spec fails now, not mid-run."""
    game = make_game(cfg.game, cfg.game_params or None, num_players=cfg.num_players)
    if cfg.reward.kind == "round" and not game.has_rounds:
        raise ConfigError(
            f"reward.kind = 'round' needs a game that declares rounds (Game.round_rewards); {game.spec.id} "
            "declares none: use 'outcome', 'win' or 'margin'"
        )
    view = parts.view or (compact_view(game) if cfg.view == "auto" else menu_view(game))
    model, tokenizer = trainable_model(
        cfg.model, seed=derive_seed(cfg.seed, "init"), model=parts.model, tokenizer=parts.tokenizer
    )
    parent = cfg.parent_run
    if cfg.init_from:
        src = checkpoint_dir(cfg.init_from)
        load_trainables(model, load_flat(src / "trainable.safetensors"))
        parent = parent or str(src.parent.parent)
    reference = trainables(model)
    optimizer = make_optimizer(cfg)
    reward = RewardSpec(cfg.reward.kind, cfg.reward.margin_scale, cfg.reward.first_bonus, cfg.reward.illegal_penalty)
    # the learner's initial weights are the pool's first snapshot when snapshots are enabled
    pool = Pool(list(cfg.pool.players), [(0, reference)] if cfg.pool.snapshot_every else [])
    state = GRPOState(reference, reference, pool, Baselines([0.0] * game.num_players))
    for spec in ([] if cfg.self_play else pool.players) + ([cfg.eval.anchor] if cfg.eval.anchor != "initial" else []):
        make_player(spec, seed=0)
    # few deals: evaluate every one of them, weighted by its probability; else sampled held-out deals
    eval_deals, eval_weights = evaluation_deals(
        game, [derive_seed(cfg.seed, "eval_deal", i) for i in range(cfg.eval.deals)]
    )
    infos, tree = None, None
    if cfg.eval.exploitability:
        deals_of(game)  # refuses, naming the fix, a game that cannot enumerate its deals
        infos = information_states(game)
        tree = CompiledGame(game) if cfg.eval.snapshot_every else None
    session = GRPOSession(
        cfg,
        game,
        view,
        model,
        tokenizer,
        optimizer,
        reward,
        eval_deals,
        eval_weights,
        infos,
        tree,
        state,
        PromptCache(tokenizer),
    )
    if run.resume is not None:
        parent = parent or str(run.resume.parent.parent)
        restore(run, session)
    elif tree is not None:
        state.average = ReachAverage(tree, cfg.eval.average)
        state.average.add(compiled_policy(session), 0)  # the initial policy is the first snapshot
    run.start(
        cfg.model_dump(mode="json"),
        trainer="grpo",
        seeds={"seed": cfg.seed, "eval_deals_seed": derive_seed(cfg.seed, "eval_deal", 0)},
        parent=parent,
        resumed_at_step=session.state.step if cfg.resume_from else None,
        init_from=str(checkpoint_dir(cfg.init_from)) if cfg.init_from else None,
    )
    return session


# ---------------------------------------------------------------------- one step
def entropy_beta(cfg: GRPOConfig, step: int) -> float:
    """The entropy bonus at ``step`` (1-based): entropy_beta, or the linear decay to entropy_final
    (reached at the last step, or at entropy_decay_steps and held from there)."""
    if cfg.entropy_final is None:
        return cfg.entropy_beta
    end = cfg.entropy_decay_steps or cfg.steps
    frac = min(1.0, (step - 1) / max(1, end - 1))
    return cfg.entropy_beta + (cfg.entropy_final - cfg.entropy_beta) * frac


def samples(session: GRPOSession, adv: Advantages) -> list[Sample]:
    """The step's decisions as update samples, each with its menu log-probabilities under the
    magnet (zeros when ``kl_beta`` is 0: the reference enters the loss only through the KL term)."""
    cfg = session.config
    if cfg.kl_beta == 0:
        ref = [np.zeros(len(r.labels)) for r in adv.records]
    else:
        ref = reference_logprobs(session.model, adv.records, session.state.magnet, cfg.temperature, session.engine)
    return [Sample(rec, a, tuple(rl)) for rec, a, rl in zip(adv.records, adv.advantages, ref)]


def update(session: GRPOSession, batch: list[Sample], step: int) -> dict[str, float]:
    """``ppo_epochs`` optimizer updates over the step's samples; their mean statistics."""
    cfg = session.config
    stats = []
    for epoch in range(cfg.ppo_epochs):
        order = make_rng(cfg.seed, "order", step, epoch).permutation(len(batch))
        stats.append(
            grpo_update(
                session.model,
                session.optimizer,
                batch,
                order=order,
                grad_accum=cfg.optim.grad_accum,
                max_grad_norm=cfg.optim.max_grad_norm,
                clip_eps=cfg.clip_eps,
                kl_beta=cfg.kl_beta,
                temperature=cfg.temperature,
                entropy_beta=entropy_beta(cfg, step),
                engine=session.engine,
            )
        )
    out = {k: float(np.mean([s[k] for s in stats])) for k in stats[0]}
    out["clip_frac"] = stats[-1]["clip_frac"]
    if cfg.kl_beta == 0:
        del out["kl"]  # the reference is not evaluated then (no KL term in the loss)
    return out


def play_groups(session: GRPOSession, step: int) -> tuple[list[int], list[EpisodeResult], int, int]:
    """The step's groups played (each episode's group id and result, in group order); with
    ``resample_flat`` a group whose learner returns are all equal is played again with fresh draws,
    up to N times (DAPO's dynamic sampling). Also the episodes played (the replaced ones included)
    and the number of groups played again."""
    cfg, state = session.config, session.state
    plans = group_plans(cfg, session.game, state.pool, session.opponent, step)
    plays = {p.group: group_plays(cfg, p, step) for p in plans}

    def play(specs: list[EpisodeSpec]) -> list[EpisodeResult]:
        return play_episodes(
            session.game,
            specs,
            session.policy(),
            illegal_penalty=cfg.reward.illegal_penalty,
            decision_key=session.engine.decision_key,
            rounds=cfg.reward.kind == "round",
        )

    played = play([s for p in plans for s in plays[p.group]])
    results = {p.group: played[i * cfg.group_size : (i + 1) * cfg.group_size] for i, p in enumerate(plans)}
    count, resampled = len(played), 0
    for attempt in range(1, cfg.resample_flat + 1):
        ids = [g for g in results for _ in results[g]]
        flat = flat_groups(ids, [r for g in results for r in results[g]], session.reward)
        if not flat:
            break
        again = play([s for g in flat for s in group_plays(cfg, plans[g], step, attempt)])
        for i, g in enumerate(flat):
            results[g] = again[i * cfg.group_size : (i + 1) * cfg.group_size]
        count, resampled = count + len(again), resampled + len(flat)
    ids = [g for g in results for _ in results[g]]
    return ids, [r for g in results for r in results[g]], count, resampled


def train_step(session: GRPOSession, step: int) -> dict[str, Any]:
    """Play the step's episodes, compute advantages, update the model, move the magnet and the
    pool; the step's metrics row."""
    cfg, state = session.config, session.state
    groups, results, played, resampled = play_groups(session, step)
    adv = advantages(cfg, groups, results, session.reward, state.baselines)
    batch = samples(session, adv)
    learner_steps = [st for r in results for st in r.steps if records_of(st.choice.record)]
    update_baselines(cfg, state.baselines, adv)
    state.episodes_total += played
    state.no_signal_steps = 0 if any(a != 0.0 for a in adv.advantages) else state.no_signal_steps + 1
    row: dict[str, Any] = {
        "step": step,
        "episodes": played,
        "episodes_total": state.episodes_total,
        "decisions": len(learner_steps),
        "zero_advantage_groups": zero_advantage_share(groups, adv),
        **({"groups_resampled": resampled} if cfg.resample_flat else {}),
        "reward_mean": float(np.mean(adv.returns)),
        "reward_std": float(np.std(adv.returns)),
        # a menu answer is one label token; a text answer one record per branching token of its string
        "response_tokens": len(batch) / len(learner_steps) if learner_steps else 0.0,
        "prompt_tokens": float(np.mean([len(s.record.tokens) for s in batch])) if batch else 0.0,
        "illegal_actions": sum(1 for r in results for s in r.steps if s.choice.illegal),
        "parse_failures": sum(1 for r in results for s in r.steps if s.choice.unparseable),
        "opponent_errors": sum(r.opponent_errors for r in results),
        "truncated": sum(int(r.truncated) for r in results),
    }
    if cfg.baseline == "role":
        row.update({f"baseline_seat{i}": b for i, b in enumerate(state.baselines.role)})
    if batch:
        row.update(update(session, batch, step))
    if cfg.magnet_every and step % cfg.magnet_every == 0:
        state.magnet = trainables(session.model)
    if cfg.pool.snapshot_every and step % cfg.pool.snapshot_every == 0:
        state.pool.snapshots.append((step, trainables(session.model)))
        state.pool.snapshots = state.pool.snapshots[-cfg.pool.max_snapshots :]
    if state.average is not None and step % cfg.eval.snapshot_every == 0:
        state.average.add(compiled_policy(session), step)
    return row


def policy_table(session: GRPOSession) -> PolicyTable:
    """The learner's sampling policy (training temperature) at every information state, exact."""
    if session.infos is None:
        raise ConfigError("the policy table needs eval.exploitability = true (the game's information states)")
    policy = session.policy()
    if not isinstance(policy, LMPolicy):  # refused by the config: text answers have no menu table
        raise ConfigError("the policy table needs a menu view (view = 'auto' or 'menu')")
    return lm_policy_table(session.game, policy, session.infos)


def compiled_policy(session: GRPOSession) -> Array:
    """The learner's sampling policy at every information state, as the compiled game's array."""
    if session.tree is None:
        raise ConfigError("the compiled policy needs eval.snapshot_every > 0 (the game compiled to arrays)")
    return session.tree.probs_from_table(policy_table(session))


def compiled_exploitability(session: GRPOSession) -> dict[str, Any]:
    """The exploitability of the sampling policy and of the snapshots' average, on the compiled game."""
    tree, average = session.tree, session.state.average
    if tree is None or average is None:
        raise ConfigError("the compiled exploitability needs eval.snapshot_every > 0")
    current = compiled_policy(session)
    return {
        "eval_exploitability": tree.exploitability(current),
        "eval_avg_exploitability": tree.exploitability(average.policy()),
        "eval_policy_value_seat0": tree.values(current),
        "eval_snapshots": average.count,
    }


def evaluate_step(session: GRPOSession, step: int = 0) -> dict[str, Any]:
    """The evaluation after training ``step`` (0: the initial policy, which becomes the baseline)."""
    cfg, state = session.config, session.state
    out: dict[str, Any] = {}
    if cfg.eval.games:
        greedy = session.policy(temperature=0.0)
        args = (session.anchor, session.eval_deals, session.eval_weights, state.eval_baseline)
        out, per_deal = evaluation_row(cfg, session.game, greedy, *args)
        if state.eval_baseline is None:
            state.eval_baseline = per_deal
    if state.average is not None:
        out.update(compiled_exploitability(session))
    elif cfg.eval.exploitability:
        table = policy_table(session)
        state.policy_tables.append(table)
        state.policy_table_steps.append(step)
        average = average_of(session.game, state.policy_tables, state.policy_table_steps, cfg.eval.average)
        out.update(exploitability_row(session.game, table, average, len(state.policy_tables)))
    return out


# ---------------------------------------------------------------------- the run
def stall_check(run: RunDir, session: GRPOSession, started: float) -> str | None:
    """The stall guard after a step: when every advantage has been zero for ``stall_steps`` steps in
    a row, warn (:class:`StalledRunWarning`, the step kept for the manifest's ``stalled_at``) or, with
    ``on_stall = "refuse"``, finish the manifest as rejected and return the reason to raise."""
    cfg, state = session.config, session.state
    if not cfg.stall_steps or state.no_signal_steps != cfg.stall_steps:
        return None
    reason = (
        f"every advantage was zero for {cfg.stall_steps} steps in a row (steps {state.step - cfg.stall_steps + 1}-"
        f"{state.step}): the groups carried no signal; vary the plays of a group (group_draws = 'distinct'), "
        "resample flat groups (resample_flat), raise the temperature or add an entropy bonus"
    )
    if cfg.on_stall == "warn":
        state.stalled_at.append(state.step)
        warnings.warn(StalledRunWarning(f"{run.run_id}: {reason}"), stacklevel=2)
        return None
    wall = round(time.perf_counter() - started, 2)
    run.finish(status=f"rejected: stalled ({reason})", wall_s=wall, steps_done=state.step)
    return reason


def run_steps(run: RunDir, session: GRPOSession, parts: Parts[Module]) -> RunSummary:
    """Every step from the session's to the config's last: train, evaluate every ``eval.every``
    steps and at the last, log, report progress, checkpoint; then the run's summary."""
    cfg, state = session.config, session.state
    started = time.perf_counter()
    if state.step == 0:
        run.metrics.write([])
        run.metrics.append({"step": 0, "episodes_total": 0, **evaluate_step(session)})
    final_eval: dict[str, Any] | None = None
    for step in range(state.step + 1, cfg.steps + 1):
        row = train_step(session, step)
        if (cfg.eval.every and step % cfg.eval.every == 0) or step == cfg.steps or step in cfg.eval.at:
            row.update(evaluate_step(session, step))
            final_eval = {k: v for k, v in row.items() if k.startswith("eval_")}
        session.state.step = step
        run.metrics.append(row)
        parts.report(step, row)
        stalled = stall_check(run, session, started)
        if stalled or (cfg.checkpoint_every and step % cfg.checkpoint_every == 0) or step == cfg.steps:
            save_checkpoint(run, session)
        if stalled:
            raise StalledRunError(f"{run.run_id}: {stalled}")
    rows = run.metrics.rows()
    bad = [r["eval_bad_answer_rate"] for r in rows if "eval_bad_answer_rate" in r]
    status = silent_status(bad[-1] if bad else 0.0, cfg.eval.silent_threshold)
    if cfg.plot:
        exploit = ("eval_exploitability", "eval_avg_exploitability") if cfg.eval.exploitability else ()
        run.plot(rows, ("reward_mean", "kl", "entropy", "eval_mean", *exploit))
    wall = round(time.perf_counter() - started, 2)
    run.finish(
        status=status,
        final_eval=final_eval,
        wall_s=wall,
        steps_done=session.state.step,
        **({"stalled_at": state.stalled_at} if state.stalled_at else {}),
    )
    return RunSummary(run.path, run.run_id, session.state.step, rows, status, final_eval)


def train(config: GRPOConfig, run: RunDir, parts: Parts[Module]) -> RunSummary:
    """GRPO of an MLX language model by play; the game's outcome is the reward.

    A whole run into ``run`` (``parts``: an injected model, tokenizer, view or progress)."""
    return run_steps(run, start(config, run, parts), parts)


#: the ``grpo`` entry point of ``arena.trainers``
TRAINER = TrainerPlugin("grpo", GRPOConfig, train)
