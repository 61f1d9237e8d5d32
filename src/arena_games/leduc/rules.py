"""Leduc poker rules (Southey et al., 2005), written from the rules, not from any engine.

A deck of six cards, J Q K in two suits. Each player antes 1 chip and gets one private card;
a public card is dealt after the first betting round. Two betting rounds, player 0 first in
each; a bet or raise is 2 chips in the first round and 4 in the second, at most 2 of them per
round. ``call`` checks (or calls a bet), ``raise`` bets (or raises), ``fold`` gives up the pot
and is legal only facing a bet. A round ends when both players have acted and put in the same
amount. At the showdown a private card that pairs the public card wins; otherwise the higher
rank wins; equal ranks split the pot. Suits never matter, so observations show ranks only.

All chance is drawn at the deal (the two private cards and the public card), so the deal seed
names one of 6 x 5 x 4 = 120 equally likely deals (:meth:`LeducPoker.enumerate_deals`).
The rules import none of their views: the registered game is ``arena_games.leduc.LeducPoker``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import numpy as np

from arena_core.game import Game
from arena_core.spec import GameSpec, Information, Utility

RANKS = ("J", "Q", "K")
BET_SIZE = (2, 4)  # per round
MAX_RAISES = 2  # per round
ANTE = 1


class LeducAction(IntEnum):
    FOLD = 0
    CALL = 1
    RAISE = 2

    def __str__(self) -> str:
        return self.name.lower()


def rank(card: int) -> int:
    """Cards 0..5 are J J Q Q K K: the rank is card // 2."""
    return card // 2


@dataclass(frozen=True, slots=True)
class LeducState:
    #: player 0's card, player 1's card, the public card (dealt now, shown after round 1)
    cards: tuple[int, int, int]
    #: the actions of each round so far (round 2 empty until round 1 is over)
    rounds: tuple[tuple[LeducAction, ...], ...] = ((),)


@dataclass(frozen=True, slots=True)
class _Round:
    """What the betting of one round so far implies."""

    contributions: tuple[int, int]  # chips each player has put in, antes included
    to_act: int
    raises: int
    over: bool
    folded: int | None


@functools.cache  # a pure function of the betting, which has a few hundred values (bounded)
def _replay(rounds: tuple[tuple[LeducAction, ...], ...]) -> _Round:
    put = [ANTE, ANTE]
    result = _Round((ANTE, ANTE), 0, 0, False, None)
    for r, actions in enumerate(rounds):
        player, raises, acted = 0, 0, 0
        over = False
        for a in actions:
            acted += 1
            other = 1 - player
            if a is LeducAction.FOLD:
                return _Round((put[0], put[1]), other, raises, True, player)
            if a is LeducAction.CALL:
                put[player] = put[other]
            else:
                put[player] = put[other] + BET_SIZE[r]
                raises += 1
            player = other
            over = acted >= 2 and put[0] == put[1]
        result = _Round((put[0], put[1]), player, raises, over, None)
    return result


class LeducPoker(Game[LeducState, LeducAction]):
    spec = GameSpec(
        id="leduc_poker",
        version="1",
        min_players=2,
        max_players=2,
        chance=True,
        information=Information.IMPERFECT,
        utility=Utility.ZERO_SUM,
        max_length=8,
        reward_bounds=(-13.0, 13.0),
        description=(
            "Leduc poker. A deck of six cards: J, Q, K in two suits. Each player antes 1 chip and gets one "
            "private card; one public card is revealed after the first betting round. Two betting rounds, "
            "player 0 first in each; a bet or raise is 2 chips in round 1 and 4 in round 2, at most 2 per round. "
            "'call' checks or calls, 'raise' bets or raises, 'fold' (only facing a bet) gives up the pot. "
            "At the showdown a card that pairs the public card wins, otherwise the higher rank; equal ranks split."
        ),
    )
    State = LeducState
    num_actions = 3
    observation_size = 30  # own rank 3, public rank 3, 4 action slots x 3 actions per round
    observation_bounds = (0.0, 1.0)

    _deal_seeds: tuple[int, ...] | None = None

    def initial_state(self, rng: np.random.Generator) -> LeducState:
        deal = rng.permutation(6)
        return LeducState(cards=(int(deal[0]), int(deal[1]), int(deal[2])))

    def _status(self, state: LeducState) -> tuple[_Round, bool]:
        """The current round's status, and whether the game is over."""
        status = _replay(state.rounds)
        done = status.folded is not None or (status.over and len(state.rounds) == 2)
        return status, done

    def to_move(self, state: LeducState) -> tuple[int, ...]:
        status, done = self._status(state)
        return () if done else (status.to_act,)

    def legal_actions(self, state: LeducState, player: int) -> tuple[LeducAction, ...]:
        status, _ = self._status(state)
        facing = status.contributions[1 - player] > status.contributions[player]
        out = [LeducAction.FOLD] if facing else []
        out.append(LeducAction.CALL)
        if status.raises < MAX_RAISES:
            out.append(LeducAction.RAISE)
        return tuple(out)

    def is_legal(self, state: LeducState, player: int, action: LeducAction) -> bool:
        return type(action) is LeducAction and action in self.legal_actions(state, player)

    def next_state(self, state: LeducState, joint: Mapping[int, LeducAction]) -> LeducState:
        (action,) = joint.values()
        rounds = state.rounds[:-1] + (state.rounds[-1] + (action,),)
        status = _replay(rounds)
        if status.over and status.folded is None and len(rounds) == 1:
            rounds = rounds + ((),)  # round 1 is over: the public card shows, round 2 begins
        return LeducState(state.cards, rounds)

    def is_terminal(self, state: LeducState) -> bool:
        return self._status(state)[1]

    def returns(self, state: LeducState) -> tuple[float, float]:
        status = _replay(state.rounds)
        put = status.contributions
        if status.folded is not None:
            loser = status.folded
        else:
            strength = [self._strength(state.cards[p], state.cards[2]) for p in (0, 1)]
            if strength[0] == strength[1]:
                return (0.0, 0.0)
            loser = 0 if strength[0] < strength[1] else 1
        won = float(put[loser])
        return (-won, won) if loser == 0 else (won, -won)

    @staticmethod
    def _strength(card: int, public: int) -> int:
        return 10 + rank(card) if rank(card) == rank(public) else rank(card)

    def public_card(self, state: LeducState) -> int | None:
        """The public card once round 1 is over, else None."""
        return state.cards[2] if len(state.rounds) == 2 else None

    def observation(self, state: LeducState, player: int) -> dict[str, Any]:
        public = self.public_card(state)
        status = _replay(state.rounds)
        return {
            "player": player,
            "card": RANKS[rank(state.cards[player])],
            "public": None if public is None else RANKS[rank(public)],
            "rounds": [[str(a) for a in r] for r in state.rounds],
            "pot": list(status.contributions),
        }

    def encode_observation(self, state: LeducState, player: int) -> np.ndarray:
        out = np.zeros(30, dtype=np.float32)
        out[rank(state.cards[player])] = 1.0
        public = self.public_card(state)
        if public is not None:
            out[3 + rank(public)] = 1.0
        for r, actions in enumerate(state.rounds):
            for i, a in enumerate(actions):
                out[6 + 12 * r + 3 * i + int(a)] = 1.0
        return out

    def action_id(self, action: LeducAction) -> int:
        return int(action)

    def action_from_id(self, index: int) -> LeducAction:
        return LeducAction(index)

    def enumerate_deals(self) -> list[tuple[int, float]]:
        """The 120 deals (private cards and public card), each with probability 1/120, as the
        first deal seed that deals each; for exact evaluation by enumeration."""
        seeds = LeducPoker._deal_seeds
        if seeds is None:
            found: dict[tuple[int, int, int], int] = {}
            seed = 0
            while len(found) < 120:
                found.setdefault(self.start(seed).state.cards, seed)
                seed += 1
            seeds = LeducPoker._deal_seeds = tuple(found[c] for c in sorted(found))
        return [(s, 1 / 120) for s in seeds]

    def sample_hidden_state(self, state: LeducState, player: int, rng: np.random.Generator) -> LeducState:
        """Keep ``player``'s card (and the public card once shown); draw the rest from the
        cards left, uniformly."""
        own = state.cards[player]
        shown = len(state.rounds) == 2
        left = [c for c in range(6) if c != own and not (shown and c == state.cards[2])]
        drawn = [int(c) for c in rng.permutation(left)]
        other = drawn[0]
        public = state.cards[2] if shown else drawn[1]
        cards = (own, other, public) if player == 0 else (other, own, public)
        return LeducState(cards, state.rounds)
