"""Faults on the leaderboard: per-entrant fault rates, modes, flags and unplayed games.

How faulted games count in the ratings (stated here, tested in ``tests/test_faults_tournament.py``):

- a forfeit or a crash is a loss for its offender: the game keeps its returns, with the
  offender strictly last (:func:`~arena_tournament.play.rank_offender_last`), so it is
  rated like any other game and crashing when behind cannot pay;
- a default-applied move is an ordinary move of the game (the fault is counted here);
- a truncated game (turn cap, wall clock, a game error) has no returns and is not rated;
- an unplayed game (its entrant's spending cap ran out) is listed with its reason, never rated.

Rates are per decision asked of the entrant: ``illegal``, ``unparseable``, ``timeout``,
``error``, ``cap_exhausted`` and ``crash`` count why a decision failed; ``default_applied`` and
``forfeit`` what the policy did about it. ``fault_rate`` is the share of decisions with any
fault; above ``max_fault_rate`` the entrant is flagged. ``mode`` says whether the entrant
answered in free text (read by the game's parser) or with actions (legality-constrained): the
two are not comparable without saying so.
"""

from __future__ import annotations

from collections.abc import Iterable

from arena_core.faults import FaultKind

from .results import UNPLAYED, GameResult, PlayerFault, ScheduleLine
from .summary import EntrantFaults, FaultSummary, RatingsSummary, UnplayedGame

CAUSES = ("illegal", "unparseable", "timeout", "error", "unavailable", "cap_exhausted", "crash")
OUTCOMES = ("default_applied", "forfeit")
KINDS = CAUSES + OUTCOMES
DEFAULT_MAX_FAULT_RATE = 0.25
COUNTING = (
    "a forfeit or a crash counts as a loss (offender last) and is rated; default-applied moves are ordinary moves; "
    "truncated games are not rated; unplayed games are listed, never rated"
)


def _kind_of(fault: PlayerFault) -> str:
    if fault.kind is not None:
        return FaultKind(fault.kind).value
    return "error"  # format-1 files did not type their faults


def fault_summary(
    header: ScheduleLine, games: Iterable[GameResult], max_fault_rate: float | None = None
) -> FaultSummary:
    """Per-entrant fault counts and rates, modes, flags, and the unplayed games."""
    games = list(games)
    names = [e.name for e in header.schedule.entrants]
    if max_fault_rate is None:
        max_fault_rate = header.max_fault_rate if header.max_fault_rate is not None else DEFAULT_MAX_FAULT_RATE
    identities = header.identities
    decisions = {n: 0 for n in names}
    counts = {n: {k: 0 for k in KINDS} for n in names}
    faulted = {n: 0 for n in names}
    modes: dict[str, dict[str, int]] = {n: {} for n in names}
    unplayed = []
    for g in games:
        if g.reason == UNPLAYED:
            unplayed.append(UnplayedGame(key=g.key, seats=list(g.seats), reason=g.detail))
            continue
        if g.decisions is not None:
            for seat, count in enumerate(g.decisions):
                decisions[g.seats[seat]] += count
        else:  # format 1: decisions were not counted; count plies shared evenly as a floor
            for name in g.seats:
                decisions[name] += max(1, g.plies // max(1, len(g.seats)))
        for seat, mode in enumerate(g.modes or ()):
            if mode:
                modes[g.seats[seat]][mode] = modes[g.seats[seat]].get(mode, 0) + 1
        for f in g.faults:
            kind = _kind_of(f)
            counts[f.player][kind] += 1
            if f.verdict == "default":
                counts[f.player]["default_applied"] += 1
            elif f.verdict == "forfeit" and kind != "crash":
                counts[f.player]["forfeit"] += 1
            if kind == "crash":
                counts[f.player]["forfeit"] += 1
            if f.ply is None and g.decisions is not None:  # written by the parent for a dead or killed worker
                decisions[f.player] += 1  # the decision that was running
            faulted[f.player] += 1  # every fault is one failed ask (a retried decision may fail more than once)
    entrants = {}
    for n in names:
        d = decisions[n]
        declared = (identities.get(n) or {}).get("mode")
        seen_modes = modes[n]
        rate = faulted[n] / d if d else 0.0
        entrants[n] = EntrantFaults(
            mode=declared or (max(seen_modes, key=lambda m: seen_modes[m]) if seen_modes else None),
            decisions=d,
            faulted_decisions=faulted[n],
            fault_rate=rate,
            counts=counts[n],
            rates={k: (counts[n][k] / d if d else 0.0) for k in KINDS},
            unplayed_games=sum(1 for u in unplayed if n in u.seats),
            flagged=bool(max_fault_rate is not None and d and rate > max_fault_rate),
        )
    return FaultSummary(
        max_fault_rate=max_fault_rate,
        entrants=entrants,
        flagged=[n for n in names if entrants[n].flagged],
        unplayed=unplayed,
        games_unplayed=len(unplayed),
        mixed_modes=len({r.mode for r in entrants.values() if r.mode}) > 1,
        counting=COUNTING,
    )


def attach_faults(
    summary: RatingsSummary, header: ScheduleLine, games: Iterable[GameResult], max_fault_rate: float | None = None
) -> RatingsSummary:
    """``summary`` with :func:`fault_summary` attached: its ``faults``, and on each leaderboard row
    ``mode``, ``fault_rate``, ``fault_rates`` and ``flagged``."""
    faults = fault_summary(header, games, max_fault_rate)
    rows = []
    for row in summary.leaderboard:
        info = faults.entrants.get(row.name)
        if info is not None:
            row = row.model_copy(
                update={
                    "mode": info.mode,
                    "fault_rate": info.fault_rate,
                    "fault_rates": info.rates,
                    "flagged": info.flagged,
                }
            )
        rows.append(row)
    return summary.model_copy(update={"faults": faults, "leaderboard": rows})


#: exit status of a run that finished its schedule with a flagged entrant
EXIT_FLAGGED = 3
