"""Matrix-games benchmark: the full reference table (8 archetypes x k = 2..10, equilibria from
pygambit's enummixed_solve) cold, from the shipped table, the disk cache and memory, and a
10,000-trial scripted study (every trial a recorded episode). Writes the '## Matrix games'
section of docs/benchmarks.md. One file, past 500 lines, because the table's four measurements, the
scripted study and the ``--llm`` path share their setup and write that one section.

With ``--llm`` it instead measures the study's LLM path against a local fake OpenAI-compatible
server with a fixed 200 ms latency: the paper's 7 archetypes x 9 k x 30 trials run concurrently
(trials batched, requests within the player's concurrency limit) against one trial at a time,
and writes the '## Matrix study against an LLM server' section.

    python bench/matrix_bench.py [--rounds R] [--exact]
    python bench/matrix_bench.py --llm [--latency 0.2] [--concurrency 32] [--full-sequential]
    python bench/matrix_bench.py --mlx-server [--server-trials 10] [--concurrency 32] [--max-tokens 8]

``--mlx-server`` measures the same ratio against a real local ``mlx_lm.server`` with the tiny
offline model (``arena_players.mlx_server``) and writes the '## Matrix study against a real local
``mlx_lm.server``' section.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from _report import machine, write_section
from arena_games.matrix import equilibria as eq
from arena_games.matrix.payoffs import ARCHETYPE_NAMES, K_VALUES
from arena_games.matrix.study import StudyConfig, run_study

TABLE_GOAL_S = 60.0
STUDY_GOAL_S = 10.0


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def bench_table(cache_dir: Path) -> dict:
    os.environ[eq.CACHE_ENV] = str(cache_dir)
    _, import_wall, _ = timed(lambda: __import__("pygambit"))
    eq.clear_memory_cache()
    per_cell: dict[tuple[str, int], tuple[float, float]] = {}

    def cold():
        for a in ARCHETYPE_NAMES:
            for k in K_VALUES:
                _, solve_wall, _ = timed(lambda a=a, k=k: eq.extreme_equilibria(a, k, shipped=False))
                _, ref_wall, _ = timed(lambda a=a, k=k: eq.reference_points(a, k))
                per_cell[a, k] = (solve_wall, ref_wall)

    _, cold_wall, cold_cpu = timed(cold)
    eq.clear_memory_cache()
    _, disk_wall, disk_cpu = timed(eq.reference_table)
    _, memory_wall, _ = timed(eq.reference_table)
    eq.clear_memory_cache()
    _, shipped_wall, shipped_cpu = timed(
        lambda: [eq.extreme_equilibria(a, k, cache_dir=False) for a in ARCHETYPE_NAMES for k in K_VALUES]
    )
    slowest = max(per_cell, key=lambda c: per_cell[c][0])
    return {
        "import": import_wall,
        "cold_wall": cold_wall,
        "cold_cpu": cold_cpu,
        "disk_wall": disk_wall,
        "disk_cpu": disk_cpu,
        "memory_wall": memory_wall,
        "shipped_wall": shipped_wall,
        "shipped_cpu": shipped_cpu,
        "per_cell": per_cell,
        "slowest": slowest,
        "solver_total": sum(s for s, _ in per_cell.values()),
        "reference_total": sum(r for _, r in per_cell.values()),
    }


def bench_exact() -> dict:
    """Re-solve every cell with rational=True (exact arithmetic) and compare the counts."""
    import pygambit as gbt

    per_cell, mismatched = {}, []
    for a in ARCHETYPE_NAMES:
        for k in K_VALUES:
            pm = eq.payoff_matrices(a, k)
            s = pm.integer_scale()
            game = gbt.Game.from_arrays((pm.A * s).astype(int), (pm.B * s).astype(int))
            result, wall, _ = timed(lambda game=game: gbt.nash.enummixed_solve(game, rational=True))
            per_cell[a, k] = wall
            if len(result.equilibria) != len(eq.extreme_equilibria(a, k)):
                mismatched.append((a, k, len(result.equilibria), len(eq.extreme_equilibria(a, k))))
    return {"per_cell": per_cell, "mismatched": mismatched, "total": sum(per_cell.values())}


def bench_study(player: str, rounds: int, independent: bool) -> dict:
    config = StudyConfig(
        player=player,
        ks=(2, 4, 6, 8, 10),
        trials=250,
        seed=1,
        listings=("independent",) if independent else ("shared",),
    )
    trials = len(config.archetypes) * sum(config.trials_for(k) for k in config.ks)  # rounded up to multiples of k
    best_wall = best_cpu = float("inf")
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as out:
            _, wall, cpu = timed(lambda: run_study(config, out))
        best_wall, best_cpu = min(best_wall, wall), min(best_cpu, cpu)
    return {"player": player, "independent": independent, "trials": trials, "wall": best_wall, "cpu": best_cpu}


def bench_llm(latency: float, concurrency: int, full_sequential: bool, seq_trials: int) -> dict:
    """The paper's 7 archetypes x 9 k x 30 trials against a fake server with fixed latency:
    concurrent (batched trials) against one trial at a time."""
    from arena_games.matrix.fakellm import FORMATS, FakeChatServer
    from arena_games.matrix.study import PAPER_ARCHETYPES
    from arena_players.openai_player import OpenAIPlayer

    well_formed = tuple(f for f in FORMATS if f[1])  # every answer read: two requests per trial in both runs
    out: dict = {"latency": latency, "concurrency": concurrency}
    with FakeChatServer(latency_s=latency, seed=1, formats=well_formed) as server:

        def factory(limit):
            return lambda spec, seed: OpenAIPlayer(
                seed,
                base_url=server.url,
                model="fake",
                api_key_env="",
                temperature=1.0,
                concurrency=limit,
                max_retries=0,
            )

        full = StudyConfig(
            player="openai:fake",
            archetypes=PAPER_ARCHETYPES,
            ks=K_VALUES,
            trials=30,
            round_trials=False,
            listings=("shared",),
            batch=64,
        )
        server.requests = 0
        _, wall, cpu = timed(lambda: run_study(full, None, player_factory=factory(concurrency)))
        out["concurrent"] = {
            "trials": len(PAPER_ARCHETYPES) * len(K_VALUES) * 30,
            "requests": server.requests,
            "wall": wall,
            "cpu": cpu,
            "max_in_flight": server.max_in_flight,
        }
        seq = (
            full if full_sequential else full.model_copy(update={"archetypes": ("coordination",), "trials": seq_trials})
        )
        server.requests, server.max_in_flight = 0, 0
        _, wall, cpu = timed(lambda: run_study(seq.model_copy(update={"batch": 1}), None, player_factory=factory(1)))
        trials = len(seq.archetypes) * len(seq.ks) * seq.trials
        out["sequential"] = {
            "trials": trials,
            "requests": server.requests,
            "wall": wall,
            "cpu": cpu,
            "max_in_flight": server.max_in_flight,
            "full": full_sequential,
        }
    per_trial_seq = out["sequential"]["wall"] / out["sequential"]["trials"]
    out["sequential_full_wall"] = per_trial_seq * out["concurrent"]["trials"]
    out["speedup"] = out["sequential_full_wall"] / out["concurrent"]["wall"]
    return out


def bench_mlx(trials: int) -> dict | None:
    """The MLX path in process: the tiny offline model, constrained decoding at temperature 1,
    the paper's archetypes' first one at k = 2..10: batched trials against one at a time."""
    try:
        from arena_players.mlx_player import MLXEngine, MLXPlayer, load_model
    except ImportError:
        return None
    engine = MLXEngine(*load_model("tiny"))
    factory = lambda spec, seed: MLXPlayer(seed, engine=engine, mode="constrained", temperature=1.0)  # noqa: E731
    config = StudyConfig(
        player="mlx:tiny",
        archetypes=("coordination",),
        ks=K_VALUES,
        trials=trials,
        round_trials=False,
        listings=("shared",),
        batch=64,
    )
    run_study(
        config.model_copy(update={"ks": (2,), "trials": 2}), None, player_factory=factory
    )  # warm-up (compilation)
    _, batched, batched_cpu = timed(lambda: run_study(config, None, player_factory=factory))
    _, single, single_cpu = timed(
        lambda: run_study(config.model_copy(update={"batch": 1}), None, player_factory=factory)
    )
    return {
        "trials": len(K_VALUES) * trials,
        "batched": batched,
        "batched_cpu": batched_cpu,
        "single": single,
        "single_cpu": single_cpu,
    }


def bench_mlx_server(trials: int, concurrency: int, max_tokens: int) -> dict:
    """A real local ``mlx_lm.server`` (the tiny offline model, 127.0.0.1): the paper's 7
    archetypes x 9 k x ``trials`` trials run concurrently (trials batched, ``concurrency``
    requests in flight) against one trial at a time, same trials and seeds. Sampling at
    temperature 1 with per-copy seeds (the study's proper setting, no --allow-greedy); run
    twice: with the per-decision ``seed`` sent (replayable; mlx_lm.server then serves requests
    one at a time) and without it (the server may decode requests in one batch)."""
    import json

    from arena_games.matrix.study import PAPER_ARCHETYPES
    from arena_players.mlx_server import mlx_server
    from arena_players.openai_player import OpenAIPlayer

    config = StudyConfig(
        player="openai:mlx-tiny",
        archetypes=PAPER_ARCHETYPES,
        ks=K_VALUES,
        trials=trials,
        round_trials=False,
        listings=("shared",),
        batch=64,
    )
    keys = ("archetype", "k", "trial", "episode_seed", "rotation", "seat_of_player", "seed_0", "seed_1")
    out: dict = {
        "trials": len(PAPER_ARCHETYPES) * len(K_VALUES) * trials,
        "concurrency": concurrency,
        "max_tokens": max_tokens,
        "runs": [],
    }
    for send_seed in (True, False):
        run: dict = {"send_seed": send_seed}
        rows = {}
        # one trial at a time first; each run on a fresh server, so neither inherits the other's caches
        for name, cfg, limit in (
            ("sequential", config.model_copy(update={"batch": 1}), 1),
            ("concurrent", config, concurrency),
        ):
            with mlx_server() as (url, model):

                def factory(limit, url=url, model=model, send_seed=send_seed):
                    return lambda spec, seed: OpenAIPlayer(
                        seed,
                        base_url=url,
                        model=model,
                        api_key_env="",
                        temperature=1.0,
                        max_tokens=max_tokens,
                        concurrency=limit,
                        max_retries=2,
                        send_seed=send_seed,
                        timeout_s=20,
                        backoff_s=0.1,
                    )

                warm = config.model_copy(update={"archetypes": ("coordination",), "ks": (2,), "trials": 2, "batch": 1})
                run_study(warm, None, player_factory=factory(1))  # warm-up (model load, compilation)
                with tempfile.TemporaryDirectory() as tmp:
                    _, wall, cpu = timed(
                        lambda cfg=cfg, limit=limit: run_study(
                            cfg, tmp, player_factory=factory(limit), plot=False, write_episodes=False
                        )
                    )
                    rows[name] = [
                        json.loads(line)
                        for line in (Path(tmp) / "trials.jsonl").read_text().splitlines()
                        if line.strip()
                    ]
            run[name] = {
                "wall": wall,
                "cpu": cpu,
                "trials": len(rows[name]),
                "errors": sum(r["outcome"] != "scored" and r["fault_kind"] in ("error", "timeout") for r in rows[name]),
                "scored": sum(r["outcome"] == "scored" for r in rows[name]),
            }
            print(
                f"mlx-server send_seed={send_seed} {name}: {len(rows[name])} trials, {wall:.1f} s wall, "
                f"{run[name]['errors']} trials with player errors",
                flush=True,
            )
        ident = {name: sorted(tuple(r[k] for k in keys) for r in rs) for name, rs in rows.items()}
        if ident["concurrent"] != ident["sequential"] or len(ident["concurrent"]) != out["trials"]:
            raise SystemExit("mlx-server benchmark: the two runs did not play the same trials")
        run["ratio"] = run["sequential"]["wall"] / run["concurrent"]["wall"]
        out["runs"].append(run)
    return out


def write_mlx_server_lines(r: dict) -> list[str]:
    lines = [
        "## Matrix study against a real local `mlx_lm.server`",
        "",
        f"Written by `bench/matrix_bench.py --mlx-server`; rerun it to refresh. Machine: {machine()}. Load average (1 min) "
        f"{r['load_before']:.1f} before and {r['load_after']:.1f} after. `mlx_lm.server` (mlx-lm {_mlx_lm_version()}) on 127.0.0.1 serving "
        f"the tiny offline test model (`arena_players.tiny_model`, random weights) on this machine's CPU; the study's two "
        f"`openai` copies sample at temperature 1 with separate per-copy seeds (no `--allow-greedy`), "
        f"max_tokens {r['max_tokens']}; the paper's 7 archetypes × k = 2..10 × {r['trials'] // 63} trials "
        f"= {r['trials']} trials (shared listing), each run once concurrently (batches of 64 trials, player concurrency "
        f"{r['concurrency']}) and once one trial at a time (batch 1, concurrency 1); both runs played the same trials "
        "(archetype, k, trial, episode and player seeds checked equal).",
        "",
        "| requests | concurrent wall s | one at a time wall s | ratio | trials scored (conc. / seq.) | trials with player errors |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for run in r["runs"]:
        what = (
            "with the per-decision `seed` (default, replayable)"
            if run["send_seed"]
            else "without `seed` (`send_seed=false`)"
        )
        lines.append(
            f"| {what} | {run['concurrent']['wall']:.1f} | {run['sequential']['wall']:.1f} | "
            f"**{run['ratio']:.2f}×** | {run['concurrent']['scored']} / {run['sequential']['scored']} | "
            f"{run['concurrent']['errors'] + run['sequential']['errors']} |"
        )
    lines += [
        "",
        "- Why the ratio is small: a request here is a few milliseconds of server work (max_tokens tokens from a 2-layer "
        "model), so a trial's time is CPU work (the study's per-trial bookkeeping, HTTP, the server's tokenization and "
        "prompt processing) on the same 2 cores shared by client and server; there is no idle wait for concurrency to "
        "overlap, unlike the fixed 200 ms latency above.",
        "- With the per-decision `seed` (the default, so runs replay) mlx-lm's server does not batch: a request carrying "
        "`seed` is served one at a time (its `_is_batchable` requires `seed is None`), so concurrent requests queue. "
        "Without it the server decodes concurrent requests in one batch, which for this tiny model on a CPU costs more "
        "bookkeeping than it saves. A real model whose decoding dominates (GPU or Apple silicon) is where the server's "
        "batching would pay; not measured here.",
        "- The random-weight model's answers are unreadable, so no trial is scored; every "
        "trial still makes its two requests, so this times the transport and the server, not the parser.",
        "- `arena_players.mlx_server` sends the server's request log to a file: an unread stderr pipe filled after "
        "about 64 KiB of log and stalled the server mid-request (client timeouts) before this was fixed.",
    ]
    return lines


def _mlx_lm_version() -> str:
    try:
        import mlx_lm

        return mlx_lm.__version__
    except Exception:  # pragma: no cover
        return "?"


def write_llm_section(r: dict, load_before: float, load_after: float) -> str:
    c, s = r["concurrent"], r["sequential"]
    seq_note = (
        "the whole study, one trial at a time"
        if s["full"]
        else f"one trial at a time on a subset (coordination, k = 2..10, {s['trials'] // 9} trials each = {s['trials']} trials), "
        "extrapolated per trial to the whole study (every trial waits for two requests of fixed latency, so the "
        "time per trial does not depend on the cell)"
    )
    lines = [
        "## Matrix study against an LLM server",
        "",
        f"Written by `bench/matrix_bench.py --llm`; rerun it to refresh. Machine: {machine()}. Load average (1 min) "
        f"{load_before:.1f} before and {load_after:.1f} after. A local fake OpenAI-compatible server "
        f"(`arena_games.matrix.fakellm`, 127.0.0.1) answers every chat completion after a fixed {r['latency'] * 1000:.0f} ms; "
        "the study's two `openai` player copies (temperature 1) play the paper's 7 archetypes × k = 2..10 × 30 trials "
        "(shared listing), every answer well-formed and read.",
        "",
        "| run | trials | requests | max requests in flight | wall s | CPU s |",
        "|---|---:|---:|---:|---:|---:|",
        f"| concurrent: trials batched per cell, player concurrency {r['concurrency']} | {c['trials']:,} | {c['requests']:,} | "
        f"{c['max_in_flight']} | {c['wall']:.1f} | {c['cpu']:.1f} |",
        f"| one trial at a time (batch 1, concurrency 1) | {s['trials']:,} | {s['requests']:,} | {s['max_in_flight']} | "
        f"{s['wall']:.1f} | {s['cpu']:.1f} |",
        "",
        f"- Sequential time for the whole study: **{r['sequential_full_wall']:.0f} s** ({seq_note}).",
        f"- Speed-up of the concurrent run: **{r['speedup']:.1f}×** (goal: at least 4×) — "
        + ("met." if r["speedup"] >= 4 else "**not met**."),
        "- Against a local `mlx_lm.server`: see the next section (`--mlx-server`).",
    ]
    m = r.get("mlx")
    if m:
        lines += [
            f"- MLX in process (the tiny offline test model, constrained decoding, temperature 1; coordination, k = 2..10, "
            f"{m['trials']} trials): batched {m['batched']:.1f} s wall ({m['batched_cpu']:.1f} s CPU), one trial at a time "
            f"{m['single']:.1f} s wall ({m['single_cpu']:.1f} s CPU): **{m['single'] / m['batched']:.1f}×**. The tiny model "
            "is small, so this measures the batching of the decode loop, not a real model's arithmetic.",
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3, help="study runs per row (the fastest is kept)")
    parser.add_argument("--exact", action="store_true", help="also re-solve all 72 games with rational=True (minutes)")
    parser.add_argument("--llm", action="store_true", help="the LLM-path concurrency benchmark instead (fake server)")
    parser.add_argument("--latency", type=float, default=0.2, help="--llm: the fake server's fixed latency in seconds")
    parser.add_argument(
        "--concurrency", type=int, default=32, help="--llm: the player's request limit in the concurrent run"
    )
    parser.add_argument(
        "--sequential-trials", type=int, default=10, help="--llm: trials per k in the sequential subset"
    )
    parser.add_argument(
        "--mlx-trials", type=int, default=20, help="--llm: trials per k for the in-process MLX comparison"
    )
    parser.add_argument(
        "--full-sequential", action="store_true", help="--llm: run the whole study one trial at a time (~13 min)"
    )
    parser.add_argument(
        "--mlx-server", action="store_true", help="the same ratio against a real local mlx_lm.server (tiny model)"
    )
    parser.add_argument("--server-trials", type=int, default=10, help="--mlx-server: trials per (archetype, k) cell")
    parser.add_argument("--max-tokens", type=int, default=8, help="--mlx-server: the player's max_tokens")
    args = parser.parse_args()
    if args.mlx_server:
        load_before = os.getloadavg()[0]
        result = bench_mlx_server(args.server_trials, args.concurrency, args.max_tokens)
        result.update(load_before=load_before, load_after=os.getloadavg()[0])
        body = "\n".join(write_mlx_server_lines(result))
        write_section("matrix_mlx_server", body)
        print(body)
        return
    if args.llm:
        load_before = os.getloadavg()[0]
        result = bench_llm(args.latency, args.concurrency, args.full_sequential, args.sequential_trials)
        result["mlx"] = bench_mlx(args.mlx_trials)
        body = write_llm_section(result, load_before, os.getloadavg()[0])
        write_section("matrix_llm", body)
        print(body)
        return
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as cache:
        table = bench_table(Path(cache))
        exact = bench_exact() if args.exact else None
        rows = [
            bench_study(p, args.rounds, ind)
            for p, ind in (("matrix_first_label", False), ("matrix_uniform", False), ("matrix_uniform", True))
        ]
    load_after = os.getloadavg()[0]

    lines = [
        "## Matrix games",
        "",
        f"Written by `bench/matrix_bench.py`; rerun it to refresh. Machine: {machine()}. Load average (1 min) "
        f"{load_before:.1f} before and {load_after:.1f} after on this shared machine: wall-clock times include other "
        "jobs' load, CPU times (time.process_time of this process) much less so.",
        "",
        "### Reference table (8 archetypes × k = 2..10, 72 games)",
        "",
        "| what | wall s | CPU s |",
        "|---|---:|---:|",
        f"| cold: enummixed_solve(rational=False) + verify + dedupe, symmetric NE, ceiling, for all 72 | {table['cold_wall']:.1f} | {table['cold_cpu']:.1f} |",
        f"| — of which the solver step (enummixed, regret check, dedupe, disk write) | {table['solver_total']:.1f} | |",
        f"| — of which the reference points (symmetric-NE support enumeration, ceiling) | {table['reference_total']:.1f} | |",
        f"| from the disk cache (new process memory) | {table['disk_wall']:.1f} | {table['disk_cpu']:.1f} |",
        f"| extreme equilibria from the shipped table (checksums, counts and regret verified; no pygambit) | {table['shipped_wall']:.2f} | {table['shipped_cpu']:.2f} |",
        f"| from memory | {table['memory_wall']:.4f} | |",
        f"| `import pygambit` (once per process, not included above) | {table['import']:.1f} | |",
        "",
        "Slowest cell for the solver step: "
        f"{table['slowest'][0]} k={table['slowest'][1]} at {table['per_cell'][table['slowest']][0]:.2f} s. "
        "Solver step per archetype at k = 10: "
        + ", ".join(f"{a} {table['per_cell'][a, 10][0]:.2f} s" for a in ARCHETYPE_NAMES)
        + ".",
        "",
        f"- Full reference table under {TABLE_GOAL_S:.0f} s (cold): **{table['cold_wall']:.1f} s** wall — "
        + ("met." if table["cold_wall"] < TABLE_GOAL_S else "**not met**."),
    ]
    if exact is not None:
        slow = max(exact["per_cell"], key=exact["per_cell"].get)
        lines += [
            f"- Exact cross-check (`rational=True`, all 72 games): {exact['total']:.0f} s wall in all, slowest "
            f"{slow[0]} k={slow[1]} at {exact['per_cell'][slow]:.0f} s; k = 10: "
            + ", ".join(f"{a} {exact['per_cell'][a, 10]:.0f} s" for a in ARCHETYPE_NAMES)
            + ". "
            + (
                "Equilibrium counts equal the floating-point ones in every cell."
                if not exact["mismatched"]
                else f"**Counts differ** in {exact['mismatched']}."
            ),
        ]
    lines += [
        "",
        "### 10,000-trial scripted study",
        "",
        "8 archetypes × k ∈ {2, 4, 6, 8, 10} × 250 trials (rounded up to multiples of k), self-play, every trial played through `Match` with "
        "observation digests, appended to episodes.jsonl and trials.jsonl (fsynced once per batch of 64 trials), then scored "
        f"(arena_core.stats intervals, Holm over all comparisons), trials.csv, cells.csv, summary.json and the two PNG plots; "
        f"reference points warm. Fastest of {args.rounds} runs.",
        "",
        "| player | listing | trials | wall s | CPU s | trials/s (wall) |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['player']} | {'independent' if r['independent'] else 'shared'} | {r['trials']:,} | {r['wall']:.2f} | {r['cpu']:.2f} | {r['trials'] / r['wall']:,.0f} |"
        )
    worst = max(r["wall"] for r in rows)
    worst_cpu = max(r["cpu"] for r in rows)
    lines += [
        "",
        f"- 10,000-trial scripted study under {STUDY_GOAL_S:.0f} s: slowest row **{worst:.2f} s** wall — "
        + ("met." if worst < STUDY_GOAL_S else "**not met** on wall-clock time")
        + (
            f"; its CPU time is at most {worst_cpu:.2f} s"
            + (
                f" (under {STUDY_GOAL_S:.0f} s: the wall time is mostly other jobs' load and fsync waits)"
                if worst_cpu < STUDY_GOAL_S
                else ""
            )
            + "."
            if worst >= STUDY_GOAL_S
            else ""
        ),
    ]
    body = "\n".join(lines)
    write_section("matrix", body)
    print(body)


if __name__ == "__main__":
    main()
