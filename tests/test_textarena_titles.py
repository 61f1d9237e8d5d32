"""Every registered TextArena title played to the end with random-legal players, for several
seeds, with determinism, bounds and no-forfeit checks; unavailable titles listed with reasons."""

from __future__ import annotations

import py_compile
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("textarena")

from arena_core.match import Match  # noqa: E402
from arena_core.policy import IllegalActionPolicy  # noqa: E402
from arena_core.registry import availability, list_plugins, make_game  # noqa: E402
from arena_core.runner import play_episode  # noqa: E402
from arena_games.textarena.adapter import EndKind, LegalMethod  # noqa: E402
from arena_games.textarena.titles import TITLES, UNAVAILABLE  # noqa: E402
from arena_players.random_player import RandomPlayer  # noqa: E402

SEEDS = (0, 1, 2)


def _player_counts(spec):
    return sorted({spec.min_players, min(spec.max_players, max(spec.min_players, 3))})


CASES = [
    pytest.param(env_id, n, id=f"{env_id}-{n}p")
    for env_id in TITLES
    for n in _player_counts(make_game(f"textarena/{env_id}").spec)
]


def _play(game, seed):
    players = [RandomPlayer(seed=10 + i) for i in range(game.num_players)]
    return play_episode(game, players, seed, policy=IllegalActionPolicy(mode="raise"))


@pytest.mark.parametrize("env_id,num_players", CASES)
def test_title_plays_to_the_end_deterministically(env_id, num_players):
    game = make_game(f"textarena/{env_id}", num_players=num_players)
    lo, hi = game.spec.reward_bounds
    for seed in SEEDS:
        first = _play(game, seed)
        # the raise policy would have raised on any illegal move: random-legal play never forfeits
        assert first.end is not None and first.end.reason.value in ("natural", "turn_cap", "game_error")
        assert not [e for e in first.events if e.type == "policy"]
        assert len(first.steps) <= game.spec.max_length
        if first.end.truncated:  # TextArena's own limit or an upstream dead end: no result, never a draw
            assert first.end.returns is None
        else:
            assert all(lo <= r <= hi for r in first.end.returns)
        # a fresh instance (no shared cache) replays the same game from the same seed
        again = _play(make_game(f"textarena/{env_id}", num_players=num_players), seed)
        assert [s.action for s in again.steps] == [s.action for s in first.steps]
        assert [s.obs_digest for s in again.steps] == [s.obs_digest for s in first.steps]
        assert again.end.returns == first.end.returns
    # the typed end: never a TextArena forfeit or a livelock on the canonical line; a dead end
    # only in titles whose spec documents the upstream bug behind it
    match = Match(game, SEEDS[0])
    for step in _play(game, SEEDS[0]).steps:
        match.submit(step.player, step.action)
    kind = match.position.state.outcome.kind
    assert kind not in (EndKind.FORFEIT, EndKind.PLAYER_ERROR)
    if kind is EndKind.ENV_ERROR:
        assert TITLES[env_id].known_bugs


def test_different_seeds_give_different_deals():
    game = make_game("textarena/LiarsDice-v0")
    dice = {str(game.start(seed).state.inbox[0][-1].text) for seed in range(6)}
    assert len(dice) > 1


def test_registered_titles_meet_the_issue_counts():
    exact = [t for t, s in TITLES.items() if s.method is not LegalMethod.FREE_TEXT]
    multi = [t for t, s in TITLES.items() if s.players[1] >= 3]
    assert len(TITLES) >= 30 and len(exact) >= 15 and len(multi) >= 4
    for needed in (
        "SimpleBlindAuction-v0",
        "SimpleNegotiation-v0",
        "KuhnPoker-v0",
        "LiarsDice-v0",
        "Poker-v0",
        "IndianPoker-v0",
    ):
        assert needed in TITLES


def test_every_title_and_unavailable_one_is_an_entry_point():
    names = {p.name for p in list_plugins("games")}
    for env_id in list(TITLES) + list(UNAVAILABLE):
        assert f"textarena/{env_id}" in names
    info = next(p for p in list_plugins("games") if p.name == "textarena/TicTacToe-v0")
    assert info.extras == ("textarena",)


@pytest.mark.parametrize("env_id", sorted(UNAVAILABLE))
def test_unavailable_titles_are_listed_with_their_reason(env_id):
    ok, reason = availability("games", f"textarena/{env_id}")
    assert not ok
    assert UNAVAILABLE[env_id] in reason


def _ta_env_dir(name: str) -> Path:
    import textarena

    return Path(textarena.__file__).parent / "envs" / name


@pytest.mark.parametrize("name", ["Chess", "Checkers", "ReverseTicTacToe", "IteratedStagHunt", "Coup"])
def test_the_python_3_11_reason_is_true(name, tmp_path):
    if "3.12" not in UNAVAILABLE[f"{name}-v0"]:
        pytest.fail("reason changed; update this test")
    import sys

    if sys.version_info >= (3, 12):
        pytest.skip("the syntax compiles on 3.12+")
    with pytest.raises(py_compile.PyCompileError):
        py_compile.compile(str(_ta_env_dir(name) / "env.py"), cfile=str(tmp_path / "x.pyc"), doraise=True)


def test_known_upstream_bugs_are_in_the_spec():
    kuhn = make_game("textarena/KuhnPoker-v0")
    assert "#189" in kuhn.spec.description
    assert "livelock" in make_game("textarena/PublicGoodsGame-v0").spec.description


def test_turn_limit_draw_is_truncation_not_a_draw():
    """Crusade ends after 40 moves; equal scores there are TextArena's 'draw' at the limit."""
    game = make_game("textarena/Crusade-v0")
    kinds = {}
    for seed in range(12):
        pos = game.start(seed)
        rng = random.Random(seed)  # a private generator for the test's choices
        while not game.is_over(pos):
            p = game.current_player(pos)
            pos = game.act(pos, p, rng.choice(game.legal(pos, p)))
        outcome = pos.state.outcome
        kinds.setdefault(outcome.kind, outcome)
    assert EndKind.TURN_LIMIT in kinds, f"no seed reached an undecided move limit: {kinds}"
    limit = kinds[EndKind.TURN_LIMIT]
    assert limit.kind.truncated and len(set(limit.returns)) == 1 and "limit" in limit.reason.lower()
    if EndKind.NATURAL in kinds:
        assert not kinds[EndKind.NATURAL].kind.truncated


def test_match_reports_the_turn_limit_as_truncation_without_a_result():
    from arena_core.episode import EndReason
    from arena_core.match import Match

    game = make_game("textarena/Crusade-v0")
    for seed in range(12):
        match = Match(game, seed)
        rng = random.Random(seed)  # a private generator for the test's choices
        while not match.done:
            p = match.to_act()
            match.submit(p, rng.choice(match.legal_actions(p)))
        if match.position.state.outcome.kind is EndKind.TURN_LIMIT:
            assert match.end.reason is EndReason.TURN_CAP
            assert match.end.truncated and not match.end.terminated and match.end.returns is None
            return
        assert match.end.reason is EndReason.NATURAL and match.end.returns is not None
    pytest.fail("no seed reached TextArena's move limit")


CHECKED = sorted(t for t, spec in TITLES.items() if spec.check is not None)


@settings(max_examples=25, deadline=None)
@given(env_id=st.sampled_from(CHECKED), seed=st.integers(0, 2**20), choice=st.integers(0, 2**20))
def test_a_titles_check_agrees_with_its_legal_set_on_the_whole_vocabulary(env_id, seed, choice):
    """The check that judges a submitted move (the legal set is then built only on demand) says
    yes exactly to the strings of the legal set, at every position of a random-legal game."""
    spec = TITLES[env_id]
    game = make_game(f"textarena/{env_id}")
    rng = random.Random(choice)  # the test's own generator
    pos = game.start(seed)
    while not game.is_over(pos):
        p = game.current_player(pos)
        env = game._live_at(pos.state, take=False).env
        legal = set(spec.legal(env, p))
        assert legal, (env_id, pos.ply)  # titles with a check never have an empty legal set in play
        assert {a for a in spec.vocabulary if spec.check(env, p, a)} == legal, (env_id, pos.ply)
        if env_id == "Othello-v0":  # read from the title's stored list: the same as its own computation
            valid = env._valid_moves("B" if p == 0 else "W")
            assert legal == ({f"[{r}, {c}]" for r, c in valid} or {"[pass]"})
        pos = game.act(pos, p, rng.choice(sorted(legal)))


EXACT_CASES = [
    pytest.param(env_id, n, id=f"{env_id}-{n}p")
    for env_id, spec in sorted(TITLES.items())
    if not spec.free_text
    for n in sorted(set(spec.players))
]
VOCABULARY_SEEDS = 100


@pytest.mark.parametrize("env_id,num_players", EXACT_CASES)
def test_every_legal_move_is_in_the_vocabulary(env_id, num_players):
    """Over 100 seeds of random-legal play (the fewest and the most players), every move the
    legal set offers has an index in the title's vocabulary: a typed player can play it and a
    record can store it. (Chopsticks offered splits of totals past 8 before: seed 38 here.)"""
    game = make_game(f"textarena/{env_id}", num_players=num_players)
    vocabulary = set(TITLES[env_id].vocabulary)
    decisions = 0
    for seed in range(VOCABULARY_SEEDS):
        rng = random.Random(seed)  # the test's own generator for the choices
        pos = game.start(seed)
        while not game.is_over(pos):
            p = game.players_to_act(pos)[0]
            legal = game.legal(pos, p)
            outside = sorted(set(legal) - vocabulary)
            assert not outside, f"{env_id} seed {seed} ply {pos.ply}: legal moves outside the vocabulary: {outside}"
            for a in legal:
                game.action_from_id(game.action_id(a))  # the index round-trips
            pos = game.act(pos, p, legal[rng.randrange(len(legal))])
            decisions += 1
    assert decisions >= VOCABULARY_SEEDS


def test_chopsticks_seed_39_plays_through_the_cli(capsys):
    from arena_core.cli import main

    assert main(["play", "textarena/Chopsticks-v0", "--players", "random,random", "--seed", "39", "--quiet"]) == 0
    assert "result (" in capsys.readouterr().out


def test_chopsticks_past_a_total_of_8_offers_attacks_only():
    from arena_games.textarena.legal import chopsticks_legal

    class Env:  # the two fields chopsticks_legal reads
        def __init__(self, hands):
            self.state = type("S", (), {"game_state": {"hands": hands}})()

    assert chopsticks_legal(Env({0: [7, 4], 1: [0, 2]}), 0) == ("[attack 0 1]", "[attack 1 1]")
    assert "[split 4 4]" in chopsticks_legal(Env({0: [1, 7], 1: [0, 2]}), 0)
