"""OpenSpiel and Arena, both ways (docs/openspiel.md). Needs the `openspiel` extra.

1. An OpenSpiel title as an Arena game: a seeded random game of openspiel/leduc_poker,
   replayed from its record.
2. Arena games as OpenSpiel games: Arena's native Leduc poker as a pyspiel game
   (`as_pyspiel_game("leduc_poker")`); OpenSpiel's CFR on Arena's Kuhn poker; OpenSpiel's
   exploitability of the uniform policy on it beside OpenSpiel's own kuhn_poker; and an Arena
   policy table (arena_train.exact's keys) read by OpenSpiel (`ArenaPolicy`).

    python examples/openspiel_both_ways.py [CFR_ITERATIONS]
"""

from __future__ import annotations

import sys

import pyspiel
from open_spiel.python import policy as os_policy
from open_spiel.python.algorithms import cfr, exploitability

from arena_core import play_episode
from arena_core.registry import load, make_player
from arena_games.openspiel import ArenaPolicy, as_pyspiel_game
from arena_train import exact


def play_an_openspiel_title() -> None:
    game = load("games", "openspiel/leduc_poker")()
    players = [make_player("random", seed=10 + i) for i in range(game.num_players)]
    record = play_episode(game, players, seed=7)
    moves = " ".join(f"p{e.player}:{e.action}" for e in record.events)
    print(f"openspiel/leduc_poker seed 7: {moves} -> {record.end.reason.value} {record.end.returns}")


def openspiel_on_arena_games(iterations: int) -> None:
    leduc = as_pyspiel_game("leduc_poker")  # Arena's native Leduc, seen by OpenSpiel
    print(f"{leduc.get_type().long_name}: {leduc.num_distinct_actions()} actions, {leduc.max_chance_outcomes()} deals")
    solver = cfr.CFRSolver(as_pyspiel_game("kuhn_poker"))
    for _ in range(iterations):
        solver.evaluate_and_update_policy()
    kuhn = as_pyspiel_game("kuhn_poker")
    print(
        f"OpenSpiel CFR on Arena kuhn_poker, {iterations} iterations: exploitability "
        f"{exploitability.exploitability(kuhn, solver.average_policy()):.6f}"
    )
    ours = exploitability.exploitability(kuhn, os_policy.UniformRandomPolicy(kuhn))
    theirs = pyspiel.load_game("kuhn_poker")
    print(
        f"uniform policy on Kuhn: Arena game {ours:.9f}, OpenSpiel's own "
        f"{exploitability.exploitability(theirs, os_policy.UniformRandomPolicy(theirs)):.9f}"
    )
    # an Arena policy table (keys as in arena_train.exact: the observation as canonical JSON)
    always_bet = exact.table_from(load("games", "kuhn_poker")(), lambda info: [0.0, 1.0])  # (pass, bet)
    print(
        f"always bet on Kuhn: exploitability {exploitability.exploitability(kuhn, ArenaPolicy(kuhn, always_bet)):.6f}"
    )


if __name__ == "__main__":
    play_an_openspiel_title()
    openspiel_on_arena_games(int(sys.argv[1]) if len(sys.argv) > 1 else 50)
