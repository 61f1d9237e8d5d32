"""The Gymnasium view with its defaults: masked random play through ``action_masks()``, and
what an illegal action does (the game's default action is played; ``info`` says so).

    python examples/gym_masked.py [GAME_ID]
"""

from __future__ import annotations

import sys

import numpy as np
from gymnasium.utils.env_checker import check_env

from arena_core.env import ArenaGymEnv
from arena_core.registry import make_game


def main(game_id: str = "megagem") -> None:
    env = ArenaGymEnv(make_game(game_id))  # uniform random opponents, illegal actions -> default action
    check_env(env)
    print(f"{game_id}: check_env passed with the defaults")

    rng = np.random.default_rng(0)
    returns = []
    for episode in range(5):
        obs, info = env.reset(seed=episode)
        done = False
        while not done:
            legal = np.flatnonzero(env.action_masks())  # what sb3-contrib's MaskablePPO reads
            assert legal.tolist() == np.flatnonzero(info["action_mask"]).tolist()
            obs, reward, terminated, truncated, info = env.step(int(rng.choice(legal)))
            done = terminated or truncated
        returns.append(reward)
    print(f"masked random play: 5 episodes, learner returns {returns}")

    obs, info = env.reset(seed=99)
    illegal = np.flatnonzero(env.action_masks() == 0)
    if illegal.size:
        obs, reward, terminated, truncated, info = env.step(int(illegal[0]))
        print(
            f"illegal index {int(illegal[0])}: illegal_action={info['illegal_action']}, policy_verdict={info['policy_verdict']}"
        )


if __name__ == "__main__":
    main(*sys.argv[1:])
