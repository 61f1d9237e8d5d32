"""MegaGem rules (MegagemBench flavour): pure transitions over a frozen state.

One file (over 500 lines) because it is the one place for MegaGem's rules: dealing, legality, transitions and scoring.

A round draws one auction card; every player bids at once (a simultaneous move); the highest
bid wins, ties go to the earliest seat in the tiebreak queue, and the winner moves to the back
of the queue. A Treasure winner with a non-empty hand then reveals one hand gem to the value
display (a sequential decision of its own). The game ends when every auctionable gem is won;
remaining hands go to the display and gems score by the value chart at that final display.
The rules follow the public MegagemBench engine (github.com/djdumpling/MegagemBench, read at commit
6e5b082e); ``docs/megagem.md`` states them and where they differ from the published board game.
The rules import none of their views (``text.py``, ``views.py``): the registered game,
``arena_games.megagem.MegaGem`` (``__init__.py``), is this class with its views.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Literal, TypeVar

import numpy as np
from pydantic import Field

from arena_core.game import Game
from arena_core.spec import GameParams, GameSpec, Information, TurnStructure, Utility

from .cards import (
    ALPHABETICAL,
    AUCTION_CARDS,
    AUCTION_DECK,
    COLOURS,
    DEAL,
    GEMS_PER_COLOUR,
    MISSIONS_IN_PLAY,
    NUM_COLOURS,
    NUM_MISSIONS,
    TOTAL_LOANS,
    VALUE_CHARTS,
    CardKind,
    build_missions,
)
from .observe import ENCODING_SIZE, encode, observation

MAX_PLAYERS = 5
_ZERO5 = (0, 0, 0, 0, 0)
_T = TypeVar("_T")


class Phase(IntEnum):
    BID = 0  # every player bids on the current card (simultaneous)
    REVEAL = 1  # the auction winner moves one hand gem to the display
    OVER = 2


@dataclass(frozen=True, slots=True)
class Bid:
    """A sealed bid of ``amount`` coins on the current auction card."""

    amount: int

    def __post_init__(self) -> None:
        if isinstance(self.amount, np.integer):  # RL code holds numpy integers: the same bid
            object.__setattr__(self, "amount", int(self.amount))

    def __str__(self) -> str:
        return f"bid {self.amount}"


@dataclass(frozen=True, slots=True)
class Reveal:
    """Move one hand gem of ``colour`` (an index into COLOURS) to the value display."""

    colour: int

    def __post_init__(self) -> None:
        if isinstance(self.colour, np.integer):
            object.__setattr__(self, "colour", int(self.colour))

    def __str__(self) -> str:
        return f"reveal {COLOURS[self.colour]}"


Action = Bid | Reveal


@dataclass(frozen=True, slots=True)
class AuctionRecord:
    """One settled auction, public once settled."""

    round: int
    card: int  # index into AUCTION_CARDS
    bids: tuple[int, ...]
    winner: int
    price: int
    gems_won: tuple[int, ...]
    revealed: int | None  # colour moved to the display, or None
    missions: tuple[int, ...]  # mission indices the winner claimed this round


@dataclass(frozen=True, slots=True)
class MegaGemState:
    phase: Phase
    round: int  # number of the current auction (1-based); the last one when over
    card: int  # current card (index into AUCTION_CARDS); -1 when over
    auction_deck: tuple[int, ...]  # undrawn cards, next first
    gem_deck: tuple[int, ...]  # undealt gems, next first
    pool: tuple[int, ...]  # face-up gems for sale, oldest first
    display: tuple[int, ...]  # the value display, in reveal order
    hands: tuple[tuple[int, ...], ...]  # per player: counts per colour (private)
    collections: tuple[tuple[int, ...], ...]  # per player: counts per colour (public)
    coins: tuple[int, ...]
    loans: tuple[tuple[int, ...], ...]
    investments: tuple[tuple[tuple[int, int], ...], ...]  # (locked bid, bonus)
    missions: tuple[int, ...]  # available missions (indices into the mission table)
    claimed: tuple[tuple[int, ...], ...]  # per player
    tiebreak: tuple[int, ...]  # first has priority
    history: tuple[AuctionRecord, ...]
    bids: tuple[int, ...] = ()  # REVEAL phase: the settled bids awaiting the winner's reveal
    winner: int = -1  # REVEAL phase: the auction winner


class MegaGemParams(GameParams):
    """Options; the defaults are MegagemBench's rules (rule book section 12 lists the variants)."""

    value_chart: Literal["A", "B", "C", "D", "E"] = Field("A", description="the value chart used for every colour")
    flex_3_diff_reward: Literal[5, 10] = Field(
        5, description="reward of the 3-different-colours mission (published game: 10)"
    )
    illegal_bid: Literal["zero", "clamp"] = Field(
        "zero",
        description="how the text parser treats a bid outside 0..limit: replace by 0 (benchmark) or clamp (published)",
    )
    reveal_by: Literal["treasure_winner", "every_winner"] = Field(
        "treasure_winner",
        description="who reveals a hand gem: Treasure winners only (benchmark) or every auction winner (published)",
    )
    round_cap: int | None = Field(
        None,
        ge=1,
        le=25,
        description="end (and score) the game after this many auctions; None: only the rule book's end",
    )


REWARD_BOUNDS = (-float(TOTAL_LOANS), 500.0)


class MegaGem(Game[MegaGemState, Action]):
    """MegaGem for 3-5 players; see the module docstring."""

    spec = GameSpec(
        id="megagem",
        version="1",
        min_players=3,
        max_players=5,
        turn_structure=TurnStructure.MIXED,
        chance=True,
        information=Information.IMPERFECT,
        utility=Utility.GENERAL_SUM,
        max_length=25 * (MAX_PLAYERS + 1),
        reward_bounds=REWARD_BOUNDS,
        description=(
            "MegaGem: sealed-bid auctions of gems, loans and investments with budgets, public missions and a "
            "value chart priced by the gems revealed from private hands. Returns are final scores in coins."
        ),
    )
    Params = MegaGemParams
    State = MegaGemState
    params: MegaGemParams  # set by Game.__init__ from Params
    #: the last encoded state with its public features and player rows (see observe.encode)
    encoding_memo: tuple[MegaGemState, list[float], list[list[float]]] | None

    # ------------------------------------------------------------------ setup
    def default_num_players(self) -> int:
        return 3

    def setup(self) -> None:
        p = self.params
        n = self.num_players
        self.start_coins, self.hand_size = DEAL[n]
        self.max_bid = self.start_coins + TOTAL_LOANS  # the most coins anybody can ever hold
        self.num_actions = self.max_bid + 1 + NUM_COLOURS
        self.chart = VALUE_CHARTS[p.value_chart]
        self.chart_clamped = tuple(self.chart[min(k, 5)] for k in range(GEMS_PER_COLOUR * MAX_PLAYERS + 1))
        self.mission_table = build_missions(p.flex_3_diff_reward)
        self.everyone_reveals = p.reveal_by == "every_winner"
        self.round_cap = p.round_cap if p.round_cap is not None else 10**9
        self.gems_to_win = n * self.hand_size
        self.all_players = tuple(range(n))
        self.bid_actions = tuple(Bid(i) for i in range(self.max_bid + 1))
        self.reveal_actions = tuple(Reveal(c) for c in range(NUM_COLOURS))
        self.observation_size = ENCODING_SIZE
        self.observation_bounds = (0.0, 2.0)  # every encoded feature lies in [0, 2]
        self.encoding_memo = None

    # ------------------------------------------------------------------ chance
    def initial_state(self, rng: np.random.Generator) -> MegaGemState:
        n, hand = self.num_players, self.hand_size
        gems = [int(g) for g in rng.permutation(np.repeat(np.arange(NUM_COLOURS), GEMS_PER_COLOUR))]
        auctions = tuple(int(AUCTION_DECK[i]) for i in rng.permutation(len(AUCTION_DECK)))
        missions = tuple(sorted(int(m) for m in rng.permutation(NUM_MISSIONS)[:MISSIONS_IN_PLAY]))
        hands = []
        for _ in range(n):
            counts = [0] * NUM_COLOURS
            for _ in range(hand):
                counts[gems.pop()] += 1
            hands.append(tuple(counts))
        pool = (gems.pop(), gems.pop())
        tiebreak = tuple(int(p) for p in rng.permutation(n))
        return MegaGemState(
            phase=Phase.BID,
            round=1,
            card=auctions[0],
            auction_deck=auctions[1:],
            gem_deck=tuple(gems),
            pool=pool,
            display=(),
            hands=tuple(hands),
            collections=(_ZERO5,) * n,
            coins=(self.start_coins,) * n,
            loans=((),) * n,
            investments=((),) * n,
            missions=missions,
            claimed=((),) * n,
            tiebreak=tiebreak,
            history=(),
        )

    # ------------------------------------------------------------------ turn structure
    def to_move(self, state: MegaGemState) -> tuple[int, ...]:
        if state.phase is Phase.BID:
            return self.all_players
        if state.phase is Phase.REVEAL:
            return (state.winner,)
        return ()

    def is_terminal(self, state: MegaGemState) -> bool:
        return state.phase is Phase.OVER

    def bid_limit(self, state: MegaGemState, player: int) -> int:
        """The largest legal bid of ``player`` on the current card (coins, plus the amount on a Loan)."""
        card = AUCTION_CARDS[state.card]
        return state.coins[player] + (card.value if card.kind is CardKind.LOAN else 0)

    def legal_actions(self, state: MegaGemState, player: int) -> tuple[Action, ...]:
        if state.phase is Phase.BID:
            return self.bid_actions[: self.bid_limit(state, player) + 1]
        if state.phase is Phase.REVEAL and player == state.winner:
            hand = state.hands[player]
            return tuple(self.reveal_actions[c] for c in range(NUM_COLOURS) if hand[c])
        return ()

    def legal_mask(self, state: MegaGemState, player: int) -> np.ndarray:
        """Vectorised mask: bids 0..limit, or the reveal colours in hand (checked by the kit)."""
        mask = np.zeros(self.num_actions, dtype=np.int8)
        if state.phase is Phase.BID:
            mask[: self.bid_limit(state, player) + 1] = 1
        elif state.phase is Phase.REVEAL and player == state.winner:
            mask[self.max_bid + 1 :] = np.asarray(state.hands[player][:NUM_COLOURS], dtype=bool)
        return mask

    def is_legal(self, state: MegaGemState, player: int, action: Action) -> bool:
        if state.phase is Phase.BID:
            return (
                type(action) is Bid
                and type(action.amount) is int
                and 0 <= action.amount <= self.bid_limit(state, player)
            )
        if state.phase is Phase.REVEAL:
            return (
                type(action) is Reveal
                and player == state.winner
                and type(action.colour) is int
                and 0 <= action.colour < NUM_COLOURS
                and state.hands[player][action.colour] > 0
            )
        return False

    def default_action(self, state: MegaGemState, player: int) -> Action:
        """Bid 0; reveal the alphabetically first colour in hand (the benchmark's fallbacks)."""
        if state.phase is Phase.REVEAL:
            hand = state.hands[player]
            return self.reveal_actions[next(c for c in ALPHABETICAL if hand[c])]
        return self.bid_actions[0]

    def coerce_bid(self, state: MegaGemState, player: int, amount: int) -> tuple[Bid, bool]:
        """The bid applied for a requested ``amount`` under the ``illegal_bid`` option, and whether
        the request was legal (an out-of-range bid becomes 0, or is clamped to 0..limit)."""
        limit = self.bid_limit(state, player)
        if 0 <= amount <= limit:
            return self.bid_actions[amount], True
        if self.params.illegal_bid == "clamp":
            return self.bid_actions[max(0, min(amount, limit))], False
        return self.bid_actions[0], False

    # ------------------------------------------------------------------ transitions
    def next_state(self, state: MegaGemState, joint: Mapping[int, Action]) -> MegaGemState:
        if state.phase is Phase.BID:
            bids = tuple(_as_bid(joint[p]).amount for p in self.all_players)
            winner = resolve_winner(bids, state.tiebreak)
            card = AUCTION_CARDS[state.card]
            if (card.kind is CardKind.TREASURE or self.everyone_reveals) and any(state.hands[winner]):
                return MegaGemState(
                    Phase.REVEAL,
                    state.round,
                    state.card,
                    state.auction_deck,
                    state.gem_deck,
                    state.pool,
                    state.display,
                    state.hands,
                    state.collections,
                    state.coins,
                    state.loans,
                    state.investments,
                    state.missions,
                    state.claimed,
                    state.tiebreak,
                    state.history,
                    bids,
                    winner,
                )
            return self._settle(state, bids, winner, None)
        if state.phase is Phase.REVEAL:
            (action,) = joint.values()
            return self._settle(state, state.bids, state.winner, _as_reveal(action).colour)
        raise ValueError("megagem: no move is possible after the end")

    def _settle(self, state: MegaGemState, bids: tuple[int, ...], winner: int, revealed: int | None) -> MegaGemState:
        """Apply the reveal, payment and transfer of one auction, then end or draw the next card."""
        card = AUCTION_CARDS[state.card]
        price = bids[winner]
        hands, display = state.hands, state.display
        if revealed is not None:
            hand = list(hands[winner])
            hand[revealed] -= 1
            hands = _replace_at(hands, winner, tuple(hand))
            display = display + (revealed,)
        coins = list(state.coins)
        collections, loans, investments = state.collections, state.loans, state.investments
        pool, gem_deck, missions, claimed = state.pool, state.gem_deck, state.missions, state.claimed
        gems_won: tuple[int, ...] = ()
        claimed_now: tuple[int, ...] = ()
        if card.kind is CardKind.TREASURE:
            coins[winner] -= price
            take = min(card.value, len(pool))
            gems_won, pool = pool[:take], pool[take:]
            refill = 2 - len(pool)
            if refill > 0 and gem_deck:
                pool, gem_deck = pool + gem_deck[:refill], gem_deck[refill:]
            coll = list(collections[winner])
            for g in gems_won:
                coll[g] += 1
            collections = _replace_at(collections, winner, tuple(coll))
            if missions:
                table = self.mission_table
                claimed_now = tuple(m for m in missions if table[m].satisfied_by(coll))
                if claimed_now:
                    missions = tuple(m for m in missions if m not in claimed_now)
                    claimed = _replace_at(claimed, winner, claimed[winner] + claimed_now)
        elif card.kind is CardKind.LOAN:
            coins[winner] += card.value - price
            loans = _replace_at(loans, winner, loans[winner] + (card.value,))
        else:
            coins[winner] -= price
            investments = _replace_at(investments, winner, investments[winner] + ((price, card.value),))
        tiebreak = tuple(p for p in state.tiebreak if p != winner) + (winner,)
        history = state.history + (
            AuctionRecord(state.round, state.card, bids, winner, price, gems_won, revealed, claimed_now),
        )
        won_total = sum(sum(c) for c in collections)
        over = (
            won_total >= self.gems_to_win
            or (not gem_deck and not pool)
            or state.round >= self.round_cap
            or not state.auction_deck
        )
        if over:
            final_display = list(display)
            for rest in hands:
                for c in range(NUM_COLOURS):
                    final_display.extend([c] * rest[c])
            return MegaGemState(
                Phase.OVER,
                state.round,
                -1,
                state.auction_deck,
                gem_deck,
                pool,
                tuple(final_display),
                (_ZERO5,) * self.num_players,
                collections,
                tuple(coins),
                loans,
                investments,
                missions,
                claimed,
                tiebreak,
                history,
            )
        return MegaGemState(
            Phase.BID,
            state.round + 1,
            state.auction_deck[0],
            state.auction_deck[1:],
            gem_deck,
            pool,
            display,
            hands,
            collections,
            tuple(coins),
            loans,
            investments,
            missions,
            claimed,
            tiebreak,
            history,
        )

    # ------------------------------------------------------------------ scoring
    def display_counts(self, state: MegaGemState) -> list[int]:
        counts = [0] * NUM_COLOURS
        for g in state.display:
            counts[g] += 1
        return counts

    def score_breakdown(self, state: MegaGemState) -> list[dict[str, int]]:
        """Every scoring component per player, as if the game ended now (hands join the display)."""
        final = self.display_counts(state)
        for hand in state.hands:
            for c in range(NUM_COLOURS):
                final[c] += hand[c]
        prices = [self.chart_clamped[k] for k in final]
        out = []
        for p in self.all_players:
            gems = sum(n * v for n, v in zip(state.collections[p], prices, strict=True))
            missions = sum(self.mission_table[m].reward for m in state.claimed[p])
            loans = sum(state.loans[p])
            investments = sum(bid + bonus for bid, bonus in state.investments[p])
            total = state.coins[p] + gems + missions - loans + investments
            out.append(
                {
                    "coins": state.coins[p],
                    "gems": gems,
                    "missions": missions,
                    "loans": loans,
                    "investments": investments,
                    "total": total,
                }
            )
        return out

    def scores(self, state: MegaGemState) -> tuple[int, ...]:
        return tuple(b["total"] for b in self.score_breakdown(state))

    def winner(self, state: MegaGemState) -> int:
        """Highest final score; ties go to the earliest tied seat in the final tiebreak order."""
        scores = self.scores(state)
        best = max(scores)
        return next(p for p in state.tiebreak if scores[p] == best)

    def returns(self, state: MegaGemState) -> tuple[float, ...]:
        return tuple(float(s) for s in self.scores(state))

    # ------------------------------------------------------------------ actions
    def action_id(self, action: Action) -> int:
        if isinstance(action, Bid):
            return action.amount
        return self.max_bid + 1 + action.colour

    def action_from_id(self, index: int) -> Action:
        if not 0 <= index < self.num_actions:
            raise IndexError(f"megagem action index must lie in 0..{self.num_actions - 1}, got {index}")
        if index <= self.max_bid:
            return self.bid_actions[index]
        return self.reveal_actions[index - self.max_bid - 1]

    def action_to_str(self, action: Action) -> str:
        return str(action)

    # ------------------------------------------------------------------ observations
    def observation(self, state: MegaGemState, player: int) -> dict[str, Any]:
        return observation(self, state, player)

    def encode_observation(self, state: MegaGemState, player: int) -> np.ndarray:
        return encode(self, state, player)

    def sample_hidden_state(self, state: MegaGemState, player: int, rng: np.random.Generator) -> MegaGemState:
        """Redeal what ``player`` cannot see: opponents' hands, the gem deck order, the auction deck order."""
        unknown = [GEMS_PER_COLOUR] * NUM_COLOURS
        for g in state.display:
            unknown[g] -= 1
        for g in state.pool:
            unknown[g] -= 1
        for coll in state.collections:
            for c in range(NUM_COLOURS):
                unknown[c] -= coll[c]
        for c in range(NUM_COLOURS):
            unknown[c] -= state.hands[player][c]
        bag = [int(g) for g in rng.permutation(np.repeat(np.arange(NUM_COLOURS), unknown))]
        hands = []
        for p in self.all_players:
            if p == player:
                hands.append(state.hands[p])
                continue
            counts = [0] * NUM_COLOURS
            for _ in range(sum(state.hands[p])):
                counts[bag.pop()] += 1
            hands.append(tuple(counts))
        auctions = tuple(int(state.auction_deck[i]) for i in rng.permutation(len(state.auction_deck)))
        return MegaGemState(
            state.phase,
            state.round,
            state.card,
            auctions,
            tuple(bag),
            state.pool,
            state.display,
            tuple(hands),
            state.collections,
            state.coins,
            state.loans,
            state.investments,
            state.missions,
            state.claimed,
            state.tiebreak,
            state.history,
            state.bids,
            state.winner,
        )


def resolve_winner(bids: tuple[int, ...], tiebreak: tuple[int, ...]) -> int:
    """Highest bid wins; among the highest, the earliest seat in the tiebreak queue."""
    top = max(bids)
    for p in tiebreak:
        if bids[p] == top:
            return p
    raise ValueError("tiebreak order must name every seat")


def _replace_at(items: tuple[_T, ...], index: int, value: _T) -> tuple[_T, ...]:
    return items[:index] + (value,) + items[index + 1 :]


def _as_bid(action: Action) -> Bid:
    """``action`` as a bid (the core applies only legal actions: every one is a Bid in a bid phase)."""
    if isinstance(action, Bid):
        return action
    raise TypeError(f"megagem: a bid phase takes Bid actions, got {action!r}")


def _as_reveal(action: Action) -> Reveal:
    """``action`` as a reveal (the core applies only legal actions: a Reveal at a reveal)."""
    if isinstance(action, Reveal):
        return action
    raise TypeError(f"megagem: a reveal takes a Reveal action, got {action!r}")
