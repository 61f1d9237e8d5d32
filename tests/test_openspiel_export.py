"""Arena games as OpenSpiel games (issue 31, point 2): OpenSpiel's own algorithms on
``as_pyspiel_game(...)`` agree with OpenSpiel on its own implementation of the same game and
with ``arena_train.exact`` on Arena policies (two independent implementations each time)."""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from open_spiel.python import policy as os_policy  # noqa: E402
from open_spiel.python.algorithms import cfr, exploitability  # noqa: E402

from arena_core.errors import ConfigError  # noqa: E402
from arena_core.registry import load  # noqa: E402
from arena_games.openspiel import ArenaPolicy, as_pyspiel_game  # noqa: E402
from arena_train import exact  # noqa: E402


def _uniform(game):
    return exploitability.exploitability(game, os_policy.UniformRandomPolicy(game))


def test_kuhn_uniform_exploitability_equals_openspiels_own_kuhn():
    ours = as_pyspiel_game("kuhn_poker")
    assert ours.num_players() == 2 and ours.get_type().chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert _uniform(ours) == pytest.approx(_uniform(pyspiel.load_game("kuhn_poker")), abs=1e-12)
    assert _uniform(ours) == pytest.approx(0.458333333333, abs=1e-9)


def test_leduc_uniform_exploitability_equals_openspiels_own_leduc():
    """The native Leduc (written from the rules) against OpenSpiel's C++ leduc_poker."""
    assert _uniform(as_pyspiel_game("leduc_poker")) == pytest.approx(
        _uniform(pyspiel.load_game("leduc_poker")), abs=1e-9
    )


def test_native_leduc_exact_uniform_equals_openspiels_own_leduc():
    """The same cross-check through arena_train.exact (faster than OpenSpiel's Python best
    response on a Python game, so it runs in the quick set)."""
    game = load("games", "leduc_poker")()
    table = exact.table_from(game, lambda info: [1 / len(info.actions)] * len(info.actions))
    assert exact.exploitability(game, table).exploitability == pytest.approx(
        _uniform(pyspiel.load_game("leduc_poker")), abs=1e-9
    )


def _kuhn_tables():
    game = load("games", "kuhn_poker")()
    rng = np.random.default_rng(31)
    tables = [exact.table_from(game, lambda info: rng.dirichlet(np.ones(len(info.actions)))) for _ in range(3)]
    solver = exact.CFR(game)
    solver.iterate(40)
    return game, tables + [solver.average(), solver.current()]


def test_kuhn_policies_exploitability_equals_arena_exact_to_1e_9():
    """Random policies, and a trained one (CFR's average and last iterate)."""
    game, tables = _kuhn_tables()
    ours = as_pyspiel_game("kuhn_poker")
    for table in tables:
        theirs = exploitability.exploitability(ours, ArenaPolicy(ours, table))
        assert abs(theirs - exact.exploitability(game, table).exploitability) <= 1e-9


def test_openspiel_cfr_runs_on_the_exported_game_as_on_its_own_kuhn():
    """OpenSpiel's CFR on the Arena game follows the same curve as on OpenSpiel's kuhn_poker."""
    curves = []
    for game in (as_pyspiel_game("kuhn_poker"), pyspiel.load_game("kuhn_poker")):
        solver = cfr.CFRSolver(game)
        curve = []
        for _ in range(15):
            solver.evaluate_and_update_policy()
            curve.append(exploitability.exploitability(game, solver.average_policy()))
        curves.append(curve)
    assert curves[0] == pytest.approx(curves[1], abs=1e-9)
    assert curves[0][-1] < 0.1 < 0.458


def test_information_states_are_canonical_json_with_the_seat():
    ours = as_pyspiel_game("kuhn_poker")
    state = ours.new_initial_state()
    state.apply_action(0)
    text = state.information_state_string(0)
    assert text.startswith('{"observation": {"card": ') and text.endswith('"seat": 0}')
    clone = state.clone()
    clone.apply_action(1)
    assert state.history() == [0] and clone.history() == [0, 1]


def test_a_game_without_enumerable_chance_is_refused_by_name():
    with pytest.raises(ConfigError, match="megagem .*cannot enumerate its deals"):
        as_pyspiel_game("megagem")


def test_a_game_without_chance_starts_at_its_one_deal():
    ours = as_pyspiel_game("openspiel/tic_tac_toe")
    assert ours.get_type().chance_mode == pyspiel.GameType.ChanceMode.DETERMINISTIC
    state = ours.new_initial_state()
    assert state.current_player() == 0 and len(state.legal_actions()) == 9


def test_the_example_runs():
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "examples" / "openspiel_both_ways.py"
    out = subprocess.run([sys.executable, str(script), "10"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "uniform policy on Kuhn: Arena game 0.458333333, OpenSpiel's own 0.458333333" in out.stdout
    assert "always bet on Kuhn: exploitability 0.333333" in out.stdout
    assert "openspiel/leduc_poker seed 7:" in out.stdout


def _network_table(game, seed):
    """A policy of the policy-gradient trainer's network (tanh hidden layer), weights scaled up
    so that it is far from uniform."""
    from arena_train.pg import NumericPolicy

    net = NumericPolicy.init(game.observation_size, game.num_actions, hidden=8, seed=seed)
    net.params["W2"] = net.params["W2"] * 300

    def probs(info):
        x = game.encode_observation(info.pos.state, info.seat)[None, :]
        mask = game.mask(info.pos, info.seat)[None, :]
        p = net.probabilities(x, mask)[0]
        return [p[game.action_id(a)] for a in info.actions]

    return exact.table_from(game, probs)


@pytest.mark.parametrize("game_id", ["kuhn_poker", "leduc_poker"])
def test_network_policy_exploitability_equals_arena_exact(game_id):
    game = load("games", game_id)()
    table = _network_table(game, seed=7)
    assert max(max(d.values()) for d in table.values()) > 0.9  # not near uniform
    ours = as_pyspiel_game(game_id)
    theirs = exploitability.exploitability(ours, ArenaPolicy(ours, table))
    assert abs(theirs - exact.exploitability(game, table).exploitability) <= 1e-9


def test_perfect_recall_holds_for_kuhn_and_leduc_and_a_forgetful_game_is_caught():
    from arena_games.kuhn import KuhnPoker
    from arena_games.openspiel import perfect_recall_violation
    from arena_games.openspiel.export import ArenaGame

    assert perfect_recall_violation(as_pyspiel_game("kuhn_poker")) is None
    assert perfect_recall_violation(as_pyspiel_game("leduc_poker")) is None
    forgetful = ArenaGame(ForgetfulKuhn())  # sees its card only, not the betting
    assert isinstance(forgetful.arena, KuhnPoker)
    problem = perfect_recall_violation(forgetful)
    assert problem is not None and "reached after two different own histories of seat 0" in problem
    with pytest.raises(ConfigError, match="more than 3 decision nodes"):
        perfect_recall_violation(as_pyspiel_game("kuhn_poker"), max_nodes=3)


def _forgetful_class():
    from arena_games.kuhn import KuhnPoker

    class Forgetful(KuhnPoker):
        def observation(self, state, player):
            obs = super().observation(state, player)
            del obs["history"], obs["pot"]  # the pot alone would tell the betting apart
            return obs

    return Forgetful


ForgetfulKuhn = _forgetful_class()
