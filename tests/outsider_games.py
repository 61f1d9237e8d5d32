"""Games written as a third-party author would write them: from the public API and the docs
only (``arena_core.Game``, ``GameSpec``, ``Prompt``, the transcript protocol), none of the
project's own games or test helpers. Each broken one fails one claim of issue 27; ``HighCard``
itself is correct and must pass every check.

HighCard: three cards (J, Q, K); each seat is dealt one face down, the third stays face down
in the deck. Seat 0 checks or bets; after a bet seat 1 calls or folds; the higher card wins
the pot (1, or 2 after a call).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from arena_core import Game, GameSpec, Information, Utility
from arena_core.text import GenericTextView, ParseResult, Prompt
from arena_core.transcript import TranscriptTurn

CARDS = "JQK"
ACTIONS = ("check", "bet", "call", "fold")


@dataclass(frozen=True)
class HighCardState:
    cards: tuple[int, int, int]  # seat 0, seat 1, the face-down deck card
    history: tuple[str, ...] = ()


class HighCard(Game[HighCardState, str]):
    spec = GameSpec(
        id="outsider_high_card",
        min_players=2,
        max_players=2,
        utility=Utility.ZERO_SUM,
        information=Information.IMPERFECT,
        chance=True,
        max_length=2,
        reward_bounds=(-2.0, 2.0),
        description="Each seat gets one of J, Q, K face down. Seat 0 checks or bets; after a bet seat 1 calls "
        "or folds. The higher card wins.",
    )
    State = HighCardState
    num_actions = 4
    observation_size = 4

    def initial_state(self, rng: np.random.Generator) -> HighCardState:
        order = rng.permutation(3)
        return HighCardState((int(order[0]), int(order[1]), int(order[2])))

    def to_move(self, state: HighCardState) -> tuple[int, ...]:
        if self.is_terminal(state):
            return ()
        return (len(state.history),)

    def legal_actions(self, state: HighCardState, player: int) -> tuple[str, ...]:
        if player not in self.to_move(state):
            return ()
        return ("check", "bet") if not state.history else ("call", "fold")

    def next_state(self, state: HighCardState, joint: Any) -> HighCardState:
        (action,) = joint.values()
        return replace(state, history=state.history + (action,))

    def is_terminal(self, state: HighCardState) -> bool:
        return tuple(state.history) in (("check",), ("bet", "call"), ("bet", "fold"))

    def returns(self, state: HighCardState) -> tuple[float, float]:
        if tuple(state.history) == ("bet", "fold"):
            return (1.0, -1.0)
        pot = 2.0 if tuple(state.history) == ("bet", "call") else 1.0
        win = pot if state.cards[0] > state.cards[1] else -pot
        return (win, -win)

    def showdown(self, state: HighCardState) -> bool:
        return self.is_terminal(state) and tuple(state.history) != ("bet", "fold")

    def observation(self, state: HighCardState, player: int) -> dict[str, Any]:
        obs: dict[str, Any] = {"my_card": CARDS[state.cards[player]], "history": list(state.history)}
        if self.showdown(state):
            obs["opponent_card"] = CARDS[state.cards[1 - player]]
        return obs

    def encode_observation(self, state: HighCardState, player: int) -> np.ndarray:
        moves = [(ACTIONS.index(a) + 1) / 4 for a in state.history] + [0.0, 0.0]
        shown = state.cards[1 - player] / 2 if self.showdown(state) else 1.0
        return np.array([state.cards[player] / 2, moves[0], moves[1], shown], dtype=np.float32)

    def action_id(self, action: str) -> int:
        return ACTIONS.index(action)

    def action_from_id(self, index: int) -> str:
        return ACTIONS[index]

    def action_to_str(self, action: str) -> str:
        return action

    def enumerate_deals(self) -> list[tuple[int, float]]:
        seeds: dict[tuple[int, int, int], int] = {}
        seed = 0
        while len(seeds) < 6:
            seeds.setdefault(tuple(self.start(seed).state.cards), seed)
            seed += 1
        return [(s, 1 / 6) for s in seeds.values()]

    def sample_hidden_state(self, state: HighCardState, player: int, rng: np.random.Generator) -> HighCardState:
        own = state.cards[player]
        other, deck = (int(c) for c in rng.permutation([c for c in range(3) if c != own]))
        if self.showdown(state):  # the opponent's card is shown: only the deck card is hidden
            other, deck = state.cards[1 - player], next(c for c in range(3) if c not in state.cards[:2])
        cards = (own, other, deck) if player == 0 else (other, own, deck)
        return HighCardState(cards, tuple(state.history))


# ------------------------------------------------------------------ point 1: what LLM players read
class PromptShowsOpponentCard(HighCard):
    """The observation is right; the author's own prompt prints the opponent's card."""

    def text_view(self) -> Any:
        return _PeekingView()


@dataclass(frozen=True)
class _PeekingView:
    def prompt(self, game: Game[Any, Any], pos: Any, player: int) -> Prompt:
        legal = tuple(game.legal(pos, player))
        me, them = CARDS[pos.state.cards[player]], CARDS[pos.state.cards[1 - player]]
        user = f"You hold {me}. (Your opponent holds {them}.) Moves so far: {list(pos.state.history)}. Choose one of {legal}."
        return Prompt(system=game.rules_text(), user=user, legal=legal)

    def parse(self, game: Game[Any, Any], pos: Any, player: int, text: str) -> ParseResult:
        return GenericTextView().parse(game, pos, player, text)


class PromptShowsDeckCard(HighCard):
    """The prompt prints the face-down deck card (which tells who holds what)."""

    def text_view(self) -> Any:
        return _DeckView()


@dataclass(frozen=True)
class _DeckView:
    def prompt(self, game: Game[Any, Any], pos: Any, player: int) -> Prompt:
        legal = tuple(game.legal(pos, player))
        obs = game.observe(pos, player)
        user = f"{json.dumps(obs)}\n[debug] deck: {CARDS[pos.state.cards[2]]}\nLegal: {', '.join(legal)}"
        return Prompt(system=game.rules_text(), user=user, legal=legal)

    def parse(self, game: Game[Any, Any], pos: Any, player: int, text: str) -> ParseResult:
        return GenericTextView().parse(game, pos, player, text)


class TranscriptShowsOpponentCard(HighCard):
    """The text view is the generic one; the author's transcript view leaks on the first turn."""

    def views(self) -> Any:
        return {**super().views(), "transcript": _LeakyTranscript}


@dataclass(frozen=True)
class _LeakyTranscript:
    def turn(self, game: Game[Any, Any], pos: Any, player: int, since: Any) -> TranscriptTurn:
        legal = tuple(game.legal(pos, player))
        hint = f"Hint: the other seat was dealt {CARDS[pos.state.cards[1 - player]]}."
        user = f"{json.dumps(game.observe(pos, player))}\n{hint}\nLegal: {', '.join(legal)}"
        return TranscriptTurn(({"role": "user", "content": user},), legal, None)

    def parse(self, game: Game[Any, Any], pos: Any, player: int, text: str) -> ParseResult:
        return GenericTextView().parse(game, pos, player, text)


# ------------------------------------------------------------------ point 2: impossible worlds
class SamplerDealsMyCardToTheOpponent(HighCard):
    """The sampler draws the opponent's card from all three: 1 in 3 worlds give it the seat's own card."""

    def sample_hidden_state(self, state: HighCardState, player: int, rng: np.random.Generator) -> HighCardState:
        if self.showdown(state):
            return state
        own = state.cards[player]
        other = int(rng.integers(3))
        deck = next(c for c in range(3) if c not in (own, other))
        cards = (own, other, deck) if player == 0 else (other, own, deck)
        return HighCardState(cards, state.history)


class SamplerAlwaysLowest(HighCard):
    """Every world is possible, but the opponent always gets the lowest card left (a biased sampler)."""

    def sample_hidden_state(self, state: HighCardState, player: int, rng: np.random.Generator) -> HighCardState:
        if self.showdown(state):
            return state
        own = state.cards[player]
        other, deck = (c for c in range(3) if c != own)
        cards = (own, other, deck) if player == 0 else (other, own, deck)
        return HighCardState(cards, state.history)


# ------------------------------------------------------------------ point 3: state mutation
@dataclass
class MutableState:
    cards: list[int]
    history: list[str]


class MutatesItsState(HighCard):
    """next_state appends to the state it is given and returns it: the old state changes."""

    spec = HighCard.spec.model_copy(update={"id": "outsider_mutating"})
    State = MutableState

    def initial_state(self, rng: np.random.Generator) -> Any:
        s = super().initial_state(rng)
        return MutableState(list(s.cards), [])

    def next_state(self, state: Any, joint: Any) -> Any:
        (action,) = joint.values()
        state.history.append(action)
        return state

    def sample_hidden_state(self, state: Any, player: int, rng: np.random.Generator) -> Any:
        s = super().sample_hidden_state(state, player, rng)
        return MutableState(list(s.cards), list(s.history))


@dataclass
class TallyState:
    moves: list[int]  # every number said so far (the players see only the total and the last one)


class LateMutatingTally(Game[TallyState, int]):
    """Two seats say 1 or 2 in turn for 12 turns; the higher total of one's own numbers wins.
    From turn 6 on, next_state appends to the list it was given (an "optimisation" for long
    games): the earlier states change, although every observation still replays the same."""

    spec = GameSpec(
        id="outsider_late_mutating",
        min_players=2,
        max_players=2,
        utility=Utility.ZERO_SUM,
        max_length=12,
        reward_bounds=(-1.0, 1.0),
        description="Say 1 or 2 in turn, 12 turns; the higher sum of your own numbers wins.",
    )
    State = TallyState
    num_actions = 2
    observation_size = 2

    def initial_state(self, rng: np.random.Generator) -> TallyState:
        return TallyState([])

    def to_move(self, state: TallyState) -> tuple[int, ...]:
        return () if len(state.moves) >= 12 else (len(state.moves) % 2,)

    def legal_actions(self, state: TallyState, player: int) -> tuple[int, ...]:
        return (1, 2) if player in self.to_move(state) else ()

    def next_state(self, state: TallyState, joint: Any) -> TallyState:
        (n,) = joint.values()
        if len(state.moves) >= 6:
            state.moves.append(n)
            return state
        return TallyState([*state.moves, n])

    def is_terminal(self, state: TallyState) -> bool:
        return len(state.moves) >= 12

    def returns(self, state: TallyState) -> tuple[float, float]:
        a, b = sum(state.moves[0::2]), sum(state.moves[1::2])
        return (0.0, 0.0) if a == b else ((1.0, -1.0) if a > b else (-1.0, 1.0))

    def observation(self, state: TallyState, player: int) -> dict[str, Any]:
        return {"turn": len(state.moves), "total": sum(state.moves), "last": state.moves[-1] if state.moves else None}

    def encode_observation(self, state: TallyState, player: int) -> np.ndarray:
        last = state.moves[-1] if state.moves else 0
        return np.array([len(state.moves) / 12, sum(state.moves) / 24, last / 2], dtype=np.float32)[:2]

    def action_id(self, action: int) -> int:
        return action - 1

    def action_from_id(self, index: int) -> int:
        if index not in (0, 1):
            raise ValueError(f"no action {index}")
        return index + 1

    def action_to_str(self, action: int) -> str:
        return str(action)
