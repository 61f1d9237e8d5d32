"""Quickstart: one seeded game three ways -- the headless runner, PettingZoo's AEC loop, and
Gymnasium's single-agent view -- then replay the recorded episode.

    python examples/quickstart.py [OUTDIR]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

from arena_core import IllegalActionPolicy, play_episode
from arena_core.env import ArenaGymEnv, aec_env
from arena_core.registry import make_game, make_player
from arena_core.replay import replay_file


def main(outdir: str) -> None:
    game = make_game("kuhn_poker")
    log = Path(outdir) / "kuhn.jsonl"
    players = [make_player("random", seed=1), make_player("first_legal")]
    record = play_episode(
        game, players, seed=7, policy=IllegalActionPolicy(mode="retry", max_retries=1), log_path=str(log)
    )
    print("runner:", [s.action for s in record.steps], record.end.reason.value, record.end.returns)

    env = aec_env(game)
    env.reset(seed=7)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        if terminated or truncated:
            print(f"aec: {agent} ends with {reward} ({info['end_reason']})")
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])  # the one place the mask lives
        env.step(int(legal[-1]))

    gym_env = ArenaGymEnv(game, [make_player("random", seed=2)], seat=0)
    obs, info = gym_env.reset(seed=7)
    done = False
    while not done:
        obs, reward, terminated, truncated, info = gym_env.step(int(np.flatnonzero(obs["action_mask"])[0]))
        done = terminated or truncated
    print("gym: reward", reward, info["end_reason"])

    (again,) = replay_file(log)
    print("replay: verified", len(again.steps), "steps")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp())
