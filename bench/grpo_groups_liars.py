"""GRPO groups on the LiarsDice loop (issue 42 point 1): the loop's own training config
(``bench/results/textarena-liars/loop/config.toml``, the recorded loop's copy of the example; 24
steps, a pool of the learner's snapshots) with the old group scheme and with each play's own dice and opponents' draws, the same seed and engine:
how many steps have a zero gradient, and the share of zero-advantage groups.

``shared`` is the scheme the recorded loop ran (``bench/results/textarena-liars/loop-seed<k>``); a
rerun here must give its gradient norms step for step (on MLX's own matmul, as it was made).
Training only: the evaluation is cut to one deal (it draws nothing the training uses).

    python bench/grpo_groups_liars.py run --seed 1 --draws shared
    python bench/grpo_groups_liars.py run --seed 1 --draws distinct
    python bench/grpo_groups_liars.py report      # docs/benchmarks.md's section

Results: ``bench/results/textarena-liars/groups/seed<k>_<draws>.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from _report import machine, write_section  # noqa: E402

OUT = ROOT / "bench" / "results" / "textarena-liars" / "groups"
RECORDED = ROOT / "bench" / "results" / "textarena-liars"
#: the config the recorded loop ran (a copy of examples/textarena_loop_liars.toml as it was; the example moved on)
CONFIG = RECORDED / "loop" / "config.toml"


def run(seed: int, draws: str) -> Path:
    from arena_train import grpo
    from arena_train.loop_config import grpo_config, load_config

    cfg = grpo_config(load_config(CONFIG), seed)
    config = cfg.model_dump(mode="json")
    config.update(group_draws=draws, checkpoint_every=0, plot=False)
    config["eval"].update(every=0, deals=1)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        rows = grpo.TRAINER(config, Path(tmp) / "run").metrics[1:]
    keep = ("step", "grad_norm", "zero_advantage_groups", "entropy", "reward_std")
    out = {
        "seed": seed,
        "draws": draws,
        "engine": config["engine"],
        "wall_s": round(time.perf_counter() - started, 1),
        "rows": [{k: r.get(k) for k in keep} for r in rows],
    }
    path = OUT / f"seed{seed}_{draws}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1))
    return path


def recorded(seed: int) -> list[float] | None:
    """The recorded loop's gradient norms for ``seed`` (seed 0: ``loop``, else ``loop-seed<k>``)."""
    path = RECORDED / ("loop" if seed == 0 else f"loop-seed{seed}") / "metrics.jsonl"
    if not path.exists():
        return None
    return [r["grad_norm"] for r in map(json.loads, path.read_text().splitlines()) if "grad_norm" in r]


def report() -> str:
    results = [json.loads(p.read_text()) for p in sorted(OUT.glob("seed*_*.json"))]
    lines = [
        "## GRPO groups on the LiarsDice loop (bench/grpo_groups_liars.py, issue 42 point 1)",
        "",
        "The loop's training config (`bench/results/textarena-liars/loop/config.toml`, the recorded loop's: 24 steps x 2 deals x 2 seats x a "
        "group of 8, learning rate 1e-3, a pool of the learner's snapshots at temperature 1, GRPO's reference "
        "engine), with the old group scheme (`shared`: one deal and one set of opponents' draws per group) and "
        "with each play's own dice and opponents' draws (`distinct`, the new default); the same seeds. "
        f"Machine: {machine()}.",
        "",
        "| seed | group_draws | steps with gradient norm 0 | last non-zero update | mean share of zero-advantage groups | "
        "mean entropy | same norms as the recorded loop |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        norms = [row["grad_norm"] for row in r["rows"]]
        zero = sum(1 for n in norms if n == 0.0)
        last = max((row["step"] for row in r["rows"] if row["grad_norm"]), default=0)
        share = sum(row["zero_advantage_groups"] for row in r["rows"]) / len(r["rows"])
        ent = [row["entropy"] for row in r["rows"] if row.get("entropy") is not None]
        rec = recorded(r["seed"])
        same = "n/a" if rec is None or r["draws"] != "shared" else ("yes" if rec == norms else "no")
        lines.append(
            f"| {r['seed']} | {r['draws']} | {zero} of {len(norms)} | step {last} | {share:.2f} | "
            f"{sum(ent) / len(ent):.3f} | {same} |"
        )
    lines += [
        "",
        "With `shared`, once the learner and its snapshots are peaked a group's 8 plays are one game: every "
        "advantage 0, the update exactly 0, and in self-play that state absorbs (the recorded loop: 85 of 120 "
        "steps over its 5 seeds). With `distinct` the groups keep different dice and draws, so a peaked learner "
        "still meets different games. It is not enough under this recipe: with `distinct` 8 to 12 of the 24 "
        "steps still have a zero gradient, because the learner's entropy collapses (learning rate 1e-3, no entropy "
        "bonus; the stall guard warns on such a run). This measures the signal only, not skill: the loop's recipe (learning "
        "rate 1e-3 with momentum, 48 distinct deals) is the issue's other finding.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--seed", type=int, required=True)
    r.add_argument("--draws", choices=("shared", "opponents", "distinct"), required=True)
    sub.add_parser("report")
    args = parser.parse_args(argv)
    if args.command == "run":
        print(run(args.seed, args.draws))
        return 0
    body = report()
    write_section("grpo_groups_liars", body)
    print(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
