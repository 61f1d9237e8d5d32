"""Stable-Baselines3 and sb3-contrib on Arena's Gymnasium env, as their docs show: SB3's
``make_vec_env`` by registry id (it asks for ``render_mode="rgb_array"``), SB3's ``check_env``,
and sb3-contrib's MaskablePPO with ``MultiInputPolicy`` reading ``action_masks()``."""

from __future__ import annotations

import numpy as np
import pytest
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks
from stable_baselines3.common.env_checker import check_env
from stable_baselines3.common.env_util import make_vec_env

import arena_core  # noqa: F401  (registers the arena/... names with Gymnasium)


def test_make_vec_env_by_registry_id():
    with pytest.warns(UserWarning, match="rgb_array"):  # SB3 asks for it; we render none, and say so
        venv = make_vec_env("arena/kuhn_poker-v0", n_envs=2, seed=0)
    obs = venv.reset()
    assert obs["observation"].shape == (2, 9) and obs["action_mask"].shape == (2, 2)
    venv.close()


def test_sb3_check_env():
    import gymnasium

    check_env(gymnasium.make("arena/kuhn_poker-v0").unwrapped)


def _mean_return(model, venv, episodes, rng):
    done_returns, obs = [], venv.reset()
    while len(done_returns) < episodes:
        masks = get_action_masks(venv)
        if model is None:  # the uniform policy over legal actions
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        else:
            actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
        assert all(m[a] for m, a in zip(masks, actions))  # the masks honoured
        obs, rewards, dones, infos = venv.step(actions)
        done_returns += [float(r) for r, d in zip(rewards, dones) if d]
    return float(np.mean(done_returns))


def test_maskable_ppo_learns_kuhn_against_a_random_opponent():
    """MaskablePPO in seat 0 against the uniform random default opponent: after 3,000 steps its
    greedy policy's mean return (600 episodes) beats the uniform policy's in the same seat."""
    venv = make_vec_env("arena/kuhn_poker-v0", n_envs=4, seed=0, env_kwargs={"render_mode": None})
    model = MaskablePPO("MultiInputPolicy", venv, n_steps=128, batch_size=64, seed=0, verbose=0)
    model.learn(3000)
    rng = np.random.default_rng(0)
    uniform = _mean_return(None, venv, 600, rng)
    trained = _mean_return(model, venv, 600, rng)
    print(f"MaskablePPO on Kuhn: uniform {uniform:.3f}, trained {trained:.3f}")
    assert trained > uniform + 0.15, (uniform, trained)


def test_the_docs_snippet_runs():
    """docs/ecosystem.md's SB3 block, as written."""
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "ecosystem.md").read_text()
    (code,) = [b for b in re.findall(r"^```python\n(.*?)^```", doc, flags=re.M | re.S) if "stable_baselines3" in b]
    exec(compile(code, "docs/ecosystem.md (SB3)", "exec"), {})
