"""GRPO's evaluation, alone: the learner (greedy) in every seat of held-out deals against
anchor players, its improvement over the initial policy (exact when every deal is enumerated and
the anchor is deterministic, else a paired bootstrap over deals), the silent-player guard, and the
exact exploitability of its sampling policy and of the average policy over its snapshots.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from arena_core.game import Game
from arena_core.players import Player
from arena_core.seeding import derive_seed
from arena_core.stats import paired_bootstrap

from .config import GRPOConfig
from .exact import InfoState, PolicyTable, average_policy, exploitability
from .lm import LMPolicy
from .rollout import Learner, per_deal_means, play_episodes, rotated_specs

#: an anchor player: ``(seat, learner seat, salt) -> player`` (salt 1 reseeds it, to test determinism)
AnchorFactory = Callable[[int, int, int], Player]


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


def evaluation_row(
    cfg: GRPOConfig,
    game: Game[Any, Any],
    greedy: Learner,
    anchor: AnchorFactory,
    deals: Sequence[int],
    weights: Sequence[float] | None,
    baseline: Sequence[float] | None,
) -> tuple[dict[str, Any], list[float]]:
    """The ``eval_*`` values of ``greedy`` and its per-deal values (``baseline``: the initial
    policy's; None at the first evaluation, which is then its own baseline)."""
    keys = derive_seed(cfg.seed, "eval_keys")
    res = evaluate(game, greedy, lambda s, ls: anchor(s, ls, 0), deals, keys, weights)
    base = res.per_deal if baseline is None else baseline
    out: dict[str, Any] = {
        "eval_mean": res.mean,
        "eval_win_rate": res.win_rate,
        "eval_margin": res.margin,
        "eval_bad_answer_rate": res.bad_answer_rate,
    }
    exact = False
    if weights is not None:
        # every deal enumerated and the learner greedy: exact, if the anchor is deterministic
        # (checked by replaying with the anchors reseeded)
        again = evaluate(game, greedy, lambda s, ls: anchor(s, ls, 1), deals, keys, weights)
        exact = again.per_deal == res.per_deal
    if exact:
        diff = float(np.asarray(weights) @ (np.asarray(res.per_deal) - np.asarray(base)))
        out.update(
            {
                "eval_improvement": diff,
                "eval_improvement_low": diff,
                "eval_improvement_high": diff,
                "eval_deals": len(res.per_deal),
            }
        )
    else:
        lo, hi = game.spec.reward_bounds  # a deal's value is a mean of the learner's returns: within them
        iv = paired_bootstrap(
            res.per_deal,
            base,
            seed=derive_seed(cfg.seed, "bootstrap"),
            resamples=cfg.eval.bootstrap,
            bounds=(lo - hi, hi - lo),
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
    return out, res.per_deal


def average_of(
    game: Game[Any, Any], tables: Sequence[PolicyTable], steps: Sequence[int], weighting: Literal["uniform", "linear"]
) -> PolicyTable:
    """The realisation-weighted average of policy snapshots, weighted as ``eval.average`` says
    (linear: by the snapshot's step; while only the initial policy is in, it alone)."""
    weights = [float(s) for s in steps] if weighting == "linear" and any(steps) else None
    return average_policy(game, tables, weights)


def exploitability_row(game: Game[Any, Any], last: PolicyTable, average: PolicyTable, snapshots: int) -> dict[str, Any]:
    """The exact exploitability of the sampling policy and of the average policy."""
    now = exploitability(game, last)
    return {
        "eval_exploitability": now.exploitability,
        "eval_avg_exploitability": exploitability(game, average).exploitability,
        "eval_policy_value_seat0": now.policy_values[0],
        "eval_snapshots": snapshots,
    }
