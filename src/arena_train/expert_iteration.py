"""Expert iteration (distillation): the current policy plays, an expert player labels the
decisions it would change, and the model is fine-tuned on prompt -> expert answer. One file (over
500 lines) because both modes are one trainer: they share its collection, labelling, evaluation
and checkpoints.

Each round: the student (sampled) plays ``deals_per_round`` deals in every seat against the
configured opponents; at every student decision the expert is asked what it would play
there; its answer is mapped onto the student's menu (for MegaGem: the nearest bid of the
compact view's grid that is legal), and the pairs where the answers differ (or all pairs,
``label_all``) become supervised examples. Fine-tuning minimises the cross-entropy of the
expert's menu entry under the menu-restricted softmax (full fine-tuning or LoRA, AdamW,
clipping). The report compares the student, its initial self and the expert on the same
held-out deals (paired bootstrap intervals) and gives the fraction of the expert's advantage
the student recovers, plus its agreement with the expert on held-out states.

Steps mode (``steps = N``): the starting student plays ``rounds`` rounds and the expert labels
them once (a slow teacher such as ``search`` is paid for once; ``data_cache`` keeps the labels
in a JSON-lines file that later runs, e.g. other seeds, read instead of collecting), the last
round is held out, and training is N AdamW updates on minibatches of ``batch_size`` labelled
decisions, with the margin on held-out deals every ``eval_every`` steps and checkpoints every
``checkpoint_every``; the agreement (the student's most likely answer equals the expert's label:
with a greedy expert, its greedy choice) on the held-out round comes with a deal-clustered
interval. ``behaviour = "expert"`` lets the expert move in the student's seat while collecting
(behaviour cloning on the expert's own states) instead of the sampled student (DAgger's states). ``restrict_expert`` lets the expert choose among the student's legal
menu (search over the bid grid) instead of mapping its answer to the nearest menu entry.

The stages are functions over an :class:`EISession` (the built parts): :func:`start`,
:func:`collect`, :func:`fine_tune`, :func:`evaluate`, :func:`save_checkpoint`; :func:`run_rounds`
and :func:`run_steps` are the two modes, and :func:`train` picks one.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mlx.core as mx
import mlx.optimizers as optim
import numpy as np
from mlx.nn.layers.base import Module  # not re-exported by mlx.nn for a type checker
from mlx.nn.utils import value_and_grad

from arena_core.errors import ConfigError
from arena_core.game import Game, Position
from arena_core.players import Decision, Move, Player
from arena_core.registry import make_game, make_player
from arena_core.seeding import derive_seed, make_rng
from arena_core.stats import cluster_mean, paired_t

from .config import ExpertIterationConfig
from .exact import evaluation_deals
from .lm import (
    LMPolicy,
    LMRecord,
    Weights,
    load_flat,
    load_trainables,
    menu_logprobs,
    records_batch,
    save_flat,
    trainable_model,
    trainables,
)
from .rollout import (
    Choice,
    EpisodeResult,
    EpisodeSpec,
    Learner,
    PlayerLearner,
    Request,
    paired_bootstrap,
    play_episodes,
)
from .run import RunDir, checkpoint_dir
from .trainer import Parts, RunSummary, TrainerPlugin
from .views import CompactView, Menu, Tokenizer, compact_view


@dataclass(frozen=True)
class Labelled:
    record: LMRecord
    label: int  # the expert's menu index
    round: int = 0  # the collection round (steps mode holds the last one out)
    deal: int = 0  # the deal's seed: decisions of one deal are a cluster for the agreement's interval

    def to_json(self) -> dict[str, Any]:
        r = self.record
        return {
            "tokens": list(r.tokens),
            "labels": list(r.labels),
            "legal": list(r.legal),
            "chosen": r.chosen,
            "logprob": r.logprob,
            "text": r.text,
            "label": self.label,
            "round": self.round,
            "deal": self.deal,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Labelled:
        rec = LMRecord(
            tuple(d["tokens"]), tuple(d["labels"]), tuple(d["legal"]), int(d["chosen"]), float(d["logprob"]), d["text"]
        )
        return cls(rec, int(d["label"]), int(d.get("round", 0)), int(d.get("deal", 0)))


def expert_menu_index(
    game: Game[Any, Any],
    pos: Position[Any],
    seat: int,
    expert: Player,
    menu: Menu,
    episode_seed: int,
    *,
    restrict: bool = False,
) -> int:
    """The expert's answer at ``pos`` as an index into ``menu``: the same action if the menu
    offers it, else the legal menu action nearest by action id (a bid nearest in amount).
    ``restrict``: the expert is offered only the menu's legal actions (a search player then
    searches over them)."""
    decision = Decision.at(game, pos, seat, episode_seed)
    if restrict:
        offered = tuple(a for a, ok in zip(menu.actions, menu.legal) if ok)
        decision = dataclasses.replace(decision, legal_actions=offered)
    answer = expert.act(decision)
    if isinstance(answer, Move):
        answer = answer.action
    if isinstance(answer, str):
        answer = decision.parse(answer).action
    for i, a in enumerate(menu.actions):
        if a == answer and menu.legal[i]:
            return i
    target = game.action_id(answer)
    candidates = [
        (abs(game.action_id(a) - target), game.action_id(a), i) for i, a in enumerate(menu.actions) if menu.legal[i]
    ]
    return min(candidates)[2]


def margin_values(results: Sequence[EpisodeResult]) -> list[float]:
    """Per deal: the learner's score minus the mean of the others', averaged over its seats."""
    by_deal: dict[int, list[float]] = {}
    order: list[int] = []
    for r in results:
        own = r.returns[r.learner_seat]
        others = [v for i, v in enumerate(r.returns) if i != r.learner_seat]
        if r.deal_seed not in by_deal:
            order.append(r.deal_seed)
        by_deal.setdefault(r.deal_seed, []).append(own - float(np.mean(others)))
    return [float(np.mean(by_deal[d])) for d in order]


class GridExpert:
    """The expert restricted to the student's menu (what a perfect student could play)."""

    name = "grid_expert"

    def __init__(self, expert: Player, view: CompactView, restrict: bool = False) -> None:
        self.expert, self.view, self.restrict = expert, view, restrict

    def act(self, decision: Decision) -> Any:
        def choose(game: Game[Any, Any], pos: Position[Any], seat: int) -> Any:
            menu = self.view.menu(game, pos, seat)
            return menu.actions[
                expert_menu_index(game, pos, seat, self.expert, menu, decision.episode_seed, restrict=self.restrict)
            ]

        return decision.view_with(choose)


def sft_update(model: Module, optimizer: optim.Optimizer, batch: Sequence[Labelled], max_grad_norm: float) -> float:
    def loss_fn(
        model: Module, tokens: mx.array, lengths: mx.array, labels: mx.array, mask: mx.array, targets: mx.array
    ) -> mx.array:
        lp = menu_logprobs(model, tokens, lengths, labels, mask)
        return -mx.mean(mx.take_along_axis(lp, targets[:, None], axis=-1))

    tokens, lengths, labels, mask = records_batch([b.record for b in batch])
    loss, grads = value_and_grad(model, loss_fn)(
        model, tokens, lengths, labels, mask, mx.array([b.label for b in batch], dtype=mx.int32)
    )
    grads, _ = optim.clip_grad_norm(grads, max_grad_norm)  # type: ignore[no-untyped-call]  # mlx leaves it unannotated
    optimizer.update(model, grads)
    mx.eval(model.parameters(), optimizer.state)  # type: ignore[no-untyped-call]  # mlx leaves Module.parameters unannotated
    return float(loss)


@dataclass
class EISession:
    """The built parts of an expert-iteration run: what every stage function reads."""

    config: ExpertIterationConfig
    game: Game[Any, Any]
    view: CompactView
    model: Module
    tokenizer: Tokenizer
    optimizer: optim.Optimizer
    expert: Player
    initial: Weights  # the student's starting weights
    eval_deals: list[int]

    def policy(self, temperature: float, weights: Weights | None = None) -> LMPolicy:
        return LMPolicy(self.model, self.tokenizer, self.view, temperature=temperature, weights=weights)

    def grid_expert(self) -> GridExpert:
        return GridExpert(self.expert, self.view, self.config.restrict_expert)


def start(cfg: ExpertIterationConfig, run: RunDir, parts: Parts[Module]) -> EISession:
    """The run's parts built from the config where ``parts`` leaves them out, and its manifest."""
    game = make_game(cfg.game, cfg.game_params or None, num_players=cfg.num_players)
    view = parts.view or compact_view(game)
    model, tokenizer = trainable_model(
        cfg.model, seed=derive_seed(cfg.seed, "init"), model=parts.model, tokenizer=parts.tokenizer
    )
    parent = cfg.parent_run
    init = checkpoint_dir(cfg.init_from) if cfg.init_from else None
    if init is not None:
        load_trainables(model, load_flat(init / "trainable.safetensors"))
        parent = parent or str(init.parent.parent)
    initial = trainables(model)
    lr: float | Callable[[mx.array], mx.array] = cfg.optim.learning_rate
    if cfg.steps and cfg.optim.schedule == "linear":
        lr = optim.linear_schedule(cfg.optim.learning_rate, 0.0, cfg.steps)
    optimizer = optim.AdamW(learning_rate=lr, weight_decay=cfg.optim.weight_decay)
    expert = make_player(cfg.expert, seed=derive_seed(cfg.seed, "expert"))
    for spec in cfg.opponents:
        make_player(spec, seed=0)
    # a game that lists its deals is evaluated on all of them (equally likely for Kuhn poker, so the plain means hold)
    eval_deals, weights = evaluation_deals(
        game, [derive_seed(cfg.seed, "ei_eval_deal", i) for i in range(cfg.eval_deals)]
    )
    if weights is not None and max(weights) - min(weights) > 1e-12:
        raise ConfigError(
            f"{cfg.game}: expert iteration averages deals equally; its enumerated deals are not equally likely"
        )
    run.start(
        cfg.model_dump(mode="json"),
        trainer="expert_iteration",
        seeds={"seed": cfg.seed},
        parent=parent,
        init_from=str(init) if init else None,
    )
    return EISession(cfg, game, view, model, tokenizer, optimizer, expert, initial, eval_deals)


def episode_specs(session: EISession, deals: Sequence[int], purpose: str) -> list[EpisodeSpec]:
    """Every deal with the student in every seat, opponents drawn from the config's."""
    cfg, n = session.config, session.game.num_players
    specs: list[EpisodeSpec] = []
    for d in deals:
        for seat in range(n):
            rng = make_rng(cfg.seed, purpose, d, seat)
            table = {
                s: make_player(
                    cfg.opponents[int(rng.integers(len(cfg.opponents)))],
                    seed=derive_seed(cfg.seed, purpose, "opp", d, s),
                )
                for s in range(n)
                if s != seat
            }
            specs.append(EpisodeSpec(int(d), seat, table, derive_seed(cfg.seed, purpose, "keys", d, seat)))
    return specs


def collect(session: EISession, round_index: int) -> tuple[list[Labelled], dict[str, Any]]:
    """Student plays (sampled); the expert labels every student decision as it happens."""
    cfg = session.config
    deals = [derive_seed(cfg.seed, "ei_train_deal", round_index, j) for j in range(cfg.deals_per_round)]
    specs = episode_specs(session, deals, f"ei_round_{round_index}")
    labeller = _LabellingLearner(
        session.policy(1.0),
        session.expert,
        session.view,
        restrict=cfg.restrict_expert,
        play_expert=cfg.behaviour == "expert",
    )
    play_episodes(session.game, specs, labeller)
    pairs = labeller.pairs
    agree = float(np.mean([rec.chosen == lab for rec, lab, _ in pairs])) if pairs else 1.0
    data = [
        Labelled(rec, lab, round_index, specs[episode].deal_seed)
        for rec, lab, episode in pairs
        if cfg.label_all or rec.chosen != lab
    ]
    return data, {"decisions": len(pairs), "labelled": len(data), "train_agreement_before": agree}


def fine_tune(session: EISession, data: Sequence[Labelled], round_index: int) -> float:
    """``epochs`` passes over ``data`` in minibatches (rounds mode); the mean loss."""
    cfg = session.config
    losses: list[float] = []
    for epoch in range(cfg.epochs):
        order = make_rng(cfg.seed, "ei_order", round_index, epoch).permutation(len(data))
        for start_at in range(0, len(order), cfg.batch_size):
            batch = [data[i] for i in order[start_at : start_at + cfg.batch_size]]
            losses.append(sft_update(session.model, session.optimizer, batch, cfg.optim.max_grad_norm))
    return float(np.mean(losses)) if losses else float("nan")


def evaluate(session: EISession, learner: Learner) -> tuple[list[float], float]:
    """Per-deal margins on the held-out deals and agreement with the expert on the states met."""
    cfg = session.config
    specs = episode_specs(session, session.eval_deals, "ei_eval")
    probe: Learner = (
        _LabellingLearner(learner, session.expert, session.view, restrict=cfg.restrict_expert)
        if isinstance(learner, LMPolicy) and not cfg.steps
        else learner
    )
    results = play_episodes(session.game, specs, probe)
    agreement = (
        float(np.mean([rec.chosen == lab for rec, lab, _ in probe.pairs]))
        if isinstance(probe, _LabellingLearner) and probe.pairs
        else float("nan")
    )
    return margin_values(results), agreement


def save_checkpoint(run: RunDir, session: EISession, step: int) -> Path:
    """``checkpoints/step_NNNNNN/``: the student's trainable weights and ``state.json`` (a
    checkpoint any trainer can start from with ``init_from``, and the ``checkpoint`` player loads)."""
    save_flat(run.checkpoint(step) / "trainable.safetensors", trainables(session.model))
    state = {"trainer": "expert_iteration", "step": step, "seed": session.config.seed}
    return run.save_state(step, {**state, "config": session.config.model_dump(mode="json")})


# ---------------------------------------------------------------------- rounds mode
def run_rounds(run: RunDir, session: EISession, parts: Parts[Module]) -> RunSummary:
    """Rounds mode: each round collects, labels and fine-tunes; the report compares the student,
    its initial self and the expert on the same held-out deals."""
    cfg = session.config
    started = time.perf_counter()
    run.metrics.write([])
    initial, agree0 = evaluate(session, session.policy(0.0, weights=session.initial))
    expert, _ = evaluate(session, PlayerLearner(session.expert))
    grid_expert, _ = evaluate(session, PlayerLearner(session.grid_expert()))
    run.metrics.append(
        {
            "step": 0,
            "eval_mean": float(np.mean(initial)),
            "eval_agreement": agree0,
            "expert_mean": float(np.mean(expert)),
            "grid_expert_mean": float(np.mean(grid_expert)),
        }
    )
    for r in range(1, cfg.rounds + 1):
        data, row = collect(session, r)
        row["sft_loss"] = fine_tune(session, data, r)
        student, agree = evaluate(session, session.policy(0.0))
        row.update({"step": r, "eval_mean": float(np.mean(student)), "eval_agreement": agree})
        run.metrics.append(row)
        save_checkpoint(run, session, r)
        parts.report(r, row)
    report = rounds_report(cfg, initial, student, expert, grid_expert, (agree0, agree), len(session.eval_deals))
    rows = run.metrics.rows()
    run.plot(rows, ("eval_mean", "eval_agreement", "sft_loss"))
    run.finish(status="ok", report=report, wall_s=round(time.perf_counter() - started, 2))
    return RunSummary(run.path, run.run_id, cfg.rounds, rows, report=report)


def rounds_report(
    cfg: ExpertIterationConfig,
    initial: Sequence[float],
    student: Sequence[float],
    expert: Sequence[float],
    grid_expert: Sequence[float],
    agreement: tuple[float, float],
    deals: int,
) -> dict[str, Any]:
    """The student against its initial self and the expert (per-deal margins, paired intervals),
    and the fraction of the grid expert's advantage it recovers."""
    gap = float(np.mean(grid_expert) - np.mean(initial))
    return {
        "initial_margin": float(np.mean(initial)),
        "student_margin": float(np.mean(student)),
        "expert_margin": float(np.mean(expert)),
        "grid_expert_margin": float(np.mean(grid_expert)),
        "agreement_initial": agreement[0],
        "agreement_student": agreement[1],
        "recovered_fraction": (float(np.mean(student)) - float(np.mean(initial))) / gap
        if abs(gap) > 1e-9
        else float("nan"),
        "student_minus_initial": _iv(student, initial, cfg),
        "grid_expert_minus_student": _iv(grid_expert, student, cfg),
        "eval_deals": deals,
    }


# ---------------------------------------------------------------------- steps mode
def teacher_data(session: EISession, parts: Parts[Module]) -> tuple[list[Labelled], dict[str, Any]]:
    """Every labelled decision of ``rounds`` rounds played by the starting student: read from
    ``data_cache`` when that file exists, else collected (and written there)."""
    cfg = session.config
    cache = Path(cfg.data_cache) if cfg.data_cache else None
    info: dict[str, Any]
    if cache is not None and cache.exists():
        rows = [json.loads(line) for line in cache.read_text().splitlines() if line.strip()]
        data = [Labelled.from_json(r) for r in rows]
        info = {"source": "cache", "rows": len(data)}
    else:
        data, seconds = [], time.perf_counter()
        for r in range(1, cfg.rounds + 1):
            got, row = collect(session, r)
            data.extend(got)
            parts.report(0, {"collect_round": r, **row})
        info = {"source": "collected", "rows": len(data), "collect_s": round(time.perf_counter() - seconds, 1)}
        if cache is not None:
            cache.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache.with_suffix(".tmp")
            tmp.write_text("".join(json.dumps(d.to_json()) + "\n" for d in data))
            tmp.replace(cache)
    if not data:
        raise ConfigError("expert iteration: the teacher labelled no decisions; raise rounds or deals_per_round")
    if cache is not None:
        info.update({"path": str(cache), "sha256": hashlib.sha256(cache.read_bytes()).hexdigest()[:16]})
    return data, info


def agreement_hits(model: Module, data: Sequence[Labelled]) -> tuple[list[bool], list[float]]:
    """Per decision of ``data``: whether the model's most likely menu entry is the label, and the
    label's cross-entropy."""
    hits: list[bool] = []
    nll: list[float] = []
    for start_at in range(0, len(data), 256):
        chunk = data[start_at : start_at + 256]
        lp = np.array(menu_logprobs(model, *records_batch([d.record for d in chunk])), dtype=np.float64)
        for i, d in enumerate(chunk):
            row = lp[i, : len(d.record.labels)]
            hits.append(int(np.argmax(row)) == d.label)
            nll.append(-row[d.label])
    return hits, nll


def agreement_interval(data: Sequence[Labelled], hits: Sequence[bool], level: float = 0.95) -> dict[str, Any]:
    """The share of ``hits`` with a deal-clustered interval (:func:`arena_core.stats.cluster_mean`:
    the decisions of one deal share its dice and its line of play); NaN bounds under two deals."""
    clusters: dict[tuple[int, int], list[bool]] = {}
    for d, hit in zip(data, hits):
        clusters.setdefault((d.round, d.deal), []).append(bool(hit))
    share = float(np.mean(hits)) if len(hits) else float("nan")
    low = high = float("nan")
    if len(clusters) >= 2:
        cm = cluster_mean(
            [sum(v) for v in clusters.values()], [len(v) for v in clusters.values()], level, bounds=(0, 1)
        )
        low, high = float(cm.low), float(cm.high)
    return {"agreement": share, "low": low, "high": high, "decisions": len(hits), "deals": len(clusters)}


def eval_row(session: EISession, step: int, held: Sequence[Labelled]) -> tuple[dict[str, Any], list[float]]:
    """Steps mode's evaluation: the greedy student's margins (a t interval) and its agreement and
    loss on the held-out labels."""
    values, _ = evaluate(session, session.policy(0.0))
    _, low, high, _ = paired_t(values)
    hits, nll = agreement_hits(session.model, held) if held else ([], [])
    iv = agreement_interval(held, hits)
    row = {"step": step, "eval_mean": float(np.mean(values)), "eval_mean_low": low, "eval_mean_high": high}
    agreement = {"heldout_agreement": iv["agreement"], "heldout_agreement_low": iv["low"]}
    agreement.update(
        {"heldout_agreement_high": iv["high"], "heldout_loss": float(np.mean(nll)) if nll else float("nan")}
    )
    return {**row, **agreement}, values


def split_heldout(cfg: ExpertIterationConfig, data: list[Labelled]) -> tuple[list[Labelled], list[Labelled]]:
    """``(train, held out)``: the last round is held out when there are two rounds or more."""
    last = max(d.round for d in data)
    held = [d for d in data if d.round == last] if cfg.rounds >= 2 and last > 1 else []
    return ([d for d in data if d.round != last] if held else list(data)), held


def run_steps(run: RunDir, session: EISession, parts: Parts[Module]) -> RunSummary:
    """Steps mode (see the module docstring)."""
    cfg = session.config
    started = time.perf_counter()
    run.metrics.write([])
    train, held = split_heldout(cfg, (got := teacher_data(session, parts))[0])
    info = {**got[1], "train_rows": len(train), "heldout_rows": len(held)}
    train_started = time.perf_counter()
    first, initial = eval_row(session, 0, held)
    if cfg.eval_expert:
        first["expert_mean"] = float(np.mean(evaluate(session, PlayerLearner(session.expert))[0]))
        first["grid_expert_mean"] = float(np.mean(evaluate(session, PlayerLearner(session.grid_expert()))[0]))
    run.metrics.append(first)
    values = initial
    for step in range(1, cfg.steps + 1):
        order = make_rng(cfg.seed, "ei_batch", step).choice(
            len(train), size=min(cfg.batch_size, len(train)), replace=False
        )
        row: dict[str, Any] = {
            "step": step,
            "sft_loss": sft_update(
                session.model, session.optimizer, [train[i] for i in order], cfg.optim.max_grad_norm
            ),
        }
        if step == cfg.steps or (cfg.eval_every and step % cfg.eval_every == 0):
            evaluated, values = eval_row(session, step, held)
            row.update(evaluated)
        if step == cfg.steps or (cfg.checkpoint_every and step % cfg.checkpoint_every == 0):
            save_checkpoint(run, session, step)
        row["train_s"] = round(time.perf_counter() - train_started, 2)
        run.metrics.append(row)
        parts.report(step, row)
    rows = run.metrics.rows()
    report: dict[str, Any] = {
        "initial_margin": first["eval_mean"],
        "student_margin": float(np.mean(values)),
        "student_minus_initial": _iv(values, initial, cfg),
        "agreement_initial": first["heldout_agreement"],
        "agreement_student": rows[-1]["heldout_agreement"],
        "agreement_student_interval": [rows[-1]["heldout_agreement_low"], rows[-1]["heldout_agreement_high"]],
        "agreement_heldout_decisions": len(held),
        "eval_deals": len(session.eval_deals),
        "data": info,
        "steps": cfg.steps,
    }
    if cfg.eval_expert:
        report.update({"expert_margin": first["expert_mean"], "grid_expert_margin": first["grid_expert_mean"]})
    run.plot(rows, ("eval_mean", "heldout_agreement", "heldout_loss", "sft_loss"))
    wall = {
        "wall_s": round(time.perf_counter() - started, 2),
        "train_wall_s": round(time.perf_counter() - train_started, 2),
    }
    run.finish(status="ok", report=report, **wall)
    return RunSummary(run.path, run.run_id, cfg.steps, rows, report=report)


def train(config: ExpertIterationConfig, run: RunDir, parts: Parts[Module]) -> RunSummary:
    """Expert iteration: an expert player's decisions distilled into an MLX language model.

    A whole run into ``run`` (rounds mode, or steps mode with ``steps``)."""
    session = start(config, run, parts)
    return run_steps(run, session, parts) if config.steps else run_rounds(run, session, parts)


def _iv(a: Sequence[float], b: Sequence[float], cfg: ExpertIterationConfig) -> dict[str, float]:
    iv = paired_bootstrap(a, b, seed=derive_seed(cfg.seed, "ei_bootstrap"), resamples=cfg.bootstrap)
    return {"mean": iv.mean, "low": iv.low, "high": iv.high}


class _LabellingLearner:
    """Wraps an :class:`LMPolicy`: records ``(record, expert index)`` at every decision (the record
    holds the student's own answer) and plays the student's answer, or with ``play_expert`` the
    expert's (behaviour cloning: the states the expert reaches)."""

    def __init__(
        self, policy: LMPolicy, expert: Player, view: CompactView, restrict: bool = False, play_expert: bool = False
    ) -> None:
        self.policy, self.expert, self.view, self.restrict = policy, expert, view, restrict
        self.play_expert = play_expert
        self.pairs: list[tuple[LMRecord, int, int]] = []  # (student's record, expert's index, episode)

    def decide(self, requests: Sequence[Request]) -> list[Choice]:
        choices = self.policy.decide(requests)
        played: list[Choice] = []
        for req, choice in zip(requests, choices):
            menu = self.view.menu(req.game, req.pos, req.seat, include_illegal=self.policy.include_illegal)
            label = expert_menu_index(req.game, req.pos, req.seat, self.expert, menu, req.key, restrict=self.restrict)
            self.pairs.append((choice.record, label, req.episode))
            played.append(Choice(menu.actions[label], record=choice.record) if self.play_expert else choice)
        return played


#: the ``expert_iteration`` entry point of ``arena.trainers``
TRAINER = TrainerPlugin("expert_iteration", ExpertIterationConfig, train)
