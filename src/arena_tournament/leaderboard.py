"""The leaderboard as text: its table, the lines under it (resolved orderings, groups, sample size,
the intervals' footing, what infrastructure did to the games, faults) and the terminal's print.
The report's page (:mod:`.report`) repeats every line the terminal prints (tested)."""

from __future__ import annotations

import sys
from typing import IO, Any

from .audit import KINDS
from .summary import RatingsSummary


def number_text(x: Any, digits: int = 1) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def interval_text(lo: Any, hi: Any, digits: int = 0) -> str:
    return "-" if lo is None else f"[{lo:.{digits}f}, {hi:.{digits}f}]"


def leaderboard_rows(summary: RatingsSummary) -> list[list[str]]:
    """Leaderboard cells: rank, entrant, rating with interval, rank interval, openskill, stats."""
    rows = []
    for r in summary.leaderboard:
        skill = "-" if r.openskill_mu is None else f"{r.openskill_mu:.1f}±{r.openskill_sigma:.1f}"
        rows.append(
            [
                str(r.rank),
                r.name,
                f"{r.rating:.0f} " + interval_text(r.rating_low, r.rating_high),
                interval_text(r.rank_low, r.rank_high),
                skill,
                str(r.games),
                number_text(r.mean_score, 2),
                number_text(r.mean_margin, 2),
                number_text(r.mean_position, 2),
                number_text(r.win_share, 2),
                str(r.faults),
            ]
        )
    return rows


HEADERS = [
    "#",
    "entrant",
    "rating [95%]",
    "rank [95%]",
    "openskill",
    "games",
    "score",
    "margin",
    "place",
    "wins",
    "faults",
]


#: why a rating pair and a head-to-head cell may say different things (on the page and in the docs)
DISAGREE_WHY = (
    "A rating pair and a head-to-head cell answer different questions: the rating difference is fitted "
    "from every game of both entrants against everyone (the Plackett-Luce model), the head-to-head share "
    "only from the games where both sat at one table, and each is Holm-controlled over all pairs on its own. "
    "So one can be resolved and the other not: a pair that rarely meets can be separated by the ratings "
    "alone, and a pair with the same overall strength can still split its direct meetings unevenly."
)


#: how the intervals beside a verdict relate to it (on the page and in the docs)
FOOTING = (
    "Every interval printed beside a verdict (the pair tables and the matrix) is simultaneous: it holds for all "
    "the pairs tested at once with 95% confidence (level 1 - 0.05/K for K pairs, Bonferroni), the footing of the "
    "verdicts, which are Holm-controlled over the same K pairs; p (Holm) is the Holm-adjusted p-value, and a pair "
    "is resolved exactly where it is at most 0.05. An interval that excludes chance therefore always belongs to a "
    "resolved pair. A pair's interval taken alone (95%, unadjusted) is narrower and can exclude chance when the "
    "verdict does not: with many pairs, some would by luck. The leaderboard's rating intervals are each entrant's "
    "own (95%): whether two entrants are ordered is read from the pair verdicts, not from whether their "
    "intervals overlap."
)


def footing_notes(summary: RatingsSummary) -> list[str]:
    """Lines naming the pairs whose verdict and simultaneous interval differ in what they say:
    Holm resolved them at a later step (it tests the r-th smallest p-value at 0.05/(K-r+1)),
    while the interval is at 0.05/K; never the other way round."""
    lines = []
    for label, rows, null in (
        ("rating pairs", [(p.a, p.b, p.resolved, p.sim_low, p.sim_high) for p in summary.rating_pairs], 0.0),
        ("head to head", [(h.a, h.b, h.resolved, h.sim_low, h.sim_high) for h in summary.head_to_head], 0.5),
    ):
        later = [
            f"{a} ~ {b}" for a, b, ok, lo, hi in rows if ok and lo is not None and hi is not None and lo <= null <= hi
        ]
        if later:
            lines.append(
                f"Resolved by Holm's later steps though the simultaneous interval touches chance ({label}, marked †): "
                + ", ".join(later)
                + " (Holm tests the r-th smallest p-value at 0.05/(K-r+1); the interval is at 0.05/K)."
            )
    return lines


#: said instead of FOOTING for a summary written before the simultaneous intervals
OLD_FOOTING = (
    "This summary was written before pair intervals were made simultaneous: each pair interval shown is that "
    "pair's own (95%, unadjusted; marked 'this pair alone') and can exclude chance where the Holm verdict does "
    "not resolve the pair; read the verdicts from 'resolved' (arena report on the results recomputes them)."
)


def footing_lines(summary: RatingsSummary) -> list[str]:
    """How the intervals beside the verdicts relate to them: :data:`FOOTING` and the pairs Holm
    resolved at a later step, or :data:`OLD_FOOTING` for a summary without simultaneous intervals."""
    pairs = [(p.low, p.sim_low) for p in summary.rating_pairs] + [(h.low, h.sim_low) for h in summary.head_to_head]
    if any(low is not None and sim is None for low, sim in pairs):
        return [OLD_FOOTING]
    return [FOOTING, *footing_notes(summary)]


def title_line(summary: RatingsSummary) -> str:
    """The leaderboard's first line: scored and truncated games, deals, design (and the games left out)."""
    left_out = (
        f", without the {summary.games_excluded} games an infrastructure fault touched"
        if summary.games_excluded
        else ""
    )
    return (
        f"{summary.name}: {summary.game}, {summary.games_scored} scored games "
        f"({summary.games_truncated} truncated) on {summary.deals_scored} deals, {summary.design} design{left_out}"
    )


def infrastructure_notes(summary: RatingsSummary) -> list[str]:
    """What infrastructure did to the games: attempts lost and played again, games every attempt of
    which an outage cut short, games not recorded yet, and rated games with moves played during an outage."""
    lines = []
    if summary.games_replayed:
        lines.append(
            f"{summary.games_replayed} games were played again after {summary.attempts_lost} attempt(s) lost to "
            "infrastructure (a dead worker, a provider outage); nobody was charged for those (see 'retried' in the results)."
        )
    if summary.games_outage:
        lines.append(
            f"{summary.games_outage} games could not be played: a provider outage cut every attempt short (reason "
            "'outage'); they are not rated."
        )
    missing = summary.games_scheduled - summary.games_recorded
    if missing > 0:
        lines.append(
            f"{missing} of {summary.games_scheduled} scheduled games are not recorded yet (cut short by an outage, or "
            "not played): run the same `arena tournament` command again to play them."
        )
    if summary.games_with_outage_moves and not summary.games_excluded:
        who = ", ".join(summary.outage_entrants)
        lines.append(
            f"{summary.games_with_outage_moves} rated games include moves the policy played while a provider was "
            f'unavailable ({who}: on_outage = "default"); `arena ratings RESULTS --faulted both` ranks with and '
            "without them side by side."
        )
    return lines


def side_by_side_lines(summary: RatingsSummary) -> list[str]:
    """Each entrant's rating on every game and without the games an infrastructure fault touched."""
    side = summary.without_faulted
    if side is None:
        return []
    other = {r.name: r for r in side.leaderboard}
    lines = [
        f"with and without the {side.games_excluded} games an infrastructure fault touched:",
        f"  {'entrant':<24} {'all games':>26}  {'without them':>26}",
    ]
    for r in summary.leaderboard:
        o = other.get(r.name)
        without = "-" if o is None else f"#{o.rank} {o.rating:.0f} " + interval_text(o.rating_low, o.rating_high)
        lines.append(
            f"  {r.name:<24} {f'#{r.rank} {r.rating:.0f} ' + interval_text(r.rating_low, r.rating_high):>26}  {without:>26}"
        )
    if side.note:
        lines.append(f"  (without them: {side.note})")
    return lines


def disagreements(summary: RatingsSummary) -> list[str]:
    """Pairs whose rating verdict and head-to-head verdict differ, as ``a ~ b (...)`` texts."""
    rating = {frozenset((p.a, p.b)): p for p in summary.rating_pairs}
    out = []
    for h in summary.head_to_head:
        r = rating.get(frozenset((h.a, h.b)))
        if r is None or h.low is None or r.resolved == h.resolved:
            continue
        if h.resolved:
            above, below = (h.a, h.b) if h.a_above_b > 0.5 else (h.b, h.a)
            out.append(f"{r.a} ~ {r.b} by rating, but head to head {above} above {below} (resolved)")
        else:
            out.append(f"{r.a} > {r.b} by rating, but head to head not resolved")
    return out


def leaderboard_notes(summary: RatingsSummary, *, max_pairs: int = 15) -> list[str]:
    """Plain lines under the leaderboard: groups that never met, which orderings the data
    resolve (Holm over all pairs) and which they do not, head-to-head pairs without an interval
    (too few shared deals or games), pairs whose rating and head-to-head verdicts differ, and
    the few-games note."""
    lines = []
    groups = summary.groups
    if len(groups) > 1:
        lines.append(
            f"Entrants form {len(groups)} groups that never met (directly or through others): "
            + " | ".join("{" + ", ".join(g) + "}" for g in groups)
            + "; ratings and ranks compare only within a group."
        )
    pairs = summary.rating_pairs
    if pairs:
        wins: dict[str, list[str]] = {}
        for p in pairs:
            if p.resolved:
                wins.setdefault(p.a, []).append(p.b)
        order = [r.name for r in summary.leaderboard]
        done = [
            f"{a} > {', '.join(sorted(bs, key=order.index))}"
            for a, bs in sorted(wins.items(), key=lambda kv: order.index(kv[0]))
        ]
        lines.append(
            f"Resolved orderings (95%, Holm over {len(pairs)} pairs): " + ("; ".join(done) if done else "none")
        )
        open_pairs = [
            f"{p.a} ~ {p.b}"
            for p in sorted(pairs, key=lambda p: (order.index(p.a), order.index(p.b)))
            if not p.resolved
        ]
        if open_pairs:
            more = f", and {len(open_pairs) - max_pairs} more" if len(open_pairs) > max_pairs else ""
            lines.append(
                f"Not resolved ({len(open_pairs)} of {len(pairs)}): " + ", ".join(open_pairs[:max_pairs]) + more
            )
    h2h = summary.head_to_head
    bare = [p for p in h2h if p.low is None]
    if h2h and bare:
        lines.append(
            f"Head to head: no interval for {len(bare)} of {len(h2h)} pairs (fewer than 4 shared deals or 5 shared games); "
            "shares, like every interval here, count deals, not games."
        )
    split = disagreements(summary)
    if split:
        more = f", and {len(split) - max_pairs} more" if len(split) > max_pairs else ""
        lines.append(
            f"Rating and head-to-head verdicts differ for {len(split)} pair(s): "
            + "; ".join(split[:max_pairs])
            + more
            + " (the ratings use every game against everyone, head to head only the games the two shared)."
        )
    if summary.note:
        lines.append(summary.note)
    lines.extend(infrastructure_notes(summary))
    lines.extend(side_by_side_lines(summary))
    return lines


def fault_lines(summary: RatingsSummary) -> list[str]:
    """The fault table as text lines (entrants with any fault, a mode note, unplayed games)."""
    faults = summary.faults
    if faults is None:
        return []
    lines = []
    rows = [(n, r) for n, r in faults.entrants.items() if r.faulted_decisions or r.unplayed_games]
    if rows:
        lines.append("faults per decision (" + ", ".join(KINDS) + "):")
        for n, r in rows:
            rates = ", ".join(f"{k} {r.rates[k]:.1%}" for k in KINDS if r.counts[k])
            flag = "  FLAGGED" if r.flagged else ""
            extra = f", {r.unplayed_games} games unplayed" if r.unplayed_games else ""
            rates = f" ({rates})" if rates else ""
            lines.append(
                f"  {n} [{r.mode or '?'}]: {r.fault_rate:.1%} of {r.decisions} decisions faulted{rates}{extra}{flag}"
            )
    if faults.mixed_modes:
        modes = ", ".join(f"{n}={r.mode}" for n, r in faults.entrants.items() if r.mode)
        lines.append(
            f"note: entrants play in different modes ({modes}): free-text and constrained entrants are not comparable without saying so"
        )
    if faults.games_unplayed:
        lines.append(
            f"{faults.games_unplayed} scheduled games were not played (listed in the summary with their reason)"
        )
    return lines


def print_faults(summary: RatingsSummary, *, file: IO[str] | None = None) -> None:
    for line in fault_lines(summary):
        print(line, file=file or sys.stdout)


def print_leaderboard(summary: RatingsSummary, *, file: IO[str] | None = None) -> None:
    """The leaderboard on the terminal (a rich table when rich is installed), then the notes:
    resolved and unresolved orderings, groups that never met, too few games."""
    title = title_line(summary)
    notes = leaderboard_notes(summary)
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        print(title, file=file)
        print(" | ".join(HEADERS), file=file)
        for row in leaderboard_rows(summary):
            print(" | ".join(row), file=file)
        for line in notes:
            print(line, file=file)
        return
    table = Table(title=title)
    for h in HEADERS:
        table.add_column(h, justify="left" if h == "entrant" else "right", no_wrap=True)
    for row in leaderboard_rows(summary):
        table.add_row(*row)
    console = Console(file=file)
    if not console.is_terminal:  # piped: do not squeeze the table into 80 columns
        console = Console(file=file, width=160)
    console.print(table)
    for line in notes:
        console.print(line, markup=False, highlight=False)
