"""Leduc poker by the language model's self-play, measured exactly (issue 31, point 4).

The tiny random-weight MLX model plays both seats of the native ``leduc_poker`` at once (GRPO
self-play, ``arena_train.grpo.GRPOTrainer`` with ``self_play``, a running baseline per seat) on
Leduc's compact view (``"leduc <seat> <round 1>/<round 2> <public or -> <card>"``, answers ``f``,
``c``, ``r``). The config is the Kuhn round-3 five-seed config (``bench/train_kuhn_nash.py``,
``r3_16x4_b1_0_e0.05_lr1.2e-4_warm200``) transposed, not tuned on Leduc (see :data:`CONFIG` for
what changed and why). At log-spaced marks the exact exploitability (NashConv / 2) is computed for

- the *last iterate*: the model's sampling distribution (temperature 3) at each of Leduc's 288
  information states (``arena_train.grpo.lm_policy_table``), and
- the *average policy*: the uniform mixture of snapshots taken every :data:`SNAPSHOT_EVERY` steps
  (the initial model included), one drawn per game, made exact as its realisation-equivalent
  behaviour policy, as the Kuhn bench does (``arena_train.exact.average_policy``); here summed
  incrementally on the compiled tree (:class:`SnapshotAverage`), because the pure-Python tree
  walk costs seconds per snapshot on Leduc and the average would be recomputed from all of them.

Both on ``arena_train.selfplay_pg.CompiledGame`` (equal to ``arena_train.exact``, tested; 15 ms
instead of 2.4 s). ``run`` is the method ``lm_selfplay`` of ``bench/leduc_bench.py``; this file's
command writes the same result file (``bench/results/leduc/lm_selfplay/seed_<k>.jsonl``: a row
per evaluation, then a ``done`` row; a finished file is skipped, an unfinished one started again):

    python bench/leduc_lm_selfplay.py --seed 100 --episodes 100000 [--evals 16] [--out bench/results/leduc]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
Emit = Callable[..., None]  # emit(episodes, exploitability, **extra columns), as bench/leduc_bench.py

#: the Kuhn round-3 config (16 deals x group 4 = 64 episodes per step, temperature 3, entropy 0.05,
#: AdamW without momentum, lr 1.2e-4 with 200 warmup updates then linear decay to 0 over the run)
#: with these changes: the game; the model (the tiny model whose tokenizer is trained on Leduc's
#: text alone, as the Kuhn runs use a Kuhn-only one, so another game's text edits do not change the
#: random model); the GRPO evaluation is not run (no anchor games: the exact exploitability below
#: replaces it, so ``eval.anchor`` is only a placeholder).
CONFIG: dict[str, Any] = dict(
    name="leduc-lm-selfplay",
    game="leduc_poker",
    self_play=True,
    baseline="role",
    baseline_decay=0.95,
    deals_per_step=16,
    group_size=4,
    temperature=3.0,
    kl_beta=0.0,
    entropy_beta=0.05,
    optim=dict(learning_rate=1.2e-4, schedule="linear", beta1=0.0, warmup_steps=200),
    eval=dict(anchor="random", every=0),
    checkpoint_every=0,
    plot=False,
)
#: steps between the snapshots of the average policy (3,200 episodes, as the Kuhn runs' evaluations)
SNAPSHOT_EVERY = 50
LEDUC_ONLY_MODEL = ("leduc_poker",)
#: seeds for trying settings (none were tried: the config is the Kuhn one transposed) and the curve's
TUNING_SEEDS = (0, 1)
SEEDS = (100, 101, 102)


def leduc_model_path() -> str:
    from arena_players.tiny_model import ensure_tiny_model

    return str(ensure_tiny_model(game_ids=LEDUC_ONLY_MODEL))


class SnapshotAverage:
    """The mixture of policy snapshots as one behaviour policy, kept incrementally on a compiled
    tree: at each information state, the snapshots' probabilities weighted by each snapshot's own
    reach of it times its weight (``arena_train.exact.average_policy``; where no snapshot reaches
    the state, their weighted plain mean, as there). Weights: equal (``"uniform"``) or the step the
    snapshot was taken at (``"linear"``, as GRPO's ``eval.average``; while only the initial model,
    of weight 0, is in, the average is that model)."""

    def __init__(self, tree: Any, weighting: str = "uniform") -> None:
        if weighting not in ("uniform", "linear"):
            raise ValueError(f"weighting is 'uniform' or 'linear', not {weighting!r}")
        self.tree, self.weighting = tree, weighting
        self.reach_sum = np.zeros_like(tree.mask)
        self.plain_sum = np.zeros_like(tree.mask)
        self.weight = 0.0
        self.unweighted: np.ndarray | None = None  # a snapshot of weight 0 (the initial model, linear)
        self.count = 0

    def add(self, probs: np.ndarray, step: int = 0) -> None:
        w = 1.0 if self.weighting == "uniform" else float(step)
        if w == 0:
            self.unweighted = probs.copy()
        self.reach_sum += w * self.tree.own_reach(probs)[:, None] * probs
        self.plain_sum += w * probs
        self.weight += w
        self.count += 1

    def policy(self) -> np.ndarray:
        if not self.count:
            raise ValueError("the average of no snapshots")
        if self.weight == 0:  # only weightless snapshots so far: the initial model alone
            assert self.unweighted is not None
            return self.unweighted
        tot = self.reach_sum.sum(axis=1, keepdims=True)
        out: np.ndarray = np.where(tot > 0, self.reach_sum / np.where(tot > 0, tot, 1.0), self.plain_sum / self.weight)
        return out


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
) -> None:
    """GRPO self-play of the tiny model on Leduc for ``episodes`` episodes (whole steps of 64),
    emitting ``emit(episodes, avg_exploitability, last_iterate=..., snapshots=...)`` at about
    ``evals`` log-spaced marks. ``changes``: config keys replaced (tests use a smaller step);
    ``weighting``: how the snapshots are weighted (:class:`SnapshotAverage`)."""
    from arena_core.registry import make_game
    from arena_train import grpo
    from arena_train.exact import information_states
    from arena_train.grpo_eval import lm_policy_table
    from arena_train.run import RunDir
    from arena_train.selfplay_pg import CompiledGame
    from arena_train.trainer import Parts

    config = {**CONFIG, **(changes or {})}
    per_step = config["deals_per_step"] * config["group_size"]
    steps = max(1, episodes // per_step)
    game = make_game("leduc_poker")
    tree = CompiledGame(game)
    infos = information_states(game)
    marks = set(eval_marks(steps, evals))
    with tempfile.TemporaryDirectory() as tmp:  # the trainer's manifest; nothing else is kept
        cfg = grpo.TRAINER.parse(
            {**config, "seed": seed, "steps": steps, "model": {"path": model_path or leduc_model_path()}}
        )
        trainer = grpo.start(cfg, RunDir.claim(Path(tmp) / "run"), Parts())

        def probs() -> np.ndarray:
            return tree.probs_from_table(lm_policy_table(game, trainer.policy(), infos))

        average = SnapshotAverage(tree, weighting)
        average.add(probs(), 0)  # the initial model is the first snapshot
        for step in range(1, steps + 1):
            grpo.train_step(trainer, step)
            trainer.state.step = step
            current = None
            if step % SNAPSHOT_EVERY == 0:
                current = probs()
                average.add(current, step)
            if step in marks:
                current = probs() if current is None else current
                emit(
                    trainer.state.episodes_total,
                    tree.exploitability(average.policy()),
                    last_iterate=tree.exploitability(current),
                    snapshots=average.count,
                )


def write_seed(seed: int, episodes: int, evals: int, out: Path) -> Path:
    """One seed into ``out/lm_selfplay/seed_<seed>.jsonl``: bench/leduc_bench.py's own writer for
    its ``lm_selfplay`` method (a finished file is skipped, an unfinished one started again)."""
    sys.path.insert(0, str(ROOT / "bench"))
    from leduc_bench import run as run_method

    return run_method("lm_selfplay", seed, episodes, evals, out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, nargs="+", required=True)
    parser.add_argument("--episodes", type=int, default=100_000)
    parser.add_argument("--evals", type=int, default=16)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "leduc")
    args = parser.parse_args(argv)
    per_step = CONFIG["deals_per_step"] * CONFIG["group_size"]
    if args.episodes < per_step or args.evals < 1:
        print(f"--episodes must be at least one step ({per_step}) and --evals at least 1")
        return 2
    for seed in args.seed:
        write_seed(seed, args.episodes, args.evals, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
