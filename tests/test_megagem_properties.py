"""MegaGem invariants under random legal play (hypothesis), and the conformance kit."""
from __future__ import annotations

import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_core.testing import assert_conformance
from arena_games.megagem import Bid, MegaGem, Phase
from arena_games.megagem.cards import AUCTION_CARDS, CardKind

GAMES = {n: MegaGem(num_players=n) for n in (3, 4, 5)}
SETTINGS = settings(max_examples=40, deadline=None, database=None)

# bid styles: uniform over the legal range, low bids (long games), all-in
STYLES = ("uniform", "low", "high")


def choose(game, state, player, rng, style):
    legal = game.legal_actions(state, player)
    if state.phase is Phase.BID and style != "uniform":
        top = len(legal) - 1
        k = int(rng.integers(0, min(3, top) + 1)) if style == "low" else top - int(rng.integers(0, min(2, top) + 1))
        return legal[k]
    return legal[int(rng.integers(len(legal)))]


def play(game, seed, policy_seed, style):
    """Play one game with the pure rules; yield every state."""
    rng = np.random.default_rng(policy_seed)
    state = game.initial_state(np.random.default_rng(seed))
    states = [state]
    while not game.is_terminal(state):
        joint = {p: choose(game, state, p, rng, style) for p in game.to_move(state)}
        for p, a in joint.items():
            assert game.is_legal(state, p, a)
        state = game.next_state(state, joint)
        states.append(state)
    return states


def gem_totals(state) -> list[int]:
    tot = [0] * 5
    for g in state.display + state.pool + state.gem_deck:
        tot[g] += 1
    for part in state.hands + state.collections:
        for c in range(5):
            tot[c] += part[c]
    return tot


game_args = dict(n=st.sampled_from((3, 4, 5)), seed=st.integers(0, 2**32 - 1), policy_seed=st.integers(0, 2**32 - 1), style=st.sampled_from(STYLES))


@SETTINGS
@given(**game_args)
def test_coins_and_gems_are_conserved(n, seed, policy_seed, style):
    game = GAMES[n]
    for s in play(game, seed, policy_seed, style):
        assert gem_totals(s) == [6] * 5
        assert all(c >= 0 for c in s.coins)
        paid = sum(r.price for r in s.history)
        borrowed = sum(sum(l) for l in s.loans)
        assert sum(s.coins) == n * game.start_coins + borrowed - paid  # the bank's books close
        locked = sum(b for inv in s.investments for b, _ in inv)
        assert locked == sum(r.price for r in s.history if AUCTION_CARDS[r.card].kind is CardKind.INVESTMENT)
        assert borrowed == sum(AUCTION_CARDS[r.card].value for r in s.history if AUCTION_CARDS[r.card].kind is CardKind.LOAN)
        claimed = [m for c in s.claimed for m in c]
        assert len(claimed) + len(s.missions) == 4 and not set(claimed) & set(s.missions)
    end = s
    assert game.is_terminal(end) and not end.pool and not end.gem_deck  # every auctionable gem was won
    assert sum(map(sum, end.collections)) == 30 - n * game.hand_size
    dc = game.display_counts(end)
    assert all(dc[c] + sum(coll[c] for coll in end.collections) == 6 for c in range(5))


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), policy_seed=st.integers(0, 2**32 - 1), style=st.sampled_from(STYLES))
def test_three_player_terminal_invariant_and_length(seed, policy_seed, style):
    game = GAMES[3]
    end = play(game, seed, policy_seed, style)[-1]
    assert game.is_terminal(end)
    assert 10 <= end.round <= 22 and len(end.history) == end.round
    assert len(end.display) == 15 and all(sum(h) == 0 for h in end.hands)
    dc = game.display_counts(end)
    for c in range(5):
        assert dc[c] + sum(coll[c] for coll in end.collections) == 6
    assert sum(map(sum, end.collections)) == 15
    treasures = sum(1 for r in end.history if AUCTION_CARDS[r.card].kind is CardKind.TREASURE)
    assert treasures <= 15
    lo, hi = game.spec.reward_bounds
    assert all(lo <= r <= hi for r in game.returns(end))


@SETTINGS
@given(**game_args)
def test_play_is_deterministic_and_states_round_trip_json(n, seed, policy_seed, style):
    game = GAMES[n]
    a = play(game, seed, policy_seed, style)
    b = play(game, seed, policy_seed, style)
    assert a == b
    for s in a[:: max(1, len(a) // 6)] + [a[-1]]:
        assert game.state_from_json(json.loads(json.dumps(game.state_to_json(s)))) == s


@SETTINGS
@given(n=st.sampled_from((3, 4, 5)), seed=st.integers(0, 2**32 - 1), policy_seed=st.integers(0, 2**32 - 1))
def test_legal_sets_masks_and_limits(n, seed, policy_seed):
    game = GAMES[n]
    for s in play(game, seed, policy_seed, "uniform"):
        for p in range(n):
            legal = game.legal_actions(s, p)
            if s.phase is Phase.BID:
                limit = game.bid_limit(s, p)
                assert legal == tuple(Bid(i) for i in range(limit + 1))
                assert not game.is_legal(s, p, Bid(limit + 1)) and not game.is_legal(s, p, Bid(-1))
            elif s.phase is Phase.REVEAL and p == s.winner:
                assert legal and all(s.hands[p][a.colour] > 0 for a in legal)
                assert game.default_action(s, p) in legal
            else:
                assert legal == ()
            for a in legal:
                assert game.is_legal(s, p, a)
            obs = game.observation(s, p)
            json.dumps(obs)
            assert game.encode_observation(s, p).shape == (game.observation_size,)


@settings(max_examples=25, deadline=None, database=None)
@given(seed=st.integers(0, 2**32 - 1), policy_seed=st.integers(0, 2**32 - 1), player=st.integers(0, 2))
def test_hidden_state_sample_keeps_what_the_player_knows(seed, policy_seed, player):
    game = GAMES[3]
    states = play(game, seed, policy_seed, "uniform")
    s = states[len(states) // 2]
    rng = np.random.default_rng(policy_seed)
    t = game.sample_hidden_state(s, player, rng)
    assert game.observation(t, player) == game.observation(s, player)
    assert t.hands[player] == s.hands[player]
    assert [sum(h) for h in t.hands] == [sum(h) for h in s.hands]
    assert gem_totals(t) == [6] * 5
    assert sorted(t.auction_deck) == sorted(s.auction_deck) and len(t.gem_deck) == len(s.gem_deck)


def test_conformance_kit_passes_with_the_published_variant_options():
    """The registered-games test covers the defaults at 3 and 5 players; this covers the options."""
    game = MegaGem({"reveal_by": "every_winner", "illegal_bid": "clamp", "flex_3_diff_reward": 10, "value_chart": "E"}, num_players=4)
    results = assert_conformance(game, max_examples=8)
    assert not [r for r in results if r.status == "exempt"]
