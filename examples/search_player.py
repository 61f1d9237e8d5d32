"""The `search` player: determinized Monte Carlo with a registered player as rollout policy.

    python examples/search_player.py            # Kuhn poker vs random, a learned opponent model, one MegaGem game

On Kuhn it samples the opponent's card (``sample_hidden_state``) in every playout; with
``opponents = "learned"`` it also learns the opponent's play across the games it is told the end
of (``end_episode``, which the game loops call) and weights its beliefs by it. On MegaGem it redeals the hidden hands
and decks and lets the expert play the playouts out.
"""

from __future__ import annotations

import sys

from arena_core import play_episode
from arena_core.registry import make_game, make_player
from arena_players.search import SearchPlayer


def main(deals: int = 20) -> None:
    kuhn = make_game("kuhn_poker")
    search = SearchPlayer(seed=0, simulations=100, rollout="random")  # also: make_player("search{simulations = 100}")
    rnd = make_player("random", seed=1)
    total = 0.0
    for deal in range(deals):
        total += play_episode(kuhn, [search, rnd], deal).end.returns[0]
        total += play_episode(kuhn, [rnd, search], deal).end.returns[1]
    print(
        f"kuhn: search vs random {total / (2 * deals):+.2f} a game over {2 * deals} games, "
        f"{search.simulations_per_second():.0f} simulations/s"
    )

    learner = SearchPlayer(seed=0, simulations=100, opponents="learned")  # one object: its model carries over
    king = make_player("kuhn_king_only")
    total = 0.0
    for deal in range(5 * deals):
        for seat in (0, 1):
            players = [learner, king] if seat == 0 else [king, learner]
            total += play_episode(kuhn, players, deal).end.returns[seat]  # each end told: end_episode
    print(
        f"kuhn: search{{opponents = learned}} vs kuhn_king_only {total / (10 * deals):+.2f} a game over "
        f"{10 * deals} games (best response: +0.25), {learner.stats['episodes_learned']} episodes learned"
    )

    mega = make_game("megagem")
    search = SearchPlayer(seed=0, simulations=4, rollout="megagem_fair_value", candidates=3)
    players = [search, make_player("megagem_expert", seed=1), make_player("megagem_market", seed=2)]
    record = play_episode(mega, players, 7)
    print(
        f"megagem: scores {record.end.returns} (search in seat 0), {search.stats['decisions']} decisions, "
        f"rollout faults {search.stats['rollout_faults']}"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
