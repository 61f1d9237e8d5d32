"""The conformance kit over every registered game (third-party plugins included), at the
smallest and largest player counts each declares."""

import pytest

from arena_core.registry import availability, list_plugins, load
from arena_core.testing import assert_conformance, registered_games

#: families with a dedicated conformance test of their own (same kit, tuned example counts;
#: liars_dice: tests/test_liars_dice.py, whose six-seat games run a few hundred decisions)
DEDICATED_PREFIXES = ("textarena/", "openspiel/", "liars_dice")


def _cases():
    """Every registered game that imports here; the others must be listed with a reason."""
    cases = []
    for game_id in registered_games():
        if game_id.startswith(DEDICATED_PREFIXES):
            continue
        if not availability("games", game_id)[0]:
            continue  # unavailable here (reported by `arena list --check`, tested below)
        spec = load("games", game_id).spec
        for n in sorted({spec.min_players, spec.max_players}):
            cases.append(pytest.param(game_id, n, id=f"{game_id}-{n}p"))
    return cases


@pytest.mark.parametrize("game_id,num_players", _cases())
def test_registered_game_conforms(game_id, num_players):
    game = load("games", game_id)(None, num_players=num_players)
    assert_conformance(game, max_examples=10)


def test_unavailable_games_are_explained():
    for info in list_plugins("games"):
        ok, reason = availability("games", info.name)
        if not ok:
            assert reason.strip(), f"{info.name} is unavailable without a reason"
