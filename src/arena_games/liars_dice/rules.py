"""Liar's dice as TextArena's ``LiarsDice-v0`` plays it, written natively (pure rules over an
immutable state) so that a learner can play 10^5 games a seed on two cores; the differential
test (tests/test_liars_dice.py) plays the same dice and moves through TextArena and through
these rules and compares every legal set, mover, dice count, call and result.

The rules as TextArena 0.7.4 plays them (docs/benchmarks.md, issue 32): every round each seat
with dice rolls them in secret; seats bid ``[Bid: q, f]`` ("at least q dice among all show
face f"; no wild ones) with neither number lower than the standing bid and not the same bid,
quantities up to the dice in play (the adapter's legal set), or ``[Call]`` the standing bid. The
count decides: below the bid, the bidder loses a die, else the caller does. The next round is
opened by the next seat with dice after the caller (at two seats: the last bidder, whoever lost);
seat 0 opens the game. A seat with no dice is out; the last seat with dice wins. Returns are
TextArena's by rank: ``-1 + 2 * rank / (n - 1)`` in the order of elimination, the winner last.

Chance: every round's dice are drawn at the deal (``rolls[round][seat]``, ``num_dice`` each; a
seat with k dice left uses its first k), so a deal seed and the moves replay a game exactly. What
a seat does not see is the other seats' dice of the current round and everyone's later rounds;
earlier rounds showed only the count of one face. :meth:`LiarsDice.sample_hidden_state`
redraws exactly those.

The rules import none of the views; what a seat knows now (:class:`RoundView`) and its numeric
encoding (:func:`encode_round`) are shared with the TextArena title, so a policy over the
encoding trained here plays the title unchanged (the same action ids, the same vector).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
from pydantic import Field

from arena_core.errors import SerializationError
from arena_core.game import Game
from arena_core.spec import GameParams, GameSpec, Information, Utility

CALL = "[Call]"
FACES = 6
#: seats and dice of TextArena's LiarsDice-v0 through the adapter: 2-6 seats, 5 dice each
MAX_PLAYERS = 6
NUM_DICE = 5


def bid(quantity: int, face: int) -> str:
    return f"[Bid: {quantity}, {face}]"


def action_index(quantity: int, face: int) -> int:
    """The action id of a bid (``[Call]`` is 0): the TextArena title's vocabulary order."""
    return 1 + FACES * (quantity - 1) + face - 1


def vocabulary(max_dice: int) -> tuple[str, ...]:
    """``[Call]``, then every bid ``[Bid: q, f]`` for q in 1..max_dice, f in 1..6 (the title's order)."""
    return (CALL,) + tuple(bid(q, f) for q in range(1, max_dice + 1) for f in range(1, FACES + 1))


@functools.cache  # (standing quantity, face, dice in play): a few thousand keys
def legal_bids(quantity: int, face: int, total: int) -> tuple[tuple[str, ...], frozenset[str]]:
    """``[Call]`` once a bid stands, then every bid that beats ``(quantity, face)`` (neither number
    lower, not identical) with quantity up to ``total``, in vocabulary order; and the set."""
    out = [CALL] if quantity > 0 else []
    out += [
        bid(q, f)
        for q in range(max(1, quantity), total + 1)
        for f in range(max(1, face), FACES + 1)
        if q != quantity or f != face
    ]
    return tuple(out), frozenset(out)


# ---------------------------------------------------------------------- what a seat knows
@dataclass(frozen=True)
class RoundView:
    """What a seat knows that matters now: its seat, whether it is to act, its own dice, every
    seat's number of dice (by seat), the standing bid (quantity 0 when none) and who made it (-1)."""

    player: int
    to_act: bool
    dice: tuple[int, ...]
    remaining: tuple[int, ...]
    quantity: int
    face: int
    bidder: int = -1

    def own_count(self, face: int) -> int:
        return sum(1 for d in self.dice if d == face)


@runtime_checkable
class RoundViewer(Protocol):
    """A game that can say what a seat knows of the current round (the native game and the
    TextArena title); the Liar's dice bots read their decisions through it."""

    def round_view(self, state: Any, player: int) -> RoundView: ...


def encoding_size(max_players: int, num_dice: int) -> int:
    """Length of :func:`encode_round`'s vector for up to ``max_players`` seats of ``num_dice`` dice."""
    return 17 + 2 * max_players + num_dice


def encode_round(view: RoundView, max_players: int, num_dice: int) -> np.ndarray:
    """The numeric observation (values in [0, 1]): to act (1); own dice per face / num_dice (6);
    dice per seat from this seat on, clockwise / num_dice (max_players); dice in play / all dice
    (1); a bid stands (1); its quantity / dice in play (1); its face (6, one-hot); its bidder
    from this seat on (max_players, one-hot); own dice of its face / num_dice (1); own dice in the
    order they were told, face / 6 (num_dice; 0 where no die). The order carries no information,
    but the seat's text shows it: two views that differ get two encodings (the kit's
    ``private_encoding``)."""
    out = np.zeros(encoding_size(max_players, num_dice), dtype=np.float32)
    n = len(view.remaining)
    out[0] = float(view.to_act)
    for d in view.dice:
        out[d] += 1.0 / num_dice
    k = 7
    for i in range(n):
        out[k + i] = view.remaining[(view.player + i) % n] / num_dice
    k += max_players
    total = sum(view.remaining)
    out[k] = total / (max_players * num_dice)
    if view.quantity:
        out[k + 1] = 1.0
        out[k + 2] = min(1.0, view.quantity / max(total, 1))
        out[k + 3 + view.face - 1] = 1.0
        if view.bidder >= 0:
            out[k + 9 + (view.bidder - view.player) % n] = 1.0
        out[k + 9 + max_players] = view.own_count(view.face) / num_dice
    k += 10 + max_players
    for i, d in enumerate(view.dice[:num_dice]):
        out[k + i] = d / FACES
    return out


# ---------------------------------------------------------------------- the rules
class LiarsDiceParams(GameParams):
    num_dice: int = Field(NUM_DICE, ge=1, le=10, description="dice each seat starts with")


@dataclass(frozen=True, slots=True)
class LiarsDiceState:
    #: every round's dice, drawn at the deal: rolls[round][seat] (num_dice each; k left: the first k)
    rolls: tuple[tuple[tuple[int, ...], ...], ...]
    #: dice each seat holds now
    remaining: tuple[int, ...]
    #: this round's bids so far, (seat, quantity, face)
    bids: tuple[tuple[int, int, int], ...] = ()
    #: earlier rounds, each (bids, caller, count of the called face, loser)
    log: tuple[tuple[tuple[tuple[int, int, int], ...], int, int, int], ...] = ()
    #: the seat to act (-1 once the game is over)
    to_act: int = 0
    #: seats out of dice, in the order they went out
    out: tuple[int, ...] = ()

    @property
    def round(self) -> int:
        return len(self.log)

    def dice(self, seat: int) -> tuple[int, ...]:
        """``seat``'s dice this round."""
        return self.rolls[self.round][seat][: self.remaining[seat]]


def _next_with_dice(remaining: Sequence[int], seat: int) -> int:
    n = len(remaining)
    for step in range(1, n):
        q = (seat + step) % n
        if remaining[q] > 0:
            return q
    return -1


class LiarsDice(Game[LiarsDiceState, str]):
    spec = GameSpec(
        id="liars_dice",
        version="1",
        min_players=2,
        max_players=MAX_PLAYERS,
        chance=True,
        information=Information.IMPERFECT,
        utility=Utility.ZERO_SUM,
        max_length=1000,  # rounds x bids: at most 6 * 30 bids in a round, and fewer rounds than dice
        reward_bounds=(-1.0, 1.0),
        observation_is_state=False,  # the numeric observation is the current round (encode_round)
        description=(
            "Liar's dice as TextArena's LiarsDice-v0 plays it: each seat rolls its dice in secret every round; "
            "'[Bid: q, f]' claims at least q dice among all show face f (no wild ones) and must raise neither "
            "number less and not repeat the bid; '[Call]' challenges the standing bid: below the bid the bidder "
            "loses a die, else the caller. The next seat with dice after the caller opens the next round. The "
            "last seat with dice wins; returns by rank, -1 (out first) to +1."
        ),
    )
    Params = LiarsDiceParams
    params: LiarsDiceParams
    State = LiarsDiceState
    observation_bounds = (0.0, 1.0)

    def setup(self) -> None:
        self.num_dice = int(self.params.num_dice)
        self.max_dice = MAX_PLAYERS * self.num_dice
        self.vocabulary = vocabulary(self.max_dice)
        self.num_actions = len(self.vocabulary)
        self._index = {a: i for i, a in enumerate(self.vocabulary)}
        self.observation_size = encoding_size(MAX_PLAYERS, self.num_dice)

    # ------------------------------------------------------------------ rules hooks
    def initial_state(self, rng: np.random.Generator) -> LiarsDiceState:
        n, d = self.num_players, self.num_dice
        rounds = n * d  # every round takes one die: fewer rounds than dice
        drawn = rng.integers(1, FACES + 1, size=(rounds, n, d))
        rolls = tuple(tuple(tuple(int(x) for x in seat) for seat in r) for r in drawn)
        return LiarsDiceState(rolls, (d,) * n)

    def to_move(self, state: LiarsDiceState) -> tuple[int, ...]:
        return () if state.to_act < 0 else (state.to_act,)

    def _standing(self, state: LiarsDiceState) -> tuple[int, int]:
        return (state.bids[-1][1], state.bids[-1][2]) if state.bids else (0, 0)

    def legal_actions(self, state: LiarsDiceState, player: int) -> tuple[str, ...]:
        q, f = self._standing(state)
        return legal_bids(q, f, sum(state.remaining))[0]

    def is_legal(self, state: LiarsDiceState, player: int, action: str) -> bool:
        q, f = self._standing(state)
        return action in legal_bids(q, f, sum(state.remaining))[1]

    def legal_mask(self, state: LiarsDiceState, player: int) -> np.ndarray:
        q, f = self._standing(state)
        return _mask(q, f, sum(state.remaining), self.num_actions).copy()

    def next_state(self, state: LiarsDiceState, joint: Mapping[int, str]) -> LiarsDiceState:
        ((seat, action),) = joint.items()
        if action != CALL:
            i = self._index[action] - 1
            q, f = i // FACES + 1, i % FACES + 1
            return LiarsDiceState(
                state.rolls,
                state.remaining,
                state.bids + ((seat, q, f),),
                state.log,
                _next_with_dice(state.remaining, seat),
                state.out,
            )
        bidder, q, f = state.bids[-1]
        count = sum(state.dice(p).count(f) for p in range(self.num_players))
        loser = bidder if count < q else seat
        remaining = list(state.remaining)
        remaining[loser] -= 1
        out = state.out + ((loser,) if remaining[loser] == 0 else ())
        log = state.log + ((state.bids, seat, count, loser),)
        over = len(out) >= self.num_players - 1
        to_act = -1 if over else _next_with_dice(remaining, seat)
        return LiarsDiceState(state.rolls, tuple(remaining), (), log, to_act, out)

    def is_terminal(self, state: LiarsDiceState) -> bool:
        return state.to_act < 0

    def returns(self, state: LiarsDiceState) -> tuple[float, ...]:
        n = self.num_players
        ranking = list(state.out) + [p for p in range(n) if state.remaining[p] > 0]
        values = [0.0] * n
        for rank, p in enumerate(ranking):
            values[p] = -1.0 + 2.0 * rank / (n - 1)
        return tuple(values)

    # ------------------------------------------------------------------ what a seat sees
    def observation(self, state: LiarsDiceState, player: int) -> dict[str, Any]:
        return {
            "player": player,
            "to_act": state.to_act,
            "dice": list(state.dice(player)) if not self.is_terminal(state) else [],
            "my_dice_by_round": [list(state.rolls[r][player][: _held(state, r, player)]) for r in range(state.round)],
            "remaining": list(state.remaining),
            "bids": [list(b) for b in state.bids],
            "rounds": [
                {"bids": [list(b) for b in bids], "caller": caller, "count": count, "loser": loser}
                for bids, caller, count, loser in state.log
            ],
        }

    def round_view(self, state: LiarsDiceState, player: int) -> RoundView:
        q, f = self._standing(state)
        return RoundView(
            player,
            state.to_act == player,
            state.dice(player) if not self.is_terminal(state) else (),
            state.remaining,
            q,
            f,
            state.bids[-1][0] if state.bids else -1,
        )

    def encode_observation(self, state: LiarsDiceState, player: int) -> np.ndarray:
        return encode_round(self.round_view(state, player), MAX_PLAYERS, self.num_dice)

    def action_id(self, action: str) -> int:
        i = self._index.get(action)
        if i is None:
            raise ValueError(
                f"{self.spec.id}: {action!r} is not an action ('[Call]' or '[Bid: q, f]', q <= {self.max_dice})"
            )
        return i

    def action_from_id(self, index: int) -> str:
        if not 0 <= index < self.num_actions:
            raise ValueError(f"{self.spec.id}: action index {index} is not in range(0, {self.num_actions})")
        return self.vocabulary[index]

    def action_to_str(self, action: str) -> str:
        return action

    def sample_hidden_state(self, state: LiarsDiceState, player: int, rng: np.random.Generator) -> LiarsDiceState:
        """The other seats' dice of this round and every later round redrawn uniformly; ``player``'s
        dice of this and every earlier round, and the earlier rounds (whose called counts were
        shown), kept. A finished game is returned as it is."""
        if self.is_terminal(state):
            return state
        now, n, d = state.round, self.num_players, self.num_dice
        drawn = rng.integers(1, FACES + 1, size=(len(state.rolls) - now, n, d))
        rolls = list(state.rolls[:now])
        for k, r in enumerate(drawn):
            rolls.append(
                tuple(
                    state.rolls[now][p] if (k == 0 and p == player) else tuple(int(x) for x in r[p]) for p in range(n)
                )
            )
        return LiarsDiceState(tuple(rolls), state.remaining, state.bids, state.log, state.to_act, state.out)

    def state_to_json(self, state: LiarsDiceState) -> Any:
        return {
            "rolls": [[list(s) for s in r] for r in state.rolls],
            "remaining": list(state.remaining),
            "bids": [list(b) for b in state.bids],
            "log": [[[list(b) for b in bids], c, k, lo] for bids, c, k, lo in state.log],
            "to_act": state.to_act,
            "out": list(state.out),
        }

    def state_from_json(self, data: Any) -> LiarsDiceState:
        try:
            return LiarsDiceState(
                tuple(tuple(tuple(int(x) for x in s) for s in r) for r in data["rolls"]),
                tuple(int(x) for x in data["remaining"]),
                tuple((int(a), int(b), int(c)) for a, b, c in data["bids"]),
                tuple(
                    (tuple((int(a), int(b), int(c)) for a, b, c in bids), int(c), int(k), int(lo))
                    for bids, c, k, lo in data["log"]
                ),
                int(data["to_act"]),
                tuple(int(x) for x in data["out"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise SerializationError(f"{self.spec.id}: not a Liar's dice state ({exc})") from None


def _held(state: LiarsDiceState, r: int, player: int) -> int:
    """How many dice ``player`` rolled in round ``r`` (its dice now plus those it lost since)."""
    return state.remaining[player] + sum(1 for *_, loser in state.log[r:] if loser == player)


@functools.cache
def _mask(quantity: int, face: int, total: int, size: int) -> np.ndarray:
    m = np.zeros(size, dtype=np.int8)
    m[[0] if quantity > 0 else []] = 1
    for q in range(max(1, quantity), total + 1):
        for f in range(max(1, face), FACES + 1):
            if q != quantity or f != face:
                m[action_index(q, f)] = 1
    m.setflags(write=False)
    return m
