"""Tournament speed: the 624-game MegaGem bots tournament (13 entrants, Steiner triples, 8 deals,
3 rotations) run sequentially, in a local process pool and on a local Ray instance; then the
rating fit with 1,000 cluster-bootstrap resamples. Writes the '## Tournaments' section of
docs/benchmarks.md.

    python bench/tournament_bench.py [--workers 2] [--games N] [--no-write]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import machine, write_section  # noqa: E402
from arena_tournament.config import load_config  # noqa: E402
from arena_tournament.ratings import Outcome, deal_clusters, plackett_luce_ratings, summarize  # noqa: E402
from arena_tournament.runner import load_results, resolve_schedule, run_tournament  # noqa: E402


def load() -> float:
    return os.getloadavg()[0]


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (pool workers)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def run(cfg, backend: str, workers: int, out: Path, games: int | None, **extra) -> tuple[float, float, list[dict]]:
    options = cfg.run.model_copy(update={"backend": backend, "workers": workers, **extra})
    cpu = cpu_seconds()
    started = time.perf_counter()
    run_tournament(cfg, results_path=out / "results.jsonl", quiet=True, options=options, max_games=games)
    seconds = time.perf_counter() - started
    cpu = cpu_seconds() - cpu
    _, results = load_results(out)
    return seconds, cpu, sorted((g.outcome() for g in results), key=lambda o: o["key"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--games", type=int, default=None, help="only the first N games of the schedule (default: all 624)")
    ap.add_argument("--repeats", type=int, default=3, help="interleaved runs per row; the fastest is reported")
    ap.add_argument("--ray-repeats", type=int, default=2)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()

    cfg = load_config(ROOT / "examples" / "tournament_bots.toml")
    schedule = resolve_schedule(cfg)
    n_games = len(schedule.games()) if args.games is None else args.games
    load_before = load()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        runs = [
            ("sequential", "sequential", 1, {}),
            ("sequential, no time limits", "sequential", 1, {"decision_time_limit_s": None, "game_time_limit_s": None}),
            (f"process pool ({args.workers} workers, auto = fork)", "process", args.workers, {}),
            (f"process pool ({args.workers} workers, spawn)", "process", args.workers, {"start_method": "spawn"}),
            (f"Ray, local ({args.workers} CPUs)", "ray", args.workers, {}),
        ]
        run(cfg, "sequential", 1, tmp / "warm-up", 26)  # imports and first-call costs, untimed
        reference = None
        same: dict[str, bool] = {}
        best: dict[str, tuple[float, float]] = {}
        for rep in range(args.repeats):  # interleaved, so a burst of other load hits every row alike
            for label, backend, workers, extra in runs:
                if backend == "ray" and rep >= args.ray_repeats:
                    continue
                out = tmp / f"{label.replace(' ', '_')}-{rep}"
                seconds, cpu, outcomes = run(cfg, backend, workers, out, args.games, **extra)
                if "decision_time_limit_s" not in extra:  # the same settings must give the same games
                    reference = reference or outcomes
                    same[label] = same.get(label, True) and outcomes == reference
                if label not in best or seconds < best[label][0]:
                    best[label] = (seconds, cpu)
                print(
                    f"{label} (run {rep + 1}): {seconds:.2f} s ({n_games / seconds:.1f} games/s), {cpu:.1f} CPU s",
                    flush=True,
                )
        rows = [(label, *best[label]) for label, *_ in runs if label in best]
        header, games = load_results(tmp / "sequential-0")
    scored = [g for g in games if g.returns is not None]
    cluster_of = deal_clusters(scored)  # the deal is the bootstrap unit, as in summarize
    outcomes = [Outcome(g.key, cluster_of[g.key], tuple(g.seats), tuple(g.returns)) for g in scored]
    names = [e.name for e in header.schedule.entrants]
    started = time.perf_counter()
    plackett_luce_ratings(outcomes, names, resamples=1000)
    fit_s = time.perf_counter() - started
    started = time.perf_counter()
    summarize(header, games, resamples=1000)
    summary_s = time.perf_counter() - started
    load_after = load()
    print(
        f"rating fit + 1000 bootstrap resamples: {fit_s:.2f} s; whole summary (+ head-to-head, openskill, tables): {summary_s:.2f} s"
    )

    seq = rows[0][1]
    table = "\n".join(
        f"| {label} | {s:.2f} | {n_games / s:.1f} | {seq / s:.2f}× | {cpu:.1f} |" for label, s, cpu in rows
    )
    pool = rows[2][1]
    spawned = rows[3][1]
    same_text = ", ".join(f"{k}: {'yes' if v else 'NO'}" for k, v in same.items())
    body = f"""
## Tournaments

Written by `bench/tournament_bench.py`; rerun it to refresh. Machine: {machine()}.
Schedule: `examples/tournament_bots.toml`, MegaGem among 13 scripted bots, Steiner triple system
(26 tables), 8 shared deals, 3 seat rotations: {n_games} games. Run options as in the example
(policy `default`, a 30 s decision limit and a 600 s game limit, so every decision runs under the
decision timer) unless the row says otherwise. Fastest of {args.repeats} interleaved runs per row ({args.ray_repeats} for Ray) after an
untimed 26-game warm-up, wall clock including pool/Ray start-up; CPU seconds = this process plus its pool workers (Ray's workers are not its children,
so that row shows only the driver). Load average (1 min) {load_before:.1f} before and {load_after:.1f} after on {os.cpu_count()} cores:
other jobs shared the machine, so absolute times are inflated and ratios are noisy.

| backend | seconds | games/s | vs sequential | CPU s |
|---|---:|---:|---:|---:|
{table}

- Process pool vs sequential (goal ≥ 1.7×): **{seq / pool:.2f}×** with forked workers (the default
  on Linux), **{seq / spawned:.2f}×** with spawned ones (each worker imports everything again).
- The sequential run got {rows[0][2] / seq:.0%} of one core (CPU s / wall s): when that is far below 100%,
  other jobs held the cores, and the pool's ratio says more about how the scheduler shared them
  than about the pool.
- Same results from every backend (games compared without their timings): {same_text}.
- Plackett–Luce fit plus 1,000 cluster-bootstrap resamples (goal < 10 s): **{fit_s:.2f} s**; the whole
  summary (also head-to-head intervals for 78 pairs, openskill, per-player and per-seat tables): {summary_s:.2f} s.
"""
    if not args.no_write:
        write_section("tournaments", body)
    print(body)


if __name__ == "__main__":
    main()
