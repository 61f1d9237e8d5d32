"""Training evidence (issue 8): GRPO on Kuhn poker from the tiny random-weight model, the
numpy policy-gradient baseline, and MegaGem expert iteration / GRPO against the
fixed-fraction heuristic. Writes the '## Training' section of docs/benchmarks.md and plots
under docs/.

    python bench/train_bench.py [--quick] [--skip-megagem]

Kuhn: the opponent bets or calls with the king and checks or folds otherwise. The best
response earns 1/4 per game (all deals, seats alternating); the best card-blind policy 1/6.
We report the exact value of the trained greedy policy over all six deals and both seats,
its mean on held-out sampled deals (each deal in both seats), and paired bootstrap intervals
of its improvement over the initial model and over the best card-blind policy on those deals.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from _report import machine, write_section  # noqa: E402
from arena_core.players import BasePlayer  # noqa: E402
from arena_core.registry import make_game, make_player  # noqa: E402
from arena_core.seeding import derive_seed  # noqa: E402
from arena_train.rollout import (  # noqa: E402
    PlayerLearner,
    distinct_deals,
    expected_return,
    paired_bootstrap,
    per_deal_means,
    play_episodes,
    rotated_specs,
)

DOCS = ROOT / "docs"

KUHN_GRPO = {
    "name": "kuhn-grpo-bench",
    "game": "kuhn_poker",
    "steps": 40,
    "deals_per_step": 8,
    "group_size": 8,
    "group_draws": "shared",  # the plays of a group share the deal (and opponents' draws): the scheme these figures were made with
    "engine": "reference",  # the engine they were made with
    "temperature": 3.0,
    "kl_beta": 0.0,
    "entropy_beta": 0.3,
    "optim": {"learning_rate": 1e-4, "schedule": "linear"},
    "pool": {"players": ["kuhn_king_only"]},
    "eval": {"anchor": "kuhn_king_only", "every": 5, "deals": 64},
}


class CardBlindBest(BasePlayer):
    """The best policy that ignores its own card against kuhn_king_only: check first, fold
    to a bet, bet when checked to (worth 1/6)."""

    name = "kuhn_card_blind"

    def act(self, decision):
        by = {str(a): a for a in decision.legal_actions}
        hist = decision.observation["history"]
        return by["bet"] if hist == ["pass"] else by["pass"]


def kuhn_exact(learner_decide, game) -> float:
    opp = make_player("kuhn_king_only")

    def dist(g, pos, seat):
        from arena_train.rollout import Request

        return [(learner_decide([Request(g, pos, seat, 0, 0)])[0].action, 1.0)]

    return float(
        np.mean([expected_return(game, d, s, dist, {1 - s: opp}) for d in distinct_deals(game, 6) for s in (0, 1)])
    )


def heldout_values(game, learner, deals) -> list[float]:
    specs = rotated_specs(game, deals, lambda seat: {1 - seat: make_player("kuhn_king_only")}, key_seed=12345)
    return per_deal_means(play_episodes(game, specs, learner))


def _exact_probe(session, game, trace: list, reached: dict, clock: dict):
    """The trainer's progress hook: the greedy policy's exact Kuhn value at each step into
    ``trace``; the first step it reaches 0.25 into ``reached``; evaluation time into ``clock``."""

    def progress(step, row):
        t0 = time.perf_counter()
        value = kuhn_exact(session.policy(temperature=0.0).decide, game)
        trace.append((step, value))
        if value >= 0.25 - 1e-9 and "step" not in reached:
            reached.update(step=step, train_s=t0 - clock["start"] - clock["eval_s"])
        clock["eval_s"] += time.perf_counter() - t0

    return progress


def kuhn_grpo(seeds, heldout: int, steps: int) -> dict:
    from arena_train import grpo
    from arena_train.run import RunDir
    from arena_train.trainer import Parts

    game = make_game("kuhn_poker")
    deals = [derive_seed(2026, "bench_heldout", i) for i in range(heldout)]
    blind = heldout_values(game, PlayerLearner(CardBlindBest()), deals)
    rows = []
    plot_dir = None
    for seed in seeds:
        run_dir = Path(tempfile.mkdtemp(prefix=f"kuhn-grpo-{seed}-"))
        run = RunDir.claim(run_dir)
        trainer = grpo.start(grpo.TRAINER.parse(dict(KUHN_GRPO, seed=seed, steps=steps)), run, Parts())
        trace: list[tuple[int, float]] = []
        reached: dict = {}
        clock = {"eval_s": 0.0, "start": time.perf_counter()}

        probe = _exact_probe(trainer, game, trace, reached, clock)
        initial_values = heldout_values(game, trainer.policy(temperature=0.0), deals)
        initial_exact = kuhn_exact(trainer.policy(temperature=0.0).decide, game)
        clock["start"] = t0 = time.perf_counter()
        summary = grpo.run_steps(run, trainer, Parts(progress=probe))
        wall = time.perf_counter() - t0 - clock["eval_s"]
        final_exact = kuhn_exact(trainer.policy(temperature=0.0).decide, game)
        values = heldout_values(game, trainer.policy(temperature=0.0), deals)
        vs_initial = paired_bootstrap(values, initial_values, seed=seed, resamples=4000)
        vs_blind = paired_bootstrap(values, blind, seed=seed, resamples=4000)
        rows.append(
            {
                "seed": seed,
                "initial_exact": initial_exact,
                "final_exact": final_exact,
                "heldout_mean": float(np.mean(values)),
                "heldout_se": float(np.std(values) / np.sqrt(len(values))),
                "vs_initial": vs_initial.__dict__,
                "vs_card_blind": vs_blind.__dict__,
                "reached_step": reached.get("step"),
                "reached_train_s": reached.get("train_s"),
                "wall_s": wall,
                "status": summary.status,
                "trace": trace,
            }
        )
        if plot_dir is None:
            shutil.copy(run_dir / "metrics.png", DOCS / "train_kuhn_grpo_metrics.png")
            plot_dir = run_dir
        print(json.dumps({k: v for k, v in rows[-1].items() if k != "trace"}), flush=True)
    return {"rows": rows, "blind_heldout": float(np.mean(blind)), "heldout_deals": heldout}


def kuhn_pg(seeds, heldout: int) -> list[dict]:
    from arena_train import pg
    from arena_train.pg import NumericLearner
    from arena_train.run import RunDir
    from arena_train.trainer import Parts

    game = make_game("kuhn_poker")
    deals = [derive_seed(2026, "bench_heldout", i) for i in range(heldout)]
    out = []
    for seed in seeds:
        t0 = time.perf_counter()
        run = RunDir.claim(tempfile.mkdtemp())
        config = pg.TRAINER.parse(
            dict(
                game="kuhn_poker",
                seed=seed,
                steps=30,
                episodes_per_step=64,
                learning_rate=0.05,
                opponents=["kuhn_king_only"],
                eval_deals=16,
                bootstrap=200,
            )
        )
        trainer = pg.start(config, run, Parts())
        pg.run_steps(run, trainer, Parts())
        wall = time.perf_counter() - t0
        learner = NumericLearner(trainer.policy, greedy=True)
        out.append(
            {
                "seed": seed,
                "final_exact": kuhn_exact(learner.decide, game),
                "heldout_mean": float(np.mean(heldout_values(game, learner, deals))),
                "wall_s": wall,
            }
        )
        print(json.dumps(out[-1]), flush=True)
    return out


def plot_kuhn(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.2))
    for row in result["rows"]:
        steps = [0] + [s for s, _ in row["trace"]]
        vals = [row["initial_exact"]] + [v for _, v in row["trace"]]
        ax.plot(steps, vals, label=f"seed {row['seed']}")
    ax.axhline(0.25, color="k", ls="--", lw=1, label="best response 1/4")
    ax.axhline(1 / 6, color="grey", ls=":", lw=1, label="best card-blind 1/6")
    ax.set_xlabel("GRPO step")
    ax.set_ylabel("exact value of greedy policy")
    ax.set_title("Kuhn poker vs 'bet/call with the king', tiny model")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def megagem_ei(config: dict) -> dict:
    from arena_train import expert_iteration
    from arena_train.trainer import Parts

    run_dir = Path(tempfile.mkdtemp(prefix="megagem-ei-"))
    t0 = time.perf_counter()
    summary = expert_iteration.TRAINER(
        config, run_dir, Parts(progress=lambda r, row: print("ei round", r, json.dumps(row), flush=True))
    )
    out = {"run_id": summary.run_id, "metrics": summary.metrics, "report": summary.report}
    out["wall_s"] = time.perf_counter() - t0
    shutil.copy(run_dir / "metrics.png", DOCS / "train_megagem_ei_metrics.png")
    return out


def megagem_grpo(config: dict) -> dict:
    from arena_train import grpo
    from arena_train.trainer import Parts

    run_dir = Path(tempfile.mkdtemp(prefix="megagem-grpo-"))
    t0 = time.perf_counter()
    summary = grpo.TRAINER(
        config,
        run_dir,
        Parts(
            progress=lambda s, row: print(
                "grpo step", s, json.dumps({k: v for k, v in row.items() if isinstance(v, (int, float))}), flush=True
            )
        ),
    )
    shutil.copy(run_dir / "metrics.png", DOCS / "train_megagem_grpo_metrics.png")
    return {
        "final_eval": summary.final_eval,
        "status": summary.status,
        "wall_s": time.perf_counter() - t0,
        "first": summary.metrics[0],
    }


def fmt_iv(iv: dict) -> str:
    return f"{iv['mean']:+.3f} [{iv['low']:+.3f}, {iv['high']:+.3f}]"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="one seed, fewer held-out deals (a smoke run; does not write docs)"
    )
    parser.add_argument("--skip-megagem", action="store_true")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--parts", default="kuhn,pg,ei,grpo", help="which parts to run; the others come from --reuse")
    parser.add_argument(
        "--reuse", default=None, help="a train_bench.json from an earlier run (written to the temp directory)"
    )
    args = parser.parse_args(argv)
    seeds = [0] if args.quick else list(range(args.seeds))
    heldout = 400 if args.quick else 8000

    previous = json.loads(Path(args.reuse).read_text()) if args.reuse else {}
    parts = set(args.parts.split(","))
    kuhn = kuhn_grpo(seeds, heldout, KUHN_GRPO["steps"]) if "kuhn" in parts else previous["kuhn"]
    if "kuhn" in parts:
        plot_kuhn(kuhn, DOCS / "train_kuhn_grpo.png")
    pg = kuhn_pg(seeds, heldout) if "pg" in parts else previous["pg"]
    mg = None
    if not args.skip_megagem:
        ei_cfg = {
            "name": "megagem-ei-bench",
            "game": "megagem",
            "seed": 0,
            "expert": "megagem_expert",
            "opponents": ["megagem_heuristic"],
            "rounds": 3,
            "deals_per_round": 8,
            "epochs": 3,
            "eval_deals": 1 if args.quick else 32,
            "optim": {"learning_rate": 3e-4},
        }
        grpo_cfg = {
            "name": "megagem-grpo-bench",
            "game": "megagem",
            "seed": 0,
            "steps": 2 if args.quick else 12,
            "deals_per_step": 2,
            "group_size": 4,
            "group_draws": "shared",  # as the figures were made
            "engine": "reference",
            "temperature": 1.0,
            "kl_beta": 0.0,
            "optim": {"learning_rate": 1e-4},
            "reward": {"kind": "margin", "margin_scale": 20.0},
            "pool": {"players": ["megagem_heuristic"]},
            "eval": {"anchor": "megagem_heuristic", "every": 0, "deals": 2 if args.quick else 16, "bootstrap": 2000},
        }
        old_mg = previous.get("megagem") or {}
        mg = {
            "ei": megagem_ei(ei_cfg) if "ei" in parts else old_mg["ei"],
            "grpo": megagem_grpo(grpo_cfg) if "grpo" in parts else old_mg["grpo"],
            "ei_cfg": ei_cfg,
            "grpo_cfg": grpo_cfg,
        }
    (Path(tempfile.gettempdir()) / "train_bench.json").write_text(
        json.dumps({"kuhn": kuhn, "pg": pg, "megagem": mg}, default=str, indent=1)
    )
    if args.quick:
        print("quick run: docs not written")
        return
    write_section("training", render(kuhn, pg, mg))
    print((DOCS / "benchmarks.md").read_text().split("<!-- BEGIN training -->")[1][:4000])


def render(kuhn: dict, pg: list[dict], mg: dict | None) -> str:
    lines = [
        "## Training (bench/train_bench.py)",
        "",
        f"Machine: {machine()}; MLX on CPU. Reproduce with `python bench/train_bench.py` (about 10-15 minutes on 2 cores).",
        "",
        "### Kuhn poker: GRPO from the tiny random-weight model",
        "",
        "Opponent `kuhn_king_only` (bet or call with the king, check or fold otherwise). Best response: **0.25** per game "
        "(all deals, seats alternating); best card-blind policy: **1/6 = 0.167**. Config: "
        f"`{json.dumps({k: v for k, v in KUHN_GRPO.items() if k not in ('name', 'eval')})}` (full fine-tuning; each step = "
        "8 deals x 2 seats x group of 8). 'Exact' is the greedy policy's expected value over all 6 deals x 2 seats; 'held-out' is "
        f"the mean over {kuhn['heldout_deals']} sampled deals never used in training, each played in both seats; intervals are 95% "
        "paired bootstrap intervals over those deals.",
        "",
        "| seed | exact value: initial -> final | held-out mean (SE) | improvement vs initial | improvement vs best card-blind | first step at 0.25 (train s) |",
        "|---|---|---|---|---|---|",
    ]
    for r in kuhn["rows"]:
        reach = f"{r['reached_step']} ({r['reached_train_s']:.0f} s)" if r["reached_step"] else "not reached"
        lines.append(
            f"| {r['seed']} | {r['initial_exact']:+.3f} -> **{r['final_exact']:+.3f}** | {r['heldout_mean']:+.3f} ({r['heldout_se']:.3f}) | "
            f"{fmt_iv(r['vs_initial'])} | {fmt_iv(r['vs_card_blind'])} | {reach} |"
        )
    lines += [
        "",
        f"Best card-blind policy on the same held-out deals: {kuhn['blind_heldout']:+.3f}. Training time excludes the bench's exact "
        "evaluation after every step. Plot: [train_kuhn_grpo.png](train_kuhn_grpo.png) (exact value per step), "
        "[train_kuhn_grpo_metrics.png](train_kuhn_grpo_metrics.png) (the run's own metrics plot).",
        "",
        "Numpy policy-gradient baseline over the 9-float observation encoding (linear softmax, REINFORCE, 30 steps x 64 episodes):",
        "",
        "| seed | exact value | held-out mean | wall s |",
        "|---|---|---|---|",
    ]
    lines += [f"| {r['seed']} | {r['final_exact']:+.3f} | {r['heldout_mean']:+.3f} | {r['wall_s']:.1f} |" for r in pg]
    grpo_ok = sum(1 for r in kuhn["rows"] if r["final_exact"] >= 0.25 - 1e-9)
    pg_ok = sum(1 for r in pg if r["final_exact"] >= 0.25 - 1e-9)
    lines += [
        "",
        f"GRPO reached the best response in {grpo_ok} of {len(kuhn['rows'])} seeds; the policy-gradient baseline in {pg_ok} of {len(pg)} "
        "(the others stayed at the card-blind value). Seeds that end at the same greedy best response have identical held-out numbers: "
        "the policy and the opponent are deterministic, so only the sampled deals vary, and they are the same deals for every seed.",
    ]
    if mg:
        ei = mg["ei"]["report"]
        lines += [
            "",
            "### MegaGem against the fixed-fraction heuristic",
            "",
            "Compact view (about 40 tokens, key numbers last, bids on a 19-value grid with one token each). Values are the learner's "
            f"score minus the mean of the two `megagem_heuristic` opponents, per deal averaged over the 3 seats, on {ei['eval_deals']} "
            "held-out deals.",
            "",
            f"Expert iteration (`{json.dumps({k: mg['ei_cfg'][k] for k in ('rounds', 'deals_per_round', 'epochs')})}`, full fine-tuning, "
            f"{mg['ei']['wall_s']:.0f} s):",
            "",
            "| policy | margin vs heuristics |",
            "|---|---|",
            f"| tiny model, initial | {ei['initial_margin']:+.1f} |",
            f"| student after expert iteration | {ei['student_margin']:+.1f} |",
            f"| analytic expert (any bid) | {ei['expert_margin']:+.1f} |",
            f"| analytic expert restricted to the grid (the student's ceiling) | {ei['grid_expert_margin']:+.1f} |",
            "",
            f"Student minus initial: {fmt_iv(ei['student_minus_initial'])}; grid expert minus student: {fmt_iv(ei['grid_expert_minus_student'])}; "
            f"recovered fraction of the expert's advantage: **{ei['recovered_fraction']:.2f}**; agreement with the expert's choice on held-out "
            f"states: {ei['agreement_initial']:.2f} -> {ei['agreement_student']:.2f}. Plot: [train_megagem_ei_metrics.png](train_megagem_ei_metrics.png).",
        ]
        g = mg["grpo"]
        fe = g["final_eval"] or {}
        lines += [
            "",
            f"GRPO from scratch (margin reward tanh(margin/20) + 0.1 first-place bonus, {mg['grpo_cfg']['steps']} steps x "
            f"{mg['grpo_cfg']['deals_per_step']} deals x 3 seats x group of {mg['grpo_cfg']['group_size']}, {g['wall_s']:.0f} s): "
            f"on {mg['grpo_cfg']['eval']['deals']} held-out deals x 3 seats, own score {g['first'].get('eval_mean', float('nan')):.1f} -> {fe.get('eval_mean', float('nan')):.1f} "
            f"(paired improvement {fe.get('eval_improvement', float('nan')):+.1f} [{fe.get('eval_improvement_low', float('nan')):+.1f}, {fe.get('eval_improvement_high', float('nan')):+.1f}]), "
            f"margin over the heuristics' mean {g['first'].get('eval_margin', float('nan')):+.1f} -> **{fe.get('eval_margin', float('nan')):+.1f}**, "
            f"first place {g['first'].get('eval_win_rate', float('nan')):.2f} -> **{fe.get('eval_win_rate', float('nan')):.2f}** of games (1/3 is parity); "
            f"status {g['status']}. Plot: [train_megagem_grpo_metrics.png](train_megagem_grpo_metrics.png).",
        ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
