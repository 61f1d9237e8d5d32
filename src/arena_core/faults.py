"""The kinds of player fault a tournament counts: a failure is data, never silence.

Every fault a game records carries one :class:`FaultKind` as a field (never as the start of a
free-text detail), so the leaderboard can count each kind per entrant.
"""

from __future__ import annotations

from enum import Enum

from .errors import PlayerError


class FaultKind(str, Enum):
    """Why a decision failed."""

    ILLEGAL = "illegal"  # the answer parsed to an action the rules do not allow here
    UNPARSEABLE = "unparseable"  # the answer is not an action at all (garbage text, wrong type)
    DEFAULT_APPLIED = "default_applied"  # the policy played the game's default action instead
    FORFEIT = "forfeit"  # the policy ended the game with the offender forfeiting
    TIMEOUT = "timeout"  # no answer within the decision time limit
    ERROR = "error"  # player code raised (transport errors too)
    CAP_EXHAUSTED = "cap_exhausted"  # the player's spending cap (tokens, money, requests) ran out
    CRASH = "crash"  # the worker process died while this player's decision ran


def classify(error_type: str | None, *, illegal: bool) -> FaultKind:
    """The kind of one failed decision from what the game loop saw: an illegal action, an answer
    that was not an action, or (``illegal=False``) a player failure tagged ``error_type``."""
    if error_type in ("timeout", "hung"):
        return FaultKind.TIMEOUT
    if error_type == "cap_exhausted":
        return FaultKind.CAP_EXHAUSTED
    if error_type == "crash":
        return FaultKind.CRASH
    if illegal:
        return FaultKind.UNPARSEABLE if error_type == "unparseable" else FaultKind.ILLEGAL
    return FaultKind.ERROR


class CapExhausted(PlayerError):
    """Raised by a player whose spending cap (tokens, money, requests) is used up.

    A tournament records it as :attr:`FaultKind.CAP_EXHAUSTED` and, by default, stops
    scheduling that entrant's remaining games instead of playing them with default moves."""
