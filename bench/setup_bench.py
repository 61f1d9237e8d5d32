"""Set-up time of `make test` on a clean clone with a cold pip cache (system packages aside).

    python bench/setup_bench.py [--runs N]

Clones the committed tree into a temporary directory, points ``PIP_CACHE_DIR`` at an empty
directory, and times ``make venv`` (what ``make test`` does before pytest, minus
``make sysdeps``), then the core alone (a wheel of turn-arena-core into a fresh venv). Writes
the "setup" section of docs/benchmarks.md. Not part of bench/run_all.py: it downloads every
dependency again.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import machine, write_section  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _load() -> str:
    try:
        return os.getloadavg()[0].__format__(".1f")
    except OSError:
        return "?"


def timed(cmd: list[str], cwd: Path, env: dict) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def one_run(python: str) -> tuple[float, float, str]:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        clone, cache = tmp / "clone", tmp / "pip-cache"
        cache.mkdir()
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        env = {**os.environ, "PIP_CACHE_DIR": str(cache)}
        load = _load()
        full = timed(["make", "venv", f"PYTHON={python}"], clone, env)
        shutil.rmtree(cache)
        cache.mkdir()
        wheels = tmp / "wheels"
        py = str(clone / ".venv" / "bin" / "python")
        subprocess.run(
            [py, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(wheels), "dists/core"],
            cwd=clone,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        subprocess.run([python, "-m", "venv", str(tmp / "core")], check=True)
        (whl,) = wheels.glob("turn_arena_core-*.whl")
        core = timed([str(tmp / "core" / "bin" / "python"), "-m", "pip", "install", "-q", f"{whl}[testing]"], tmp, env)
        return full, core, load


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--python", default="python3")
    ap.add_argument("--print-only", action="store_true", help="print the rows; leave docs/benchmarks.md as it is")
    args = ap.parse_args(argv)
    rows = [one_run(args.python) for _ in range(args.runs)]
    lines = [
        "## Set-up: `make test` on a clean clone, cold pip cache (bench/setup_bench.py)",
        "",
        f'{machine()}. `make venv` = a fresh venv, pip/setuptools/wheel upgraded, `pip install -e ".[test]"`',
        "(everything but pygambit and the bench tools; system packages aside). Goal: under 3 minutes.",
        "",
        "| run | `make venv` | core alone (`turn-arena-core[testing]` wheel) | load average at start |",
        "|---|---|---|---|",
    ]
    lines += [f"| {i + 1} | {full:.0f} s | {core:.0f} s | {load} |" for i, (full, core, load) in enumerate(rows)]
    if not args.print_only:
        write_section("setup", "\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
