"""An outage is nobody's move: a provider goes down during a tournament, then comes back.

    python examples/tournament_outage.py [OUT_DIR]

A local fake OpenAI-compatible server (``arena_games.matrix.fakellm``, 127.0.0.1) plays the
matrix game for two model entrants beside a bot. The first run finds the provider down: the
games it cuts short are not recorded (nobody's move) and the run says to run the same command
again (exit 4 from the ``arena tournament`` command). With the provider back, the same run
replays exactly those games; every game is then recorded once, each replayed game lists its lost
attempt, and nobody is charged a fault. With ``on_outage = "default"`` an entrant would instead
have the policy play its failed decisions and its games count (docs/tournaments.md).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from arena_games.matrix.fakellm import FORMATS, FakeChatServer
from arena_tournament.config import config_from_dict
from arena_tournament.ratings import summarize
from arena_tournament.results import load_results
from arena_tournament.runner import run_tournament


def main(out: Path) -> None:
    readable = tuple(f for f in FORMATS if f[1])  # the fake's answers the parser reads
    with FakeChatServer(seed=1, formats=readable) as server:

        def model(name: str) -> dict:
            options = {"base_url": server.url, "model": name, "api_key_env": "", "temperature": 1.0, "max_retries": 1}
            return {"name": name, "player": "openai", "options": {**options, "backoff_s": 0.0}}

        config = config_from_dict(
            {
                "name": "outage",
                "game": "matrix",
                "params": {"archetype": "coordination", "k": 3},
                "entrants": [model("model-a"), model("model-b"), {"name": "uniform", "player": "matrix_uniform"}],
                "deals": 2,
                "output": str(out),
                "run": {"preflight": False},
            }
        )
        server.fail_status = 503  # the provider is down
        first = run_tournament(config, quiet=True)
        print(f"provider down: {first.played} games recorded, {first.incomplete} cut short (not recorded)")
        server.fail_status = None  # and back
        second = run_tournament(config, quiet=True)
        print(f"provider back: {second.played} games replayed, {second.incomplete} left")
    summary = summarize(*load_results(out), resamples=0)
    charged = sum(row.faults for row in summary.leaderboard)
    print(
        f"{summary.games_recorded} of {summary.games_scheduled} games recorded, {summary.games_replayed} after "
        f"{summary.attempts_lost} lost attempt(s); faults charged: {charged}"
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="arena-outage-")))
