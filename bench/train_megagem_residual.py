"""MegaGem: a student that starts at the expert and learns deviations (issue 30).

Numpy policy gradient over a residual menu on ``megagem_expert``'s bid, luck-controlled reward,
three training seeds, evaluated with ``arena compare`` on held-out deals. What trains is the
package's residual trainer (``arena_train.residual``, ``arena train`` with ``trainer =
"residual_pg"``; MegaGem's menu and features are its ``"residual"`` view,
:mod:`arena_games.megagem.residual`); this file drives the runs and writes the report's files.
Every stage is resumable and writes its results as it goes under ``--out`` (default
``runs/megagem-residual``):

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
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from arena_core.registry import make_game
from arena_core.stats import paired_t
from arena_games.megagem.residual import EXPERT_ACTION, FEATURES, MENU, ResidualPolicy, ResidualStudent
from arena_train import residual
from arena_train.residual import LinearStudent, ResidualConfig, session_for

Array = npt.NDArray[np.float64]


# ---------------------------------------------------------------------- training
@dataclass
class TrainConfig:
    """The stage's options, as ``arena_train.residual.ResidualConfig`` fields (defaults there)."""

    seed: int = 0
    deals_per_step: int = 16  # x every seat = episodes per step
    init_bias: float = 3.0  # logit of x1.0 at the start (the others 0)
    lr: float = 0.02
    control: str = "greedy"  # the reward's reference: "greedy" (the current greedy student) or "expert"
    entropy: float = 0.0  # entropy bonus per decision (in reward_scale units)

    def residual(self, **more: Any) -> dict[str, Any]:
        """The residual trainer's config fields for these options."""
        keys = dict(seed=self.seed, deals_per_step=self.deals_per_step, init_bias=self.init_bias, learning_rate=self.lr)
        return {**keys, "control": self.control, "entropy": self.entropy, **more}


def constant_student(action: int) -> LinearStudent:
    return LinearStudent.constant(len(FEATURES), len(MENU), EXPERT_ACTION, action)


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
    session = session_for(make_game("megagem"))
    ds = list(range(TUNING_FIRST, TUNING_FIRST + deals))
    for a, (label, _, _) in enumerate(MENU):
        if label in done["rows"] or label == "x1.0":
            continue
        t = time.perf_counter()
        session.student = constant_student(a)
        m = residual.greedy_margins(session, ds)
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


class _TimeUp(Exception):
    """The stage's wall-clock budget ran out: the run stops after a checkpointed step."""


def train(
    out: Path, seed: int, steps: int, minutes: float, curve_every: int, curve_deals: int, cfg: TrainConfig
) -> None:
    """``arena_train.residual`` for one seed into ``seed_<k>/run`` (continued from its latest checkpoint
    when there is one), stopped after ``minutes``; then the report's files: ``log.jsonl`` (the step
    rows), ``curve.jsonl`` (the curve deals' rows, with the margin over the best constant deviation
    on the same deals), ``train_config.json`` and ``policy/`` (the student)."""
    run = out / f"seed_{seed}"
    run.mkdir(parents=True, exist_ok=True)
    (run / "train_config.json").write_text(json.dumps(cfg.__dict__, indent=2) + "\n")
    first = residual.ResidualConfig.model_fields["eval_first"].default + seed * 1000
    curve_ds = list(range(first, first + curve_deals))
    const_path = run / "constant_curve.json"
    if not const_path.exists():  # the best constant deviation on this seed's curve deals
        best = json.loads((out / "constant.json").read_text())
        session = session_for(make_game("megagem"), constant_student(best["rows"][best["best"]]["action"]))
        const_path.write_text(json.dumps(residual.greedy_margins(session, curve_ds)))
    config = cfg.residual(
        name=f"megagem-residual-seed{seed}", game="megagem", steps=steps, eval_every=curve_every, eval_deals=curve_deals
    )
    ckpts = run / "run" / "checkpoints"
    if ckpts.exists() and any(ckpts.iterdir()):
        config["resume_from"] = str(run / "run")
    stop = time.perf_counter() + minutes * 60

    def progress(step: int, row: Any) -> None:
        if step % 10 == 0:
            print(json.dumps({k: v for k, v in row.items() if k != "eval_margins"}), flush=True)
        if time.perf_counter() > stop and step < steps:
            raise _TimeUp

    try:
        residual.TRAINER(config, run / "run", residual.Parts(progress=progress))
    except _TimeUp:
        pass
    report_files(run)


def report_files(run: Path) -> None:
    """``log.jsonl``, ``curve.jsonl`` and ``policy/`` of a seed from its run's metrics and student."""
    rows = [json.loads(x) for x in (run / "run" / "metrics.jsonl").read_text().splitlines() if x.strip()]
    const = np.array(json.loads((run / "constant_curve.json").read_text()))
    log = [{k: v for k, v in r.items() if not k.startswith("eval_")} for r in rows if r["step"] > 0]
    (run / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in log))
    curve = [
        {
            "step": r["step"],
            "episodes": r["episodes"],
            **_interval(r["eval_margins"]),
            "over_constant": _interval(list(np.array(r["eval_margins"]) - const)),
        }
        for r in rows
        if "eval_margins" in r
    ]
    (run / "curve.jsonl").write_text("".join(json.dumps(r) + "\n" for r in curve))
    last = sorted((run / "run" / "checkpoints").glob("step_*"))[-1]
    (run / "policy").mkdir(exist_ok=True)
    for name in ("config.json", "policy.npz"):
        shutil.copy(last / name, run / "policy" / name)
    print(f"{run.name}: step {curve[-1]['step'] if curve else 0}, {len(log)} steps logged", flush=True)


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
    from arena_games.megagem.residual import expert_read, menu_bids
    from arena_train.residual import margins, play_deal

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
    path = out / f"noise_{which}.json"
    if path.exists():
        return json.loads(path.read_text())
    game = make_game("megagem")
    config = ResidualConfig(
        game="megagem", steps=1, **TrainConfig(seed=0, deals_per_step=deals).residual(deal_base=36_000_000)
    )
    student = None if which == "init" else LinearStudent.load(out / f"seed_{which}/policy", EXPERT_ACTION)
    t = time.perf_counter()
    grads: dict = {}
    row = residual.train_step(session_for(game, student, config), keep=grads)
    row.update({"policy": which, "deals": [36_000_000, 36_000_000 + deals - 1], "wall_s": time.perf_counter() - t})
    # 95% intervals: bootstrap over episodes (2000 resamples, seeded)
    from arena_core.seeding import make_rng

    rng = make_rng(0, "noise bootstrap", which)
    n = len(grads["raw"])
    idx = [rng.integers(0, n, n) for _ in range(2000)]
    for key, name in (("raw", "noise_raw"), ("expert", "noise_expert_control"), ("greedy", "noise_greedy_control")):
        vals = [residual.gradient_noise(grads[key][i]) for i in idx]
        row[name + "_interval"] = [float(np.percentile(vals, 2.5)), float(np.percentile(vals, 97.5))]
    ratio = [residual.gradient_noise(grads["expert"][i]) / residual.gradient_noise(grads["raw"][i]) for i in idx]
    row["expert_over_raw_interval"] = [float(np.percentile(ratio, 2.5)), float(np.percentile(ratio, 97.5))]
    ratio = [residual.gradient_noise(grads["greedy"][i]) / residual.gradient_noise(grads["raw"][i]) for i in idx]
    row["greedy_over_raw_interval"] = [float(np.percentile(ratio, 2.5)), float(np.percentile(ratio, 97.5))]
    path.write_text(json.dumps(row, indent=2) + "\n")
    print(row, flush=True)
    return row


def ties(out: Path, deals: int) -> dict:
    """Where the constant deviation's edge comes from: per card kind, the focal seat's share of
    auctions won, and of auctions where its bid ties the highest other bid, as the expert and as the
    constant deviation (deals 35,000,000.., every seat, two experts opposite)."""
    from arena_core.players import Decision

    path = out / "ties.json"
    if path.exists():
        return json.loads(path.read_text())
    const = json.loads((out / "constant.json").read_text())
    policy = ResidualPolicy.constant(const["rows"][const["best"]]["action"])
    game = make_game("megagem")
    student = ResidualStudent(policy)
    expert = student.view.expert()
    table: dict[str, dict[str, list[float]]] = {}
    for deal in range(35_000_000, 35_000_000 + deals):
        for seat in range(3):
            for who in ("expert", "constant"):
                players = [expert.act] * 3
                if who == "constant":
                    players[seat] = student.act
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
