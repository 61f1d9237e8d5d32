"""The one illegal-action policy: what happens when a player submits an illegal move."""

from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .spec import GameSpec


class Verdict(str, Enum):
    RAISE = "raise"  # propagate IllegalActionError to the caller
    RETRY = "retry"  # the same player acts again
    DEFAULT = "default"  # the game's default action is played instead
    FORFEIT = "forfeit"  # the offender forfeits; the episode ends


class IllegalActionPolicy(BaseModel):
    """How illegal moves (and player failures) are handled, recorded with every episode: ``raise``
    (the default), ``penalize`` (forfeit with ``penalty``), ``default`` (the game's default action)
    or ``retry`` (up to ``max_retries`` times, then ``after_retries``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: Literal["raise", "penalize", "default", "retry"] = "raise"
    max_retries: int = Field(default=0, ge=0)
    after_retries: Literal["forfeit", "default"] = "forfeit"
    penalty: float | None = Field(
        default=None, description="the offender's return on forfeit; None: the game's lowest reward"
    )

    @model_validator(mode="after")
    def _retry_needs_budget(self) -> IllegalActionPolicy:
        if self.mode == "retry" and self.max_retries < 1:
            raise ValueError("mode 'retry' needs max_retries >= 1")
        return self

    def verdict(self, failed_attempts: int) -> Verdict:
        """What to do after the offender's ``failed_attempts``-th consecutive failure."""
        if self.mode == "raise":
            return Verdict.RAISE
        if self.mode == "penalize":
            return Verdict.FORFEIT
        if self.mode == "default":
            return Verdict.DEFAULT
        if failed_attempts <= self.max_retries:
            return Verdict.RETRY
        return Verdict.FORFEIT if self.after_retries == "forfeit" else Verdict.DEFAULT

    def forfeit_returns(self, spec: GameSpec, num_players: int, offender: int | None) -> tuple[float, ...]:
        """Returns when ``offender`` forfeits: the penalty for it; the others share what keeps
        the declared sum (zero- and constant-sum games) or get 0 (general-sum games)."""
        penalty = spec.reward_bounds[0] if self.penalty is None else float(self.penalty)
        total = spec.declared_sum
        others = 0.0 if total is None or num_players == 1 else (total - penalty) / (num_players - 1)
        return tuple(penalty if p == offender else others for p in range(num_players))

    @classmethod
    def parse(cls, text: str) -> IllegalActionPolicy:
        """From CLI text: ``raise``, ``penalize``, ``default``, ``retry:K`` or ``retry:K:default``."""
        parts = text.strip().split(":")
        if parts[0] == "retry":
            k = int(parts[1]) if len(parts) > 1 else 1
            after = parts[2] if len(parts) > 2 else "forfeit"
            return cls.model_validate({"mode": "retry", "max_retries": k, "after_retries": after})
        return cls.model_validate({"mode": parts[0]})


RAISE = IllegalActionPolicy()
