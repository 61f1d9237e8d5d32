"""Kuhn poker by self-play, measured exactly, then played as a checkpoint.

    python examples/train_kuhn_selfplay.py [RUN_DIR] [--steps N]

The tiny random-weight model sits in both seats at once (a running baseline per seat, as
SPIRAL's role-conditioned advantages). Every evaluation prints the exact exploitability of its
sampling policy over Kuhn's 12 information states and of the average of its snapshots (0 is a
Nash equilibrium; the uniform random policy: 0.458). Then the saved checkpoint plays a few
games as the registered ``checkpoint`` player would (``checkpoint:run=RUN_DIR``), and a
second run starts from its weights (``init_from``), the first run recorded as its parent.
bench/train_kuhn_nash.py runs the same for 300,000 episodes per seed beside CFR.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from arena_core.registry import make_game, make_player
from arena_core.runner import play_episode
from arena_train import grpo
from arena_train.checkpoint_player import CheckpointPlayer
from arena_train.trainer import Parts

CONFIG = {
    "name": "kuhn-selfplay",
    "game": "kuhn_poker",
    "seed": 0,
    "steps": 60,
    "self_play": True,  # the learner in every seat; no opponent pool
    "baseline": "role",  # running mean return per seat
    "deals_per_step": 16,
    "group_size": 8,
    "temperature": 3.0,
    "kl_beta": 0.0,
    "entropy_beta": 0.1,
    "optim": {"learning_rate": 3e-5},
    "eval": {"anchor": "kuhn_king_only", "every": 10, "exploitability": True},
}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", nargs="?", default=None)
    parser.add_argument("--steps", type=int, default=CONFIG["steps"])
    args = parser.parse_args(argv)
    root = Path(args.run_dir or tempfile.mkdtemp(prefix="kuhn-selfplay-"))
    every = max(1, min(CONFIG["eval"]["every"], args.steps))
    config = dict(CONFIG, steps=args.steps, eval=dict(CONFIG["eval"], every=every))

    def show(step: int, row: Mapping[str, Any]) -> None:
        if "eval_exploitability" in row:
            print(
                f"step {step:4d}  episodes {row['episodes_total']:6d}  exploitability: last {row['eval_exploitability']:.3f}"
                f"  average {row['eval_avg_exploitability']:.3f}  entropy {row.get('entropy', float('nan')):.3f}"
            )

    summary = grpo.TRAINER(config, root / "selfplay", Parts(progress=show))
    report = summary.to_json()

    # the checkpoint as a player (greedy), against the king-only bot on a few deals, both seats
    game = make_game("kuhn_poker")
    trained = CheckpointPlayer(run=str(root / "selfplay"))
    total = 0.0
    for deal in range(6):
        for seat in (0, 1):
            players = (
                [trained, make_player("kuhn_king_only")] if seat == 0 else [make_player("kuhn_king_only"), trained]
            )
            total += play_episode(game, players, deal).end.returns[seat]
    print(f"checkpoint step {trained.step} vs kuhn_king_only: {total / 12:+.3f} per game over 12 games")

    # a new run from its weights: the manifest names the self-play run as the parent
    grpo.TRAINER(
        dict(
            config,
            name="kuhn-from-selfplay",
            steps=1,
            self_play=False,
            pool={"players": ["kuhn_king_only"]},
            init_from=str(root / "selfplay"),
        ),
        root / "child",
    )
    parent = json.loads((root / "child" / "manifest.json").read_text())["parent_run"]
    print(f"child run's parent: {parent}")
    return {**report, "checkpoint_value": total / 12, "child_parent": parent}


if __name__ == "__main__":
    main()
