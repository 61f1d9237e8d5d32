"""Kuhn poker to Nash by self-play, measured exactly (issue 17).

The tiny random-weight language model plays both seats at once (GRPO self-play, a running
baseline per seat), and at every evaluation the exact exploitability (NashConv / 2) of its
sampling policy over Kuhn's 12 information states is computed, for the last iterate and for
the average policy (the uniform mixture over the evaluation snapshots, one drawn per game,
made exact as its realisation-equivalent behaviour policy). Beside it: vanilla CFR's
average policy at the same number of game traversals (x axis: episodes for the learner;
for CFR, one traversal = one deal walked to all its terminals, 12 per iteration).

    python bench/train_kuhn_nash.py run --seed 0 [--episodes 300000]   # one seed -> runs/kuhn_nash/seed_0
    python bench/train_kuhn_nash.py report                            # docs/benchmarks.md section + plot

``run`` records episodes per second; ``report`` reads whatever the seeds reached.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from _report import machine, write_section  # noqa: E402

RUNS = ROOT / "runs" / "kuhn_nash"
DOCS = ROOT / "docs"
GOAL = 0.02

CONFIG = dict(
    name="kuhn-nash",
    game="kuhn_poker",
    self_play=True,
    baseline="role",
    baseline_decay=0.95,
    deals_per_step=16,
    group_size=8,  # 128 episodes per step
    temperature=3.0,
    kl_beta=0.0,
    entropy_beta=0.1,
    optim=dict(learning_rate=3e-5, schedule="constant"),
    eval=dict(anchor="kuhn_king_only", every=25, exploitability=True),
    checkpoint_every=0,
    plot=True,
)


def run(seed: int, episodes: int) -> Path:
    from arena_train.grpo import GRPOTrainer

    per_step = CONFIG["deals_per_step"] * CONFIG["group_size"]
    steps = max(1, episodes // per_step)
    out = RUNS / f"seed_{seed}"
    if out.exists():
        shutil.rmtree(out)
    timing = out.parent / f"seed_{seed}.timing.jsonl"
    timing.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with timing.open("w") as fh:

        def progress(step: int, row: dict) -> None:
            if "eval_exploitability" in row:
                fh.write(json.dumps({"step": step, "episodes": row["episodes_total"], "wall_s": round(time.perf_counter() - started, 2)}) + "\n")
                fh.flush()

        trainer = GRPOTrainer({**CONFIG, "seed": seed, "steps": steps}, out, progress=progress)
        trainer.run()
    return out


def cfr_curve(max_traversals: int, points: int = 60) -> list[tuple[int, float]]:
    import numpy as np

    from arena_core.registry import make_game
    from arena_train.exact import CFR, exploitability

    game = make_game("kuhn_poker")
    cfr = CFR(game)
    marks = sorted({max(1, int(x)) for x in np.geomspace(1, max(1, max_traversals // cfr.traversals_per_iteration), points)})
    out = []
    for m in marks:
        cfr.iterate(m - cfr.iterations)
        out.append((cfr.iterations * cfr.traversals_per_iteration, exploitability(game, cfr.average()).exploitability))
    return out


def load_runs() -> dict[int, dict]:
    runs = {}
    for d in sorted(RUNS.glob("seed_*")):
        if not d.is_dir():
            continue
        rows = [json.loads(line) for line in (d / "metrics.jsonl").read_text().splitlines() if line.strip()] if (d / "metrics.jsonl").exists() else []
        evals = [r for r in rows if "eval_exploitability" in r]
        timing = d.parent / f"{d.name}.timing.jsonl"
        times = [json.loads(line) for line in timing.read_text().splitlines() if line.strip()] if timing.exists() else []
        manifest = json.loads((d / "manifest.json").read_text()) if (d / "manifest.json").exists() else {}
        if evals:
            runs[int(d.name.split("_")[1])] = {"evals": evals, "times": times, "planned_steps": manifest.get("config", {}).get("steps"),
                                              "status": manifest.get("status", "running or stopped")}
    return runs


def report() -> None:
    runs = load_runs()
    if not runs:
        raise SystemExit("no runs under runs/kuhn_nash; run `python bench/train_kuhn_nash.py run --seed N` first")
    max_eps = max(r["evals"][-1]["episodes_total"] for r in runs.values())
    cfr = cfr_curve(max(max_eps, 12_000))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, key, title in ((axes[0], "eval_avg_exploitability", "average policy"), (axes[1], "eval_exploitability", "last iterate")):
        for seed, r in sorted(runs.items()):
            ax.plot([max(e["episodes_total"], 1) for e in r["evals"]], [e[key] for e in r["evals"]], label=f"GRPO self-play seed {seed}", lw=1)
        ax.plot([c[0] for c in cfr], [c[1] for c in cfr], "k--", label="CFR (average policy)", lw=1.5)
        ax.axhline(GOAL, color="red", lw=0.8, ls=":", label=f"goal {GOAL}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("episodes (learner) / deal traversals (CFR)")
        ax.set_title(f"Kuhn poker: exact exploitability, {title}")
        ax.grid(alpha=0.3, which="both")
    axes[0].set_ylabel("exploitability (NashConv / 2)")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(DOCS / "train_kuhn_nash.png", dpi=90)
    plt.close(fig)

    def cfr_at(n: int) -> float:
        best = [c for c in cfr if c[0] <= n]
        return best[-1][1] if best else float("nan")

    lines = []
    met = 0
    rates = []
    for seed, r in sorted(runs.items()):
        last = r["evals"][-1]
        best_avg = min(e["eval_avg_exploitability"] for e in r["evals"])
        best_last = min(e["eval_exploitability"] for e in r["evals"])
        done = last["step"] >= (r["planned_steps"] or 0)
        met += int(last["eval_avg_exploitability"] <= GOAL)
        if r["times"] and r["times"][-1]["wall_s"] > 0:
            rates.append(r["times"][-1]["episodes"] / r["times"][-1]["wall_s"])
        lines.append(
            f"| {seed} | {last['episodes_total']:,}{'' if done else ' (stopped)'} | {last['eval_avg_exploitability']:.4f} | {best_avg:.4f} | "
            f"{last['eval_exploitability']:.4f} | {best_last:.4f} | {cfr_at(last['episodes_total']):.4f} | {last['eval_mean']:+.3f} |"
        )
    cfg = {k: v for k, v in CONFIG.items() if k not in ("name", "plot", "checkpoint_every")}
    rate = f"{min(rates):.0f}-{max(rates):.0f}" if rates else "n/a"
    verdict = (
        f"**Goal (average-policy exploitability <= {GOAL} in >= 3 of 5 seeds within 300,000 episodes): "
        + ("met" if met >= 3 and len(runs) >= 5 else "not met")
        + f"** ({met} of {len(runs)} seeds at or below {GOAL} at their last evaluation)."
    )
    body = f"""### Kuhn poker to Nash by self-play, exact exploitability (bench/train_kuhn_nash.py)

The tiny random-weight model in both seats at once (GRPO self-play, role-conditioned running
baseline per seat), evaluated exactly at every evaluation: exploitability (NashConv / 2) of
its sampling policy (temperature {CONFIG['temperature']}) over Kuhn's 12 information states,
for the last iterate and for the average policy (uniform mixture over the evaluation
snapshots, one drawn per game, computed exactly as its realisation-equivalent behaviour
policy). CFR: vanilla tabular CFR's average policy, x = deal traversals (12 per iteration).
Config: `{json.dumps(cfg)}`. Machine: {machine()}; episodes per second (self-play
episodes, including evaluations, on 2 cores shared with other jobs): {rate}.

| seed | episodes | avg-policy expl. (last eval) | best | last-iterate expl. | best | CFR at same traversals | greedy value vs `kuhn_king_only` |
|---|---|---|---|---|---|---|---|
{chr(10).join(lines)}

{verdict} The first player's Nash value is -1/18; a uniform random policy's exploitability is
0.458 and always-bet 1/3 (see the
exactness tests in `tests/test_train_exact.py`). Plot: [train_kuhn_nash.png](train_kuhn_nash.png).
"""
    write_section("train_kuhn_nash", body)
    print(body)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--seed", type=int, required=True)
    r.add_argument("--episodes", type=int, default=300_000)
    sub.add_parser("report")
    args = parser.parse_args(argv)
    if args.cmd == "run":
        print(run(args.seed, args.episodes))
    else:
        report()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
