"""Kuhn without the floor, by the language model (issue 31, point 5).

The GRPO self-play runs of ``bench/train_kuhn_nash.py`` (the tiny Kuhn-only model in both seats,
exact exploitability every 3,200 episodes) with the changes the issue names: the average policy
weighted by the snapshot's step (``eval.average = "linear"``: realisation-weighted, the random
start weighing nothing), the entropy bonus annealed, and a proximal KL toward a magnet reset to
the learner every few updates (R-NaD / magnetic mirror descent style). Configs are tried on the
tuning seeds :data:`TUNING_SEEDS` only; the verdict is on :data:`VERDICT_SEEDS`, never used to choose.

    python bench/train_kuhn_nash.py run --seed 100 --variant <CHOSEN>   # one run -> runs/kuhn_nash/<variant>/
    python bench/train_kuhn_lm_floor.py collect    # finished runs -> bench/results/kuhn_lm/<variant>/seed_<k>.jsonl
    python bench/train_kuhn_lm_floor.py report     # the section of docs/benchmarks.md and its plot

``collect`` keeps what the verdict needs (every evaluation, and the same run's average with equal
snapshot weights for comparison) in small committed files, since ``runs/`` is not committed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import train_kuhn_nash as kn  # noqa: E402
from _report import machine, write_section  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "kuhn_lm"
GOAL = kn.GOAL
BUDGET = 300_000
#: seeds every trial below ran on (the config was chosen on them); never in the verdict
TUNING_SEEDS = (0, 1)
#: fresh seeds, run only with the chosen config
VERDICT_SEEDS = (100, 101, 102, 103, 104)
#: the configs tried for this point (all in ``train_kuhn_nash.ROUND3``), in the order they were tried
TRIALS = (
    "p5_lin_e0.05to0.02",
    "p5_lin_e0.05to0.02_prox0.2_m50",
    "p5_lin_e0.05to0.02_prox0.4_m50",
    "p5_lin_e0.05to0.02_prox0.2_32x4",
    "p5_lin_e0.05to0.02_prox0.2_64x4",
    "p5_lin_e0.05to0.02_mag0.25_m400",
    "p5_lin_e0.05to0.02_mag1.0_m100",
    "p5_lin_e0.05to0.02_mag0.25_m200",
    "p5_lin_e0.05to0.02_mag0.25_m400_lr1.8e-4",
)
#: the config run on the verdict seeds
CHOSEN = "p5_lin_e0.05to0.02_mag0.25_m200"
#: the issue-17 five-seed config these change (its five seeds are in that section of the docs)
BASE = kn.FINAL


#: why the chosen config, and what the trials show (written from the tuning seeds' rows above)
READING = """**Reading of the trials.** The step-weighted average alone (first row) brings the average under
0.02 but leaves the last iterate far off (0.083). A KL toward a magnet reset every 50 updates (a
proximal term) halves that (0.027-0.044) and gives the lowest averages; larger steps of 128 or 256
episodes, which cut the gradient noise by 2 or 4, do not move the last iterate (0.032, 0.027). The
policy drifts slowly rather than jitters: on seed 1 of the 50-update magnet the equal-weights
mixture of its last 3, 6 or 10 snapshots is as far off as the last one (0.042-0.045), one seat
still bluffing the jack after a check at 0.14 where Nash says 1/3 while the learning rate runs out.
A magnet held for 400
updates (25,600 episodes, as in the numpy runs) lets the last iterate settle (0.024, 0.014) but
starts slowly, so the average misses (0.021, 0.020); held for 200 updates it sits between
(average 0.011, 0.017; last iterate 0.020, 0.032), the only config with both averages under 0.02
and a last iterate near it, so it was run on the fresh seeds. A stronger magnet (KL 1.0, reset
every 100 updates) is too slow to start within 300,000 episodes. After the verdict one more trial
ran on the tuning seeds (last rows: the 400-update magnet at 1.5 times the learning rate, for a
faster start); it missed both goals on seed 0 (average 0.0217, last iterate 0.0265), so no second
config went to fresh seeds (one would have been judged on seeds other than 100-104)."""


def changes(variant: str) -> dict:
    """What ``variant`` changes in the base config (a flat dict; nested dicts by their changed keys)."""
    base, new = kn.ROUND3[BASE], kn.ROUND3[variant]
    out = {}
    for key in sorted(set(base) | set(new)):
        if isinstance(new.get(key), dict) and isinstance(base.get(key), dict):
            sub = {k: v for k, v in new[key].items() if base[key].get(k) != v}
            if sub:
                out[key] = sub
        elif base.get(key) != new.get(key):
            out[key] = new.get(key)
    return out


def collect_run(run_dir: Path, dest: Path) -> Path | None:
    """One finished run -> ``dest``: a row per evaluation (episodes, last iterate, average), then a
    row with the equal-weights average of the same snapshots and the wall time. None if unfinished."""
    from arena_core.registry import make_game
    from arena_train.exact import average_policy, exploitability

    manifest = json.loads((run_dir / "manifest.json").read_text()) if (run_dir / "manifest.json").exists() else {}
    if manifest.get("steps_done") != manifest.get("config", {}).get("steps"):
        return None
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines() if line.strip()]
    evals = [r for r in rows if "eval_exploitability" in r]
    state = json.loads(sorted((run_dir / "checkpoints").glob("step_*/state.json"))[-1].read_text())
    tables = [{k: {int(a): p for a, p in d.items()} for k, d in t.items()} for t in state["policy_tables"]]
    game = make_game("kuhn_poker")
    uniform = exploitability(game, average_policy(game, tables)).exploitability
    dest.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps(
            {
                "step": r["step"],
                "episodes": r["episodes_total"],
                "last_iterate": r["eval_exploitability"],
                "average": r["eval_avg_exploitability"],
            }
        )
        for r in evals
    ]
    lines.append(
        json.dumps(
            {
                "done": True,
                "average_weights": manifest["config"]["eval"].get("average", "uniform"),
                "uniform_average": uniform,
                "wall_s": manifest.get("wall_s"),
            }
        )
    )
    dest.write_text("\n".join(lines) + "\n")
    return dest


def collect(runs: Path = kn.RUNS, out: Path = RESULTS) -> list[Path]:
    written = []
    for variant in TRIALS:
        for run_dir in sorted((runs / variant).glob("seed_*")):
            if run_dir.is_dir():
                path = collect_run(run_dir, out / variant / f"{run_dir.name}.jsonl")
                if path:
                    written.append(path)
    return written


def load(out: Path = RESULTS) -> dict[str, dict[int, dict]]:
    """variant -> seed -> {"evals": [...], "final": {...}} from the collected files."""
    found: dict[str, dict[int, dict]] = {}
    for path in sorted(out.glob("*/seed_*.jsonl")):
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        found.setdefault(path.parent.name, {})[int(path.stem.split("_")[1])] = {
            "evals": [r for r in rows if "episodes" in r],
            "final": rows[-1],
        }
    return found


def _summary(vals: list[float]) -> str:
    from arena_core.stats import paired_t, wilson_interval

    k = sum(v <= GOAL for v in vals)
    wl, wh = wilson_interval(k, len(vals))
    mean, low, high, _ = paired_t(vals)
    return f"mean {mean:.4f} (t 95% [{low:.4f}, {high:.4f}]); {k} of {len(vals)} <= {GOAL} (Wilson 95% [{wl:.2f}, {wh:.2f}])"


def verdict(runs: dict[int, dict]) -> tuple[bool, int, int, int]:
    """(met, seeds run, average <= goal, last iterate <= goal) on the verdict seeds."""
    fresh = [runs[s] for s in VERDICT_SEEDS if s in runs]
    avg = sum(r["evals"][-1]["average"] <= GOAL for r in fresh)
    last = sum(r["evals"][-1]["last_iterate"] <= GOAL for r in fresh)
    return len(fresh) == len(VERDICT_SEEDS) and avg == len(fresh) and last >= 3, len(fresh), avg, last


def _verdict_reading(fresh: list[dict]) -> str:
    """What the verdict seeds show, in numbers read from them."""
    if len(fresh) < len(VERDICT_SEEDS):
        return ""
    avg = [r["evals"][-1]["average"] for r in fresh]
    last = [r["evals"][-1]["last_iterate"] for r in fresh]
    best = [min(e["last_iterate"] for e in r["evals"]) for r in fresh]
    tail = [sum(e["last_iterate"] <= GOAL for e in r["evals"][-10:]) for r in fresh]
    span = min(
        (r["evals"][-1]["episodes"] - r["evals"][-11]["episodes"] for r in fresh if len(r["evals"]) > 10), default=0
    )
    k_avg, k_last = sum(v <= GOAL for v in avg), sum(v <= GOAL for v in last)
    parts = [
        f"{'holds' if ok else 'does not hold'} for the {name} ({k} of {len(fresh)}, goal {goal})"
        for name, k, goal, ok in (
            ("average policy", k_avg, len(fresh), k_avg == len(fresh)),
            ("last iterate", k_last, 3, k_last >= 3),
        )
    ]
    conclusion = f"So for the language model point 5 {parts[0]} and {parts[1]}."
    return f"""**Reading.** The step-weighted average ends at or under {GOAL} on {k_avg} of {len(fresh)} fresh
seeds ({min(avg):.4f}-{max(avg):.4f}); the last iterate on {k_last} of {len(fresh)}: it ends at
{min(last):.4f}-{max(last):.4f}, after dipping to {min(best):.4f}-{max(best):.4f} at some evaluation,
and each seed's last ten evaluations (the final {span:,} episodes or more) are at or under {GOAL}
{min(tail)}-{max(tail)} times out of 10: the iterate wanders around the equilibrium at about that distance while the
learning rate runs out. The trials show the trade within 300,000 episodes: the magnet held 400
updates settles the last iterate better (0.024, 0.014 on the tuning seeds) but its slow start costs
the average (0.021, 0.020); one held 50 updates gives the lowest averages and the loosest last
iterates. The numpy learner of the previous section meets both goals with a softmax and a running
baseline per information state and plain SGD; the language model shares its weights across
states, has one baseline per seat, and AdamW normalises its steps per weight. Our reading, not a
measurement beyond the one tuning seed above: the states the game rarely reaches (the jack's bluff
after a check) learn slowest, and that is where the last iterate stays off. {conclusion}"""


def _plot(runs: dict[int, dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    for ax, key, title in (
        (axes[0], "average", "average policy (step-weighted)"),
        (axes[1], "last_iterate", "last iterate"),
    ):
        for seed in VERDICT_SEEDS:
            if seed in runs:
                ev = runs[seed]["evals"]
                ax.plot([max(e["episodes"], 1) for e in ev], [e[key] for e in ev], lw=1, label=f"seed {seed}")
        ax.axhline(GOAL, color="red", lw=0.8, ls=":", label=f"goal {GOAL}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("episodes")
        ax.set_title(f"{title}: {CHOSEN}", fontsize=8)
        ax.grid(alpha=0.3, which="both")
    axes[0].set_ylabel("exploitability (NashConv / 2)")
    axes[0].legend(fontsize=7)
    fig.suptitle("Kuhn poker, the language model's self-play on the verdict seeds")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def report(out: Path = RESULTS, plot: Path | None = kn.DOCS / "train_kuhn_nash_lm.png") -> str:
    found = load(out)
    chosen = found.get(CHOSEN, {})
    if plot is not None and chosen:
        _plot(chosen, plot)
    met, n, k_avg, k_last = verdict(chosen)
    rows = []
    for seed in VERDICT_SEEDS:
        if seed not in chosen:
            continue
        ev, fin = chosen[seed]["evals"], chosen[seed]["final"]
        rows.append(
            f"| {seed} | {ev[-1]['episodes']:,} | **{ev[-1]['average']:.4f}** | {ev[-1]['last_iterate']:.4f} | "
            f"{min(e['last_iterate'] for e in ev):.4f} | {fin['uniform_average']:.4f} |"
        )
    fresh = [chosen[s] for s in VERDICT_SEEDS if s in chosen]
    stats = (
        f"average policy {_summary([r['evals'][-1]['average'] for r in fresh])}; last iterate "
        f"{_summary([r['evals'][-1]['last_iterate'] for r in fresh])}; the same runs' average with every snapshot "
        f"weighted equally (issue 17's metric) {_summary([r['final']['uniform_average'] for r in fresh])}"
        if len(fresh) >= 2
        else "fewer than two verdict seeds have finished"
    )
    tried = []
    for variant in TRIALS:
        for seed, r in sorted(found.get(variant, {}).items()):
            if seed in VERDICT_SEEDS:
                continue
            last = r["evals"][-1]
            tried.append(
                f"| `{variant}` | `{json.dumps(changes(variant))}` | {seed} | {last['average']:.4f} | "
                f"{last['last_iterate']:.4f} | {min(e['last_iterate'] for e in r['evals']):.4f} | "
                f"{r['final']['uniform_average']:.4f} |"
            )
    rates = [
        r["evals"][-1]["episodes"] / r["final"]["wall_s"]
        for runs in found.values()
        for r in runs.values()
        if r["final"].get("wall_s")
    ]
    rate = f"{min(rates):,.0f}-{max(rates):,.0f}" if rates else "n/a"
    status = "met" if met else "not met"
    body = f"""### Kuhn without the floor: the language model (issue 31, point 5)

`bench/train_kuhn_lm_floor.py`: the language model's GRPO self-play of the section above
(the tiny Kuhn-only model, issue 17's five-seed config `{BASE}`) with the changes point 5 names.
The average policy is realisation-weighted with each snapshot weighted by the step it was taken
at (`eval.average = "linear"`; the random initial weights weigh nothing); the entropy bonus is
annealed 0.05 to 0.02 over the run (a lower logit-equilibrium floor); and a KL penalty pulls
toward a magnet reset to the learner every few updates (a proximal term that damps the rotation
of simultaneous gradient play without moving its fixed point). Chosen config `{CHOSEN}`:
`{json.dumps(changes(CHOSEN))}` on top of `{json.dumps(kn.ROUND3[BASE])}`. It was chosen on the
tuning seeds {", ".join(map(str, TUNING_SEEDS))} (every trial below) and run once on each fresh seed
{", ".join(map(str, VERDICT_SEEDS))}. Machine: {machine()}; {rate} episodes per second per run (two runs
at a time, niced, with other jobs). Results: `bench/results/kuhn_lm/`; plot:
[train_kuhn_nash_lm.png](train_kuhn_nash_lm.png). Shipped: `models/kuhn-lm-floor` (verdict seed 101, the
lowest average: the tiny Kuhn-only model, its tokenizer, the final weights and a state with every
snapshot, so `checkpoint{{run = "models/kuhn-lm-floor", temperature = "train"}}` gives the last iterate
and the snapshots the step-weighted average; `tests/test_shipped_models.py` recomputes both).

**Verdict on the fresh seeds: {status}** (average policy <= {GOAL} in {k_avg} of {n}, goal {len(VERDICT_SEEDS)} of
{len(VERDICT_SEEDS)}; last iterate <= {GOAL} in {k_last} of {n}, goal 3 of {len(VERDICT_SEEDS)}). {stats}.

| seed | episodes | average policy (step-weighted) | last iterate | best last iterate seen | equal-weights average (not the goal's metric) |
|---|---|---|---|---|---|
{chr(10).join(rows)}

{_verdict_reading(fresh)}

**Trials on the tuning seeds** (300,000 episodes each, in the order tried; changes relative to `{BASE}`):

| trial | changes | seed | average (step-weighted) | last iterate | best last iterate seen | equal-weights average |
|---|---|---|---|---|---|---|
{chr(10).join(tried)}

{READING}
"""
    return body


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("collect", help="copy the finished runs' evaluations to bench/results/kuhn_lm/")
    sub.add_parser("report", help="write the section of docs/benchmarks.md and its plot")
    args = parser.parse_args(argv)
    if args.cmd == "collect":
        for path in collect():
            print(path.relative_to(ROOT))
        return 0
    body = report()
    write_section("train_kuhn_nash_lm", body)
    print(body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
