"""A trainer written through the protocol (docs/developing.md, "Adding a trainer"): Monte-Carlo
action values per observation, learned by playing uniformly at random against a fixed opponent;
the trained policy plays the best-valued action. Register ``TRAINER`` as an ``arena.trainers``
entry point and ``arena train`` runs it (``trainer = "mc_values"``); tests/test_trainer_example.py
does both. ``python examples/trainer_example.py RUN_DIR`` trains it on Kuhn poker.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Literal

from arena_core.playerspec import PlayerSpecField
from arena_core.registry import make_game, make_player
from arena_core.runner import play_episode
from arena_core.seeding import derive_seed
from arena_train.config import RunConfig
from arena_train.run import RunDir
from arena_train.trainer import Parts, RunSummary, TrainerPlugin


class MCConfig(RunConfig):
    trainer: Literal["mc_values"] = "mc_values"
    game: str
    opponent: PlayerSpecField
    episodes: int = 3000
    log_every: int = 500
    seed: int = 0


def train(cfg: MCConfig, run: RunDir, parts: Parts[Any]) -> RunSummary:
    """Monte-Carlo action values per observation, by random play against a fixed opponent."""
    game, values = make_game(cfg.game), {}  # (observation, action) -> [return sum, count]
    run.start(cfg.model_dump(mode="json"), trainer="mc_values", seeds={"seed": cfg.seed}, parent=None)
    for episode in range(cfg.episodes):
        seat, seen = episode % game.num_players, []
        learner = make_player("random", seed=derive_seed(cfg.seed, "explore", episode))
        players = [make_player(cfg.opponent, seed=episode) for _ in range(game.num_players)]
        players[seat] = Recorder(learner, seen)
        returns = play_episode(game, players, derive_seed(cfg.seed, "deal", episode)).end.returns
        for key in seen:
            values.setdefault(key, [0.0, 0])[0] += returns[seat]
            values[key][1] += 1
        if (episode + 1) % cfg.log_every == 0:
            parts.report(episode + 1, row := {"step": episode + 1, "states": len({k for k, _ in values})})
            run.metrics.append(row)
    policy: dict[str, tuple[str, float]] = {}
    for (obs, action), (total, n) in values.items():
        if obs not in policy or total / n > policy[obs][1]:
            policy[obs] = (action, total / n)
    (run.path / "policy.json").write_text(json.dumps({obs: a for obs, (a, _) in policy.items()}, indent=1))
    run.finish(status="ok")
    return RunSummary(
        run.path, run.run_id, cfg.episodes, run.metrics.rows(), files={"policy": str(run.path / "policy.json")}
    )


class Recorder:
    """The exploring learner in its seat, recording (observation, action) at each decision."""

    def __init__(self, player: Any, seen: list[tuple[str, str]]) -> None:
        self.name, self.player, self.seen = "mc_learner", player, seen

    def act(self, decision: Any) -> Any:
        action = self.player.act(decision)
        self.seen.append((json.dumps(decision.observation, sort_keys=True), decision.game.action_to_str(action)))
        return action


#: the ``mc_values`` entry point: ``[project.entry-points."arena.trainers"] mc_values = "my_pkg.trainer:TRAINER"``
TRAINER = TrainerPlugin("mc_values", MCConfig, train)

if __name__ == "__main__":
    summary = TRAINER(
        {"game": "kuhn_poker", "opponent": "kuhn_king_only"}, sys.argv[1] if len(sys.argv) > 1 else "runs/mc"
    )
    print(json.dumps(summary.to_json(), indent=1))
