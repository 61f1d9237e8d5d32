"""MegaGem's transcript view (the ``"transcript"`` entry of ``MegaGem.views()``): one
conversation per seat, each turn adding only what changed since the seat's last turn.

A seat's first turn is the snapshot prompt (:class:`~.text.MegaGemTextView`: the rules, then
the whole state). Every later turn is one user message of compact JSON lines:

- ``since_your_last_turn``: every auction settled since (card, all bids, winner, price, gems
  won, the gem revealed, missions completed);
- the parts of the state that changed: the value display, the players whose public state
  changed (coins, collections, hand sizes, loans, investments, missions), the missions still open, the tiebreak order, the
  seat's own hand;
- this turn: the round and phase, the auction on offer with the seat's bid limit (or, at a
  reveal, the win it must reveal for), and the answer format.

Everything is read from the seat's observations (``game.observe``: the auction history with
all bids is public; other hands never appear) and its legal set; the marker is the seat's
last observation. Answers are read by the snapshot view's parser (the same JSON formats).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from arena_core.transcript import TranscriptTurn

from .text import MegaGemTextView

if TYPE_CHECKING:  # pragma: no cover
    from arena_core.game import Position
    from arena_core.text import ParseResult

    from .rules import MegaGem

_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode

BID_REQUEST = 'Answer: brief reasoning, then exactly one final JSON object on its own line: {"bid": <integer>}.'
REVEAL_REQUEST = 'Answer: brief reasoning, then exactly one final JSON object on its own line: {"reveal": "<Colour>"}.'


def _nonzero(counts: dict[str, int]) -> dict[str, int]:
    return {k: v for k, v in counts.items() if v}


def auction_line(record: dict[str, Any]) -> dict[str, Any]:
    """One settled auction (an entry of the observation's ``history``) as the transcript shows it."""
    return {
        "round_number": record["round"],
        "auction": record["card"],
        "all_bids_by_player_id": {str(p): b for p, b in enumerate(record["bids"])},
        "winner_id": record["winner"],
        "winning_bid": record["price"],
        "gems_won": record["gems_won"],
        "gem_revealed_to_display": record["revealed"],
        "missions_completed": record["missions"],
    }


def _display(obs: dict[str, Any]) -> str:
    values = obs["value_chart"]["values"]
    return _dumps(
        {
            "value_display": {
                "revealed_gems": obs["display"],
                "value_per_gem": {c: values[min(n, len(values) - 1)] for c, n in obs["display_counts"].items()},
                "counts": _nonzero(obs["display_counts"]),
            }
        }
    )


def _players(obs: dict[str, Any], before: dict[str, Any]) -> str:
    me = obs["player"]
    return _dumps(
        {
            "players_changed": [
                {
                    "player_id": i,
                    "is_you": i == me,
                    "coins": p["coins"],
                    "collection_counts": _nonzero(p["collection"]),
                    "num_private_hand_cards": p["hand_size"],
                    "total_loans": p["total_loans"],
                    "num_investments": p["num_investments"],
                    "completed_missions": p["missions"],
                }
                for i, (p, old) in enumerate(zip(obs["players"], before["players"]))
                if p != old
            ]
        }
    )


def _hand(obs: dict[str, Any]) -> str:
    hand = _nonzero(obs["hand"])
    return _dumps({"your_private_hand": {"counts": hand, "total_cards": sum(hand.values())}})


def _auction(obs: dict[str, Any]) -> str:
    card = dict(obs["current_card"] or {})
    out: dict[str, Any] = {"id": card.get("id"), "type": card.get("type"), "max_bid_for_you": obs["bid_limit"]}
    if card.get("type") == "treasure":
        gems = int(card.get("gems", 0))
        out["gems_on_offer"] = obs["pool"][:gems]
    elif card.get("type") == "loan":
        out["loan_amount"] = card.get("amount")
    elif card.get("type") == "investment":
        out["investment_bonus"] = card.get("bonus")
    return _dumps({"current_auction": out})


def update_text(before: dict[str, Any], obs: dict[str, Any]) -> str:
    """The user message of a turn after the seat's first: what changed from ``before`` (the
    seat's observation at its last turn) to ``obs`` (its observation now), then this turn."""
    lines = []
    new = obs["history"][len(before["history"]) :]
    lines.append(_dumps({"since_your_last_turn": {"auctions_settled": [auction_line(r) for r in new]}}))
    if obs["display"] != before["display"]:
        lines.append(_display(obs))
    if obs["players"] != before["players"]:
        lines.append(_players(obs, before))
    if obs["missions"] != before["missions"]:
        lines.append(_dumps({"open_missions": [m["id"] for m in obs["missions"]]}))
    if obs["tiebreak"] != before["tiebreak"]:
        lines.append(_dumps({"tiebreak_order": obs["tiebreak"]}))
    if obs["hand"] != before["hand"]:
        lines.append(_hand(obs))
    me = obs["player"]
    if obs["phase"] == "reveal":
        win = obs["pending_win"]
        lines.append(
            _dumps({"turn_context": {"round_number": obs["round"], "phase": "gem_reveal", "your_player_id": me}})
        )
        lines.append(
            _dumps(
                {
                    "you_won": {
                        "auction": (obs["current_card"] or {}).get("id"),
                        "winning_bid": win["price"],
                        "all_bids_by_player_id": {str(p): b for p, b in enumerate(win["bids"])},
                        "gems_won": win["gems"],
                        "note": "reveal one gem from your private hand to the Value Display",
                    }
                }
            )
        )
        lines.append(REVEAL_REQUEST)
    else:
        lines.append(
            _dumps(
                {
                    "turn_context": {
                        "round_number": obs["round"],
                        "phase": "bidding",
                        "your_player_id": me,
                        "your_coins": obs["players"][me]["coins"],
                        "remaining_auction_cards": obs["auction_deck_size"],
                        "gems_remaining_in_deck_unrevealed": obs["gem_deck_size"],
                    }
                }
            )
        )
        lines.append(_auction(obs))
        lines.append(BID_REQUEST)
    return "\n".join(lines)


@dataclass(frozen=True)
class MegaGemTranscriptView:
    """See the module docstring. ``benchmark`` is passed to the parser (the snapshot view's)."""

    benchmark: bool = False

    def turn(self, game: MegaGem, pos: Position, player: int, since: Any) -> TranscriptTurn:
        obs = game.observe(pos, player)
        if since is None:
            prompt = MegaGemTextView(self.benchmark).prompt(game, pos, player)
            return TranscriptTurn(tuple(prompt.messages()), prompt.legal, obs)
        legal = tuple(game.action_to_str(a) for a in game.legal(pos, player))
        return TranscriptTurn(({"role": "user", "content": update_text(since, obs)},), legal, obs)

    def parse(self, game: MegaGem, pos: Position, player: int, text: str) -> ParseResult:
        return MegaGemTextView(self.benchmark).parse(game, pos, player, text)


__all__ = ["MegaGemTranscriptView", "auction_line", "update_text"]
