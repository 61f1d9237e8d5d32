"""MegaGem rules: the rule book's section 11 edge cases and the section 6.3 worked game."""

from __future__ import annotations

import dataclasses

import pytest

from arena_core.errors import IllegalActionError, InvalidParamsError, PlayerCountError
from arena_core.game import Position
from arena_games.megagem import Bid, MegaGem, MegaGemState, Phase, Reveal
from arena_games.megagem.cards import COLOURS, MISSION_IDS, build_missions

R, B, G, P, Y = range(5)
CARD = {"treasure_1": 0, "treasure_2": 1, "loan_10": 2, "loan_20": 3, "investment_5": 4, "investment_10": 5}


def counts(*colours: int) -> tuple[int, ...]:
    out = [0] * 5
    for c in colours:
        out[c] += 1
    return tuple(out)


def mission(mid: str) -> int:
    return MISSION_IDS.index(mid)


def state_with(game: MegaGem, **fields) -> MegaGemState:
    """A mid-game bidding state: seed 0's deal with the given fields replaced."""
    base = game.initial_state(__import__("numpy").random.default_rng(0))
    return dataclasses.replace(base, **fields)


def bid_round(game: MegaGem, state: MegaGemState, bids) -> MegaGemState:
    """Run one sealed-bid round through the core machinery (commit-then-reveal)."""
    pos = Position(state)
    for p, b in enumerate(bids):
        pos = game.act(pos, p, Bid(b))
    return pos.state


@pytest.fixture
def game() -> MegaGem:
    return MegaGem()


# -- 1. tie at the top ------------------------------------------------------------------
@pytest.mark.parametrize(
    "bids, order, winner, after",
    [((5, 5, 0), (1, 0, 2), 1, (0, 2, 1)), ((10, 10, 9), (1, 2, 0), 1, (2, 0, 1))],
)
def test_tie_goes_to_earliest_in_tiebreak_queue_and_winner_moves_back(game, bids, order, winner, after):
    s = state_with(game, card=CARD["loan_10"], tiebreak=order, coins=(35, 35, 35))
    s2 = bid_round(game, s, bids)
    assert s2.history[-1].winner == winner
    assert s2.history[-1].price == bids[winner]
    assert s2.tiebreak == after
    assert s2.coins[winner] == 35 + 10 - bids[winner]
    assert [s2.coins[p] for p in range(3) if p != winner] == [35, 35]  # losers pay nothing


# -- 2. everybody bids 0 ----------------------------------------------------------------
def test_all_zero_treasure_gives_free_gem_and_mandatory_reveal(game):
    s = state_with(game, card=CARD["treasure_1"], tiebreak=(2, 0, 1), pool=(R, B))
    s2 = bid_round(game, s, (0, 0, 0))
    assert s2.phase is Phase.REVEAL and s2.winner == 2
    assert game.to_move(s2) == (2,)
    colour = game.legal_actions(s2, 2)[0].colour
    s3 = game.next_state(s2, {2: Reveal(colour)})
    assert s3.collections[2] == counts(R)
    assert s3.coins[2] == s.coins[2]
    assert s3.display == (colour,)
    assert s3.hands[2][colour] == s.hands[2][colour] - 1
    assert s3.tiebreak == (0, 1, 2)
    assert s3.history[-1].revealed == colour


def test_all_zero_loan_and_investment(game):
    s = state_with(game, card=CARD["loan_20"], tiebreak=(0, 1, 2))
    s2 = bid_round(game, s, (0, 0, 0))
    assert s2.coins[0] == 55 and s2.loans[0] == (20,)
    before, after = game.score_breakdown(s)[0], game.score_breakdown(s2)[0]
    assert after["total"] == before["total"]  # +20 coins, -20 debt: net 0 unless spent
    s3 = bid_round(game, dataclasses.replace(s2, card=CARD["investment_10"]), (0, 0, 0))
    assert s3.history[-1].winner == 1 and s3.investments[1] == ((0, 10),)
    assert s3.coins[1] == 35
    assert game.score_breakdown(s3)[1]["investments"] == 10


# -- 3. over-budget and negative bids ----------------------------------------------------
def test_over_budget_and_negative_bids_are_illegal(game):
    s = state_with(game, card=CARD["treasure_1"])
    assert game.bid_limit(s, 0) == 35
    assert max(a.amount for a in game.legal_actions(s, 0)) == 35
    for bad in (36, 40, -1):
        assert not game.is_legal(s, 0, Bid(bad))
        with pytest.raises(IllegalActionError):
            game.act(Position(s), 0, Bid(bad))
    assert game.coerce_bid(s, 0, 40) == (Bid(0), False)
    assert game.coerce_bid(s, 0, -3) == (Bid(0), False)
    assert game.coerce_bid(s, 0, 12) == (Bid(12), True)
    clamp = MegaGem({"illegal_bid": "clamp"})
    assert clamp.coerce_bid(s, 0, 40) == (Bid(35), False)
    assert clamp.coerce_bid(s, 0, -3) == (Bid(0), False)


# -- 4. loan overbid ---------------------------------------------------------------------
def test_loan_bid_may_exceed_coins_by_the_loan_amount(game):
    s = state_with(game, card=CARD["loan_10"], coins=(7, 35, 35), tiebreak=(0, 1, 2))
    assert game.is_legal(s, 0, Bid(17)) and not game.is_legal(s, 0, Bid(18))
    assert game.coerce_bid(s, 0, 18) == (Bid(0), False)
    s2 = bid_round(game, s, (17, 0, 0))
    assert s2.coins[0] == 0 and s2.loans[0] == (10,)
    s3 = bid_round(game, state_with(game, card=CARD["loan_10"], coins=(30, 35, 35)), (25, 0, 0))
    assert s3.coins[0] == 15


# -- 5. zero coins -----------------------------------------------------------------------
def test_zero_coin_player(game):
    s = state_with(game, card=CARD["treasure_1"], coins=(0, 10, 10), tiebreak=(0, 1, 2))
    assert game.legal_actions(s, 0) == (Bid(0),)
    inv = dataclasses.replace(s, card=CARD["investment_5"])
    assert game.legal_actions(inv, 0) == (Bid(0),)
    loan = dataclasses.replace(s, card=CARD["loan_20"])
    assert [a.amount for a in game.legal_actions(loan, 0)] == list(range(21))
    assert sum(s.hands[0]) == 5
    s2 = bid_round(game, s, (0, 0, 0))
    assert s2.phase is Phase.REVEAL and s2.winner == 0 and s2.bids == (0, 0, 0)


# -- 6. reveal with an empty hand --------------------------------------------------------
def test_treasure_winner_with_empty_hand_skips_the_reveal(game):
    s = state_with(
        game,
        card=CARD["treasure_1"],
        hands=((0,) * 5, counts(R), counts(B)),
        pool=(G, Y),
        tiebreak=(0, 1, 2),
        coins=(35, 35, 35),
    )
    missions = (mission("flex_2_same"),)
    s = dataclasses.replace(s, missions=missions, collections=(counts(G), (0,) * 5, (0,) * 5))
    s2 = bid_round(game, s, (3, 2, 1))
    assert s2.phase is Phase.BID  # no reveal decision
    rec = s2.history[-1]
    assert rec.revealed is None and rec.winner == 0 and rec.gems_won == (G,)
    assert s2.coins[0] == 32 and s2.collections[0] == counts(G, G)
    assert s2.claimed[0] == missions and s2.missions == ()
    assert s2.display == s.display


def test_reveal_is_only_legal_from_own_hand(game):
    s = state_with(game, card=CARD["treasure_1"], hands=(counts(R, Y, G), counts(B), counts(B)), tiebreak=(0, 1, 2))
    s2 = bid_round(game, s, (1, 0, 0))
    assert set(game.legal_actions(s2, 0)) == {Reveal(R), Reveal(Y), Reveal(G)}
    assert game.default_action(s2, 0) == Reveal(G)  # alphabetically first: Green < Red < Yellow
    assert not game.is_legal(s2, 0, Reveal(B))
    assert game.legal_actions(s2, 1) == ()


def test_only_treasure_winners_reveal_unless_every_winner_option(game):
    s = state_with(game, card=CARD["loan_10"], tiebreak=(0, 1, 2))
    assert bid_round(game, s, (1, 0, 0)).phase is Phase.BID
    every = MegaGem({"reveal_by": "every_winner"})
    s2 = bid_round(every, s, (1, 0, 0))
    assert s2.phase is Phase.REVEAL and s2.winner == 0


# -- 8. a 2-gem card with one gem left ends the game ------------------------------------
def test_two_gem_card_with_one_gem_left(game):
    colls = (counts(R, R, B, B, G), counts(G, G, P, P, Y), counts(Y, Y, R, B))  # 14 gems won
    s = state_with(
        game, card=CARD["treasure_2"], pool=(P,), gem_deck=(), collections=colls, tiebreak=(1, 0, 2), coins=(20, 20, 20)
    )
    s2 = bid_round(game, s, (0, 9, 3))
    if s2.phase is Phase.REVEAL:
        s2 = game.next_state(s2, {1: game.default_action(s2, 1)})
    assert s2.history[-1].gems_won == (P,)
    assert s2.coins[1] == 11
    assert game.is_terminal(s2)
    assert sum(map(sum, s2.collections)) == 15


# -- 9. loans larger than coins ---------------------------------------------------------
def test_loans_can_leave_a_negative_score(game):
    s = state_with(
        game,
        coins=(3, 0, 0),
        loans=((10, 20), (), ()),
        collections=((0,) * 5,) * 3,
        claimed=((), (), ()),
        investments=((), (), ()),
    )
    assert game.score_breakdown(s)[0]["total"] == -27


# -- 10. investment accounting ----------------------------------------------------------
def test_investment_locks_the_bid_until_scoring(game):
    s = state_with(game, card=CARD["investment_10"], tiebreak=(0, 1, 2), coins=(30, 30, 30))
    s2 = bid_round(game, s, (12, 11, 0))
    assert s2.coins[0] == 18 and s2.investments[0] == ((12, 10),)
    assert game.score_breakdown(s2)[0]["investments"] == 22
    nxt = dataclasses.replace(s2, card=CARD["treasure_1"])
    assert game.bid_limit(nxt, 0) == 18


# -- 11. several missions at once, exclusivity, pairs -----------------------------------
def test_several_missions_claimed_at_once_and_exclusively(game):
    ms = (mission("specific_3_rbp"), mission("specific_2_bg"), mission("flex_2_pairs"))
    s = state_with(
        game,
        card=CARD["treasure_2"],
        pool=(P, G),
        missions=ms,
        tiebreak=(0, 1, 2),
        collections=(counts(R, B), counts(R, B, G), counts(R, R, R, R)),
        hands=((0,) * 5, counts(Y), counts(Y)),
    )
    s2 = bid_round(game, s, (4, 0, 0))
    assert set(s2.claimed[0]) == {mission("specific_3_rbp"), mission("specific_2_bg")}
    assert s2.missions == (mission("flex_2_pairs"),)
    assert set(s2.history[-1].missions) == set(s2.claimed[0])
    # seat 1 now also satisfies both claimed missions but gets nothing; 4 Red is not two pairs
    s3 = dataclasses.replace(s2, card=CARD["treasure_1"], pool=(P, Y), gem_deck=(Y, Y))
    s4 = bid_round(game, s3, (0, 5, 0))
    s4 = game.next_state(s4, {1: Reveal(Y)}) if s4.phase is Phase.REVEAL else s4
    assert s4.claimed[1] == ()
    table = build_missions()
    assert not table[mission("flex_2_pairs")].satisfied_by(counts(R, R, R, R))
    assert table[mission("flex_2_pairs")].satisfied_by(counts(R, R, B, B))


def test_missions_are_checked_only_after_treasure(game):
    ms = (mission("flex_3_diff"),)
    s = state_with(
        game, card=CARD["loan_10"], missions=ms, collections=(counts(R, B, G), (0,) * 5, (0,) * 5), tiebreak=(0, 1, 2)
    )
    s2 = bid_round(game, s, (0, 0, 0))
    assert s2.missions == ms and s2.claimed[0] == ()


# -- 13. final-score tie ----------------------------------------------------------------
def test_final_tie_goes_to_earliest_in_final_tiebreak_order(game):
    zero = (0,) * 5
    s = state_with(
        game,
        phase=Phase.OVER,
        card=-1,
        hands=(zero,) * 3,
        collections=(zero,) * 3,
        coins=(20, 20, 5),
        loans=((), (), ()),
        investments=((), (), ()),
        claimed=((), (), ()),
        tiebreak=(2, 1, 0),
    )
    assert game.scores(s) == (20, 20, 5)
    assert game.winner(s) == 1


# -- 14. chart clamping -----------------------------------------------------------------
def test_display_count_six_uses_the_five_plus_row(game):
    zero = (0,) * 5
    s = state_with(
        game,
        display=(R,) * 6,
        hands=(zero,) * 3,
        collections=(counts(B), zero, zero),
        coins=(0, 0, 0),
        loans=((), (), ()),
        investments=((), (), ()),
        claimed=((), (), ()),
    )
    assert game.chart_clamped[6] == 20
    b = MegaGem({"value_chart": "B"})
    assert b.chart_clamped[6] == 0 and b.chart_clamped[0] == 20
    assert b.score_breakdown(s)[0]["gems"] == 20  # Blue: 0 in display -> 20 on chart B


# -- section 6.3: the worked game (seed 1154 fixture), last round and final scores -------
def test_worked_game_final_round_and_scores(game):
    """Round 17 of the fixture: bids [5,5,0] with order [0,1,2]; P0 takes Green+Purple with an
    empty hand (no reveal), claims specific_3_rbp and specific_2_bg; final scores 79, 57, 71."""
    display = (R, R, B, B, G, G, G, P, P, P, P, Y)  # Yellow 3 more are still in P2's hand
    s = state_with(
        game,
        round=17,
        card=CARD["treasure_2"],
        auction_deck=(CARD["treasure_1"],) * 8,
        gem_deck=(),
        pool=(G, P),
        display=display,
        hands=((0,) * 5, (0,) * 5, counts(Y, Y, Y)),
        collections=(counts(R, R, R, B, B), counts(G, G, P), counts(R, B, B, Y, Y)),
        coins=(6, 5, 0),
        loans=((20,), (10,), ()),
        investments=((), ((12, 5),), ((5, 10),)),
        missions=(mission("specific_3_rbp"), mission("specific_2_bg")),
        claimed=((mission("flex_2_pairs"),), (mission("specific_2_gp"),), ()),
        tiebreak=(0, 1, 2),
    )
    end = bid_round(game, s, (5, 5, 0))
    assert game.is_terminal(end)
    rec = end.history[-1]
    assert (rec.winner, rec.price, rec.gems_won, rec.revealed) == (0, 5, (G, P), None)
    assert set(rec.missions) == {mission("specific_3_rbp"), mission("specific_2_bg")}
    assert game.display_counts(end) == [2, 2, 3, 4, 4]
    parts = game.score_breakdown(end)
    assert parts[0] == {"coins": 1, "gems": 68, "missions": 30, "loans": 20, "investments": 0, "total": 79}
    assert parts[1] == {"coins": 5, "gems": 40, "missions": 5, "loans": 10, "investments": 17, "total": 57}
    assert parts[2] == {"coins": 0, "gems": 56, "missions": 0, "loans": 0, "investments": 15, "total": 71}
    assert game.returns(end) == (79.0, 57.0, 71.0)
    assert game.winner(end) == 0
    assert end.tiebreak == (1, 2, 0)


def test_worked_game_loan_round(game):
    """Round 2 of the fixture: Loan 20 won by P0 with bid 4 takes its coins from 28 to 44."""
    s = state_with(game, card=CARD["loan_20"], coins=(28, 35, 35), tiebreak=(0, 1, 2))
    assert bid_round(game, s, (4, 0, 3)).coins[0] == 44


# -- setup, options and errors ----------------------------------------------------------
@pytest.mark.parametrize("n, coins, hand, deck", [(3, 35, 5, 13), (4, 25, 4, 12), (5, 20, 3, 13)])
def test_setup_table(n, coins, hand, deck):
    g = MegaGem(num_players=n)
    s = g.start(7).state
    assert s.coins == (coins,) * n
    assert all(sum(h) == hand for h in s.hands)
    assert len(s.pool) == 2 and len(s.gem_deck) == deck
    assert len(s.missions) == 4 and len(s.auction_deck) == 24
    assert sorted(s.tiebreak) == list(range(n))
    assert g.to_move(s) == tuple(range(n))


def test_flex_3_diff_reward_option():
    assert build_missions(10)[mission("flex_3_diff")].reward == 10
    g = MegaGem({"flex_3_diff_reward": 10})
    assert g.mission_table[mission("flex_3_diff")].reward == 10


def test_round_cap_ends_and_scores_the_game():
    g = MegaGem({"round_cap": 3})
    pos = g.start(1)
    while not g.is_over(pos):
        p = g.current_player(pos)
        pos = g.act(pos, p, g.default_action(pos.state, p))
    assert pos.state.round == 3 and len(pos.state.history) == 3
    assert all(sum(h) == 0 for h in pos.state.hands)


@pytest.mark.parametrize(
    "params",
    [{"value_chart": "F"}, {"flex_3_diff_reward": 7}, {"illegal_bid": "drop"}, {"round_cap": 0}, {"colour": 1}],
)
def test_bad_params_are_rejected_with_the_known_parameters(params):
    with pytest.raises(InvalidParamsError, match="known parameters"):
        MegaGem(params)


def test_player_count_is_checked():
    with pytest.raises(PlayerCountError):
        MegaGem(num_players=2)


def test_action_index_space_and_strings(game):
    assert game.num_actions == 96 + 5
    assert game.action_from_id(0) == Bid(0) and game.action_from_id(95) == Bid(95)
    assert game.action_from_id(96) == Reveal(R) and game.action_from_id(100) == Reveal(Y)
    for i in range(game.num_actions):
        assert game.action_id(game.action_from_id(i)) == i
    with pytest.raises(IndexError):
        game.action_from_id(101)
    assert game.action_to_str(Bid(7)) == "bid 7"
    assert game.action_to_str(Reveal(P)) == "reveal Purple"
    pos = game.start(0)
    assert game.action_from_str(pos, 0, "Bid 7") == Bid(7)
    assert [COLOURS[c] for c in range(5)] == ["Red", "Blue", "Green", "Purple", "Yellow"]


def test_the_docs_and_the_rules_name_no_path_outside_the_repo():
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    outside = re.compile(r"\.\./|(?<![\w.])/(?:work|home|tmp|Users|root|mnt)/|[A-Za-z]:\\\\|~/|\bshared/")
    for rel in ("docs/megagem.md", "src/arena_games/megagem/rules.py", "src/arena_games/megagem/text.py"):
        text = (root / rel).read_text(encoding="utf-8")
        assert not outside.search(text), f"{rel} names a path outside the repository: {outside.search(text).group()}"
