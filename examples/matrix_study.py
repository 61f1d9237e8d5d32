"""A small one-shot matrix-game study: two scripted players in self-play, scored against Nash.

    python examples/matrix_study.py [OUT_DIR]

Writes episodes.jsonl, trials.csv, cells.csv, summary.json, study.png and choices.png per
player under OUT_DIR (default: ./matrix_study_out), for the shared and the independent
listing; then merges both players into one figure per archetype (OUT_DIR/merged). Swap the player spec for any registered player (an
LLM player, say) to run the real study; the CLI is ``arena study``.
"""

import sys
from pathlib import Path

from arena_games.matrix.figures import merge_runs
from arena_games.matrix.study import StudyConfig, run_study

out = Path(sys.argv[1] if len(sys.argv) > 1 else "matrix_study_out")
for player in ("matrix_max_payoff", "matrix_uniform"):
    config = StudyConfig(
        player=player,
        archetypes=("coordination", "stag_hunt", "battle_of_sexes", "chicken"),
        ks=(2, 3, 4),
        trials=48,  # a multiple of 2k for every k: each rotation equally often
        seed=7,
    )
    result = run_study(config, out / player)
    print(f"== {player}: self-play, {config.trials} trials per cell ({result.seconds:.1f} s)")
    print(
        f"{'listing':11s} {'archetype':16s} {'k':>2s} {'welfare':>8s} {'interval':>16s} {'s':>6s} {'Nash':>6s} {'uniform':>7s}  verdict"
    )
    for c in result.cells:
        print(
            f"{c.listing:11s} {c.archetype:16s} {c.k:2d} {c.mean:8.3f} [{c.low:6.3f}, {c.high:6.3f}] {c.score:6.3f} {c.baseline:6.3f} "
            f"{c.uniform:7.3f}  {c.verdict}" + ("  (near the worst joint cell)" if c.near_worst else "")
        )
    print(f"plot: {result.files['plot']}")
print(
    "merged:",
    ", ".join(str(p) for p in merge_runs([out / "matrix_max_payoff", out / "matrix_uniform"], out / "merged")),
)
