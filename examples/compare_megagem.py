"""Paired comparison of two MegaGem bots on shared deals: `arena compare`.

Both bots play the same deals against the same fixed opponents in every seat rotation; the
expert plays them too, as the luck control variate. Run:

    python examples/compare_megagem.py            # 40 deals, about 20 s
    python examples/compare_megagem.py --deals 8  # quicker

The same as:

    arena compare megagem_fair_value megagem_heuristic --game megagem \
        --opponents random megagem_market --reference megagem_expert --deals 40
"""

from __future__ import annotations

import argparse
import sys

from arena_tournament.compare import main

if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--deals", type=int, default=40)
    p.add_argument("--out", default=None, help="directory for results.jsonl and compare.json")
    args = p.parse_args()
    argv = [
        "megagem_fair_value",
        "megagem_heuristic",
        "--game",
        "megagem",
        "--opponents",
        "random",
        "megagem_market",
        "--reference",
        "megagem_expert",
        "--deals",
        str(args.deals),
        "--seed",
        "770001",
        "--quiet",
    ]
    if args.out:
        argv += ["--out", args.out]
    sys.exit(main(argv))
