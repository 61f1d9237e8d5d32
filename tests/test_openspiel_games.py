"""OpenSpiel games as Arena games (issue 31, point 1): every registered ``openspiel/<name>``
title passes the conformance kit, PettingZoo's api_test and seed_test included (the kit's
``pettingzoo_api`` check), at its smallest and largest player counts; chance comes from the
deal seed; an engine's own move cap is a truncation, never a draw; any other pyspiel name
plays on request."""

from __future__ import annotations

import pickle
import random

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from arena_core import play_episode  # noqa: E402
from arena_core.episode import EndReason  # noqa: E402
from arena_core.errors import ConfigError  # noqa: E402
from arena_core.registry import list_plugins, load, make_player  # noqa: E402
from arena_core.spec import CONFORMANCE_CHECKS  # noqa: E402
from arena_core.testing import assert_conformance  # noqa: E402
from arena_games.openspiel import OpenSpielTextView, openspiel_game  # noqa: E402
from arena_games.openspiel.titles import TITLES  # noqa: E402

IN_PROCESS = [c for c in CONFORMANCE_CHECKS if c != "cross_process_determinism"]
#: long random games (hundreds of plies over thousands of actions): the whole kit runs in the slow set
LONG = {"chess", "backgammon"}


def _titles() -> list[str]:
    return sorted(p.name for p in list_plugins("games") if p.name.startswith("openspiel/"))


def test_at_least_twenty_titles_are_registered_and_listed():
    names = _titles()
    assert len(names) >= 20
    assert names == sorted(f"openspiel/{n}" for n in TITLES)
    for must in ("kuhn_poker", "leduc_poker", "liars_dice", "goofspiel", "tic_tac_toe", "connect_four", "hex"):
        assert f"openspiel/{must}" in names


def _cases(long: bool) -> list:
    out = []
    for name in _titles():
        if (name.split("/", 1)[1] in LONG) != long:
            continue
        spec = load("games", name).spec
        for n in sorted({spec.min_players, spec.max_players}):
            out.append(pytest.param(name, n, id=f"{name}-{n}p"))
    return out


@pytest.mark.parametrize("name,num_players", _cases(long=False))
def test_title_conforms(name, num_players):
    game = load("games", name)(None, num_players=num_players)
    results = assert_conformance(game, max_examples=3, checks=IN_PROCESS)
    exempt = {r.name for r in results if r.status == "exempt"}
    assert exempt == set(game.spec.exempt_checks)  # declared with the reason, never skipped here


@pytest.mark.slow
@pytest.mark.parametrize("name,num_players", _cases(long=True))
def test_long_title_conforms(name, num_players):
    assert_conformance(load("games", name)(None, num_players=num_players), max_examples=2, checks=IN_PROCESS)


@pytest.mark.parametrize("name", ["openspiel/chess", "openspiel/backgammon"])
def test_long_titles_pass_pettingzoo_api_and_seed_test(name):
    assert_conformance(load("games", name)(), checks=["pettingzoo_api", "mask_matches_legal"], max_examples=1)


def test_cross_process_determinism_sample():
    assert_conformance(load("games", "openspiel/leduc_poker")(), checks=["cross_process_determinism"])


def _random_play(game, seed, turn_cap=None):
    players = [make_player("random", seed=100 + i) for i in range(game.num_players)]
    return play_episode(game, players, seed=seed, turn_cap=turn_cap)


def test_chance_comes_from_the_deal_seed_and_never_from_global_random():
    game = load("games", "openspiel/leduc_poker")()
    before, np_before = random.getstate(), np.random.get_state()
    deals = {game.start(seed).state.history[:2] for seed in range(40)}
    assert len(deals) > 10  # the private cards vary with the seed
    assert game.start(7).state == game.start(7).state
    a, b = _random_play(game, 3), _random_play(game, 3)
    assert [(e.player, e.action) for e in a.events] == [(e.player, e.action) for e in b.events]
    assert a.end.returns == b.end.returns
    assert random.getstate() == before and np.random.get_state()[1].tolist() == np_before[1].tolist()


def test_a_public_card_is_drawn_mid_game_from_the_chance_seed():
    game = load("games", "openspiel/leduc_poker")()
    pos = game.start(0)
    for action in (1, 1):  # check, check: round 1 ends, the public card is dealt
        pos = game.act(pos, game.current_player(pos), action)
    assert len(pos.state.history) == 5  # two private cards, two checks, the public card
    assert "[Public: " in game.observe(pos, 0)["observation"]
    again = game.start(0)
    for action in (1, 1):
        again = game.act(again, game.current_player(again), action)
    assert again.state == pos.state


def test_an_engine_cap_is_a_truncation_not_a_draw():
    capped = openspiel_game("pig", horizon=4, winscore=100)()  # OpenSpiel stops pig after 4 turns
    ends = [_random_play(capped, seed).end for seed in range(3)]
    assert all(e.reason is EndReason.TURN_CAP and e.truncated and e.returns is None for e in ends)
    natural = _random_play(load("games", "openspiel/tic_tac_toe")(), 0).end
    assert natural.reason is EndReason.NATURAL and natural.terminated and natural.returns is not None


def test_the_harness_cap_truncates_a_long_title():
    end = _random_play(load("games", "openspiel/connect_four")(), 0, turn_cap=3).end
    assert end.reason is EndReason.TURN_CAP and end.returns is None


def test_any_pyspiel_name_plays_on_request_and_pickles():
    cls = openspiel_game("y", board_size=5)
    assert cls is openspiel_game("y", board_size=5) and cls.spec.id == "openspiel/y"
    game = cls()
    assert_conformance(game, max_examples=2, checks=IN_PROCESS)
    clone = pickle.loads(pickle.dumps(game))
    assert type(clone) is cls and clone.start(5).state == game.start(5).state
    titled = pickle.loads(pickle.dumps(load("games", "openspiel/kuhn_poker")(None, num_players=3)))
    assert type(titled) is load("games", "openspiel/kuhn_poker") and titled.num_players == 3


def test_unknown_names_and_bad_parameters_are_one_clear_error():
    with pytest.raises(ConfigError, match="not an OpenSpiel game"):
        openspiel_game("no_such_game")
    with pytest.raises(ConfigError, match="cannot load 'pig'"):
        openspiel_game("pig", no_such_parameter=3)


def test_the_text_view_shows_openspiel_strings_and_reads_openspiel_action_names():
    game = load("games", "openspiel/tic_tac_toe")()
    view = game.text_view()
    assert isinstance(view, OpenSpielTextView)
    pos = game.start(0)
    prompt = view.prompt(game, pos, 0)
    assert "..." in prompt.user and "x(1,1)" in prompt.legal
    assert view.parse(game, pos, 0, "I take the centre.\nx(1,1)").action == 4
    leduc = load("games", "openspiel/leduc_poker")()
    lpos = leduc.start(0)
    assert set(view.prompt(leduc, lpos, 0).legal) == {"Call", "Raise"}
    assert "[Private: " in view.prompt(leduc, lpos, 0).user


def test_a_game_decided_on_the_last_allowed_move_keeps_its_result():
    """Only a draw at the engine's cap is a truncation: oshi_zumo scored at its horizon (a rule),
    read as if the horizon were a cap, still gives its winners their result."""
    from arena_games.openspiel import Title
    from arena_games.openspiel.bridge import title_class

    capped = title_class("capped_oshi_zumo", Title("oshi_zumo", {"coins": 10, "horizon": 3}, engine_cap=True))()
    at_cap = [e for e in (_random_play(capped, seed).end for seed in range(12)) if e.ply == 6]  # 3 moves x 2 players
    decided = [e for e in at_cap if e.reason is EndReason.NATURAL]
    cut = [e for e in at_cap if e.reason is EndReason.TURN_CAP]
    assert decided and all(len(set(e.returns)) == 2 for e in decided)  # a winner at the cap keeps the win
    assert cut and all(e.returns is None for e in cut)  # a draw at the cap is no result
    assert openspiel_game("oshi_zumo", coins=10, horizon=3)().os_title.engine_cap is False
