"""One-shot k-action matrix games: the archetypes of ``payoffs`` behind neutral, rotated labels.

An action is a *label index* ``l`` in ``0..k-1``; label ``l`` names the underlying action
``(l + rotation) mod k`` for both players (labels are shared). Each player's listing is the
label order (the default) or, with ``independent_order``, its own random permutation drawn at
the deal. ``legal_actions`` follows the player's listing, so "the first legal action" is "the
first listed label". Both players move at once; the core commits then reveals.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from pydantic import Field, field_validator, model_validator

from arena_core.game import Game
from arena_core.spec import GameParams, GameSpec, Information, TurnStructure, Utility

from .payoffs import ARCHETYPE_NAMES, ARCHETYPES, K_MAX, K_MIN, payoff_matrices

LABEL_SETS: dict[str, tuple[str, ...]] = {
    "letters": tuple("ABCDEFGHIJ"),
    "numbers": tuple(str(n) for n in range(1, 11)),
}

ArchetypeName = Literal[ARCHETYPE_NAMES]  # type: ignore[valid-type]  # a Literal of a tuple constant: mypy wants the names spelled out


class MatrixParams(GameParams):
    """Which game, how it is labelled, and how the prompt frames the other player."""

    archetype: ArchetypeName = "coordination"
    k: int = Field(3, ge=K_MIN, le=K_MAX, description="number of actions")
    labels: Literal["letters", "numbers"] | tuple[str, ...] = Field(
        "letters", description="a named label set or at least k distinct labels (the first k are used)"
    )
    rotation: int = Field(
        0, ge=0, description="cyclic shift r: label l names action (l + r) mod k; a study uses trial mod k"
    )
    independent_order: bool = Field(
        False, description="each player sees its own random listing order (labels stay attached)"
    )
    prompt_variant: Literal["symmetric", "asymmetric_cue"] = Field(
        "symmetric", description="'asymmetric_cue' tells each player 'You are Player 1/2'"
    )
    counterpart: Literal["copy", "other"] = Field(
        "copy", description="'copy': the other player is an independent copy of you; 'other': another player"
    )

    @field_validator("labels")
    @classmethod
    def _distinct_labels(cls, value: str | tuple[str, ...]) -> str | tuple[str, ...]:
        if isinstance(value, tuple):
            cleaned = [str(v).strip() for v in value]
            if any(not v or any(ch.isspace() for ch in v) for v in cleaned):
                raise ValueError("labels must be non-empty and contain no whitespace")
            if len({v.lower() for v in cleaned}) != len(cleaned):
                raise ValueError(
                    "labels must be distinct (case-insensitively), since answers are read case-insensitively"
                )
            return tuple(cleaned)
        return value

    @model_validator(mode="after")
    def _fits_k(self) -> MatrixParams:
        if self.rotation >= self.k:
            raise ValueError(f"rotation must be in 0..k-1 = 0..{self.k - 1}, got {self.rotation}; use trial mod k")
        if isinstance(self.labels, tuple) and len(self.labels) < self.k:
            raise ValueError(f"{len(self.labels)} labels given for k={self.k}; give at least k labels")
        return self

    def label_names(self) -> tuple[str, ...]:
        names = LABEL_SETS[self.labels] if isinstance(self.labels, str) else self.labels
        return tuple(names[: self.k])


@dataclass(frozen=True, slots=True)
class MatrixState:
    """Each player's listing (label indices in the order shown) and, at the end, the labels chosen."""

    listings: tuple[tuple[int, ...], ...]
    choices: tuple[int, ...] | None = None


_RECENT_TABLES = 16

#: the family's reward range: hide-and-seek's -1 to stag hunt's 2k = 20 at k = 10 (a test checks it)
FAMILY_REWARD_BOUNDS = (-1.0, 20.0)


class MatrixGame(Game[MatrixState, int]):
    """A one-shot, two-player, simultaneous k-action matrix game (see ``matrix-games.md``).

    The class ``spec`` covers the whole family; each instance refines it in ``setup`` (its own
    reward bounds, zero-sum for hide-and-seek, chance only with ``independent_order``).
    """

    spec = GameSpec(
        id="matrix",
        version="1",
        min_players=2,
        max_players=2,
        turn_structure=TurnStructure.SIMULTANEOUS,
        chance=True,
        information=Information.IMPERFECT,
        utility=Utility.GENERAL_SUM,
        max_length=2,
        reward_bounds=FAMILY_REWARD_BOUNDS,
        description="One-shot two-player matrix games (coordination, anti-coordination, stag hunt, public goods, "
        "battle of the sexes, prisoner's dilemma, chicken, hide and seek) with k = 2..10 neutrally labelled actions.",
    )
    Params = MatrixParams
    State = MatrixState
    params: MatrixParams

    def setup(self) -> None:
        p = self.params
        self.k = p.k
        self.num_actions = p.k
        self.observation_size = 2 * p.k * p.k + 2 + 2 * p.k + p.k * p.k  # tables, role cue, choices, own listing
        self.labels = p.label_names()
        self.payoffs = payoff_matrices(p.archetype, p.k)
        archetype = ARCHETYPES[p.archetype]
        A, B = self.payoffs.A, self.payoffs.B
        self.spec = GameSpec(  # type: ignore[misc]  # each instance refines the family's class spec (bounds, utility, chance)
            **{
                **type(self).spec.model_dump(),
                "chance": p.independent_order,
                "utility": Utility.ZERO_SUM if archetype.zero_sum else Utility.GENERAL_SUM,
                "reward_bounds": (float(min(A.min(), B.min())), float(max(A.max(), B.max()))),
            }
        )
        # in label space, indexed [own label, other's label]: _own[seat] is the seat's payoff, _other[seat] the other's
        underlying = (np.arange(p.k) + p.rotation) % p.k
        A_lab = A[np.ix_(underlying, underlying)]
        B_lab = B[np.ix_(underlying, underlying)]
        self._own = (A_lab, B_lab.T)
        self._other = (B_lab, A_lab.T)
        self._underlying = underlying
        identity = tuple(range(p.k))
        self._label_order_tables: dict[tuple[int, tuple[int, ...]], tuple[list[list[float]], list[list[float]]]] = {
            (seat, identity): (self._own[seat].tolist(), self._other[seat].tolist()) for seat in (0, 1)
        }
        self._recent_tables: dict[tuple[int, tuple[int, ...]], tuple[list[list[float]], list[list[float]]]] = {}

    # ------------------------------------------------------------------ rules
    def initial_state(self, rng: np.random.Generator) -> MatrixState:
        if self.params.independent_order:
            listings = tuple(tuple(int(v) for v in rng.permutation(self.k)) for _ in range(2))
        else:
            listings = (tuple(range(self.k)),) * 2
        return MatrixState(listings=listings)

    def to_move(self, state: MatrixState) -> tuple[int, ...]:
        return () if state.choices is not None else (0, 1)

    def legal_actions(self, state: MatrixState, player: int) -> tuple[int, ...]:
        return state.listings[player]

    def is_legal(self, state: MatrixState, player: int, action: object) -> bool:
        return type(action) is int and 0 <= action < self.k

    def next_state(self, state: MatrixState, joint: Mapping[int, int]) -> MatrixState:
        return MatrixState(state.listings, (int(joint[0]), int(joint[1])))

    def is_terminal(self, state: MatrixState) -> bool:
        return state.choices is not None

    def returns(self, state: MatrixState) -> tuple[float, float]:
        i, j = self.underlying_actions(state)
        return float(self.payoffs.A[i, j]), float(self.payoffs.B[i, j])

    def underlying_actions(self, state: MatrixState) -> tuple[int, int]:
        """The (row, column) actions of the payoff matrices behind the chosen labels."""
        if state.choices is None:
            raise ValueError("no actions before the reveal")
        return int(self._underlying[state.choices[0]]), int(self._underlying[state.choices[1]])

    def default_action(self, state: MatrixState, player: int) -> int:
        return state.listings[player][0]

    # ------------------------------------------------------------------ observations
    def own_table(self, state: MatrixState, player: int) -> tuple[list[list[float]], list[list[float]]]:
        """(own payoffs, other's payoffs) with rows = own label, columns = other's label, in listing order."""
        key = (player, state.listings[player])
        cached = self._label_order_tables.get(key) or self._recent_tables.get(key)
        if cached is None:
            index = np.ix_(key[1], key[1])
            cached = (self._own[player][index].tolist(), self._other[player][index].tolist())
            if len(self._recent_tables) >= _RECENT_TABLES:  # a few recent listings: each is observed several times
                self._recent_tables.pop(next(iter(self._recent_tables)))
            self._recent_tables[key] = cached
        return [list(r) for r in cached[0]], [list(r) for r in cached[1]]  # fresh copies, never shared buffers

    def observation(self, state: MatrixState, player: int) -> dict[str, Any]:
        own, other = self.own_table(state, player)
        obs: dict[str, Any] = {
            "labels": [self.labels[i] for i in state.listings[player]],
            "own_payoffs": own,
            "other_payoffs": other,
            "one_shot": True,
            "communication": False,
            "counterpart": self.params.counterpart,
            "role": f"Player {player + 1}" if self.params.prompt_variant == "asymmetric_cue" else None,
            "own_choice": None,
            "other_choice": None,
        }
        if state.choices is not None:
            obs["own_choice"] = self.labels[state.choices[player]]
            obs["other_choice"] = self.labels[state.choices[1 - player]]
        return obs

    def encode_observation(self, state: MatrixState, player: int) -> np.ndarray:
        k = self.k
        own, other = self.own_table(state, player)
        out = np.zeros(self.observation_size, dtype=np.float32)
        out[: k * k] = np.asarray(own, dtype=np.float32).ravel()
        out[k * k : 2 * k * k] = np.asarray(other, dtype=np.float32).ravel()
        if self.params.prompt_variant == "asymmetric_cue":
            out[2 * k * k + player] = 1.0
        if state.choices is not None:
            position = {label: n for n, label in enumerate(state.listings[player])}
            base = 2 * k * k + 2
            out[base + position[state.choices[player]]] = 1.0
            out[base + k + position[state.choices[1 - player]]] = 1.0
        listing = 2 * k * k + 2 + 2 * k  # which label stands at each listing position (the labels the player sees)
        for n, label in enumerate(state.listings[player]):
            out[listing + n * k + label] = 1.0
        return out

    def sample_hidden_state(self, state: MatrixState, player: int, rng: np.random.Generator) -> MatrixState:
        """Only the other player's listing is hidden (with ``independent_order``)."""
        if not self.params.independent_order:
            return state
        listings = list(state.listings)
        listings[1 - player] = tuple(int(v) for v in rng.permutation(self.k))
        return MatrixState(tuple(listings), state.choices)

    # ------------------------------------------------------------------ actions
    def action_id(self, action: int) -> int:
        return int(action)

    def action_from_id(self, index: int) -> int:
        if not 0 <= int(index) < self.k:
            raise IndexError(f"action index {index} is outside 0..{self.k - 1}")
        return int(index)

    def action_to_str(self, action: int) -> str:
        return self.labels[action]
