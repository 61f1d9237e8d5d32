"""One round of expert iteration on MegaGem: the tiny model plays against the fixed-fraction
heuristic, the analytic expert labels its decisions, and the model is fine-tuned on
prompt -> expert answer (compact ~40-token view, bids as single tokens).

    python examples/expert_iteration.py [RUN_DIR] [--rounds N] [--deals N]

Prints how much of the expert's advantage the student recovers on held-out deals, with
paired bootstrap intervals.
"""

from __future__ import annotations

import argparse
import json
import tempfile

from arena_train import expert_iteration


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", nargs="?", default=None)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--deals", type=int, default=4, help="training deals per round (each played in every seat)")
    parser.add_argument("--eval-deals", type=int, default=8)
    args = parser.parse_args(argv)
    run_dir = args.run_dir or tempfile.mkdtemp(prefix="megagem-ei-")
    config = {
        "name": "megagem-ei",
        "game": "megagem",
        "seed": 0,
        "expert": "megagem_expert",
        "opponents": ["megagem_heuristic"],
        "rounds": args.rounds,
        "deals_per_round": args.deals,
        "epochs": 2,
        "eval_deals": args.eval_deals,
        "optim": {"learning_rate": 3e-4},
    }
    report = expert_iteration.TRAINER(config, run_dir).report or {}
    print(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
