"""OpenSpiel's own test suites, as shipped in its wheel, on exported Arena games.

    python -m arena_games.openspiel.suites                 # every exportable registered game
    python -m arena_games.openspiel.suites kuhn_poker my_game

Runs, for each game, ``open_spiel/python/tests/games_sim_test.py``'s ``test_game_sim`` (and
``test_multiplayer_game`` for each player count a game allows) and the partial-tree class of
``open_spiel/integration_tests/api_test.py`` (legal actions, observation and information-state
errors, private and public observations, sequence lengths), unchanged: the games are registered
with ``pyspiel`` first, so the wheel's modules see them as their own. :func:`full_tree_case`
adds api_test's full-tree class (perfect recall, node counts, constant sum, no infoset shared
between players) for a small game with the node counts you expect.
"""

from __future__ import annotations

import sys
import unittest
from collections.abc import Sequence
from typing import Any

import pyspiel

from .export import register_all


def _sim_tests(short_names: Sequence[str]) -> list[unittest.TestCase]:
    from open_spiel.python.tests import games_sim_test

    case = games_sim_test.GamesSimTest
    wanted = set(short_names)
    names = unittest.defaultTestLoader.getTestCaseNames(case)
    chosen = []
    for name in names:
        if name.startswith("test_game_sim_") and name.removeprefix("test_game_sim_") in wanted:
            chosen.append(case(name))
        elif name.startswith("test_multiplayer_game_") and name.split("p_", 1)[-1] in wanted:
            chosen.append(case(name))
    return chosen


def partial_tree_case(short_name: str) -> type[unittest.TestCase]:
    """api_test's partial-tree class bound to the registered game ``short_name``."""
    from open_spiel.integration_tests import api_test

    return type(
        f"EnforceAPIOnPartialTree_{short_name}",
        (api_test.EnforceAPIOnPartialTreeBase,),
        {"game_name": short_name, "game": pyspiel.load_game(short_name)},
    )


def full_tree_case(
    game_string: str, *, nodes: tuple[int, int, int], perfect_recall_states: int
) -> type[unittest.TestCase]:
    """api_test's full-tree class on ``game_string`` expecting ``nodes`` = (chance, decision,
    terminal) states and ``perfect_recall_states`` (information state, player) pairs."""
    from open_spiel.integration_tests import api_test

    name = f"arena_full_{game_string}"
    api_test.TOTAL_NUM_STATES[name] = nodes
    api_test.PERFECT_RECALL_NUM_STATES[name] = perfect_recall_states
    return type(
        f"EnforceAPIOnFullTree_{game_string}",
        (api_test.EnforceAPIOnFullTreeBase,),
        {"game_name": name, "game": pyspiel.load_game(game_string)},
    )


def suite(game_ids: Sequence[str] | None = None) -> tuple[unittest.TestSuite, dict[str, str]]:
    """The suite for ``game_ids`` (default: every exportable registered game), and the games
    registered (``{game id: short name}``)."""
    registered = register_all(game_ids)
    tests: list[Any] = _sim_tests(list(registered.values()))
    for short in registered.values():
        tests.append(unittest.defaultTestLoader.loadTestsFromTestCase(partial_tree_case(short)))
    return unittest.TestSuite(tests), registered


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    tests, registered = suite(args or None)
    missing = sorted(set(args) - set(registered))
    if missing:
        print(f"not exportable (or not installed): {', '.join(missing)}", file=sys.stderr)
        return 2
    print(f"OpenSpiel's games_sim_test and api_test on {len(registered)} exported games", file=sys.stderr)
    result = unittest.TextTestRunner(stream=sys.stderr, verbosity=1).run(tests)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    raise SystemExit(main())
