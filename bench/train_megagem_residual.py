"""MegaGem: a student that starts at the expert and learns deviations (issue 30).

Numpy policy gradient over a residual menu on ``megagem_expert``'s bid
(:mod:`arena_games.megagem.residual`; the training step is here), luck-controlled reward, three training seeds, evaluated
with ``arena compare`` on held-out deals. Every stage is resumable and writes its results as it
goes under ``--out`` (default ``runs/megagem-residual``):

    python bench/train_megagem_residual.py constant            # best constant deviation, tuning deals
    python bench/train_megagem_residual.py train --seed 0 --steps 150 [--minutes 18]
    python bench/train_megagem_residual.py evaluate --seed 0   # arena compare, held-out deals
    python bench/train_megagem_residual.py transfer --seed 0   # same, against another field
    python bench/train_megagem_residual.py report              # docs section, PNG, models/megagem-student

Deal seeds (disjoint, named): training 30,000,000 + seed x 1,000,000 + ...; the constant
deviation's tuning deals 31,000,000...; held-out evaluation 32,000,000..32,000,099; each seed's
curve (validation) deals 33,000,000 + seed x 1,000...; transfer 34,000,000...
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from arena_core.game import Game
from arena_core.registry import make_game
from arena_core.seeding import make_rng
from arena_core.stats import paired_t
from arena_games.megagem.residual import (
    MENU,
    NUM_FEATURES,
    Episode,
    ExpertCache,
    ResidualPolicy,
    ResidualStudent,
    greedy_margins,
    student_episode,
)
from arena_train.pg import Adam

Array = npt.NDArray[np.float64]


# ---------------------------------------------------------------------- training
@dataclass
class TrainConfig:
    seed: int = 0
    deals_per_step: int = 16  # x every seat = episodes per step
    init_bias: float = 3.0  # logit of x1.0 at the start (the others 0)
    lr: float = 0.02
    deal_base: int = 30_000_000  # training deals: deal_base + seed * 1_000_000 + step * deals_per_step + i
    reward_scale: float = 10.0  # advantages are divided by this (Adam is nearly scale-free)
    control: str = "greedy"  # the reward's reference: "greedy" (the current greedy student) or "expert"
    entropy: float = 0.0  # entropy bonus per decision (in reward_scale units)


@dataclass
class TrainState:
    policy: ResidualPolicy
    adam: Adam
    step: int = 0
    episodes: int = 0


def new_state(cfg: TrainConfig) -> TrainState:
    return TrainState(ResidualPolicy.init(cfg.init_bias), Adam(cfg.lr))


def gradient_noise(g: Array) -> float:
    """Variance of the batch-mean gradient estimate: trace of the per-episode covariance / N."""
    n = len(g)
    return float(g.var(axis=0, ddof=1).sum() / n) if n > 1 else float("nan")


def train_step(
    game: Game[Any, Any],
    cfg: TrainConfig,
    st: TrainState,
    cache: ExpertCache,
    keep: dict[str, Array] | None = None,
) -> dict[str, Any]:
    """One REINFORCE step on fresh deals, every seat; returns the step's log row (``keep``, when
    given, receives the per-episode gradients under each reference: raw, expert, greedy)."""
    student = ResidualStudent(st.policy, cache.expert)
    eps: list[Episode] = []
    greedy: list[float] = []
    first = cfg.deal_base + cfg.seed * 1_000_000 + st.step * cfg.deals_per_step
    for i in range(cfg.deals_per_step):
        d = first + i
        ctl = cache(d)
        for s in range(game.num_players):
            rng = make_rng(cfg.seed, "residual", st.step, d, s)
            m, xs, acts = student_episode(game, student, d, s, rng)
            x = np.stack(xs) if xs else np.zeros((0, NUM_FEATURES))
            eps.append(Episode(d, s, m, ctl[s], x, np.array(acts, dtype=np.int_)))
            greedy.append(student_episode(game, student, d, s, None)[0] if cfg.control == "greedy" else ctl[s])
    raw = np.array([e.margin for e in eps])
    over_expert = raw - np.array([e.control for e in eps])
    over_greedy = raw - np.array(greedy)
    scores = np.stack([st.policy.episode_gradient(e.x, e.actions) for e in eps])

    def grads(r: Array) -> Array:
        out: Array = scores * ((r - r.mean()) / cfg.reward_scale)[:, None]
        return out

    g = {"raw": grads(raw), "expert": grads(over_expert), "greedy": grads(over_greedy)}
    if keep is not None:
        keep.update(g)
    mean_g = g[cfg.control].mean(axis=0)
    xs_all = np.concatenate([e.x for e in eps if len(e.x)])
    p = st.policy.probabilities(xs_all)
    logp = np.log(np.maximum(p, 1e-300))
    ent = -(p * logp).sum(axis=1)
    if cfg.entropy:
        dz = -p * (logp + ent[:, None]) * cfg.entropy / len(eps)  # d(sum of H) / d logits, per episode
        mean_g = mean_g + np.concatenate([(xs_all.T @ dz).ravel(), dz.sum(axis=0)])
    params = st.policy.params
    st.adam.ascend(params, st.policy.unflatten(mean_g))  # replaces the dict's arrays
    st.policy.W, st.policy.b = params["W"], params["b"]
    st.step += 1
    st.episodes += len(eps)
    played = np.concatenate([e.actions for e in eps])
    return {
        "step": st.step,
        "episodes": st.episodes,
        "margin_over_expert": float(over_expert.mean()),
        "margin_over_expert_sd": float(over_expert.std(ddof=1)),
        "margin_over_greedy": float(over_greedy.mean()),
        "raw_margin_sd": float(raw.std(ddof=1)),
        "noise_raw": gradient_noise(g["raw"]),
        "noise_expert_control": gradient_noise(g["expert"]),
        "noise_greedy_control": gradient_noise(g["greedy"]) if cfg.control == "greedy" else float("nan"),
        "signal": float(mean_g @ mean_g),
        "entropy": float(ent.mean()),
        "menu_share": [float(np.mean(played == a)) for a in range(len(MENU))],
    }


def save_state(st: TrainState, path: str | Path) -> None:
    """The resumable training state: policy, Adam moments, step counters."""
    arrays: dict[str, Any] = {"W": st.policy.W, "b": st.policy.b}
    if st.adam.m is not None and st.adam.v is not None:
        arrays.update({f"m_{k}": v for k, v in st.adam.m.items()})
        arrays.update({f"v_{k}": v for k, v in st.adam.v.items()})
    arrays["counters"] = np.array([st.step, st.episodes, st.adam.t])
    np.savez(path, **arrays)


def load_state(cfg: TrainConfig, path: str | Path) -> TrainState:
    with np.load(path) as z:
        pol = ResidualPolicy(z["W"].copy(), z["b"].copy())
        step, episodes, t = (int(v) for v in z["counters"])
        adam = Adam(cfg.lr, t=t)
        if t:
            adam.m = {k: z[f"m_{k}"].copy() for k in ("W", "b")}
            adam.v = {k: z[f"v_{k}"].copy() for k in ("W", "b")}
    return TrainState(pol, adam, step, episodes)


TUNING_FIRST, HELDOUT_FIRST, CURVE_FIRST, TRANSFER_FIRST = 31_000_000, 32_000_000, 33_000_000, 34_000_000
SECTION = "megagem-residual"
TRANSFER_FIELD = ["megagem_heuristic", "megagem_market"]


def _interval(x: list[float]) -> dict[str, float]:
    mean, lo, hi, p = paired_t(np.asarray(x, dtype=float), 0.95)
    return {"mean": mean, "low": lo, "high": hi, "p": p, "n": len(x)}


def constant(out: Path, deals: int) -> dict:
    """Every menu entry played at every decision, on the tuning deals, against two experts."""
    path = out / "constant.json"
    done = json.loads(path.read_text()) if path.exists() else {"deals": deals, "first": TUNING_FIRST, "rows": {}}
    game = make_game("megagem")
    cache = ExpertCache(game)
    ds = list(range(TUNING_FIRST, TUNING_FIRST + deals))
    for a, (label, _, _) in enumerate(MENU):
        if label in done["rows"] or label == "x1.0":
            continue
        t = time.perf_counter()
        m = greedy_margins(game, ResidualPolicy.constant(a), ds, cache)
        done["rows"][label] = {**_interval(m), "action": a, "wall_s": round(time.perf_counter() - t, 1)}
        path.write_text(json.dumps(done, indent=2) + "\n")
        print(label, done["rows"][label], flush=True)
    best = max(done["rows"], key=lambda k: done["rows"][k]["mean"])
    done["best"] = best
    path.write_text(json.dumps(done, indent=2) + "\n")
    ResidualPolicy.constant(done["rows"][best]["action"]).save(
        out / "constant_policy", {"constant": best, "tuning_deals": [TUNING_FIRST, TUNING_FIRST + deals - 1]}
    )
    return done


def train(
    out: Path, seed: int, steps: int, minutes: float, curve_every: int, curve_deals: int, cfg: TrainConfig
) -> None:
    run = out / f"seed_{seed}"
    run.mkdir(parents=True, exist_ok=True)
    (run / "train_config.json").write_text(json.dumps(cfg.__dict__, indent=2) + "\n")
    game = make_game("megagem")
    cache = ExpertCache(game)
    st = load_state(cfg, run / "state.npz") if (run / "state.npz").exists() else new_state(cfg)
    curve_ds = list(range(CURVE_FIRST + seed * 1000, CURVE_FIRST + seed * 1000 + curve_deals))
    stop = time.perf_counter() + minutes * 60
    log, curve = (run / "log.jsonl").open("a"), (run / "curve.jsonl").open("a")

    const_path = run / "constant_curve.json"
    if not const_path.exists():  # the best constant deviation on this seed's curve deals
        best = json.loads((out / "constant.json").read_text())
        action = best["rows"][best["best"]]["action"]
        const_path.write_text(json.dumps(greedy_margins(game, ResidualPolicy.constant(action), curve_ds, cache)))
    const = np.array(json.loads(const_path.read_text()))

    def add_curve() -> None:
        m = greedy_margins(game, st.policy, curve_ds, cache)
        row = {
            "step": st.step,
            "episodes": st.episodes,
            **_interval(m),
            "over_constant": _interval(list(np.array(m) - const)),
        }
        curve.write(json.dumps(row) + "\n")
        curve.flush()
        print("curve", row, flush=True)

    if st.step == 0:
        add_curve()
    while st.step < steps and time.perf_counter() < stop:
        t = time.perf_counter()
        row = train_step(game, cfg, st, cache)
        row["wall_s"] = round(time.perf_counter() - t, 2)
        log.write(json.dumps(row) + "\n")
        log.flush()
        if st.step % curve_every == 0 or st.step == steps:
            add_curve()
        save_state(st, run / "state.npz")
        st.policy.save(run / "policy", {"seed": seed, "step": st.step, "episodes": st.episodes})
        if st.step % 10 == 0:
            print(json.dumps(row), flush=True)
    print(f"seed {seed}: step {st.step} of {steps}", flush=True)


def compare(student: str, deals: list[int], opponents: list[str], where: Path) -> dict:
    """``arena compare STUDENT megagem_expert --opponents ...`` on ``deals`` (Python API)."""
    from arena_tournament.compare import analyse, compare_schedule, play
    from arena_tournament.results import Settings
    from arena_tournament.runner import check_entrants

    cached = where / "compare.json"
    if cached.exists():
        return json.loads(cached.read_text())
    schedule = compare_schedule("megagem", student, "megagem_expert", opponents, deals, num_players=3, seed=deals[0])
    check_entrants(schedule)
    t = time.perf_counter()
    games = play(schedule, Settings(policy="default"), quiet=True, out=where)
    names = [e.name for e in schedule.entrants]
    result = analyse(games, names[0], names[1], seed=deals[0])
    result["wall_s"] = round(time.perf_counter() - t, 1)
    result["student"] = student
    cached.write_text(json.dumps(result, indent=2) + "\n")
    return result


def evaluate(out: Path, which: str, transfer: bool, deals: int, first: int | None = None) -> dict:
    if which == "init":  # the untrained student: the expert bid for bid
        ResidualPolicy.init(TrainConfig().init_bias).save(out / "init_policy", {"step": 0})
    policy = out / ({"constant": "constant_policy", "init": "init_policy"}.get(which) or f"seed_{which}/policy")
    first = first if first is not None else TRANSFER_FIRST if transfer else HELDOUT_FIRST
    opponents = TRANSFER_FIELD if transfer else ["megagem_expert", "megagem_expert"]
    tag = ("transfer_" if transfer else "heldout_") + which
    r = compare(f"checkpoint:run={policy.as_posix()}", list(range(first, first + deals)), opponents, out / tag)
    d = r["difference"]
    print(f"{tag}: {d['mean']:+.2f} [{d['t_low']:+.2f}, {d['t_high']:+.2f}] p {d['t_p']:.3g}", flush=True)
    return r


def deviations(out: Path, seed: str, deals: int, points: int) -> dict:
    """One-step deviations from a trained greedy student: on fresh deals (35,000,000...), at
    ``points`` random bid decisions of each game, play each other menu entry there only (the
    student's greedy choice everywhere else) and record the change in its margin. A positive cell
    is a state-dependent gain the student could still learn; none means its policy is a local
    optimum decision by decision against this field."""
    from arena_core.players import Decision
    from arena_core.seeding import make_rng
    from arena_games.megagem.bots import ExpertBidder
    from arena_games.megagem.residual import expert_read, margins, menu_bids, play_deal

    path = out / f"deviations_{seed}.json"
    if path.exists():
        return json.loads(path.read_text())
    policy = ResidualPolicy.load(out / ("constant_policy" if seed == "constant" else f"seed_{seed}/policy"))
    game = make_game("megagem")
    expert = ExpertBidder()
    kinds = ("treasure_1", "treasure_2", "loan", "investment")
    cells: dict[str, list[float]] = {}

    def run(deal: int, seat: int, at: int, alt: int) -> tuple[float, list[str]]:
        seen: list[str] = []

        def mine(d: Decision):
            if d.observation["phase"] == "reveal":
                return expert.reveal(d)
            r = expert_read(expert, d.observation)
            a = alt if len(seen) == at else policy.greedy(r.features)
            seen.append(kinds[int(np.argmax(r.features[1:5]))])
            return d.legal_actions[menu_bids(r.bid, r.limit)[a]]

        players = [expert.act] * 3
        players[seat] = mine
        return margins(play_deal(game, deal, players))[seat], seen

    t0 = time.perf_counter()
    for deal in range(35_000_000, 35_000_000 + deals):
        for seat in range(3):
            base, seen = run(deal, seat, -1, 0)
            rng = make_rng(deal, seat, "deviation points")
            for at in sorted(rng.choice(len(seen), size=min(points, len(seen)), replace=False)):
                for alt in range(len(MENU)):
                    m, seen2 = run(deal, seat, int(at), alt)
                    cells.setdefault(f"{seen[at]} {MENU[alt][0]}", []).append(m - base)
    result = {
        "student": seed,
        "deals": [35_000_000, 35_000_000 + deals - 1],
        "points_per_game": points,
        "wall_s": round(time.perf_counter() - t0, 1),
        "cells": {k: _interval(v) for k, v in sorted(cells.items())},
    }
    path.write_text(json.dumps(result, indent=2) + "\n")
    return result


def noise(out: Path, which: str, deals: int) -> dict:
    """The gradient noise of one step's estimate at a fixed policy (the initial one, ``init``, or a
    seed's trained one), on ``deals`` fresh deals (36,000,000...) x 3 seats, with no control, the
    expert's margin, and the greedy student's margin as the reward's reference (no update kept)."""
    import copy

    path = out / f"noise_{which}.json"
    if path.exists():
        return json.loads(path.read_text())
    game = make_game("megagem")
    cfg = TrainConfig(seed=0, deals_per_step=deals, deal_base=36_000_000, entropy=0.0)
    st = new_state(cfg)
    if which != "init":
        st.policy = ResidualPolicy.load(out / f"seed_{which}/policy")
    t = time.perf_counter()
    grads: dict = {}
    row = train_step(game, cfg, copy.deepcopy(st), ExpertCache(game), keep=grads)
    row.update({"policy": which, "deals": [36_000_000, 36_000_000 + deals - 1], "wall_s": time.perf_counter() - t})
    # 95% intervals: bootstrap over episodes (2000 resamples, seeded)
    from arena_core.seeding import make_rng

    rng = make_rng(0, "noise bootstrap", which)
    n = len(grads["raw"])
    idx = [rng.integers(0, n, n) for _ in range(2000)]
    for key, name in (("raw", "noise_raw"), ("expert", "noise_expert_control"), ("greedy", "noise_greedy_control")):
        vals = [gradient_noise(grads[key][i]) for i in idx]
        row[name + "_interval"] = [float(np.percentile(vals, 2.5)), float(np.percentile(vals, 97.5))]
    ratio = [gradient_noise(grads["expert"][i]) / gradient_noise(grads["raw"][i]) for i in idx]
    row["expert_over_raw_interval"] = [float(np.percentile(ratio, 2.5)), float(np.percentile(ratio, 97.5))]
    ratio = [gradient_noise(grads["greedy"][i]) / gradient_noise(grads["raw"][i]) for i in idx]
    row["greedy_over_raw_interval"] = [float(np.percentile(ratio, 2.5)), float(np.percentile(ratio, 97.5))]
    path.write_text(json.dumps(row, indent=2) + "\n")
    print(row, flush=True)
    return row


def ties(out: Path, deals: int) -> dict:
    """Where the constant deviation's edge comes from: per card kind, the focal seat's share of
    auctions won, and of auctions where its bid ties the highest other bid, as the expert and as the
    constant deviation (deals 35,000,000.., every seat, two experts opposite)."""
    from arena_core.players import Decision
    from arena_games.megagem.bots import ExpertBidder

    path = out / "ties.json"
    if path.exists():
        return json.loads(path.read_text())
    const = json.loads((out / "constant.json").read_text())
    policy = ResidualPolicy.constant(const["rows"][const["best"]]["action"])
    game = make_game("megagem")
    expert = ExpertBidder()
    student = ResidualStudent(policy, expert)
    table: dict[str, dict[str, list[float]]] = {}
    for deal in range(35_000_000, 35_000_000 + deals):
        for seat in range(3):
            for who in ("expert", "constant"):
                players = [expert.act] * 3
                if who == "constant":
                    players[seat] = lambda d: student.act(d)[0]
                pos = game.start(deal)
                while not game.is_over(pos):
                    p = game.current_player(pos)
                    pos = game.act(pos, p, players[p](Decision.at(game, pos, p, deal)))
                for h in game.observation(pos.state, seat)["history"]:
                    kind = h["card"].split("_")[0]
                    other = max(b for j, b in enumerate(h["bids"]) if j != seat)
                    row = table.setdefault(f"{kind} {who}", {"won": [], "tied_top": [], "won_by_1": []})
                    row["won"].append(float(h["winner"] == seat))
                    row["tied_top"].append(float(h["bids"][seat] == other))
                    row["won_by_1"].append(float(h["winner"] == seat and h["bids"][seat] == other + 1))
    result = {
        "deals": [35_000_000, 35_000_000 + deals - 1],
        "rows": {
            k: {m: float(np.mean(v)) for m, v in r.items()} | {"auctions": len(r["won"])} for k, r in table.items()
        },
    }
    path.write_text(json.dumps(result, indent=2) + "\n")
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "stage", choices=["constant", "train", "evaluate", "transfer", "deviations", "noise", "ties", "report"]
    )
    p.add_argument("--out", default="runs/megagem-residual")
    p.add_argument("--seed", default="0", help="training seed (evaluate/transfer: a seed or 'constant')")
    p.add_argument("--steps", type=int, default=150)
    p.add_argument("--minutes", type=float, default=18.0, help="stop (resumably) after this long")
    p.add_argument("--deals", type=int, default=None, help="constant: tuning deals (60); evaluate: held-out (100)")
    p.add_argument("--first", type=int, default=None, help="evaluate: first deal seed (default 32,000,000)")
    p.add_argument("--deals-per-step", type=int, default=16)
    p.add_argument("--curve-every", type=int, default=25)
    p.add_argument("--curve-deals", type=int, default=16)
    p.add_argument("--lr", type=float, default=0.02)
    p.add_argument("--init-bias", type=float, default=3.0)
    p.add_argument("--control", choices=["greedy", "expert"], default="greedy")
    p.add_argument("--entropy", type=float, default=0.0)
    a = p.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    if a.stage == "constant":
        constant(out, a.deals or 60)
    elif a.stage == "train":
        cfg = TrainConfig(
            seed=int(a.seed),
            deals_per_step=a.deals_per_step,
            init_bias=a.init_bias,
            lr=a.lr,
            control=a.control,
            entropy=a.entropy,
        )
        train(out, int(a.seed), a.steps, a.minutes, a.curve_every, a.curve_deals, cfg)
    elif a.stage in ("evaluate", "transfer"):
        evaluate(out, a.seed, a.stage == "transfer", a.deals or 100, a.first)
    elif a.stage == "ties":
        print(json.dumps(ties(out, a.deals or 20), indent=1))
    elif a.stage == "noise":
        noise(out, a.seed, a.deals or 48)
    elif a.stage == "deviations":
        deviations(out, a.seed, a.deals or 20, 3)
    else:
        from train_megagem_residual_report import report

        try:
            report(out)
        except FileNotFoundError as exc:  # a stage not run yet: say which, not a traceback
            raise SystemExit(
                f"{exc.filename} is missing: run the stages the report reads first (constant, train --seed S, "
                "evaluate --seed S|constant, transfer; docs/benchmarks.md)"
            ) from None
    return 0


if __name__ == "__main__":
    sys.exit(main())
