"""MegaGem bots: the rule book's bid rules, the expert's parts, legality and determinism."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from arena_core import play_episode
from arena_core.game import Position
from arena_core.players import Decision
from arena_core.registry import make_player
from arena_games.megagem import Bid, MegaGem, Phase, Reveal
from arena_games.megagem.bots import (
    LEGACY,
    ExpertBidder,
    FairValueBidder,
    HeuristicBidder,
    MarketAnchoredBidder,
    PriceLaw,
    _hypergeom,
    expected_final_values,
    mission_bonus,
)
from arena_games.megagem.cards import MISSION_IDS
from arena_games.megagem.rules import AuctionRecord

R, B, G, P, Y = range(5)
T1, T2, L10, L20, I5, I10 = range(6)
ZERO = (0, 0, 0, 0, 0)
BOT_NAMES = ("megagem_heuristic", "megagem_fair_value", "megagem_market", "megagem_expert")


def counts(*colours):
    out = [0] * 5
    for c in colours:
        out[c] += 1
    return tuple(out)


def decision(game, state, seat, ply=0):
    pos = Position(state, (), ply)
    return Decision(game, seat, game.observe(pos, seat), game.legal(pos, seat), ply, 7, pos)


def base(game, **fields):
    return dataclasses.replace(game.initial_state(np.random.default_rng(0)), **fields)


@pytest.fixture
def game():
    return MegaGem()


# -- the simple bidders follow the rule book ------------------------------------------------
def test_heuristic_bids_half_its_limit_on_treasure_and_zero_otherwise(game):
    bot = HeuristicBidder()
    assert bot.act(decision(game, base(game, card=T1, coins=(35, 35, 35)), 0)) == Bid(17)
    assert bot.act(decision(game, base(game, card=T2, coins=(9, 35, 35)), 0)) == Bid(4)
    assert bot.act(decision(game, base(game, card=L20), 0)) == Bid(0)
    assert bot.act(decision(game, base(game, card=I10), 0)) == Bid(0)
    assert HeuristicBidder(fraction=0.2).act(decision(game, base(game, card=T1), 0)) == Bid(7)


def test_heuristic_noise_is_bounded_and_seeded(game):
    s = base(game, card=T1, coins=(20, 35, 35))
    bids = [HeuristicBidder(seed=k, noise=3).act(decision(game, s, 0)).amount for k in range(40)]
    assert set(bids) <= set(range(7, 14)) and len(set(bids)) > 1
    assert bids == [HeuristicBidder(seed=k, noise=3).act(decision(game, s, 0)).amount for k in range(40)]
    with pytest.raises(ValueError):
        HeuristicBidder(fraction=1.5)


def test_fair_value_is_shaded_chart_value_of_the_lot(game):
    s = base(game, card=T2, pool=(R, B), display=(R, R, R, B))  # chart A: Red 3 -> 12, Blue 1 -> 4
    assert FairValueBidder().act(decision(game, s, 0)) == Bid(round(0.8 * 16))
    one = dataclasses.replace(s, card=T1)
    assert FairValueBidder().act(decision(game, one, 0)) == Bid(round(0.8 * 12))
    poor = dataclasses.replace(s, coins=(5, 35, 35))
    assert FairValueBidder().act(decision(game, poor, 0)) == Bid(5)
    hand = dataclasses.replace(one, hands=(counts(R, R), counts(G), counts(G)))
    assert FairValueBidder(count_own_hand=True).act(decision(game, hand, 0)) == Bid(16)  # Red 5 -> 20 x 0.8
    assert FairValueBidder().act(decision(game, dataclasses.replace(s, card=L10), 0)) == Bid(0)


def test_market_anchored_uses_recent_same_size_winning_prices(game):
    hist = tuple(
        AuctionRecord(i + 1, card, (price, 0, 0), 0, price, (R,), None, ())
        for i, (card, price) in enumerate([(T1, 30), (T1, 4), (T2, 9), (T1, 6), (L10, 3), (T1, 10)])
    )
    s = base(game, card=T1, history=hist, tiebreak=(0, 2, 1), round=7)
    # last five: T1 4, T2 9, T1 6, L10 3, T1 10 -> same size T1: 4, 6, 10 -> median 6 (the old 30 is out of the window)
    assert MarketAnchoredBidder().act(decision(game, s, 2)) == Bid(6)
    assert MarketAnchoredBidder().act(decision(game, s, 1)) == Bid(7)  # last in tiebreak: +1
    fresh = base(game, card=T2, coins=(35, 35, 35), tiebreak=(0, 1, 2))
    assert MarketAnchoredBidder().act(decision(game, fresh, 0)) == Bid(round(0.25 * 35))


def test_simple_bots_reveal_the_alphabetically_first_colour(game):
    s = base(game, card=T1, hands=(counts(R, Y, P), counts(B), counts(B)), tiebreak=(0, 1, 2))
    s = dataclasses.replace(s, phase=Phase.REVEAL, bids=(3, 0, 0), winner=0)
    for bot in (HeuristicBidder(), FairValueBidder(), MarketAnchoredBidder()):
        assert bot.act(decision(game, s, 0)) == Reveal(P)


# -- the expert's parts --------------------------------------------------------------------
def test_hypergeometric_probabilities():
    probs = _hypergeom(10, 4, 3)
    assert sum(probs) == pytest.approx(1.0)
    assert probs[0] == pytest.approx(20 / 120) and probs[3] == pytest.approx(4 / 120)


def test_expected_final_values_are_exact_when_nothing_is_unknown(game):
    # seat 0 holds every hand gem; opponents' hands are empty, so the final display is known
    s = base(game, hands=(counts(R, R, R, B, G), ZERO, ZERO), display=(R,), pool=(B, G), gem_deck=(P, P))
    obs = game.observe(Position(s), 0)
    # Red: 1 + 3 = 4 -> 16; Blue 1 -> 4; Green 1 -> 4; Purple 0; Yellow 0 (chart A)
    assert expected_final_values(obs) == pytest.approx([16, 4, 4, 0, 0])


def test_expected_final_values_average_over_opponents_hands(game):
    # all 6 Yellow unseen, 2 in an opponent's 2-card hand or in the 4-card deck... check against enumeration
    s = base(
        game,
        hands=(ZERO, counts(Y, Y), ZERO),
        display=(),
        pool=(R, R),
        gem_deck=(Y, Y, Y, Y),
        collections=(counts(R, R, R, R), ZERO, ZERO),
    )
    s = dataclasses.replace(s, collections=(ZERO, ZERO, ZERO))
    obs = game.observe(Position(s), 0)
    # from seat 0: unseen = 6 per colour except Red (2 in pool): 4 Red + 24 others = 28 unseen, opponents hold 2
    vals = expected_final_values(obs)
    expected_yellow = sum(p * game.chart_clamped[x] for x, p in enumerate(_hypergeom(28, 6, 2)))
    assert vals[Y] == pytest.approx(expected_yellow)
    assert vals[R] == pytest.approx(sum(p * game.chart_clamped[x] for x, p in enumerate(_hypergeom(28, 4, 2))))


def test_mission_bonus_is_exact(game):
    ms = (MISSION_IDS.index("specific_3_rbp"), MISSION_IDS.index("specific_2_bg"), MISSION_IDS.index("flex_2_pairs"))
    s = base(game, missions=ms)
    obs = game.observe(Position(s), 0)
    assert mission_bonus(obs, [1, 1, 0, 0, 0], [P, G]) == 15
    assert mission_bonus(obs, [4, 0, 0, 0, 0], []) == 0
    assert mission_bonus(obs, [2, 1, 0, 0, 0], [B]) == 15  # two pairs


def test_win_probability_handles_the_tiebreak_exactly(game):
    bot = ExpertBidder()
    point = PriceLaw({5: 1.0})
    obs = {"player": 0, "tiebreak": [0, 1, 2]}
    p = bot.win_probabilities(obs, {1: point, 2: PriceLaw({0: 1.0})}, 8)
    assert p[4] == 0.0 and p[5] == 1.0  # I am ahead of seat 1: a tie at 5 is mine
    obs = {"player": 0, "tiebreak": [1, 0, 2]}
    p = bot.win_probabilities(obs, {1: point, 2: PriceLaw({0: 1.0})}, 8)
    assert p[5] == 0.0 and p[6] == 1.0
    mixed = bot.win_probabilities(
        {"player": 0, "tiebreak": [0, 1, 2]}, {1: PriceLaw({2: 0.5, 6: 0.5}), 2: PriceLaw({4: 1.0})}, 8
    )
    assert mixed[3] == 0.0 and mixed[4] == pytest.approx(0.5) and mixed[6] == pytest.approx(1.0)


def test_price_law_fits_a_budget_fraction_bidder():
    # a bidder that always bids half its coins: the budget hypothesis predicts it exactly
    past = [(float(c // 2), 1.0, float(c), 8.0) for c in (35, 30, 26, 20, 16)]
    law = PriceLaw.fit(past, (1.0, 12.0, 8.0), 12, [0.0, 6.0, 6.0])
    mode = max(law.support, key=law.support.get)
    assert mode == 6
    assert sum(law.support.values()) == pytest.approx(1.0)


def test_expert_buys_a_valuable_lot_cheaply_and_invests_when_unopposed(game):
    s = base(
        game,
        card=T1,
        pool=(R, B),
        display=(R, R, R, R),
        coins=(35, 35, 35),
        tiebreak=(0, 1, 2),
        hands=(counts(R), counts(G, G, G, G, G), counts(P, P, P, P, P)),
    )
    history = tuple(AuctionRecord(i + 1, T1, (0, 0, 0), 0, 0, (Y,), None, ()) for i in range(3))
    s = dataclasses.replace(s, history=history, round=4, collections=(counts(Y, Y, Y), ZERO, ZERO))
    # opponents always bid 0 and seat 0 is ahead: bidding 0 wins a Red worth 20
    assert ExpertBidder().act(decision(game, s, 0)) == Bid(0)
    s2 = dataclasses.replace(s, tiebreak=(1, 0, 2))
    assert ExpertBidder().act(decision(game, s2, 0)) == Bid(1)
    inv = dataclasses.replace(s2, card=I10)
    assert ExpertBidder().act(decision(game, inv, 0)).amount in (1, 2, 3)


def test_expert_reveal_avoids_raising_the_price_of_what_is_still_for_sale(game):
    # chart A: revealing raises the public price; Green is still abundant in the deck, Yellow is not
    s = base(
        game,
        card=T1,
        hands=(counts(G, Y), ZERO, ZERO),
        pool=(G, R),
        gem_deck=(G, G, G, R),
        display=(Y, Y, Y, Y),
        collections=(counts(Y), ZERO, ZERO),
        tiebreak=(0, 1, 2),
    )
    s = dataclasses.replace(s, phase=Phase.REVEAL, bids=(2, 0, 0), winner=0)
    assert ExpertBidder().act(decision(game, s, 0)) == Reveal(Y)


# -- every bot: registered, legal, deterministic ---------------------------------------------
@pytest.mark.parametrize("n", [3, 4, 5])
def test_all_bots_play_legal_games_under_the_raise_policy(n):
    g = MegaGem(num_players=n)
    names = list(BOT_NAMES) + ["random"]
    players = [make_player(names[(i + n) % len(names)], seed=i) for i in range(n)]
    for seed in range(3):
        record = play_episode(g, players, seed)
        assert record.end.reason.value == "natural"


@pytest.mark.parametrize("name", BOT_NAMES)
def test_bots_are_deterministic_for_a_seed(name):
    g = MegaGem()

    def actions(seed):
        players = [
            make_player(name, seed=seed),
            make_player("megagem_heuristic", seed=1),
            make_player("random", seed=2),
        ]
        return [e.action for e in play_episode(g, players, 11).events if getattr(e, "type", "") == "step"]

    assert actions(4) == actions(4)


def test_expert_takes_loans_only_when_short_of_coins(game):
    history = tuple(AuctionRecord(i + 1, T1, (0, 0, 0), 1, 0, (Y,), None, ()) for i in range(2))
    s = base(game, card=L10, tiebreak=(1, 0, 2), history=history, round=3, collections=(ZERO, counts(Y, Y), ZERO))
    rich = dataclasses.replace(s, coins=(35, 35, 35))
    assert ExpertBidder(**LEGACY).act(decision(game, rich, 0)) == Bid(0)
    poor = dataclasses.replace(s, coins=(2, 35, 35))
    amount = ExpertBidder(**LEGACY).act(decision(game, poor, 0)).amount
    assert 1 <= amount < 10  # outbid the zero bids ahead of it, far below the loan's face value


# ---------------------------------------------------------------------- the expert's knobs
def test_expert_knobs_defaults_are_the_confirmed_configuration_and_bad_ones_are_refused(game):
    from arena_core.errors import PlayerOptionsError

    bot = make_player("megagem_expert")
    assert bot.settings.model_dump() == {
        "liquidity": 0.5,
        "schedule": "fading",
        "offset": 0.0,
        "gate": 1.0,
        "loan_rule": "liquidity",
        "prior": "simple",
    }
    assert ExpertBidder(**LEGACY).settings.model_dump() == LEGACY
    for bad in ({"schedule": "sometimes"}, {"gate": -1.0}, {"liquidity": -0.1}, {"loan_rule": "always"}):
        with pytest.raises(PlayerOptionsError, match="known options"):
            ExpertBidder(**bad)


def test_expert_loan_rule_liquidity_bids_for_a_loan_when_rich(game):
    history = tuple(AuctionRecord(i + 1, T1, (0, 0, 0), 1, 0, (Y,), None, ()) for i in range(2))
    s = base(game, card=L10, tiebreak=(1, 0, 2), history=history, round=3, collections=(ZERO, counts(Y, Y), ZERO))
    rich = dataclasses.replace(s, coins=(35, 35, 35))
    old = {**LEGACY, "loan_rule": "shortfall"}
    assert ExpertBidder(**old).act(decision(game, rich, 0)) == Bid(0)
    assert ExpertBidder(**{**old, "loan_rule": "liquidity"}).act(decision(game, rich, 0)).amount >= 1


def test_expert_gate_keeps_the_fair_value_bid_unless_the_gain_is_large(game):
    s = base(game, card=T2, pool=(R, B), display=(R, R, R, B))
    fair = FairValueBidder().act(decision(game, s, 0))
    assert ExpertBidder(gate=1e9).act(decision(game, s, 0)) == fair
    assert ExpertBidder(gate=0.0).act(decision(game, s, 0)) == ExpertBidder().act(decision(game, s, 0))


def test_expert_constant_lambda_charges_more_late_in_the_game(game):
    bot_f, bot_c = ExpertBidder(), ExpertBidder(schedule="constant")
    late = game.start(0)
    while not game.is_over(late) and late.state.round < 20:
        p = game.current_player(late)
        late = game.act(late, p, game.legal(late, p)[0])
    obs = game.observe(late, 0)
    assert bot_c._liquidity_now(obs) == 0.5 and bot_f._liquidity_now(obs) < 0.5


def test_a_changed_knob_is_a_new_resolved_identity():
    from arena_tournament.identity import entrant_identity
    from arena_tournament.schedule import Entrant

    shipped = entrant_identity(Entrant(name="e", player="megagem_expert"), make_player("megagem_expert"))
    same = entrant_identity(Entrant(name="e", player="megagem_expert"), ExpertBidder(liquidity=0.5))
    legacy = entrant_identity(Entrant(name="e", player="megagem_expert"), ExpertBidder(**LEGACY))
    assert shipped["params"]["gate"] == 1.0 and legacy["params"]["gate"] == 0.0
    assert shipped["digest"] == same["digest"] != legacy["digest"]  # the retuned default is a new identity
