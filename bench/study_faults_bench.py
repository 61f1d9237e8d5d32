"""The matrix study's LLM path under provider faults (issue 43.3): trials per second with 20% of
requests failing (HTTP 500), pipelined trials against the batches of the code before the change.

A local fake OpenAI-compatible server (``arena_games.matrix.fakellm``, 127.0.0.1) answers each
chat completion after a fixed latency and fails a seeded share of them; the study's two
``openai`` player copies (temperature 1, the player's default retries: 3, with backoff from 1 s)
play the paper's 7 archetypes at k = 2..4, 30 trials each. Runs:

- ``before``: the code of a git revision (default ``main``; ``git archive`` of its ``src``) in a
  subprocess against the same server: batches of ``--batch`` trials, each waiting for its slowest
  request's backoff;
- ``batched``: this tree with the player declared unsafe on several threads (the batch path);
- ``pipelined``: this tree as shipped (``--batch`` trials in flight, each written as it ends);
- the last two again without faults, for reference.

Writes the '## Matrix study under provider faults' section of docs/benchmarks.md.

    python bench/study_faults_bench.py [--before main] [--latency 0.1] [--fail-rate 0.2]
    python bench/study_faults_bench.py --worker URL MODE        # one run, prints JSON (used by the above)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))


def study_once(url: str, mode: str, concurrency: int, batch: int) -> dict:
    """One study against the server at ``url``; ``mode`` batched or pipelined (this tree) or
    before (whatever tree this process imports: the old code has only batches)."""
    from arena_games.matrix.study import PAPER_ARCHETYPES, StudyConfig, run_study
    from arena_players.openai_player import OpenAIPlayer

    class Batched(OpenAIPlayer):
        concurrent_act = False

    cls = Batched if mode == "batched" else OpenAIPlayer
    options = dict(base_url=url, model="fake", api_key_env="", temperature=1.0, concurrency=concurrency)
    config = StudyConfig(
        player="openai:fake",
        archetypes=PAPER_ARCHETYPES,
        ks=(2, 3, 4),
        trials=30,
        round_trials=False,
        listings=("shared",),
        batch=batch,
        max_error_share=1.0,
    )
    started = time.perf_counter()
    result = run_study(config, None, player_factory=lambda spec, seed: cls(seed, **options), plot=False)
    wall = time.perf_counter() - started
    trials = sum(c.trials for c in result.cells)
    errors = sum(c.errors for c in result.cells)
    return {"mode": mode, "trials": trials, "errors": errors, "wall": wall}


def old_tree(revision: str, into: Path) -> Path:
    """``src`` of ``revision`` unpacked under ``into`` (read from git, nothing checked out)."""
    archive = into / "src.tar"
    with open(archive, "wb") as fh:
        subprocess.run(["git", "-C", str(ROOT), "archive", revision, "src"], stdout=fh, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def run(server, mode: str, concurrency: int, batch: int, before_src: Path | None = None) -> dict:
    server.requests = server.failed = 0
    if before_src is None:
        out = study_once(server.url, mode, concurrency, batch)
    else:
        env = dict(os.environ, PYTHONPATH=str(before_src))
        cmd = [sys.executable, __file__, "--worker", server.url, mode, "--concurrency", str(concurrency)]
        done = subprocess.run(cmd + ["--batch", str(batch)], env=env, capture_output=True, text=True, check=True)
        out = json.loads(done.stdout.strip().splitlines()[-1])
    out.update(requests=server.requests, failed=server.failed)
    out["trials_per_s"] = out["trials"] / out["wall"]
    out["answers_per_s"] = (server.requests - server.failed) / out["wall"]
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--worker", nargs=2, metavar=("URL", "MODE"), help=argparse.SUPPRESS)
    p.add_argument("--before", default="main", help="the git revision to compare against (default main)")
    p.add_argument("--latency", type=float, default=0.1)
    p.add_argument("--fail-rate", type=float, default=0.2)
    p.add_argument("--concurrency", type=int, default=32)
    p.add_argument("--batch", type=int, default=64)
    args = p.parse_args()
    if args.worker:
        print(json.dumps(study_once(args.worker[0], args.worker[1], args.concurrency, args.batch)))
        return
    from _report import machine, write_section
    from arena_games.matrix.fakellm import FORMATS, FakeChatServer

    well_formed = tuple(f for f in FORMATS if f[1])
    rows = []
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        before_src = old_tree(args.before, Path(tmp))
        for fail_rate in (args.fail_rate, 0.0):
            for mode in ("before", "batched", "pipelined"):
                with FakeChatServer(latency_s=args.latency, seed=1, formats=well_formed, fail_rate=fail_rate) as srv:
                    old = before_src if mode == "before" else None
                    row = run(srv, mode, args.concurrency, args.batch, old)
                row["fail_rate"] = fail_rate
                rows.append(row)
                print(json.dumps(row), file=sys.stderr)
    load.append(os.getloadavg()[0])
    by = {(r["mode"], r["fail_rate"]): r for r in rows}
    before, piped = by["before", args.fail_rate], by["pipelined", args.fail_rate]
    ratio = piped["trials_per_s"] / before["trials_per_s"]
    revision = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", args.before], capture_output=True, text=True
    ).stdout.strip()
    label = {
        "before": f"before (`{args.before}` at {revision}): batches of {args.batch}",
        "batched": "this tree, batches (player declared single-threaded)",
        "pipelined": f"this tree, pipelined ({args.batch} trials in flight)",
    }
    table = "\n".join(
        f"| {label[r['mode']]} | {r['fail_rate']:.0%} | {r['trials']} | {r['errors']} | {r['requests']:,} | "
        f"{r['failed']:,} | {r['wall']:.1f} | {r['trials_per_s']:.1f} | {r['answers_per_s']:.0f} |"
        for r in rows
    )
    body = f"""## Matrix study under provider faults (bench/study_faults_bench.py, issue 43.3)

Written by `bench/study_faults_bench.py`; rerun it to refresh. Machine: {machine()}. Load average (1 min)
{load[0]:.1f} before and {load[1]:.1f} after (the machine is shared). A local fake OpenAI-compatible server
answers each chat completion after {args.latency * 1000:.0f} ms and fails {args.fail_rate:.0%} of them with HTTP 500
(seeded); the study's two `openai` copies (temperature 1, concurrency {args.concurrency} per endpoint, the
player's default retries: 3, backoff from 1 s) play the paper's 7 archetypes at k = 2..4, 30 trials each
({before["trials"]} trials). `requests` counts every request the server saw, `failed` the 500s among them;
answers/s is the answered requests per second of wall time.

| run | faults | trials | trials ended in errors | requests | failed | wall s | trials/s | answers/s |
|---|---:|---:|---:|---:|---:|---:|---:|---:|
{table}

- At {args.fail_rate:.0%} faults the pipelined study runs **{ratio:.1f}×** the trials per second of the code before
  (goal: at least 5×) — {"met" if ratio >= 5 else "not met"}. Batches wait for their slowest request's backoff;
  pipelined, a trial waiting out a backoff holds only itself (the endpoint's slots serve the others).
- Without faults: {by["pipelined", 0.0]["trials_per_s"]:.1f} trials/s pipelined, {by["before", 0.0]["trials_per_s"]:.1f} before
  (fault-free batches lose less, only each batch's tail).
- Pipelined and batched studies record the same trials (tests/test_matrix_llm.py, through a flaky server).
"""
    write_section("study-faults", body)
    print(body)


if __name__ == "__main__":
    main()
