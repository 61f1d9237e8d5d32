"""Tune the MegaGem expert's knobs with `arena compare`, then confirm on fresh deals.

    python bench/megagem_expert_tune.py tune --deals 100 --seed 1000 --out runs/expert_tune
    python bench/megagem_expert_tune.py confirm 'megagem_expert{gate = 1.0}' --deals 200 --seed 5000 --out runs/expert_confirm

Each candidate plays ``arena compare CANDIDATE megagem_expert`` against a fixed, named opponent
field (default: the shipped expert and the market-anchored bot), every seat rotation, on shared
deals; the unit is the deal. ``tune`` prints one row per candidate (the tuning set: the best row
is chosen there, so its interval is optimistic); ``confirm`` replays one candidate on deals the
tuning never saw. A default changes only when the confirmation's interval lies above 0.
Tables: docs/benchmarks.md (``## MegaGem expert: knobs``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

CANDIDATES = (
    "megagem_expert{liquidity = 0.0}",
    'megagem_expert{schedule = "constant"}',
    'megagem_expert{schedule = "constant", liquidity = 0.25}',
    "megagem_expert{gate = 1.0}",
    "megagem_expert{gate = 2.0}",
    'megagem_expert{loan_rule = "liquidity"}',
    "megagem_expert{offset = 0.0}",
    "megagem_expert{offset = 1.0}",
    "megagem_expert{offset = 4.0}",
    "megagem_expert{offset = 0.0, gate = 1.0}",
)
FIELD = ("megagem_expert", "megagem_market")


def compare(spec: str, deals: int, seed: int, out: Path, field: tuple[str, ...]) -> dict:
    """One `arena compare` of ``spec`` against the shipped expert; its JSON analysis."""
    out.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "arena_core.cli",
        "compare",
        spec,
        "megagem_expert",
        "--game",
        "megagem",
        "--opponents",
        *field,
        "--deals",
        str(deals),
        "--seed",
        str(seed),
        "--json",
        "--out",
        str(out),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(
            f"arena compare failed for {spec}: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}"
        )
    return json.loads(done.stdout)


def row(spec: str, a: dict) -> str:
    d = a["difference"]
    return (
        f"| `{spec}` | {d['mean']:+.2f} | [{d['t_low']:+.2f}, {d['t_high']:+.2f}] | {d['t_p']:.3f} | "
        f"[{d['bootstrap_low']:+.2f}, {d['bootstrap_high']:+.2f}] | {d['win_share']:.0%} |"
    )


HEADER = (
    "| candidate (A) vs `megagem_expert` (B) | A − B, points a game | paired t 95% | p | deal-cluster bootstrap 95% | deals won by A |\n"
    "|---|---|---|---|---|---|"
)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("tune", "confirm"))
    ap.add_argument("specs", nargs="*", help="candidates (tune: default the built-in list; confirm: one or more)")
    ap.add_argument("--deals", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1000)
    ap.add_argument("--field", nargs="+", default=list(FIELD))
    ap.add_argument("--out", default="runs/expert_tune")
    args = ap.parse_args(argv)
    specs = args.specs or (list(CANDIDATES) if args.mode == "tune" else [])
    if not specs:
        raise SystemExit("confirm needs the candidate spec(s) to confirm")
    print(
        f"{args.mode}: {args.deals} deals from seed {args.seed}, field {' + '.join(args.field)}, every seat rotation\n"
    )
    print(HEADER)
    for k, spec in enumerate(specs):
        print(row(spec, compare(spec, args.deals, args.seed, Path(args.out) / f"c{k}", tuple(args.field))), flush=True)


if __name__ == "__main__":
    main()
