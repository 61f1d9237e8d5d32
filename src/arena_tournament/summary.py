"""The typed ratings summary: what ``arena ratings`` prints, ``summary.json`` holds and the report,
the fault audit, ``arena compare`` and the training loop read, by attribute.

:func:`arena_tournament.ratings.summarize` builds a :class:`RatingsSummary`;
:func:`arena_tournament.audit.attach_faults` returns a copy with its :class:`FaultSummary`.
``to_json()`` gives the JSON-able form (the keys of ``summary.json``); ``RatingsSummary.model_validate``
reads it back. Every model is frozen: a reader cannot change what another reader sees.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class EntrantFaults(_Frozen):
    """One entrant's faults: counts and rates per kind (per decision asked of it), the share of
    decisions with any fault, its answer mode, and whether it is flagged."""

    mode: str | None
    decisions: int
    faulted_decisions: int
    fault_rate: float
    counts: dict[str, int]
    rates: dict[str, float]
    unplayed_games: int
    flagged: bool


class UnplayedGame(_Frozen):
    key: str
    seats: list[str]
    reason: str


class FaultSummary(_Frozen):
    """Every entrant's faults, the flagged entrants and the unplayed games, and how faulted games
    count in the ratings (``counting``)."""

    max_fault_rate: float | None
    entrants: dict[str, EntrantFaults]
    flagged: list[str]
    unplayed: list[UnplayedGame]
    games_unplayed: int
    mixed_modes: bool
    counting: str


class LeaderboardRow(_Frozen):
    """One entrant's rating with its interval, its rank set, and its plain statistics; the fault
    fields are set once :func:`~arena_tournament.audit.attach_faults` has run."""

    name: str
    rating: float
    rating_low: float | None
    rating_high: float | None
    rank: int
    rank_low: float | None
    rank_high: float | None
    group: int
    theta: float
    faults: int
    games: int
    mean_score: float | None
    mean_margin: float | None
    mean_position: float | None
    win_share: float | None
    openskill_mu: float | None = None
    openskill_sigma: float | None = None
    openskill_ordinal: float | None = None
    mode: str | None = None
    fault_rate: float | None = None
    fault_rates: dict[str, float] | None = None
    flagged: bool | None = None


class RatingPair(_Frozen):
    """``a``'s rating minus ``b``'s (a rated at least as high), its interval, p-value and Holm verdict;
    ``sim_low``/``sim_high`` its simultaneous interval over all pairs (Bonferroni) and ``p_holm``
    the Holm-adjusted p-value, the verdict's footing (absent in summaries written before them)."""

    a: str
    b: str
    diff: float
    low: float
    high: float
    p: float
    resolved: bool
    sim_low: float | None = None
    sim_high: float | None = None
    p_holm: float | None = None


class HeadToHeadRow(_Frozen):
    """How often ``a`` finished above ``b`` where both sat (ties half), with its deal-level interval;
    ``sim_*`` the simultaneous intervals over all pairs with an interval (Bonferroni) and ``p_holm``
    the Holm-adjusted p-value, the verdict's footing."""

    a: str
    b: str
    games: int
    clusters: int
    a_above_b: float
    low: float | None
    high: float | None
    mean_score_diff: float
    diff_low: float | None
    diff_high: float | None
    p: float | None = None
    resolved: bool
    p_holm: float | None = None
    sim_low: float | None = None
    sim_high: float | None = None
    diff_sim_low: float | None = None
    diff_sim_high: float | None = None


class SeatRow(_Frozen):
    seat: int
    games: int
    mean_score: float | None
    mean_position: float | None
    win_share: float | None


class RatingMethod(_Frozen):
    model: str
    regularization: float
    scale: str
    intervals: str
    seed: int


class WithoutFaulted(_Frozen):
    """The same ratings without the games an infrastructure fault touched (``arena ratings --faulted
    both``): how many games were left out, and the leaderboard of the rest."""

    games_excluded: int
    leaderboard: list[LeaderboardRow]
    note: str | None = None


class RatingsSummary(_Frozen):
    """Everything the leaderboard and the report show. ``games_excluded`` > 0: the ratings leave out
    the games an infrastructure fault touched (``arena ratings --faulted exclude``)."""

    name: str
    game: str
    params: dict[str, Any]
    num_players: int
    design: str
    deals: int
    deals_scored: int
    tables: int
    games_scheduled: int
    games_recorded: int
    games_scored: int
    games_truncated: int
    games_unplayed: int
    games_with_faults: int
    clusters: int
    games_replayed: int = 0  # recorded after attempts lost to infrastructure (dead workers, outages)
    attempts_lost: int = 0  # those lost attempts, in all
    games_outage: int = 0  # every attempt cut short by a provider outage: recorded, not rated
    games_with_outage_moves: int = 0  # rated games with moves the policy played during an outage (opted in)
    outage_entrants: list[str] = []  # the entrants whose outage moves those were
    games_excluded: int = 0
    settings: dict[str, Any]
    method: RatingMethod
    groups: list[list[str]]
    note: str | None
    leaderboard: list[LeaderboardRow]
    rating_pairs: list[RatingPair]
    head_to_head: list[HeadToHeadRow]
    seats: list[SeatRow]
    player_seat_positions: dict[str, list[float | None]]
    faults: FaultSummary | None = None
    without_faulted: WithoutFaulted | None = None

    def row(self, name: str) -> LeaderboardRow:
        """The leaderboard row of entrant ``name`` (KeyError when it has none)."""
        for r in self.leaderboard:
            if r.name == name:
                return r
        raise KeyError(name)

    def to_json(self) -> dict[str, Any]:
        """The JSON-able form (``summary.json``, ``arena ratings --json``)."""
        return self.model_dump(mode="json")
