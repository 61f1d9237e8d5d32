"""Size of a tournament's game records: bytes per game in records.jsonl.gz (goal: <= 2 KB per
scripted MegaGem game).

    python bench/records_bench.py [--deals 4]

Runs the four MegaGem bots and a random player (5 entrants, 3 seats) on ``--deals`` deals and
prints the compressed and raw bytes per game record.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from arena_tournament.config import config_from_dict
from arena_tournament.records import RECORDS_NAME, RecordsFile
from arena_tournament.runner import run_tournament


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--deals", type=int, default=4)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as out:
        cfg = config_from_dict(
            {
                "name": "records-bench",
                "game": "megagem",
                "num_players": 3,
                "deals": args.deals,
                "seed": 770001,
                "output": out,
                "entrants": ["megagem_expert", "megagem_fair_value", "megagem_market", "megagem_heuristic", "random"],
                "run": {"policy": "default"},
            }
        )
        started = time.perf_counter()
        report = run_tournament(cfg, quiet=True)
        seconds = time.perf_counter() - started
        members = list(RecordsFile(os.path.join(out, RECORDS_NAME)).members())
        size = os.path.getsize(os.path.join(out, RECORDS_NAME))
        raw = sum(len(m) for _, m in members)
        print(
            f"{report.played} games in {seconds:.1f} s; records.jsonl.gz {size} bytes: "
            f"{size / len(members):.0f} bytes per game compressed ({raw / len(members):.0f} raw)"
        )


if __name__ == "__main__":
    main()
