"""Leduc poker by the language model's self-play, measured exactly (issue 31, point 4): the config
and the run; ``bench/leduc_bench.py`` runs it as its methods ``lm_selfplay`` and ``lm_selfplay_floor``
and writes the result files (``bench/results/leduc/lm_selfplay/seed_<k>.jsonl``):

    python bench/leduc_bench.py run --method lm_selfplay --seed 100 --episodes 100000 [--evals 16]

The tiny random-weight MLX model plays both seats of the native ``leduc_poker`` at once (GRPO
self-play with a running baseline per seat, ``arena_train.grpo``) on Leduc's compact view
(``"leduc <seat> <round 1>/<round 2> <public or -> <card>"``, answers ``f``, ``c``, ``r``). The
config is the Kuhn round-3 five-seed config (``bench/train_kuhn_nash.py``,
``r3_16x4_b1_0_e0.05_lr1.2e-4_warm200``) transposed, not tuned on Leduc (see :data:`CONFIG` for
what changed and why). At log-spaced marks (GRPO's ``eval.at``) the exact exploitability
(NashConv / 2) is computed for

- the *last iterate*: the model's sampling distribution (temperature 3) at each of Leduc's 288
  information states (``arena_train.grpo_eval.lm_policy_table``), and
- the *average policy*: the mixture of snapshots taken every :data:`SNAPSHOT_EVERY` steps (the
  initial model included), one drawn per game, made exact as its realisation-equivalent
  behaviour policy, as the Kuhn bench does (``arena_train.exact.average_policy``), summed
  incrementally on the game compiled to arrays (GRPO's ``eval.snapshot_every``:
  ``arena_train.compiled.ReachAverage``; the pure-Python tree walk costs seconds per snapshot on
  Leduc, the compiled one 15 ms).

What trains lives in the package (``arena train`` runs the same config); this file only sets the
config, runs it in a temporary directory and reads the evaluation rows back.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
#: steps between the snapshots of the average policy (3,200 episodes, as the Kuhn runs' evaluations)
SNAPSHOT_EVERY = 50
#: steps between the checkpoints of a kept run (``run(..., run_dir=...)``): 6,400 episodes
CHECKPOINT_EVERY = 100
Emit = Callable[..., None]  # emit(episodes, exploitability, **extra columns), as bench/leduc_bench.py

#: the Kuhn round-3 config (16 deals x group 4 = 64 episodes per step, temperature 3, entropy 0.05,
#: AdamW without momentum, lr 1.2e-4 with 200 warmup updates then linear decay to 0 over the run)
#: with these changes: the game; the model (the tiny model whose tokenizer is trained on Leduc's
#: text alone, as the Kuhn runs use a Kuhn-only one, so another game's text edits do not change the
#: random model); the evaluation is the exact exploitability at the marks alone (no anchor games:
#: ``eval.anchor`` is only a placeholder).
CONFIG: dict[str, Any] = dict(
    name="leduc-lm-selfplay",
    game="leduc_poker",
    self_play=True,
    baseline="role",
    baseline_decay=0.95,
    deals_per_step=16,
    group_size=4,
    group_draws="shared",  # the plays of a group share the deal (and opponents' draws): the scheme these figures were made with
    engine="reference",  # the engine they were made with (the fast engine is another random stream)
    temperature=3.0,
    kl_beta=0.0,
    entropy_beta=0.05,
    optim=dict(learning_rate=1.2e-4, schedule="linear", beta1=0.0, warmup_steps=200),
    eval=dict(anchor="random", every=0, exploitability=True, snapshot_every=SNAPSHOT_EVERY, games=False),
    checkpoint_every=0,
    plot=False,
)
LEDUC_ONLY_MODEL = ("leduc_poker",)
#: seeds for trying settings (none were tried: the config is the Kuhn one transposed) and the curve's
TUNING_SEEDS = (0, 1)
SEEDS = (100, 101, 102)


def leduc_model_path() -> str:
    from arena_players.tiny_model import ensure_tiny_model

    return str(ensure_tiny_model(game_ids=LEDUC_ONLY_MODEL))


def kuhn_floor_changes() -> dict[str, Any]:
    """The training changes of issue 31 point 5's language-model config, chosen on Kuhn's tuning
    seeds (``bench/train_kuhn_lm_floor.py``, ``CHOSEN``), applied here untuned; its step-weighted
    average is ``run(weighting="linear")``."""
    sys.path.insert(0, str(ROOT / "bench"))
    import train_kuhn_lm_floor as floor

    changes = floor.changes(floor.CHOSEN)
    if changes.pop("eval") != {"average": "linear"}:
        raise ValueError(f"{floor.CHOSEN} changes the evaluation beyond its average; transpose it by hand")
    return changes


def eval_marks(steps: int, evals: int, every: int = SNAPSHOT_EVERY) -> list[int]:
    """About ``evals`` steps, geometric from 1 to ``steps``; from ``every`` on, rounded to a
    multiple of it (so a mark's average includes the snapshot taken there); always the last."""
    raw = {max(1, round(steps ** (k / max(1, evals - 1)))) for k in range(evals)}
    return sorted({m if m < every else min(steps, every * round(m / every)) for m in raw} | {steps})


def run(
    seed: int,
    episodes: int,
    evals: int,
    emit: Emit,
    *,
    changes: dict[str, Any] | None = None,
    model_path: str | None = None,
    weighting: str = "uniform",
    run_dir: Path | None = None,
    checkpoint_every: int = CHECKPOINT_EVERY,
) -> None:
    """GRPO self-play of the tiny model on Leduc for ``episodes`` episodes (whole steps of 64),
    emitting ``emit(episodes, avg_exploitability, last_iterate=..., snapshots=..., wall_s=...)`` at
    about ``evals`` log-spaced marks. ``changes``: config keys replaced (tests use a smaller step);
    ``weighting``: how the snapshots are weighted (GRPO's ``eval.average``); ``run_dir``: keep the
    run there with a checkpoint every ``checkpoint_every`` steps and continue it exactly from
    its latest checkpoint when called again (None: a temporary directory, nothing kept).
    ``wall_s`` is the run's own training time, summed over the calls that made it."""
    from arena_train import grpo
    from arena_train.run import checkpoint_dir
    from arena_train.trainer import Parts

    config = {**CONFIG, **(changes or {})}
    steps = max(1, episodes // (config["deals_per_step"] * config["group_size"]))
    marks = eval_marks(steps, evals, config["eval"]["snapshot_every"])
    config.update(seed=seed, steps=steps, model={"path": model_path or leduc_model_path()})
    config["eval"] = {**config["eval"], "at": marks, "average": weighting}
    with tempfile.TemporaryDirectory() as tmp:  # the run's files; only its evaluation rows are kept
        path = run_dir or Path(tmp) / "run"
        timing = path / "timing.jsonl"  # step -> wall seconds of training so far, over every call
        done: dict[int, float] = {}
        if run_dir is not None and (path / "checkpoints").exists():
            latest = checkpoint_dir(path)
            config.update(resume_from=str(latest), checkpoint_every=checkpoint_every)
            done = {int(r["step"]): float(r["wall_s"]) for r in map(json.loads, timing.read_text().splitlines())}
            print(f"leduc_lm_selfplay: seed {seed} resumes at {latest.name}", file=sys.stderr)
        elif run_dir is not None:
            config["checkpoint_every"] = checkpoint_every
        resumed_at = max((s for s in done if s <= _step_of(config)), default=0)
        offset, started = done.get(resumed_at, 0.0), time.perf_counter()
        path.mkdir(parents=True, exist_ok=True)
        with timing.open("a") as fh:

            def progress(step: int, row: dict[str, Any]) -> None:
                fh.write(json.dumps({"step": step, "wall_s": round(offset + time.perf_counter() - started, 2)}) + "\n")
                fh.flush()

            summary = grpo.TRAINER(config, path, Parts(progress=progress))
        walls = {int(r["step"]): float(r["wall_s"]) for r in map(json.loads, timing.read_text().splitlines())}
    for row in summary.metrics:
        if row["step"] in marks:
            emit(
                row["episodes_total"],
                row["eval_avg_exploitability"],
                last_iterate=row["eval_exploitability"],
                snapshots=row["eval_snapshots"],
                wall_s=walls[row["step"]],
            )


def _step_of(config: dict[str, Any]) -> int:
    """The step of the checkpoint a config resumes (0 for a fresh run)."""
    resume = config.get("resume_from")
    return int(Path(resume).name.split("_")[1]) if resume else 0
