"""Tianshou 2.0 trains a DQN on Arena games through its own PettingZoo wrapper, as its
tic-tac-toe recipe shows (test/pettingzoo/tic_tac_toe.py: PettingZooEnv, DQN beside a masked random
opponent, MultiAgentOffPolicyAlgorithm, Collector), beside PettingZoo's own tic-tac-toe."""

from __future__ import annotations

import numpy as np
import pettingzoo
import pytest
import torch
from pettingzoo.classic import tictactoe_v3
from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.env.pettingzoo_env import PettingZooEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

import arena_core  # noqa: F401  (registers the arena/... names with PettingZoo)

MAKERS = {
    "arena/kuhn_poker-v0": lambda: PettingZooEnv(pettingzoo.make("aec", "arena/kuhn_poker-v0")),
    "pettingzoo tictactoe_v3 (its own)": lambda: PettingZooEnv(tictactoe_v3.env()),
}


def _algorithm(env: PettingZooEnv, seed: int) -> MultiAgentOffPolicyAlgorithm:
    torch.manual_seed(seed)
    space = env.observation_space["observation"] if hasattr(env.observation_space, "spaces") else env.observation_space
    net = Net(state_shape=space.shape, action_shape=env.action_space.n, hidden_sizes=[64, 64])
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.2, eps_inference=0.0)
    learner = DQN(
        policy=policy, optim=AdamOptimizerFactory(lr=1e-3), n_step_return_horizon=1, gamma=1.0, target_update_freq=50
    )
    opponent = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    return MultiAgentOffPolicyAlgorithm(algorithms=[learner, opponent], env=env)


@pytest.mark.parametrize("name", list(MAKERS))
def test_dqn_trains_on_the_env_and_the_episodes_add_up(name):
    """A short DQN run (one epoch of 200 steps: it stopped at its first batch before, with
    MalformedBufferError, when infos changed keys mid-game); then 60 evaluation episodes: every
    one zero-sum on Kuhn, the stacked infos free of NaN. (Illegal moves would raise: the env's
    policy is `raise`.)"""
    make = MAKERS[name]
    np.random.seed(0)
    train, test = DummyVectorEnv([make for _ in range(2)]), DummyVectorEnv([make for _ in range(2)])
    train.seed(0)
    test.seed(1)
    algorithm = _algorithm(make(), seed=0)
    collector = Collector[CollectStats](algorithm, train, VectorReplayBuffer(2000, 2), exploration_noise=True)
    collector.reset()
    collector.collect(n_step=128)
    algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=collector,
            test_collector=None,
            max_epochs=1,
            epoch_num_steps=200,
            collection_step_num_env_steps=16,
            batch_size=32,
            update_step_num_gradient_steps_per_sample=0.25,
            test_in_training=False,
            multi_agent_return_reduction=lambda r: r[:, 0],
            show_progress=False,
        )
    )
    result = Collector[CollectStats](algorithm, test, exploration_noise=False).collect(
        n_episode=60, reset_before_collect=True
    )
    returns = result.returns  # one row per episode, one column per seat
    assert returns.shape == (60, 2)
    if name.startswith("arena/"):
        assert np.allclose(returns.sum(axis=1), 0.0)  # zero-sum, episode by episode
        info = collector.buffer.info
        assert set(info.keys()) >= {"end_reason", "policy_verdict"}
        stored = collector.buffer.sample_indices(0)  # every filled slot
        assert len(stored) > 100 and all(isinstance(v, str) for v in np.asarray(info["end_reason"])[stored])
        assert {"", "natural"} <= set(np.asarray(info["end_reason"])[stored])
