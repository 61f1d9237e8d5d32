"""Run every benchmark script in bench/; each writes its own section of docs/benchmarks.md."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = [
    "kuhn_bench.py",
    "megagem_bench.py",
    "textarena_bench.py",
    "matrix_bench.py",
    "players_bench.py",
    "tournament_bench.py",
    "train_bench.py",
]


def main() -> int:
    failed = []
    for name in SCRIPTS:
        print(f"== {name}", flush=True)
        if subprocess.run([sys.executable, str(HERE / name)], cwd=HERE).returncode != 0:
            failed.append(name)
    if failed:
        print("failed:", ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
