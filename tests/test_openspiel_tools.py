"""Exported Arena games under OpenSpiel's own tools (issue 44, points 1-2): registered with
pyspiel (a game string that rebuilds the game, pickling, ``serialize_game_and_state``), tensors
from the games' numeric encodings or a refusal, observers by kind, and OpenSpiel's own
``games_sim_test``, ``api_test`` and ``rl_environment`` on them. The whole exportable set runs
in ``make check-clients`` (``python -m arena_games.openspiel.suites``); here a cheap subset."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import unittest

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from arena_core.errors import ConfigError  # noqa: E402
from arena_core.registry import make_game  # noqa: E402
from arena_games.openspiel import as_pyspiel_game  # noqa: E402
from arena_games.openspiel.suites import full_tree_case, suite  # noqa: E402


def _decision(game, *actions):
    state = game.new_initial_state()
    for a in actions:
        state.apply_action(a)
    return state


def test_the_game_string_carries_the_parameters_and_load_game_rebuilds_the_same_game():
    ours = as_pyspiel_game("matrix", archetype="stag_hunt", k=2)
    text = str(ours)
    assert text.startswith("arena_matrix(") and "archetype=stag_hunt" in text and "k=2" in text
    again = pyspiel.load_game(text)
    assert str(again) == text and again.arena.params == ours.arena.params
    assert str(as_pyspiel_game("matrix")) != text  # the default game is another string
    from arena_games.kuhn import KuhnPoker
    from arena_games.openspiel.export import register

    assert register(KuhnPoker) == "arena_kuhn_poker"  # what as_pyspiel_game does first
    assert str(pyspiel.load_game("arena_kuhn_poker")) == "arena_kuhn_poker(players=2)"


def test_a_parameter_a_game_string_cannot_carry_is_refused_by_name():
    with pytest.raises(ConfigError, match=r"parameter labels=.*cannot be written in an OpenSpiel game string"):
        as_pyspiel_game("matrix", labels=("x", "y", "z"))


def test_pickle_and_serialize_round_trip_in_a_fresh_interpreter_that_exits_cleanly():
    """Unpickled where nothing was registered (the pickle names the game and registers it); the
    interpreter exits 0 (a lambda in OpenSpiel's registry crashes it at exit)."""
    game = as_pyspiel_game("leduc_poker")
    state = _decision(game, 7, 1, 2)
    blob = pickle.dumps((game, state))
    serialized = pyspiel.serialize_game_and_state(game, state)
    code = (
        "import pickle, sys, pyspiel\n"
        "from arena_games.openspiel import export\n"  # registers nothing by itself
        "assert not export._FACTORIES\n"
        "game, state = pickle.loads(sys.stdin.buffer.read())\n"
        "g2, s2 = pyspiel.deserialize_game_and_state(" + repr(serialized) + ")\n"
        "print(str(game), state.history(), str(g2), s2.history(), s2.information_state_string(1))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], input=blob, capture_output=True, timeout=120)
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    text = out.stdout.decode()
    assert text.startswith("arena_leduc_poker(players=2) [7, 1, 2] arena_leduc_poker(players=2) [7, 1, 2] ")
    assert text.strip().endswith(state.information_state_string(1))


def test_tensors_are_the_seat_and_the_games_own_encoding():
    game = as_pyspiel_game("kuhn_poker")
    arena = make_game("kuhn_poker")
    state = _decision(game, 3, 1)
    assert game.information_state_tensor_shape() == [2 + arena.observation_size]
    for seat in (0, 1):
        want = [float(seat == 0), float(seat == 1)] + list(arena.encode_observation(state.position.state, seat))
        assert state.information_state_tensor(seat) == pytest.approx(want)
        assert state.observation_tensor(seat) == pytest.approx(want)


def test_a_game_without_a_usable_encoding_refuses_tensors_with_the_reason():
    game = as_pyspiel_game("openspiel/tic_tac_toe")
    assert not game.get_type().provides_observation_tensor
    state = _decision(game, 4)
    with pytest.raises(pyspiel.SpielError, match="gives no observation_tensor: .*observation_is_state=False"):
        state.observation_tensor(0)
    with pytest.raises(pyspiel.SpielError, match="gives no information_state_tensor: a perfect-information"):
        state.information_state_tensor(0)
    with pytest.raises(ValueError, match="observation_tensor not supported"):
        from open_spiel.python import rl_environment

        rl_environment.Environment(game)


def test_observers_honour_the_kind_asked_or_refuse_it():
    from open_spiel.python.observation import make_observation

    kinds = pyspiel.PrivateInfoType

    def kind(public, private, recall=False):
        return pyspiel.IIGObservationType(public_info=public, perfect_recall=recall, private_info=private)

    kuhn = as_pyspiel_game("kuhn_poker")
    state = _decision(kuhn, 5, 0)  # deal 5: someone holds each card
    assert make_observation(kuhn, kind(True, kinds.NONE)) is None  # no public-only view of Kuhn
    assert make_observation(kuhn, kind(False, kinds.SINGLE_PLAYER)) is None
    both = json.loads(make_observation(kuhn, kind(True, kinds.ALL_PLAYERS)).string_from(state, 0))
    cards = [o["card"] for o in both["observations"]]
    own = [json.loads(state.information_state_string(s))["observation"]["card"] for s in (0, 1)]
    assert cards == own and cards[0] != cards[1]
    assert make_observation(kuhn, kind(False, kinds.NONE)).string_from(state, 0) == ""

    ttt = as_pyspiel_game("openspiel/tic_tac_toe")
    state = _decision(ttt, 4, 0)
    assert make_observation(ttt, kind(False, kinds.SINGLE_PLAYER)).string_from(state, 1) == ""
    assert json.loads(make_observation(ttt, kind(True, kinds.NONE)).string_from(state, 1)) == {"history": [4, 0]}
    assert json.loads(state.information_state_string(0))["history"] == [4, 0]  # perfect recall: the history


def _run(tests):
    result = unittest.TextTestRunner(stream=open("/dev/null", "w"), verbosity=0).run(tests)  # noqa: SIM115
    problems = [f"{t.id()}: {err.splitlines()[-1]}" for t, err in result.failures + result.errors]
    assert result.wasSuccessful() and result.testsRun > 0, problems


def test_openspiels_own_games_sim_test_and_api_test_pass_on_exported_games():
    """The wheel's test classes, unchanged, on a few games (every exportable one: check-clients)."""
    tests, registered = suite(["kuhn_poker", "matrix", "openspiel/tic_tac_toe"])
    assert len(registered) == 3
    assert tests.countTestCases() == 3 * 6
    _run(tests)


def test_api_tests_full_tree_on_exported_kuhn_counts_openspiels_own_information_states():
    """Perfect recall, constant sum, no information set shared between players; the 12
    (information state, player) pairs are OpenSpiel's own number for its kuhn_poker (one chance
    node here: the deal is one draw)."""
    as_pyspiel_game("kuhn_poker")
    case = full_tree_case("arena_kuhn_poker", nodes=(1, 24, 30), perfect_recall_states=12)
    _run(unittest.defaultTestLoader.loadTestsFromTestCase(case))


def test_the_full_tree_check_fails_on_a_wrong_count():
    """The hostile twin: the same class with a wrong expectation fails."""
    as_pyspiel_game("kuhn_poker")
    case = full_tree_case("arena_kuhn_poker", nodes=(4, 24, 30), perfect_recall_states=12)
    result = unittest.TextTestRunner(stream=open("/dev/null", "w"), verbosity=0).run(  # noqa: SIM115
        unittest.defaultTestLoader.loadTestsFromName("test_number_of_nodes", case)
    )
    assert len(result.failures) == 1


def test_rl_environment_runs_a_tabular_q_learner_that_learns_on_exported_kuhn():
    """OpenSpiel's rl_environment on the export: every episode's returns sum to zero, every action
    is legal, and OpenSpiel's tabular Q-learner (it keys on the information-state tensor) beats
    the uniform policy it trained against."""
    from open_spiel.python import rl_environment
    from open_spiel.python.algorithms import random_agent, tabular_qlearner

    env = rl_environment.Environment(as_pyspiel_game("kuhn_poker"))
    env.seed(3)
    assert env.observation_spec()["info_state"] == (11,)
    np.random.seed(3)  # OpenSpiel's agents draw from numpy's global generator; seeded for the test
    learner = tabular_qlearner.QLearner(player_id=0, num_actions=2, step_size=0.1)
    other = random_agent.RandomAgent(player_id=1, num_actions=2)

    def play(episodes, learn):
        total = 0.0
        for _ in range(episodes):
            step = env.reset()
            while not step.last():
                seat = step.observations["current_player"]
                agent = learner if seat == 0 else other
                action = agent.step(step, is_evaluation=not learn).action
                assert action in step.observations["legal_actions"][seat]
                step = env.step([action])
            assert sum(step.rewards) == 0
            learner.step(step, is_evaluation=not learn)
            total += step.rewards[0]
        return total / episodes

    play(2000, learn=True)
    assert play(500, learn=False) > 0.25  # the uniform policy against itself scores 0
