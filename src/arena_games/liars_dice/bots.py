"""Two fixed Liar's dice players, for the native game and the TextArena title alike (each reads
its decision through the game's :meth:`~.rules.RoundViewer.round_view`):

- ``liars_call_everything``: open one die of my commonest face (the highest face among ties),
  call every bid. A constant that exploits search players whose playouts never call.
- ``liars_binomial``: for every option, the chance it wins if the next seat calls at once,
  reading the dice it cannot see as independent fair dice: a bid ``(q, f)`` is true with
  probability ``P(Binomial(unseen, 1/6) >= q - own f's)``; calling the standing bid wins with
  one minus its probability. It takes the best option (among bids of equal chance the highest
  quantity, then face). Evaluation only: a simple rational opponent, never a training opponent.
"""

from __future__ import annotations

import functools
import math

from arena_core.errors import PlayerError
from arena_core.players import BasePlayer, Decision

from .rules import CALL, FACES, RoundView, RoundViewer, bid


def round_view_of(decision: Decision, who: str) -> RoundView:
    """What the deciding seat knows of the round, through its game's ``round_view``."""
    game = decision.game
    if not isinstance(game, RoundViewer):
        raise PlayerError(f"{who} plays Liar's dice only (liars_dice, textarena/LiarsDice-v0), not {game.spec.id}")
    viewer: RoundViewer = game
    return decision.view_with(lambda _game, pos, seat: viewer.round_view(pos.state, seat))


@functools.cache
def at_least(k: int, unseen: int) -> float:
    """P(at least ``k`` of ``unseen`` fair dice show a given face)."""
    if k <= 0:
        return 1.0
    return sum(math.comb(unseen, j) * (1 / 6) ** j * (5 / 6) ** (unseen - j) for j in range(k, unseen + 1))


def bid_chance(view: RoundView, quantity: int, face: int) -> float:
    """The chance that ``quantity`` dice show ``face``, given the seat's own dice (others fair)."""
    unseen = sum(view.remaining) - len(view.dice)
    return at_least(quantity - view.own_count(face), unseen)


def _parse_bid(action: str) -> tuple[int, int]:
    q, f = action[len("[Bid: ") : -1].split(", ")
    return int(q), int(f)


class CallEverything(BasePlayer):
    """Opens ``[Bid: 1, f]`` with f its commonest face (highest among ties) and calls every bid."""

    name = "liars_call_everything"

    def act(self, decision: Decision) -> str:
        view = round_view_of(decision, self.name)
        if CALL in decision.legal_actions:
            return CALL
        face = max(range(1, FACES + 1), key=lambda f: (view.own_count(f), f))
        return bid(1, face)


class BinomialBidder(BasePlayer):
    """The option most likely to win if the next seat calls at once (module docstring)."""

    name = "liars_binomial"

    def act(self, decision: Decision) -> str:
        view = round_view_of(decision, self.name)
        best, best_key = "", (-1.0, 0, 0)
        for action in decision.legal_actions:
            if action == CALL:
                key = (1.0 - bid_chance(view, view.quantity, view.face), 0, 0)
            else:
                q, f = _parse_bid(action)
                key = (bid_chance(view, q, f), q, f)
            if key > best_key:
                best, best_key = action, key
        return best
