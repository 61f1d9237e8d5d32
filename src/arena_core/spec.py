"""Game properties declared as validated data."""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum

from pydantic import BaseModel, ConfigDict, Field, model_validator


class TurnStructure(str, Enum):
    SEQUENTIAL = "sequential"  # exactly one player acts at every decision point
    SIMULTANEOUS = "simultaneous"  # every decision point is a simultaneous move
    MIXED = "mixed"  # phases of both


class Information(str, Enum):
    PERFECT = "perfect"
    IMPERFECT = "imperfect"


class Utility(str, Enum):
    ZERO_SUM = "zero_sum"
    CONSTANT_SUM = "constant_sum"
    GENERAL_SUM = "general_sum"


class GameParams(BaseModel):
    """Base of every game's parameter model: frozen, unknown keys rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class NoParams(GameParams):
    """For games without parameters."""


#: Names of the conformance checks a game may declare it cannot satisfy (with a reason).
CONFORMANCE_CHECKS = (
    "legal_play",
    "determinism",
    "cross_process_determinism",
    "mask_matches_legal",
    "illegal_rejected",
    "no_step_after_end",
    "returns_bounds",
    "returns_sum",
    "length_bound",
    "serialization",
    "replay",
    "no_global_rng",
    "no_state_mutation",
    "no_private_leak",
    "hidden_state_sampling",
    "commit_reveal",
    "chance",
    "turn_structure",
    "information",
    "encoding",
    "private_encoding",
    "pettingzoo_api",
)


class GameSpec(BaseModel):
    """What a game declares about itself; the conformance kit checks every claim."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[A-Za-z0-9_.\-/]+$")
    version: str = "1"
    min_players: int = Field(ge=1)
    max_players: int = Field(ge=1)
    turn_structure: TurnStructure = TurnStructure.SEQUENTIAL
    chance: bool = False
    information: Information = Information.PERFECT
    utility: Utility = Utility.GENERAL_SUM
    constant_sum: float | None = None
    max_length: int = Field(
        ge=1,
        description="upper bound on the number of decisions (player actions); the harness's turn cap when none is given",
    )
    reward_bounds: tuple[float, float]
    free_text: bool = False
    observation_is_state: bool = Field(
        default=True,
        description="the numeric observation (encode_observation) tells apart every two different observations of a "
        "player; False when it is only a summary (TextArena titles: seat, turn, legal mask and progress, no game state)",
    )
    exempt_checks: Mapping[str, str] = Field(
        default_factory=dict,
        description="conformance checks this game cannot satisfy, each with the reason",
    )
    description: str = ""

    @model_validator(mode="after")
    def _consistent(self) -> GameSpec:
        if self.min_players > self.max_players:
            raise ValueError(f"min_players {self.min_players} > max_players {self.max_players}")
        lo, hi = self.reward_bounds
        if lo > hi:
            raise ValueError(f"reward_bounds low {lo} > high {hi}")
        if self.utility is Utility.ZERO_SUM and self.constant_sum not in (None, 0, 0.0):
            raise ValueError("a zero-sum game has constant_sum 0 (or leave it unset)")
        if self.utility is Utility.CONSTANT_SUM and self.constant_sum is None:
            raise ValueError("a constant-sum game must declare constant_sum")
        unknown = set(self.exempt_checks) - set(CONFORMANCE_CHECKS)
        if unknown:
            raise ValueError(
                f"unknown conformance checks in exempt_checks: {sorted(unknown)}; known: {CONFORMANCE_CHECKS}"
            )
        for name, reason in self.exempt_checks.items():
            if not reason.strip():
                raise ValueError(f"exempt check {name!r} needs a reason")
        return self

    @property
    def declared_sum(self) -> float | None:
        """The sum every terminal return vector must have, or None for general-sum games."""
        if self.utility is Utility.ZERO_SUM:
            return 0.0
        if self.utility is Utility.CONSTANT_SUM and self.constant_sum is not None:  # the validator requires it
            return float(self.constant_sum)
        return None
