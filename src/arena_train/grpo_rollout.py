"""GRPO's rollout, alone: which episodes a step plays (deals, seats, opponent tables, groups) and
how their outcomes become per-decision advantages.

A step plays ``deals_per_step`` deal indices; for each and each learner seat an opponent table is
drawn from the :class:`Pool` and the learner plays ``group_size`` times with sampled answers (a
*group*; with ``self_play`` the learner sits in every seat and a group is one deal index). The
plays of a group differ in their deals and opponents' draws as ``group_draws`` says (each its own,
by default, so a peaked learner against a peaked pool still sees different games), and a group
whose returns are all equal can be played again (``resample_flat``). Every draw derives from the
config's seed and the step, so a step's episodes do not depend on what came before it. A *unit*
is an (episode, learner seat) pair with that seat's return; its baseline is the mean over its
group and seat (``baseline = "group"``), the seat's running mean (``"role"``) or, per decision,
the running mean of its own prompt (``"infostate"``); with ``reward.kind = "round"`` and
per-decision credit, each decision's return is its own round's reward.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from arena_core.game import Game
from arena_core.players import Player
from arena_core.playerspec import PlayerSpec
from arena_core.seeding import derive_seed, make_rng

from .config import GRPOConfig
from .lm import LMRecord, Weights
from .rollout import (
    EpisodeResult,
    EpisodeSpec,
    RewardSpec,
    centred_advantages,
    seat_decision_returns,
    seat_return,
)
from .text_policy import records_of

#: a pool entry: a registered player's spec, or a frozen snapshot of the learner ``(step, weights)``
PoolEntry = PlayerSpec | tuple[int, Weights]
#: the player for a pool entry, seeded
OpponentFactory = Callable[[PoolEntry, int], Player]
#: the key of a decision prompt (its tokens), for the ``infostate`` baseline
PromptKey = tuple[int, ...]


@dataclass
class Pool:
    """Opponents: registered player specs and frozen learner snapshots (``(step, weights)``)."""

    players: list[PlayerSpec]
    snapshots: list[tuple[int, Weights]] = field(default_factory=list)

    def entries(self) -> list[PoolEntry]:
        return [*self.players, *self.snapshots]

    def describe(self) -> list[str]:
        return [str(p) for p in self.players] + [f"snapshot@{step}" for step, _ in self.snapshots]


@dataclass(frozen=True)
class GroupPlan:
    """What a group's plays share: the step's deal index ``j``, the learner's seat (None in
    self-play: the learner sits everywhere) and the opponent table."""

    group: int
    deal_index: int
    seat: int | None
    table: Mapping[int, Player]


def group_plans(
    cfg: GRPOConfig, game: Game[Any, Any], pool: Pool, opponent: OpponentFactory, step: int
) -> list[GroupPlan]:
    """The step's groups: ``deals_per_step`` deal indices, each with every learner seat (or one,
    rotating) and an opponent table drawn from the pool (a pure function of the seed and step)."""
    entries = pool.entries()
    plans: list[GroupPlan] = []
    for j in range(cfg.deals_per_step):
        if cfg.self_play:  # the learner in every seat at once: one group per deal
            plans.append(GroupPlan(len(plans), j, None, {}))
            continue
        seats = range(game.num_players) if cfg.seats == "all" else [(step * cfg.deals_per_step + j) % game.num_players]
        for seat in seats:
            rng = make_rng(cfg.seed, "table", step, j, seat)
            table = {
                s: opponent(entries[int(rng.integers(len(entries)))], derive_seed(cfg.seed, "opp", step, j, s))
                for s in range(game.num_players)
                if s != seat
            }
            plans.append(GroupPlan(len(plans), j, seat, table))
    return plans


def group_plays(cfg: GRPOConfig, plan: GroupPlan, step: int, attempt: int = 0) -> list[EpisodeSpec]:
    """The ``group_size`` plays of a group. Every play has its own learner draws; its deal and its
    opponents' draws are the group's or its own, as ``group_draws`` says. ``attempt`` > 0: a flat
    group played again (``resample_flat``), every seed fresh. Attempt 0 of ``'shared'`` is the
    scheme before issue 42, seed for seed."""
    j, again = plan.deal_index, (("resample", attempt) if attempt else ())
    who: tuple[int | str, ...] = ("self",) if plan.seat is None else (plan.seat,)
    shared_deal = derive_seed(cfg.seed, "train_deal", step, j, *again)
    specs = []
    for k in range(cfg.group_size):
        deal = derive_seed(cfg.seed, "train_deal", step, j, *again, k) if cfg.group_draws == "distinct" else shared_deal
        draws = None if cfg.group_draws == "shared" else derive_seed(cfg.seed, "opp_draws", step, j, *who, *again, k)
        key = derive_seed(cfg.seed, "sample", step, j, *who, *again, k)
        specs.append(EpisodeSpec(deal, plan.seat or 0, plan.table, key, draws))
    return specs


def episode_specs(
    cfg: GRPOConfig, game: Game[Any, Any], pool: Pool, opponent: OpponentFactory, step: int
) -> list[tuple[int, EpisodeSpec]]:
    """``(group id, spec)`` for every episode of ``step`` (a pure function of the seed and step)."""
    return [
        (plan.group, spec)
        for plan in group_plans(cfg, game, pool, opponent, step)
        for spec in group_plays(cfg, plan, step)
    ]


def flat_groups(groups: Sequence[int], results: Sequence[EpisodeResult], reward: RewardSpec) -> list[int]:
    """The groups whose learner returns are all equal (per seat): no signal against their own mean."""
    returns: dict[tuple[int, int], set[float]] = {}
    for i, seat in learner_units(results):
        returns.setdefault((groups[i], seat), set()).add(seat_return(results[i], seat, reward))
    flat = {g for g, _ in returns} - {g for (g, _), vals in returns.items() if len(vals) > 1}
    return sorted(flat)


def zero_advantage_share(groups: Sequence[int], adv: Advantages) -> float:
    """The share of the step's groups whose every decision has advantage 0 (DAPO's zero-advantage
    groups: they add nothing to the policy gradient); 1.0 when no learner decided."""
    every = set(groups)
    live = {groups[i] for i, a in zip(adv.episodes, adv.advantages) if a != 0.0}
    return 1.0 - len(live) / len(every) if every else 1.0


def learner_units(results: Sequence[EpisodeResult]) -> list[tuple[int, int]]:
    """``(episode index, seat)`` for every seat where the learner decided, in order."""
    return [(i, seat) for i, r in enumerate(results) for seat in sorted({s.seat for s in r.steps})]


@dataclass
class Baselines:
    """The running baselines a step's advantages read and then update (kept in checkpoints)."""

    role: list[float]  # mean return per seat (baseline = "role")
    info: dict[PromptKey, float] = field(default_factory=dict)  # mean return per prompt ("infostate")


@dataclass(frozen=True)
class Advantages:
    """One step's learner decisions with their advantages; ``returns`` per unit (``units``), and
    this step's returns per prompt (what the ``infostate`` baseline is updated with)."""

    records: list[LMRecord]
    advantages: list[float]
    units: list[tuple[int, int]]
    returns: list[float]
    prompt_returns: dict[PromptKey, list[float]]
    episodes: list[int] = field(default_factory=list)  # each decision's episode index
    #: with per-round credit (reward.kind = "round", advantage = "per_decision"): each decision's
    #: seat and return, what the role baseline then follows (a round's reward, not an episode's)
    decision_seats: list[int] = field(default_factory=list)
    decision_returns: list[float] = field(default_factory=list)


def _scale(centred: np.ndarray[Any, Any], how: str) -> float:
    std = float(np.std(centred)) if len(centred) else 0.0
    return std if how != "none" and std > 1e-9 else 1.0


def advantages(
    cfg: GRPOConfig,
    groups: Sequence[int],
    results: Sequence[EpisodeResult],
    reward: RewardSpec,
    baselines: Baselines,
) -> Advantages:
    """Each learner decision's advantage (``groups``: each episode's group id, as
    :func:`episode_specs` gives them); the baselines are read, not updated."""
    units = learner_units(results)
    returns = [seat_return(results[i], seat, reward) for i, seat in units]
    if cfg.baseline == "infostate":
        return _infostate_advantages(cfg, results, reward, baselines, units, returns)
    if reward.kind == "round" and cfg.advantage == "per_decision":
        return _round_advantages(cfg, groups, results, reward, baselines, units, returns)
    keys = [(groups[i], seat) for i, seat in units]
    if cfg.baseline == "role":
        base = np.array([baselines.role[seat] for _, seat in units])
        scale = _scale(np.asarray(returns, dtype=np.float64) - base, cfg.advantage_scale)
        unit_adv = (np.asarray(returns, dtype=np.float64) - base) / scale
    else:
        ids = {k: n for n, k in enumerate(dict.fromkeys(keys))}
        unit_adv = centred_advantages(returns, [ids[k] for k in keys], cfg.advantage_scale)
        means = {k: float(np.mean([r for r, kk in zip(returns, keys) if kk == k])) for k in ids}
        base = np.array([means[k] for k in keys])
        scale = _scale(np.asarray(returns, dtype=np.float64) - base, cfg.advantage_scale)
    records, advs, episodes = [], [], []
    for u, (i, seat) in enumerate(units):
        steps = [st for st in results[i].steps if st.seat == seat]
        if cfg.advantage == "per_decision":
            # each decision's return (outcome plus the penalties from it on) against the unit's baseline
            adv = (np.asarray(seat_decision_returns(results[i], seat, reward)) - base[u]) / scale
        else:
            adv = np.full(len(steps), unit_adv[u])
        for st, a in zip(steps, adv):
            for rec in records_of(st.choice.record):  # a text answer: each branching token, one advantage
                records.append(rec)
                advs.append(float(a))
                episodes.append(i)
    return Advantages(records, advs, units, returns, {}, episodes)


def _infostate_advantages(
    cfg: GRPOConfig,
    results: Sequence[EpisodeResult],
    reward: RewardSpec,
    baselines: Baselines,
    units: list[tuple[int, int]],
    returns: list[float],
) -> Advantages:
    """Each decision centred on the running mean return of its own prompt (seat and information
    state; a prompt seen for the first time starts from this step's mean there), then scaled by
    the step's std of centred returns (``advantage_scale``)."""
    records, dec_returns, episodes = [], [], []
    for i, seat in units:
        steps = [st for st in results[i].steps if st.seat == seat]
        if cfg.advantage == "per_decision":
            dec = seat_decision_returns(results[i], seat, reward)
        else:
            dec = [seat_return(results[i], seat, reward)] * len(steps)
        for st, g in zip(steps, dec):
            for rec in records_of(st.choice.record):
                records.append(rec)
                dec_returns.append(float(g))
                episodes.append(i)
    prompt_returns: dict[PromptKey, list[float]] = {}
    for rec, g in zip(records, dec_returns):
        prompt_returns.setdefault(rec.tokens, []).append(g)
    base = np.array([baselines.info.get(r.tokens, float(np.mean(prompt_returns[r.tokens]))) for r in records])
    centred = np.asarray(dec_returns, dtype=np.float64) - base
    advs = [float(a) for a in centred / _scale(centred, cfg.advantage_scale)]
    return Advantages(records, advs, units, returns, prompt_returns, episodes)


def _round_advantages(
    cfg: GRPOConfig,
    groups: Sequence[int],
    results: Sequence[EpisodeResult],
    reward: RewardSpec,
    baselines: Baselines,
    units: list[tuple[int, int]],
    returns: list[float],
) -> Advantages:
    """Per-round credit: each decision's return is its own round's reward
    (:func:`~arena_train.rollout.decision_returns`), centred on the mean of the decisions of its
    group and seat (``baseline = "group"``) or on the seat's running mean of decision returns
    (``"role"``), then scaled (``advantage_scale``: by the step's std, per group and seat, or not)."""
    records, dec, episodes, seats, keys = [], [], [], [], []
    for i, seat in units:
        steps = [st for st in results[i].steps if st.seat == seat]
        for st, g in zip(steps, seat_decision_returns(results[i], seat, reward)):
            records.append(st.choice.record)
            dec.append(float(g))
            episodes.append(i)
            seats.append(seat)
            keys.append((groups[i], seat))
    values = np.asarray(dec, dtype=np.float64)
    if cfg.baseline == "role":
        centred = values - np.array([baselines.role[seat] for seat in seats])
        advs = centred / _scale(centred, cfg.advantage_scale)
    else:
        ids = {k: n for n, k in enumerate(dict.fromkeys(keys))}
        advs = centred_advantages(dec, [ids[k] for k in keys], cfg.advantage_scale)
    return Advantages(records, [float(a) for a in advs], units, returns, {}, episodes, seats, dec)


def update_baselines(cfg: GRPOConfig, baselines: Baselines, step: Advantages) -> None:
    """The running means after a step's advantages used them (decay ``baseline_decay``)."""
    d = cfg.baseline_decay
    if cfg.baseline == "role":
        per_unit = not step.decision_seats
        pairs = (
            zip(step.returns, (s for _, s in step.units))
            if per_unit
            else zip(step.decision_returns, step.decision_seats)
        )
        by_seat: dict[int, list[float]] = {}
        for r, s in pairs:
            by_seat.setdefault(s, []).append(r)
        for seat in range(len(baselines.role)):
            vals = by_seat.get(seat, [])
            if vals:
                baselines.role[seat] = d * baselines.role[seat] + (1 - d) * float(np.mean(vals))
    if cfg.baseline == "infostate":
        for key, vals in step.prompt_returns.items():
            m = float(np.mean(vals))
            baselines.info[key] = d * baselines.info[key] + (1 - d) * m if key in baselines.info else m
