"""The kinds of player fault, decided where the failure happens (passed to
:meth:`arena_core.match.Match.fail`), carried on every :class:`~arena_core.episode.PolicyEvent`
(``fault``) and read by every consumer through :func:`fault_of`, the one classifier (docs/developing.md).
"""

from __future__ import annotations

import warnings
from enum import Enum
from typing import TYPE_CHECKING, Any

from .errors import PlayerError

if TYPE_CHECKING:
    from .episode import PolicyEvent


class FaultKind(str, Enum):
    """Why a decision failed."""

    ILLEGAL = "illegal"  # the answer parsed to an action the rules do not allow here
    UNPARSEABLE = "unparseable"  # the answer is not an action at all (garbage text, wrong type)
    DEFAULT_APPLIED = "default_applied"  # the policy played the game's default action instead
    FORFEIT = "forfeit"  # the policy ended the game with the offender forfeiting
    TIMEOUT = "timeout"  # no answer within the decision time limit
    ERROR = "error"  # player code raised (a request the provider refused as malformed too)
    UNAVAILABLE = "unavailable"  # infrastructure, not the player: the provider down (5xx, 429, refused), retries spent
    CAP_EXHAUSTED = "cap_exhausted"  # the player's spending cap (tokens, money, requests) ran out
    CRASH = "crash"  # the worker process died while this player's decision ran


class CapExhausted(PlayerError):
    """Raised by a player whose spending cap (tokens, money, requests) is used up.

    A tournament records it as :attr:`FaultKind.CAP_EXHAUSTED` and, by default, stops
    scheduling that entrant's remaining games instead of playing them with default moves."""


def fault_of_exception(exc: BaseException) -> FaultKind:
    """The kind of a player's raised exception: the ``fault`` it carries, else a spending cap, a timeout
    (``TimeoutError`` or a ``*Timeout*`` type), an unreachable endpoint (``ConnectionError``) or an error."""
    carried = getattr(exc, "fault", None)
    if isinstance(carried, FaultKind):
        return carried
    if isinstance(exc, CapExhausted):
        return FaultKind.CAP_EXHAUSTED
    if isinstance(exc, TimeoutError) or "timeout" in type(exc).__name__.lower():
        return FaultKind.TIMEOUT
    return FaultKind.UNAVAILABLE if isinstance(exc, ConnectionError) else FaultKind.ERROR


def _kind(value: Any) -> FaultKind | None:
    try:
        return FaultKind(value) if value else None
    except ValueError:
        return None


def fault_of(event: PolicyEvent) -> FaultKind:
    """The kind of the failure ``event`` records: the kind decided where it happened; for an
    event written before events carried it, read from what the record holds (a ``fault`` tag
    in the telemetry, the parser's verdict, the error type, the detail)."""
    if event.fault is not None:
        return event.fault
    return _read(event.telemetry or {}, illegal=event.illegal, detail=event.detail)


def _read(t: dict[str, Any], *, illegal: bool, detail: str) -> FaultKind:
    """The kind from what an older record holds (see :func:`fault_of`)."""
    tagged = _kind(t.get("fault")) or _kind(t.get("fault_kind"))
    if tagged is not None:
        return tagged
    if illegal:
        unreadable = "parse_detail" in t or t.get("parse_method") == "unparseable" or t.get("valid") is False
        return FaultKind.UNPARSEABLE if unreadable else FaultKind.ILLEGAL
    error_type = str(t.get("error_type") or "").lower()
    said = detail.lower()
    if error_type in ("timeout", "hung") or "timeout" in error_type or "timed out" in said:
        return FaultKind.TIMEOUT
    if error_type in ("cap_exhausted", "capexhausted", "budgetexceedederror") or "spending cap" in said:
        return FaultKind.CAP_EXHAUSTED
    if error_type == "crash":
        return FaultKind.CRASH
    return FaultKind.ERROR


def classify(error_type: str | None, *, illegal: bool) -> FaultKind:
    """Deprecated: the kind from an error-type tag alone; use :func:`fault_of` on the event."""
    warnings.warn("arena_core.faults.classify is deprecated; use fault_of(event)", DeprecationWarning, stacklevel=2)
    telemetry: dict[str, Any] = {"error_type": error_type} if error_type else {}
    if illegal and error_type == "unparseable":
        telemetry = {"parse_detail": ""}
    return _read(telemetry, illegal=illegal, detail="")
