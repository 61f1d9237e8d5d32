"""MegaGem invariants under random legal play, written with the public strategies
(``arena_core.testing.strategies``): coins and gems are conserved, scores equal a recomputation
from the rule book, states round-trip JSON; and the conformance kit on the variant options."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_core.testing import assert_conformance
from arena_core.testing.strategies import joint_actions, playthroughs, positions
from arena_games.megagem import Bid, MegaGem, Phase
from arena_games.megagem.cards import AUCTION_CARDS, CardKind

GAMES = {n: MegaGem(num_players=n) for n in (3, 4, 5)}
SETTINGS = settings(max_examples=40, deadline=None, database=None)


def low_bidder(decision):
    """A seat policy that bids 0-2 (long games, many loans and investments left unbought)."""
    legal = decision.legal_actions
    if isinstance(legal[0], Bid):
        return legal[int(decision.rng().integers(0, min(3, len(legal))))]
    return legal[0]


def all_in(decision):
    """A seat policy that bids everything it may (short games, deep coin swings)."""
    return decision.legal_actions[-1]


STYLES = {"random": {}, "low": {0: low_bidder, 1: low_bidder}, "high": {1: all_in}}

#: every complete game, at 3-5 players, with random seats and some seats under a bidding style
full_games = st.sampled_from(sorted(GAMES)).flatmap(
    lambda n: st.sampled_from(sorted(STYLES)).flatmap(
        lambda style: playthroughs(GAMES[n], policies=STYLES[style], complete=True)
    )
)
#: prefixes of games (shrink to the shortest failing one)
any_games = st.sampled_from(sorted(GAMES)).flatmap(lambda n: playthroughs(GAMES[n]))

# the value charts as printed in the rule book (shared note, section 2): value per gem by display count 0..5+
CHARTS = {
    "A": (0, 4, 8, 12, 16, 20),
    "B": (20, 16, 12, 8, 4, 0),
    "C": (0, 2, 5, 9, 14, 20),
    "D": (20, 18, 15, 11, 6, 0),
    "E": (0, 4, 10, 18, 6, 0),
}


def gem_totals(state) -> list[int]:
    tot = [0] * 5
    for g in state.display + state.pool + state.gem_deck:
        tot[g] += 1
    for part in state.hands + state.collections:
        for c in range(5):
            tot[c] += part[c]
    return tot


def recomputed_scores(game, s) -> list[int]:
    """Terminal scoring, section 6.2: hands join the display; coins + gems at chart prices +
    missions - loans + (locked bid + bonus)."""
    display = [s.display.count(c) + sum(h[c] for h in s.hands) for c in range(5)]
    chart = CHARTS[game.params.value_chart]
    out = []
    for p in range(game.num_players):
        gems = sum(s.collections[p][c] * chart[min(display[c], 5)] for c in range(5))
        missions = sum(game.mission_table[m].reward for m in s.claimed[p])
        out.append(s.coins[p] + gems + missions - sum(s.loans[p]) + sum(b + bonus for b, bonus in s.investments[p]))
    return out


@SETTINGS
@given(any_games)
def test_coins_and_gems_are_conserved_at_every_position(pt):
    game, n = pt.game, pt.game.num_players
    for s in pt.states:
        assert gem_totals(s) == [6] * 5
        assert all(c >= 0 for c in s.coins)
        paid = sum(r.price for r in s.history)
        borrowed = sum(sum(loan) for loan in s.loans)
        assert sum(s.coins) == n * game.start_coins + borrowed - paid  # the bank's books close
        locked = sum(b for inv in s.investments for b, _ in inv)
        assert locked == sum(r.price for r in s.history if AUCTION_CARDS[r.card].kind is CardKind.INVESTMENT)
        assert borrowed == sum(
            AUCTION_CARDS[r.card].value for r in s.history if AUCTION_CARDS[r.card].kind is CardKind.LOAN
        )
        claimed = [m for c in s.claimed for m in c]
        assert len(claimed) + len(s.missions) == 4 and not set(claimed) & set(s.missions)


@SETTINGS
@given(full_games)
def test_the_end_scores_equal_a_recomputation_and_every_gem_is_won(pt):
    game, end = pt.game, pt.final.state
    assert pt.complete and not end.pool and not end.gem_deck  # every auctionable gem was won
    assert sum(map(sum, end.collections)) == 30 - game.num_players * game.hand_size
    dc = game.display_counts(end)
    assert all(dc[c] + sum(coll[c] for coll in end.collections) == 6 for c in range(5))
    assert list(pt.returns) == recomputed_scores(game, end)
    lo, hi = game.spec.reward_bounds
    assert all(lo <= r <= hi for r in pt.returns)
    if game.num_players == 3:
        assert 10 <= end.round <= 22 and len(end.history) == end.round
        assert len(end.display) == 15 and all(sum(h) == 0 for h in end.hands)


@settings(max_examples=15, deadline=None, database=None)
@given(
    st.sampled_from(("A", "B", "C", "D", "E")).flatmap(
        lambda chart: playthroughs(
            MegaGem({"value_chart": chart, "flex_3_diff_reward": 10}, num_players=4), complete=True
        )
    )
)
def test_scores_equal_the_recomputation_under_every_value_chart(pt):
    assert list(pt.returns) == recomputed_scores(pt.game, pt.final.state)


@SETTINGS
@given(full_games)
def test_play_is_deterministic_and_states_round_trip_json(pt):
    game = pt.game
    pos = game.start(pt.seed)
    for seat, action in pt.moves:
        pos = game.act(pos, seat, action)
    assert pos.state == pt.final.state
    states = pt.states
    for s in states[:: max(1, len(states) // 6)] + [states[-1]]:
        assert game.state_from_json(json.loads(json.dumps(game.state_to_json(s)))) == s


@SETTINGS
@given(any_games)
def test_legal_sets_masks_and_limits(pt):
    game = pt.game
    for s in pt.states:
        for p in range(game.num_players):
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
            json.dumps(game.observation(s, p))
            assert game.encode_observation(s, p).shape == (game.observation_size,)


def _bidding(game, pos):
    return not pos.pending and not game.is_over(pos) and pos.state.phase is Phase.BID


@settings(max_examples=25, deadline=None, database=None)
@given(st.data())
def test_a_bid_round_pays_the_highest_bid_at_most(data):
    """At a simultaneous bid, any joint bid goes to a highest bidder, who pays at most its bid."""
    game = GAMES[3]
    pos = data.draw(positions(game, where=_bidding))
    joint = data.draw(joint_actions(game, pos))
    bids = tuple(joint[p].amount for p in range(3))
    after = game.next_state(pos.state, joint)
    if after.phase is Phase.REVEAL:  # a Treasure: settled once the winner reveals a gem
        assert after.bids == bids and bids[after.winner] == max(bids)
        return
    record = after.history[-1]
    assert record.bids == bids and bids[record.winner] == max(bids)
    assert record.price <= max(bids)


@settings(max_examples=25, deadline=None, database=None)
@given(policy_seed=st.integers(0, 2**32 - 1), player=st.integers(0, 2), data=st.data())
def test_hidden_state_sample_keeps_what_the_player_knows(policy_seed, player, data):
    game = GAMES[3]
    s = data.draw(positions(game, where=lambda g, pos: not pos.pending)).state
    t = game.sample_hidden_state(s, player, np.random.default_rng(policy_seed))
    assert game.observation(t, player) == game.observation(s, player)
    assert t.hands[player] == s.hands[player]
    assert [sum(h) for h in t.hands] == [sum(h) for h in s.hands]
    assert gem_totals(t) == [6] * 5
    assert sorted(t.auction_deck) == sorted(s.auction_deck) and len(t.gem_deck) == len(s.gem_deck)


def test_conformance_kit_passes_with_the_published_variant_options():
    """The registered-games test covers the defaults at 3 and 5 players; this covers the options."""
    game = MegaGem(
        {"reveal_by": "every_winner", "illegal_bid": "clamp", "flex_3_diff_reward": 10, "value_chart": "E"},
        num_players=4,
    )
    results = assert_conformance(game, max_examples=8)
    assert not [r for r in results if r.status == "exempt"]
