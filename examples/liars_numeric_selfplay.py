"""A numeric Liar's dice player trained by self-play on the native engine, then seated at the
real TextArena title (issue 42, point 5a), in about a minute at the small size.

    python examples/liars_numeric_selfplay.py RUN_DIR [--games 2000] [--seed 0] [--title-games 10]

The policy is a softmax MLP over the encoding both engines share (own dice, every seat's dice,
the standing bid and its bidder), trained by REINFORCE with a linear value baseline, an entropy
bonus and a pool of past selves (:mod:`arena_train.numeric_selfplay`). Run it again with the same
RUN_DIR and it resumes from its last checkpoint. The full runs (10^5 games a seed) and the skill
gate: bench/liars_specialist.py and docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from arena_core import play_episode
from arena_core.registry import make_game, make_player
from arena_train.numeric_selfplay import TRAINER


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir")
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--title-games", type=int, default=10, help="games on the title against each opponent")
    args = parser.parse_args()
    config = {
        "game": "liars_dice",
        "games": args.games,
        "batch_games": 50,
        "hidden": 32,
        "learning_rate": 1e-3,
        "eval_every": 0,
        "pool_every": 5,
        "average_every": 5,
        "seed": args.seed,
    }
    if (Path(args.run_dir) / "checkpoints").exists():
        config["resume_from"] = args.run_dir  # run again: continue from its latest checkpoint
    summary = TRAINER(config, args.run_dir)
    print(f"trained: {args.games} games, {summary.steps} updates")
    title = make_game("textarena/LiarsDice-v0")
    me = make_player(f'numeric_mixture{{weights = "{summary.files["average"]}"}}', seed=1)
    for opponent in ("random", "liars_call_everything"):
        them = make_player(opponent, seed=2)
        wins = sum(
            play_episode(title, [me, them] if k % 2 == 0 else [them, me], seed=k).end.returns[k % 2] > 0
            for k in range(args.title_games)
        )
        print(f"on the TextArena title against {opponent}: {wins} of {args.title_games} games won")


if __name__ == "__main__":
    main()
