"""What one MegaGem seat sees: the structured observation and its flat numeric encoding.

Public: chart, display, face-up pool, deck sizes, current card, every player's coins,
collection, hand size, loans, number of investments and missions, the tiebreak queue and the
full history of settled auctions with all bids. Private: the seat's own hand (and, for the
auction winner at a reveal, the gems it is about to receive). Never shown: opponents' hands,
deck order, and bids of the current round before they are all in (the core keeps pending
commitments out of observations).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .cards import AUCTION_CARDS, COLOURS, GEMS_PER_COLOUR, NUM_COLOURS, CardKind

if TYPE_CHECKING:  # pragma: no cover
    from .rules import MegaGem, MegaGemState

MAX_PLAYERS = 5
PHASE_NAMES = ("bid", "reveal", "over")
_BID, _REVEAL, _OVER = 0, 1, 2


def _counts_dict(counts: Sequence[int]) -> dict[str, int]:
    return {COLOURS[c]: int(counts[c]) for c in range(NUM_COLOURS)}


def card_dict(card_index: int) -> dict[str, str | int]:
    card = AUCTION_CARDS[card_index]
    out: dict[str, str | int] = {"id": card.id, "type": card.kind.name.lower()}
    if card.kind is CardKind.TREASURE:
        out["gems"] = card.value
    elif card.kind is CardKind.LOAN:
        out["amount"] = card.value
    else:
        out["bonus"] = card.value
    return out


def observation(game: MegaGem, state: MegaGemState, player: int) -> dict[str, Any]:
    """A fresh JSON-able dict of everything ``player`` may know."""
    display_counts = game.display_counts(state)
    phase = int(state.phase)
    table = game.mission_table
    obs: dict[str, Any] = {
        "player": player,
        "num_players": game.num_players,
        "phase": PHASE_NAMES[phase],
        "round": state.round,
        "value_chart": {"id": game.params.value_chart, "values": list(game.chart)},
        "display": [COLOURS[g] for g in state.display],
        "display_counts": _counts_dict(display_counts),
        "pool": [COLOURS[g] for g in state.pool],
        "gem_deck_size": len(state.gem_deck),
        "auction_deck_size": len(state.auction_deck),
        "current_card": card_dict(state.card) if phase != _OVER else None,
        "bid_limit": game.bid_limit(state, player) if phase == _BID else None,
        "players": [
            {
                "coins": state.coins[p],
                "collection": _counts_dict(state.collections[p]),
                "hand_size": sum(state.hands[p]),
                "total_loans": sum(state.loans[p]),
                "num_investments": len(state.investments[p]),
                "missions": [table[m].id for m in state.claimed[p]],
            }
            for p in game.all_players
        ],
        "missions": [
            {
                "id": table[m].id,
                "type": table[m].type,
                "description": table[m].description,
                "requirement": table[m].requirement_dict(),
                "reward": table[m].reward,
            }
            for m in state.missions
        ],
        "tiebreak": list(state.tiebreak),
        "history": [
            {
                "round": r.round,
                "card": AUCTION_CARDS[r.card].id,
                "bids": list(r.bids),
                "winner": r.winner,
                "price": r.price,
                "gems_won": [COLOURS[g] for g in r.gems_won],
                "revealed": None if r.revealed is None else COLOURS[r.revealed],
                "missions": [table[m].id for m in r.missions],
            }
            for r in state.history
        ],
        "hand": _counts_dict(state.hands[player]),
    }
    if phase == _REVEAL:
        card = AUCTION_CARDS[state.card]
        take = min(card.value, len(state.pool)) if card.kind is CardKind.TREASURE else 0
        obs["pending_win"] = {
            "winner": state.winner,
            "price": state.bids[state.winner],
            "bids": list(state.bids),
            "gems": [COLOURS[g] for g in state.pool[:take]],
        }
    if phase == _OVER:
        obs["scores"] = game.score_breakdown(state)
    return obs


# ---------------------------------------------------------------------- flat encoding
_LAYOUT = (
    ("phase", 3),
    ("seat", MAX_PLAYERS),
    ("num_players", 3),
    ("round", 1),
    ("card", len(AUCTION_CARDS)),
    ("bid_limit", 1),
    ("chart", 6),
    ("display_counts", NUM_COLOURS),
    ("display_values", NUM_COLOURS),
    ("pool", NUM_COLOURS),
    ("for_sale", NUM_COLOURS),
    ("decks", 2),
    ("hand", NUM_COLOURS),
    ("players", MAX_PLAYERS * 13),
    ("missions", 30),
    ("pending_gems", NUM_COLOURS),
    ("last_bids", MAX_PLAYERS),
)
OFFSETS: dict[str, int] = {}
_o = 0
for _name, _size in _LAYOUT:
    OFFSETS[_name] = _o
    _o += _size
ENCODING_SIZE = _o
COIN_SCALE = 100.0


def encode(game: MegaGem, state: MegaGemState, player: int) -> np.ndarray:
    """Flat float32 encoding (length ENCODING_SIZE). Seats are relative: slot 0 is the observer.

    The public part of a state is computed once and reused for every seat that observes the
    same state object (the bidders of one round); each call returns a fresh array."""
    memo = game.encoding_memo
    if memo is None or memo[0] is not state:
        memo = (state,) + _public_features(game, state)
        game.encoding_memo = memo
    _, public, rows = memo
    n = game.num_players
    out = public[:]
    out[_SEAT + player] = 1.0
    if state.phase == _BID:
        out[_BID_LIMIT] = game.bid_limit(state, player) / COIN_SCALE
    hand = state.hands[player]
    out[_HAND : _HAND + NUM_COLOURS] = [h / GEMS_PER_COLOUR for h in hand]
    rotated: list[float] = []
    for rel in range(n):
        rotated += rows[(player + rel) % n]
    out[_PLAYERS : _PLAYERS + 13 * n] = rotated
    if state.history:
        bids = state.history[-1].bids
        out[_LAST_BIDS : _LAST_BIDS + n] = [bids[(player + rel) % n] / COIN_SCALE for rel in range(n)]
    return np.array(out, dtype=np.float32)


_SEAT, _BID_LIMIT, _HAND, _PLAYERS, _LAST_BIDS = (
    OFFSETS[k] for k in ("seat", "bid_limit", "hand", "players", "last_bids")
)


def _public_features(game: MegaGem, state: MegaGemState) -> tuple[list[float], list[list[float]]]:
    """Seat-independent features, and one 13-feature row per (absolute) player."""
    n = game.num_players
    phase = int(state.phase)
    out: list[float] = [0.0] * ENCODING_SIZE
    o = OFFSETS
    out[o["phase"] + phase] = 1.0
    out[o["num_players"] + n - 3] = 1.0
    out[o["round"]] = state.round / 25.0
    take = 0
    if phase != _OVER:
        out[o["card"] + state.card] = 1.0
        card = AUCTION_CARDS[state.card]
        take = min(card.value, len(state.pool)) if card.kind is CardKind.TREASURE else 0
    out[o["chart"] : o["chart"] + 6] = [v / 20.0 for v in game.chart]
    dc = [0] * NUM_COLOURS
    for g in state.display:
        dc[g] += 1
    cc = game.chart_clamped
    for c in range(NUM_COLOURS):
        out[o["display_counts"] + c] = dc[c] / GEMS_PER_COLOUR
        out[o["display_values"] + c] = cc[dc[c]] / 20.0
    for i, g in enumerate(state.pool):
        out[o["pool"] + g] += 0.5
        if i < take:
            out[o["for_sale"] + g] += 0.5
    out[o["decks"]] = len(state.gem_deck) / 30.0
    out[o["decks"] + 1] = len(state.auction_deck) / 25.0
    for m in state.missions:
        out[o["missions"] + m] = 1.0
    if phase == _REVEAL:
        for g in state.pool[:take]:
            out[o["pending_gems"] + g] += 0.5
    rank = {p: i for i, p in enumerate(state.tiebreak)}
    table = game.mission_table
    rows = []
    for p in range(n):
        coll = state.collections[p]
        rows.append(
            [
                1.0,
                state.coins[p] / COIN_SCALE,
                coll[0] / GEMS_PER_COLOUR,
                coll[1] / GEMS_PER_COLOUR,
                coll[2] / GEMS_PER_COLOUR,
                coll[3] / GEMS_PER_COLOUR,
                coll[4] / GEMS_PER_COLOUR,
                sum(state.hands[p]) / 5.0,
                sum(state.loans[p]) / 60.0,
                len(state.investments[p]) / 4.0,
                sum(b + k for b, k in state.investments[p]) / COIN_SCALE,
                sum(table[m].reward for m in state.claimed[p]) / 45.0,
                rank[p] / max(1, n - 1),
            ]
        )
    return out, rows
