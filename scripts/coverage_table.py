"""The per-package coverage table of docs/developing.md, from the data `make coverage` leaves.

Usage: ``python scripts/coverage_table.py [DATA_FILE]`` (default ``.coverage``). Prints a
Markdown table: statements, branches, line %, branch % and the combined figure coverage.py
reports (what ``fail_under`` in ``[tool.coverage.report]`` is compared with), per package and
in total."""

from __future__ import annotations

import sys
from pathlib import Path

PACKAGES = ("arena_core", "arena_games", "arena_players", "arena_train", "arena_tournament")


def package_of(filename: str) -> str | None:
    parts = Path(filename).parts
    for pkg in PACKAGES:
        if pkg in parts:
            return pkg
    return None


def table(data_file: str = ".coverage") -> str:
    try:
        import coverage
    except ModuleNotFoundError:
        raise SystemExit("coverage is not installed: pip install -e '.[dev]'") from None
    if not Path(data_file).exists():
        raise SystemExit(f"no coverage data at {data_file}: run `make coverage` first")
    cov = coverage.Coverage(data_file=data_file)
    cov.load()
    sums = {pkg: [0, 0, 0, 0] for pkg in (*PACKAGES, "total")}  # statements, run, branches, taken
    for filename in cov.get_data().measured_files():
        pkg = package_of(filename)
        if pkg is None:
            continue
        try:
            analysis = cov._analyze(filename)  # the public API offers no per-file numbers object
        except Exception:  # a file that no longer parses or exists: skip it
            continue
        n = analysis.numbers
        for key in (pkg, "total"):
            s = sums[key]
            s[0] += n.n_statements
            s[1] += n.n_executed
            s[2] += n.n_branches
            s[3] += n.n_branches - n.n_missing_branches
    lines = [
        "| package | statements | line % | branches | branch % | combined % |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for key, (stmts, run, branches, taken) in sums.items():
        line = 100.0 * run / stmts if stmts else 100.0
        branch = 100.0 * taken / branches if branches else 100.0
        combined = 100.0 * (run + taken) / (stmts + branches) if stmts + branches else 100.0
        name = f"**{key}**" if key == "total" else f"`{key}`"
        lines.append(f"| {name} | {stmts} | {line:.1f} | {branches} | {branch:.1f} | {combined:.1f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(*sys.argv[1:2]))
