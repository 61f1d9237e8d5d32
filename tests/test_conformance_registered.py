"""The conformance kit over every registered game (third-party plugins included), at the
smallest and largest player counts each declares."""
import pytest

from arena_core.registry import load
from arena_core.testing import assert_conformance, registered_games


def _cases():
    cases = []
    for game_id in registered_games():
        spec = load("games", game_id).spec
        for n in sorted({spec.min_players, spec.max_players}):
            cases.append(pytest.param(game_id, n, id=f"{game_id}-{n}p"))
    return cases


@pytest.mark.parametrize("game_id,num_players", _cases())
def test_registered_game_conforms(game_id, num_players):
    game = load("games", game_id)(None, num_players=num_players)
    assert_conformance(game, max_examples=10)
