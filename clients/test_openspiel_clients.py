"""OpenSpiel's own tools on exported Arena games, in the client venv (torch): the wheel's
games_sim_test and api_test on every exportable game, api_test's full tree on Leduc, NFSP and DQN
(OpenSpiel's PyTorch agents) through rl_environment, and Shimmy's OpenSpiel wrapper under
PettingZoo's api_test, each beside OpenSpiel's own implementation of the same game."""

from __future__ import annotations

import unittest

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy, rl_environment
from open_spiel.python.algorithms import exploitability

from arena_games.openspiel import as_pyspiel_game
from arena_games.openspiel.suites import full_tree_case, suite


def _run(tests):
    result = unittest.TextTestRunner(stream=open("/dev/null", "w"), verbosity=0).run(tests)  # noqa: SIM115
    problems = [f"{t.id()}: {err.strip().splitlines()[-1]}" for t, err in result.failures + result.errors]
    assert result.wasSuccessful() and result.testsRun > 0, problems
    return result.testsRun


def test_games_sim_test_and_api_test_pass_on_every_exportable_game():
    tests, registered = suite()
    assert len(registered) >= 39, sorted(registered)  # Kuhn, Leduc, matrix, 20 OpenSpiel and 16 TextArena titles
    assert _run(tests) == 6 * len(registered)


def test_api_test_full_tree_on_exported_leduc():
    """Perfect recall, constant sum, no information set shared between seats, and the counts: one
    chance node (all 120 deals drawn at once), 36 decision and 49 terminal nodes a deal, 288
    (information state, seat) pairs -- OpenSpiel's own leduc_poker has 936: its information states
    tell apart the suits, which never matter (Arena's observations show ranks only)."""
    as_pyspiel_game("leduc_poker")
    case = full_tree_case("arena_leduc_poker", nodes=(1, 4320, 5880), perfect_recall_states=288)
    _run(unittest.defaultTestLoader.loadTestsFromTestCase(case))


class _AveragePolicy(policy.Policy):
    """NFSP's average policy as an OpenSpiel policy (as OpenSpiel's nfsp_kuhn_pytorch example)."""

    def __init__(self, game, agents, mode):
        super().__init__(game, list(range(game.num_players())))
        self.agents, self.mode = agents, mode

    def action_probabilities(self, state, player_id=None):
        seat = state.current_player()
        legal = state.legal_actions(seat)
        obs = {"info_state": [None] * 2, "legal_actions": [None] * 2, "current_player": seat}
        obs["info_state"][seat], obs["legal_actions"][seat] = state.information_state_tensor(seat), legal
        step = rl_environment.TimeStep(observations=obs, rewards=None, discounts=None, step_type=None)
        with self.agents[seat].temp_mode_as(self.mode):
            probs = self.agents[seat].step(step, is_evaluation=True).probs
        return {a: probs[a] for a in legal}


def _nfsp(game, episodes, seed):
    from open_spiel.python.pytorch import nfsp

    env = rl_environment.Environment(game)
    env.seed(seed)
    size = env.observation_spec()["info_state"][0]
    agents = [
        nfsp.NFSP(
            p,
            size,
            2,
            [32],
            20000,
            0.1,
            replay_buffer_capacity=20000,
            epsilon_start=0.06,
            epsilon_end=0.001,
            epsilon_decay_duration=episodes,
            min_buffer_size_to_learn=200,
            learn_every=32,
            seed=seed + p,
        )
        for p in range(2)
    ]
    average = _AveragePolicy(env.game, agents, nfsp.MODE.AVERAGE_POLICY)
    start = exploitability.exploitability(env.game, average)
    for _ in range(episodes):
        step = env.reset()
        while not step.last():
            seat = step.observations["current_player"]
            step = env.step([agents[seat].step(step).action])
        assert sum(step.rewards) == 0
        for agent in agents:
            agent.step(step)
    return float(start), float(exploitability.exploitability(env.game, average))


def test_nfsp_lowers_exploitability_on_exported_kuhn_as_on_openspiels_own():
    """3,000 episodes (OpenSpiel's nfsp_kuhn_pytorch example, smaller buffers): the average
    policy's exploitability falls on both (measured: 0.479 -> 0.347 ours, 0.479 -> 0.349 OpenSpiel's)."""
    ours = _nfsp(as_pyspiel_game("kuhn_poker"), 3000, seed=3)
    theirs = _nfsp(pyspiel.load_game("kuhn_poker"), 3000, seed=3)
    print(
        f"NFSP on Kuhn, 3,000 episodes: exported {ours[0]:.3f} -> {ours[1]:.3f}; OpenSpiel's {theirs[0]:.3f} -> {theirs[1]:.3f}"
    )
    assert ours[1] < ours[0] - 0.08 and theirs[1] < theirs[0] - 0.08
    assert abs(ours[1] - theirs[1]) < 0.1


def test_dqn_trains_on_exported_leduc_and_beats_random():
    from open_spiel.python.algorithms import random_agent
    from open_spiel.python.pytorch import dqn

    env = rl_environment.Environment(as_pyspiel_game("leduc_poker"))
    env.seed(5)
    size, actions = env.observation_spec()["info_state"][0], env.action_spec()["num_actions"]
    assert size == 2 + 30  # the seat, then Leduc's own encoding
    learner = dqn.DQN(
        0,
        size,
        actions,
        hidden_layers_sizes=[64],
        replay_buffer_capacity=5000,
        batch_size=32,
        min_buffer_size_to_learn=200,
        learn_every=4,
        epsilon_decay_duration=1500,
    )
    other = random_agent.RandomAgent(1, actions)

    def play(episodes, learn):
        total = []
        for _ in range(episodes):
            step = env.reset()
            while not step.last():
                seat = step.observations["current_player"]
                out = (learner if seat == 0 else other).step(step, is_evaluation=not learn)
                assert out.action in step.observations["legal_actions"][seat]
                step = env.step([out.action])
            assert sum(step.rewards) == 0
            learner.step(step, is_evaluation=not learn)
            total.append(step.rewards[0])
        return float(np.mean(total))

    play(1500, learn=True)
    score = play(500, learn=False)
    print(f"DQN on exported Leduc after 1,500 episodes: {score:.3f} a game against uniform random")
    assert score > 0.3


@pytest.mark.parametrize("game", ["arena kuhn_poker", "arena leduc_poker", "openspiel's kuhn_poker"])
def test_shimmy_wraps_the_game_and_passes_pettingzoos_api_test(game):
    from pettingzoo.test import api_test
    from shimmy import OpenSpielCompatibilityV0

    made = pyspiel.load_game("kuhn_poker") if game.startswith("openspiel") else as_pyspiel_game(game.split()[1])
    api_test(OpenSpielCompatibilityV0(made), num_cycles=200)


def test_importing_pyspiel_games_registers_every_exportable_game_in_a_fresh_interpreter():
    import subprocess
    import sys

    code = (
        "import pyspiel\n"
        "import arena_games.openspiel.pyspiel_games as g\n"
        "print(len(g.REGISTERED), pyspiel.load_game('arena_kuhn_poker'), pyspiel.load_game('arena_textarena_TicTacToe_v0'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    count, kuhn, ttt = out.stdout.split()
    assert int(count) >= 39 and kuhn == "arena_kuhn_poker(players=2)"
    assert ttt.startswith("arena_textarena_TicTacToe_v0(")
