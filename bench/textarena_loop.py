"""The local-model arena loop on TextArena KuhnPoker-v0, for several seeds (issue 18, part 2).

    python bench/textarena_loop.py run [--seeds 0,1,2] [--out runs/bench-textarena-loop]
    python bench/textarena_loop.py report [--out runs/bench-textarena-loop]

``run`` runs :mod:`arena_train.loop` with ``examples/textarena_loop.toml`` (a plumbing check
through a local ``mlx_lm.server``, then per seed: baseline tournament, self-play GRPO with a
snapshot pool, re-tournament), writing ``report.json`` after every seed. ``report`` reads
whatever seeds finished and writes the ``textarena-loop`` section of docs/benchmarks.md and the
training curves, docs/textarena_loop_curves.png.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from _report import machine, write_section  # noqa: E402

CONFIG = ROOT / "examples" / "textarena_loop.toml"
OUT = ROOT / "runs" / "bench-textarena-loop"
PLOT = ROOT / "docs" / "textarena_loop_curves.png"


def run(args) -> int:
    from arena_train.loop import load_config, run_loop

    cfg = load_config(CONFIG)
    seeds = [int(s) for s in args.seeds.split(",")] if args.seeds else None
    started = time.perf_counter()

    def log(text: str) -> None:
        print(f"[{time.perf_counter() - started:7.0f} s] {text}", flush=True)

    run_loop(cfg, Path(args.out), seeds=seeds, plot=PLOT, log=log)
    log("done")
    return 0


def report(args) -> int:
    from arena_train.loop import load_config, plot_curves, report_markdown

    out = Path(args.out)
    path = out / "report.json"
    if not path.exists():
        print(f"no {path}; run `python bench/textarena_loop.py run` first", file=sys.stderr)
        return 2
    data = json.loads(path.read_text())
    cfg = load_config(CONFIG)
    seeds = data["seeds"]
    plot_curves(seeds, PLOT, f"{cfg.name}: exact values of the sampling policy during GRPO")
    times = ", ".join(f"seed {r['seed']}: {r['train_s']:.0f} s" for r in seeds)
    body = (
        "## TextArena KuhnPoker-v0: the local-model arena loop (issue 18)\n\n"
        f"`python bench/textarena_loop.py run` then `report` (config `examples/textarena_loop.toml`); {machine()}, "
        f"2 cores shared with other jobs. Training wall time ({cfg.train.get('steps')} GRPO steps): {times}.\n\n"
        + report_markdown(cfg, seeds, data.get("server"), data.get("coverage"))
        + "\nTraining curves (exact, every step, every seed): `docs/textarena_loop_curves.png`.\n"
    )
    write_section("textarena-loop", body)
    print(body)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("run")
    p.add_argument("--seeds", default=None)
    p.add_argument("--out", default=str(OUT))
    p.set_defaults(fn=run)
    p = sub.add_parser("report")
    p.add_argument("--out", default=str(OUT))
    p.set_defaults(fn=report)
    args = parser.parse_args(argv)
    return args.fn(args)


if __name__ == "__main__":
    raise SystemExit(main())
