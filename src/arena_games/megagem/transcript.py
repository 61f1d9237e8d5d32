"""MegaGem's transcript view (the ``"transcript"`` entry of ``MegaGem.views()``): one
conversation per seat, each turn adding only what changed since the seat's last turn.

A seat's first turn is the snapshot prompt (:class:`~.text.MegaGemTextView`: the rules, then
the whole state). Every later turn is one user message of compact JSON lines:

- ``since_your_last_turn``: every auction settled since (card, all bids, winner, price, gems
  won, the gem revealed, missions completed), and the parts of the state that changed: the
  value display, the players whose public state changed (coins, collection, hand size,
  loans, investments, missions), the missions still open, the tiebreak order, the seat's hand;
- ``now``: the round and phase, the card on offer, the seat's coins and bid limit (or, at a
  reveal, the win it must reveal for and its hand); then the answer format.

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

    from .rules import MegaGem, MegaGemState

_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode

BID_REQUEST = 'End with one JSON object on its own line: {"bid": <integer>}.'
REVEAL_REQUEST = 'End with one JSON object on its own line: {"reveal": "<Colour>"}.'


def _nonzero(counts: dict[str, int]) -> dict[str, int]:
    return {k: v for k, v in counts.items() if v}


def auction_line(record: dict[str, Any]) -> dict[str, Any]:
    """One settled auction (an entry of the observation's ``history``) as the transcript shows
    it: round, card, every player's bid (by player id), winner, price, gems won, the gem
    revealed to the display, missions completed."""
    return {
        "round": record["round"],
        "card": record["card"],
        "bids": record["bids"],
        "winner": record["winner"],
        "price": record["price"],
        "won": record["gems_won"],
        "revealed": record["revealed"],
        "missions": record["missions"],
    }


def _player(i: int, p: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": i,
        "coins": p["coins"],
        "collection": _nonzero(p["collection"]),
        "hand": p["hand_size"],
        "loans": p["total_loans"],
        "investments": p["num_investments"],
        "missions": p["missions"],
    }


def _card(obs: dict[str, Any]) -> dict[str, Any]:
    card = dict(obs["current_card"] or {})
    out: dict[str, Any] = {"id": card.get("id")}
    if card.get("type") == "treasure":
        out["gems_on_offer"] = obs["pool"][: int(card.get("gems", 0))]
    elif card.get("type") == "loan":
        out["loan"] = card.get("amount")
    elif card.get("type") == "investment":
        out["bonus"] = card.get("bonus")
    return out


def update_text(before: dict[str, Any], obs: dict[str, Any]) -> str:
    """The user message of a turn after the seat's first: what changed from ``before`` (the
    seat's observation at its last turn) to ``obs`` (its observation now), then this turn, as
    compact JSON lines (the first turn's full prompt explains every quantity)."""
    changes: dict[str, Any] = {
        "auctions": [auction_line(r) for r in obs["history"][len(before["history"]) :]],
    }
    if obs["display"] != before["display"]:
        values = obs["value_chart"]["values"]
        changes["display"] = _nonzero(obs["display_counts"])
        changes["value_per_gem"] = {c: values[min(n, len(values) - 1)] for c, n in obs["display_counts"].items()}
    players = [_player(i, p) for i, (p, old) in enumerate(zip(obs["players"], before["players"])) if p != old]
    if players:
        changes["players"] = players
    if obs["missions"] != before["missions"]:
        changes["open_missions"] = [m["id"] for m in obs["missions"]]
    if obs["tiebreak"] != before["tiebreak"]:
        changes["tiebreak"] = obs["tiebreak"]
    if obs["hand"] != before["hand"]:
        changes["your_hand"] = _nonzero(obs["hand"])
    me = obs["player"]
    if obs["phase"] == "reveal":
        win = obs["pending_win"]
        now: dict[str, Any] = {
            "round": obs["round"],
            "phase": "reveal",
            "you_won": (obs["current_card"] or {}).get("id"),
            "bids": win["bids"],
            "gems_won": win["gems"],
            "your_hand": _nonzero(obs["hand"]),
        }
        request = REVEAL_REQUEST
    else:
        now = {
            "round": obs["round"],
            "phase": "bid",
            "card": _card(obs),
            "your_coins": obs["players"][me]["coins"],
            "max_bid": obs["bid_limit"],
            "cards_left": obs["auction_deck_size"],
        }
        request = BID_REQUEST
    return "\n".join([_dumps({"since_your_last_turn": changes}), _dumps({"now": now}), request])


@dataclass(frozen=True)
class MegaGemTranscriptView:
    """See the module docstring. ``benchmark`` is passed to the parser (the snapshot view's)."""

    benchmark: bool = False

    def turn(self, game: MegaGem, pos: Position[MegaGemState], player: int, since: Any) -> TranscriptTurn:
        obs = game.observe(pos, player)
        if since is None:
            prompt = MegaGemTextView(self.benchmark).prompt(game, pos, player)
            return TranscriptTurn(tuple(prompt.messages()), prompt.legal, obs)
        legal = tuple(game.action_to_str(a) for a in game.legal(pos, player))
        return TranscriptTurn(({"role": "user", "content": update_text(since, obs)},), legal, obs)

    def parse(self, game: MegaGem, pos: Position[MegaGemState], player: int, text: str) -> ParseResult:
        return MegaGemTextView(self.benchmark).parse(game, pos, player, text)


__all__ = ["MegaGemTranscriptView", "auction_line", "update_text"]
