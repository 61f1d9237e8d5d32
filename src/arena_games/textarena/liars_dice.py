"""TextArena ``LiarsDice-v0`` as our adapter plays it: a sampler of hidden worlds
(``sample_hidden_state``, so the generic ``search`` player and the kit's hidden-information
checks work on it) and a compact view for small models.

The game as played (TextArena 0.7.4, 5 dice each; checked in docs/benchmarks.md, issue 32):
every round each player rolls its remaining dice in secret; players bid ``[Bid: q, f]`` ("at
least q dice among all show face f"; no wild ones) with neither number lower than the standing
bid and not the same bid, or ``[Call]`` the standing bid. The count decides: below the bid,
the bidder loses a die, else the caller does. After a call the last bidder opens the next
round (whoever lost). A player with no dice is out; the last player with dice wins (+1, the
other -1 at two players; rank-based returns at more).

What a seat does not see is the other seats' dice of the *current* round: earlier rounds'
dice are gone (a call shows only the count of one face), and later rounds are rolled afresh.
A sampled world therefore keeps every public fact and the seat's own dice, redraws the other
seats' current dice uniformly (their number is public) and reseeds TextArena's generator, so
that later rounds are fresh draws, not the real episode's (a playout must not read the real
future). That is exactly the set of worlds consistent with the seat's observations: nothing
in them depends on the other seats' current dice until a call resolves the round.

A world is data: the adapter's state (TextArena's seed and the moves) plus *patches*, each
``(after how many moves, every seat's dice, a fresh seed)``; the live env of a world is the
real episode replayed with the patches applied (the patched env is cached as the adapter
caches every live env, so forward play from a world costs one TextArena step per move).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from arena_core.errors import SerializationError
from arena_core.game import Game, Position
from arena_core.views import Menu
from arena_games.liars_dice.rules import MAX_PLAYERS, NUM_DICE, RoundView, encode_round, encoding_size

from .adapter import TextArenaGame, TextArenaState
from .bridge import Message, _LiveEnv, _new_tuple
from .state import TitleSpec, _state

TITLE = "textarena/LiarsDice-v0"
FACES = (1, 2, 3, 4, 5, 6)
#: one patch of a world: (moves played before it applies, every seat's dice, TextArena's new seed)
Patch = tuple[int, tuple[tuple[int, ...], ...], int]

_DICE_LINE = re.compile(r"(Your current Dice are: )([0-9, ]*)$")
_REMAINING = re.compile(r"Player (\d+): (\d+)")
_BID = re.compile(r"Player (\d+) bids (\d+) of face (\d+)\.")
_CALL = re.compile(r"Player (\d+) calls!.*?Player (\d+) \(the (?:last bidder|caller)\) loses one die", re.S)


class LiarsDiceWorld(TextArenaState):
    """A :class:`~.state.TextArenaState` with hidden parts redrawn: the same data plus the
    ``patches`` that turn the real episode into this world (compared, hashed, pickled and
    serialised with the rest)."""

    __slots__ = ()

    @property
    def patches(self) -> tuple[Patch, ...]:
        row: tuple[Any, ...] = self  # the ninth item, after the adapter's eight fields
        patches: tuple[Patch, ...] = row[8]
        return patches

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TextArenaState):
            return NotImplemented
        return self is other or (
            self[:5] == other[:5] and patches_of(self) == patches_of(other) and self.inbox == other.inbox
        )

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash((self[:4], self.patches))

    def __repr__(self) -> str:
        return f"LiarsDiceWorld({super().__repr__()}, patches={self.patches!r})"

    def __reduce__(self) -> tuple[Callable[..., TextArenaState], tuple[Any, ...]]:  # type: ignore[override]  # a world pickles with its patches
        return (world_from_data, (*self[:5], self.inbox, self.patches))


def patches_of(state: TextArenaState) -> tuple[Patch, ...]:
    """The patches of a world (none for a real state)."""
    return state.patches if isinstance(state, LiarsDiceWorld) else ()


def _as_world(state: TextArenaState, patches: tuple[Patch, ...]) -> LiarsDiceWorld:
    world: LiarsDiceWorld = _new_tuple(LiarsDiceWorld, (*tuple.__getitem__(state, slice(0, 8)), patches))
    return world


def world_from_data(
    ta_seed: int,
    actions: Any,
    actors: Any,
    to_move: Any,
    outcome: Any,
    inbox: Any,
    patches: Any,
) -> TextArenaState:
    """A world from plain data (unpickling, JSON); a real state when there are no patches."""
    state = TextArenaState(ta_seed, actions, actors, to_move, outcome, inbox)
    clean = tuple(
        (int(at), tuple(tuple(int(x) for x in d) for d in dice), int(seed)) for at, dice, seed in patches or ()
    )
    return _as_world(state, clean) if clean else state


def apply_patch(live: _LiveEnv, patch: Patch) -> None:
    """Give every seat of ``live`` the patch's dice (the game's record and each seat's latest
    "Your current Dice are" message) and reseed TextArena's generator with the patch's seed."""
    _, dice, seed = patch
    ta_state = live.env.state
    rolls = ta_state.game_state["dice_rolls"]
    for q, d in enumerate(dice):
        if tuple(rolls.get(q, ())) == d:
            continue
        rolls[q] = list(d)
        queue = ta_state.observations[q]
        for i in range(len(queue) - 1, -1, -1):
            sender, text, kind = queue[i]
            if isinstance(text, str) and _DICE_LINE.search(text):
                shown = ", ".join(map(str, d))
                queue[i] = (sender, _DICE_LINE.sub(lambda m: m.group(1) + shown, text), kind)  # noqa: B023 - used at once
                del live.transcript.converted[q][i:]  # re-read from the queue on the next read
                break
    live.rng = type(live.rng)(seed)


class LiarsDiceV0Game(TextArenaGame):
    """The base of ``LiarsDice-v0``'s class: the adapter plus a sampler of hidden worlds and the
    ``"compact"`` view (:class:`LiarsDiceCompactView`)."""

    observation_bounds = (0.0, 1.0)

    def sample_hidden_state(self, state: TextArenaState, player: int, rng: np.random.Generator) -> TextArenaState:
        """The other seats' current dice redrawn uniformly (their number is public), TextArena's
        generator reseeded (later rounds are fresh draws); ``player``'s dice and every message it
        has received are kept. A finished game is returned as it is (nothing hidden matters)."""
        if state.outcome is not None:
            return state
        live = self._live_at(state, take=False)
        rolls = live.env.state.game_state["dice_rolls"]
        dice = tuple(
            tuple(int(x) for x in rolls.get(q, ()))
            if q == player
            else tuple(int(x) for x in rng.integers(1, 7, size=len(rolls.get(q, ()))))
            for q in range(self.num_players)
        )
        patch: Patch = (len(state.actions), dice, int(rng.integers(2**31 - 1)))
        twin = live.clone()
        apply_patch(twin, patch)
        plain = _state(state.ta_seed, state.actions, state.actors, state.to_move, None, twin.transcript, None)
        world = _as_world(plain, patches_of(state) + (patch,))
        self._remember(world, twin)
        return world

    def _live_at(self, state: TextArenaState, *, take: bool) -> _LiveEnv:
        patches = patches_of(state)
        if not patches:
            return super()._live_at(state, take=take)
        entry = self._at.pop(id(state), None) if take else self._at.get(id(state))
        if entry is not None and entry[0] is state:
            return entry[1]
        live = self._new_env(state.ta_seed)  # the real episode, replayed with the patches applied
        for k in range(len(state.actions) + 1):
            for patch in patches:
                if patch[0] == k:
                    apply_patch(live, patch)
            if k < len(state.actions):
                live.rng.call(live.env.step, state.actions[k])
        if not take:
            self._remember(state, live)
        return live

    def next_state(self, state: TextArenaState, joint: Mapping[int, str]) -> TextArenaState:
        new = super().next_state(state, joint)
        patches = patches_of(state)
        if not patches:
            return new
        entry = self._at.pop(id(new), None)
        world = _as_world(new, patches)
        if entry is not None:
            self._remember(world, entry[1])
        return world

    def state_to_json(self, state: TextArenaState) -> Any:
        out = super().state_to_json(state)
        patches = patches_of(state)
        if patches:
            out["patches"] = [[at, [list(d) for d in dice], seed] for at, dice, seed in patches]
        return out

    def state_from_json(self, data: Any) -> TextArenaState:
        state = super().state_from_json(data)
        try:
            patches = data.get("patches") or ()
            return world_from_data(*state[:5], state.inbox, patches) if patches else state
        except (TypeError, ValueError) as exc:
            raise SerializationError(f"{self.spec.id}: bad world patches ({exc})") from None

    def views(self) -> Mapping[str, Callable[[], Any]]:
        return {**super().views(), "compact": LiarsDiceCompactView}

    def round_rewards(self, before: TextArenaState, after: TextArenaState) -> tuple[float, ...] | None:
        """A call settles a round: -1 for the seat that loses a die, +1 for the other party of the
        call (the caller or the last bidder), 0 for the rest; None for every other move. Read from
        TextArena's own announcement of the call (every seat receives it)."""
        if len(after.actions) != len(before.actions) + 1 or after.actions[-1] != "[Call]":
            return None
        found = None
        for msg in reversed(after.messages(after.actors[-1])):
            found = _CALL.search(msg.text)
            if found:
                break
        if found is None or len(after.actors) < 2:
            return None
        caller, loser = int(found.group(1)), int(found.group(2))
        bidder = after.actors[-2]  # a call answers the bid just made
        out = [0.0] * self.num_players
        out[loser] = -1.0
        out[bidder if loser == caller else caller] = 1.0
        return tuple(out)

    # ------------------------------------------------------------------ the numeric observation
    @classmethod
    def encoding_size(cls, title: TitleSpec) -> int:
        return encoding_size(MAX_PLAYERS, NUM_DICE)

    def round_view(self, state: TextArenaState, player: int) -> RoundView:
        """What ``player`` knows of the current round, read from its observation (its messages)."""
        return read_observation(self.observation(state, player), self.num_players)

    def encode_observation(self, state: TextArenaState, player: int) -> np.ndarray:
        """The native game's encoding (:func:`arena_games.liars_dice.encode_round`) of what the seat
        knows: own dice, every seat's dice, the standing bid and its bidder, whether it is to act;
        the action ids are the native game's too, so a policy trained there plays here."""
        return encode_round(self.round_view(state, player), MAX_PLAYERS, NUM_DICE)


# ---------------------------------------------------------------------- what a seat knows
def read_observation(observation: Mapping[str, Any], num_players: int) -> RoundView:
    """Parse a seat's own messages (its TextArena inbox, as ``Game.observe`` gives it) into what
    it knows of the current round (:class:`arena_games.liars_dice.RoundView`, shared with the
    native game)."""
    dice: tuple[int, ...] = ()
    remaining = (0,) * num_players
    quantity = face = 0
    bidder = -1
    for msg in observation.get("messages", ()):
        text = Message._make(msg).text if not isinstance(msg, Message) else msg.text
        m = _DICE_LINE.search(text)
        if m:  # a new round: dice, remaining dice, no bid
            dice = tuple(int(x) for x in m.group(2).replace(",", " ").split())
            counts = dict(_REMAINING.findall(text.split("Your current Dice")[0]))
            remaining = tuple(int(counts.get(str(p), 0)) for p in range(num_players))
            quantity = face = 0
            bidder = -1
            continue
        b = _BID.search(text)
        if b:
            bidder, quantity, face = int(b.group(1)), int(b.group(2)), int(b.group(3))
    player = int(observation.get("player", 0))
    to_act = player in observation.get("to_move", ()) and "end" not in observation
    return RoundView(player, to_act, dice, remaining, quantity, face, bidder)


def compact_text(view: RoundView) -> str:
    """``"tld <own dice per face 1-6> | <own dice> <others' dice, clockwise> | <bid q f, own dice of f or ->"``:
    the counts a policy reads (the numeric encoding's), each digit in a fixed place, in a few tokens
    (e.g. ``"tld 021011 | 5 5 | 3 2 2"``: two 2s, one 3, one 5 and one 6; five dice each; the
    standing bid is three 2s, and the seat holds two of them)."""
    counts = "".join(str(view.own_count(f)) for f in FACES)
    n = len(view.remaining)
    seats = " ".join(str(view.remaining[(view.player + i) % n]) for i in range(n))
    bid = f"{view.quantity} {view.face} {view.own_count(view.face)}" if view.quantity else "-"
    return f"tld {counts} | {seats} | {bid}"


#: the compact view's answer to a call
CALL_LABEL = "c"
#: one printable character per bid (one token of any byte-level BPE): bid (q, f) is
#: ``BID_LABELS[6 * (q - 1) + f - 1]``; 93 labels cover quantities up to 15 (three players' dice)
BID_LABELS = "".join(ch for ch in string.digits + string.ascii_letters + string.punctuation if ch != CALL_LABEL)
_BID_ACTION = re.compile(r"\[Bid: (\d+), (\d)\]")


def action_label(action: str) -> str:
    """The one-character answer label of a move (:data:`CALL_LABEL`, or the bid's :data:`BID_LABELS` entry)."""
    if action == "[Call]":
        return CALL_LABEL
    m = _BID_ACTION.fullmatch(action)
    index = 6 * (int(m.group(1)) - 1) + int(m.group(2)) - 1 if m else -1
    if not 0 <= index < len(BID_LABELS):
        raise ValueError(
            f"{TITLE} compact view: no label for {action!r} (bids of up to {len(BID_LABELS) // 6} dice: at most 3 players)"
        )
    return BID_LABELS[index]


@dataclass(frozen=True)
class LiarsDiceCompactView:
    """The ``"compact"`` view of ``textarena/LiarsDice-v0``: own dice per face, every seat's dice and
    the standing bid with the seat's own dice of its face (:func:`compact_text`), in a few tokens; one character per answer (:func:`action_label`). Up to 3 players."""

    def menu(self, game: Game[Any, Any], pos: Position[Any], player: int, *, include_illegal: bool = False) -> Menu:
        view = read_observation(game.observe(pos, player), game.num_players)
        actions = tuple(game.legal(pos, player))
        return Menu(compact_text(view), actions, tuple(action_label(a) for a in actions), (True,) * len(actions))
