"""The native Liar's dice (issue 42 point 5): TextArena's LiarsDice-v0 rules, exactly. The
differential test plays random legal games through TextArena (the adapter) and feeds the same
dice (read from each seat's own messages when a round starts) and the same moves to the native
rules: every mover, legal set, dice count, called count, loser, opener, result and every seat's
numeric observation must agree. Also: the sampler's worlds, the bots and the example."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_core.game import Position
from arena_core.players import Decision
from arena_core.registry import make_game, make_player
from arena_core.runner import play_episode
from arena_core.testing import assert_conformance
from arena_games.liars_dice import CALL, LiarsDice
from arena_games.liars_dice.bots import at_least, bid_chance
from arena_games.liars_dice.rules import RoundView

_COUNT = re.compile(r"actual count of face (\d) is (\d+).*\nPlayer (\d+) \(the (?:last bidder|caller)\) loses one die")


def _native_with_dice(native: LiarsDice, state, dice_by_seat):
    """``state`` with this round's dice replaced by TextArena's (each seat's dice as it was told)."""
    rolls = list(state.rolls)
    rolls[state.round] = tuple(
        tuple(dice_by_seat[p]) + (1,) * (native.num_dice - len(dice_by_seat[p])) for p in range(native.num_players)
    )
    return dataclasses.replace(state, rolls=tuple(rolls))


def _told_dice(title, pos):
    return {p: title.round_view(pos.state, p).dice for p in range(title.num_players)}


def _differential(seed: int, num_players: int) -> int:
    """One random game played through both engines; returns the number of rounds compared."""
    title = make_game("textarena/LiarsDice-v0", num_players=num_players)
    native = make_game("liars_dice", num_players=num_players)
    rng = np.random.default_rng(seed)
    ta = title.start(seed)
    nat = Position(_native_with_dice(native, native.start(seed).state, _told_dice(title, ta)))
    rounds = 0
    while True:
        assert title.is_over(ta) == native.is_over(nat)
        if title.is_over(ta):
            break
        p = title.current_player(ta)
        assert native.current_player(nat) == p
        legal = title.legal(ta, p)
        assert native.legal(nat, p) == legal
        assert np.array_equal(native.mask(nat, p), title.mask(ta, p))
        for q in range(num_players):
            assert np.array_equal(native.encode_observation(nat.state, q), title.encode_observation(ta.state, q)), q
            assert native.round_view(nat.state, q) == title.round_view(ta.state, q)
        # random play rarely calls: call a third of the time a bid stands, so rounds end
        action = CALL if CALL in legal and rng.random() < 0.35 else legal[int(rng.integers(len(legal)))]
        ta, nat = title.act(ta, p, action), native.act(nat, p, action)
        if action == CALL:
            rounds += 1
            said = "\n".join(m.text for m in title.observe(ta, p)["messages"])
            face, count, loser = _COUNT.findall(said)[-1]
            _, caller, native_count, native_loser = nat.state.log[-1]
            assert (caller, native_count, native_loser) == (p, int(count), int(loser))
            assert nat.state.remaining == title.round_view(ta.state, p).remaining or title.is_over(ta)
            if not title.is_over(ta):
                nat = Position(_native_with_dice(native, nat.state, _told_dice(title, ta)), (), nat.ply)
    assert title.final_returns(ta) == native.final_returns(nat)
    return rounds


@pytest.mark.parametrize("seed,num_players", [(0, 2), (1, 2), (2, 2), (3, 2), (4, 3), (5, 4)])
def test_native_rules_play_textarena_liars_dice_exactly(seed, num_players):
    pytest.importorskip("textarena")
    assert _differential(seed, num_players) >= 2 * num_players - 1 + 0 * seed  # every die lost in a round


@pytest.mark.parametrize("num_players,examples", [(2, 10), (6, 2)])
def test_the_native_game_conforms(num_players, examples):
    assert_conformance(LiarsDice(num_players=num_players), max_examples=examples)


def test_who_opens_the_next_round_is_the_next_seat_after_the_caller():
    game = LiarsDice(num_players=3)
    pos = game.start(7)
    pos = game.act(pos, 0, "[Bid: 14, 6]")  # surely false: the bidder (0) loses a die
    pos = game.act(pos, 1, CALL)
    ((_, caller, _, loser),) = pos.state.log
    assert (caller, loser, game.current_player(pos)) == (1, 0, 2)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), choices=st.lists(st.integers(0, 10**6), min_size=1, max_size=400))
def test_every_call_takes_one_die_and_the_returns_rank_the_seats(seed, choices):
    game = LiarsDice(num_players=3)
    pos = game.start(seed)
    for c in choices:
        if game.is_over(pos):
            break
        p = game.current_player(pos)
        legal = game.legal(pos, p)
        before = sum(pos.state.remaining)
        pos = game.act(pos, p, legal[c % len(legal)])
        assert sum(pos.state.remaining) == before - (legal[c % len(legal)] == CALL)
    if game.is_over(pos):
        assert sorted(game.final_returns(pos)) == [-1.0, 0.0, 1.0]


def test_a_world_keeps_what_the_seat_knows_and_redraws_the_rest():
    game = LiarsDice()
    pos = game.start(3)
    pos = game.act(game.act(pos, 0, "[Bid: 2, 3]"), 1, CALL)  # round 1 over: its count was shown
    pos = game.act(pos, game.current_player(pos), "[Bid: 1, 4]")
    changed = 0
    for k in range(20):
        world = game.sample_hidden_state(pos.state, 0, np.random.default_rng(k))
        assert game.observe(Position(world), 0) == game.observe(pos, 0)
        assert world.rolls[:1] == pos.state.rolls[:1] and world.log == pos.state.log
        changed += world.dice(1) != pos.state.dice(1)
    assert changed >= 18


def test_the_binomial_chances_are_exact():
    assert at_least(0, 5) == 1.0
    assert at_least(1, 1) == pytest.approx(1 / 6)
    assert at_least(2, 5) == pytest.approx(1 - (5 / 6) ** 5 - 5 * (1 / 6) * (5 / 6) ** 4)
    view = RoundView(0, True, (3, 3, 1, 5, 6), (5, 5), 0, 0)
    assert bid_chance(view, 2, 3) == 1.0 and bid_chance(view, 3, 3) == pytest.approx(1 - (5 / 6) ** 5)


@pytest.mark.parametrize("game_id", ["liars_dice", "textarena/LiarsDice-v0"])
def test_the_bots_play_both_engines(game_id):
    if game_id.startswith("textarena/"):
        pytest.importorskip("textarena")
    game = make_game(game_id)
    everything, binomial = make_player("liars_call_everything"), make_player("liars_binomial")
    rec = play_episode(game, [binomial, everything], seed=4)
    bids = [s for s in rec.steps if s.player == 1 and s.action != CALL]
    assert all(re.fullmatch(r"\[Bid: 1, \d\]", s.action) for s in bids)  # it only opens
    assert tuple(rec.end.returns) == (1.0, -1.0)  # its every call loses against true bids


def test_the_bots_refuse_another_game_in_one_line():
    from arena_core.errors import PlayerError

    kuhn = make_game("kuhn_poker")
    with pytest.raises(PlayerError, match="plays Liar's dice only"):
        make_player("liars_binomial").act(Decision.at(kuhn, kuhn.start(0), 0, 0))
