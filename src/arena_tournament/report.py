"""Reports of a tournament summary: terminal leaderboard, JSON, PNG plot, self-contained HTML.

One file (over 500 lines) because the four renderings print the same rows, intervals, verdicts and
footing notes from one summary and must say the same thing; the games' drill-down lives in
report_games.py and report_viewer.py."""

from __future__ import annotations

import base64
import html
import io
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .audit import KINDS
from .summary import RatingsSummary

if TYPE_CHECKING:
    from .usage import ModelPrice


def _fmt(x: Any, digits: int = 1) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def _interval(lo: Any, hi: Any, digits: int = 0) -> str:
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
                f"{r.rating:.0f} " + _interval(r.rating_low, r.rating_high),
                _interval(r.rank_low, r.rank_high),
                skill,
                str(r.games),
                _fmt(r.mean_score, 2),
                _fmt(r.mean_margin, 2),
                _fmt(r.mean_position, 2),
                _fmt(r.win_share, 2),
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
        without = "-" if o is None else f"#{o.rank} {o.rating:.0f} " + _interval(o.rating_low, o.rating_high)
        lines.append(
            f"  {r.name:<24} {f'#{r.rank} {r.rating:.0f} ' + _interval(r.rating_low, r.rating_high):>26}  {without:>26}"
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


def write_json(summary: RatingsSummary, path: str | os.PathLike[str]) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    from arena_core.outputs import atomic_write_text

    atomic_write_text(path, json.dumps(summary.to_json(), indent=2, sort_keys=False) + "\n")
    return path


def ratings_png(summary: RatingsSummary) -> bytes:
    """A PNG of every rating with its 95% interval, best at the top."""
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError("the ratings plot needs matplotlib; fix: pip install 'turn-arena-core[tournament]'") from exc
    rows = list(reversed(summary.leaderboard))
    fig = Figure(figsize=(7, 0.45 * len(rows) + 1.2), dpi=110)
    ax = fig.add_subplot()
    y = list(range(len(rows)))
    x = [r.rating for r in rows]
    lows = [r.rating_low for r in rows if r.rating_low is not None]
    highs = [r.rating_high for r in rows if r.rating_high is not None]
    if rows and len(lows) == len(highs) == len(rows):
        # drawn as segments: a percentile interval need not contain the point estimate
        ax.hlines(y, lows, highs, color="#1f4e79", linewidth=1.5)
    ax.plot(x, y, "o", color="#1f4e79")
    ax.set_yticks(y, [r.name for r in rows])
    ax.set_xlabel("rating (Elo scale), 95% cluster-bootstrap interval")
    ax.set_title(f"{summary.name}: {summary.game}")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def write_png(summary: RatingsSummary, path: str | os.PathLike[str]) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    from arena_core.outputs import atomic_write_bytes

    atomic_write_bytes(path, ratings_png(summary))
    return path


def _table(headers: list[str], rows: list[list[str]], cls: str = "") -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _pvalue(p: float | None) -> str:
    return "-" if p is None else "<0.001" if p < 0.001 else f"{p:.3f}"


def _pair_interval(
    lo: float | None, hi: float | None, plain_lo: float | None, plain_hi: float | None, digits: int
) -> str:
    """The simultaneous interval; a summary written before them shows its unadjusted one, said so."""
    if lo is not None:
        return _interval(lo, hi, digits)
    return "-" if plain_lo is None else _interval(plain_lo, plain_hi, digits) + " (this pair alone)"


def _verdict(resolved: bool, lo: float | None, hi: float | None, null: float) -> str:
    if not resolved:
        return "no"
    return "yes †" if lo is not None and hi is not None and lo <= null <= hi else "yes"


def _h2h_matrix(summary: RatingsSummary) -> str:
    names = [r.name for r in summary.leaderboard]
    cell: dict[tuple[str, str], dict[str, Any]] = {}
    for p in summary.head_to_head:
        lo, hi = (p.sim_low, p.sim_high) if p.sim_low is not None else (p.low, p.high)
        cell[(p.a, p.b)] = {"p": p.a_above_b, "lo": lo, "hi": hi, "resolved": p.resolved, "n": p.games}
        cell[(p.b, p.a)] = {
            "p": 1 - p.a_above_b,
            "lo": None if hi is None else 1 - hi,
            "hi": None if lo is None else 1 - lo,
            "resolved": p.resolved,
            "n": p.games,
        }
    rows = []
    for a in names:
        row = [f"<b>{html.escape(a)}</b>"]
        for b in names:
            c = cell.get((a, b))
            if a == b or c is None:
                row.append('<span class="na">·</span>')
                continue
            shade = int(255 - 120 * abs(c["p"] - 0.5) * 2)
            color = f"rgb({shade},255,{shade})" if c["p"] > 0.5 else f"rgb(255,{shade},{shade})"
            iv = "" if c["lo"] is None else f"<br><small>[{c['lo']:.2f}, {c['hi']:.2f}]</small>"
            mark = (" ✓" if c["resolved"] else "") + (" †" if c["resolved"] and c["lo"] <= 0.5 <= c["hi"] else "")
            row.append(
                f'<div class="h2h" style="background:{color}" title="{html.escape(a)} above {html.escape(b)} in {c["n"]} games">{c["p"]:.2f}{mark}{iv}</div>'
            )
        rows.append(row)
    return _table(["row above column", *names], rows, "matrix")  # _table escapes the headers


def html_report(
    summary: RatingsSummary,
    *,
    results: str | os.PathLike[str] | None = None,
    prices: Mapping[str, ModelPrice] | None = None,
) -> str:
    """A self-contained HTML page: leaderboard, ratings plot, pair verdicts with their
    simultaneous intervals, head-to-head matrix, seat bias; with ``results`` (the results file or
    its directory) also the entrants with their results and usage (cost at ``prices``, USD per
    million tokens by model), every game (filterable by entrant and result), and a step-through
    viewer of each recorded game's decisions with the seat's view of the position."""
    esc = html.escape
    drilldown, drill_css = "", ""
    if results is not None:
        from .report_viewer import CSS, drilldown_for

        drilldown, drill_css = drilldown_for(summary, results, prices=prices), CSS
    try:
        plot = (
            '<img alt="ratings with 95% intervals" src="data:image/png;base64,'
            + base64.b64encode(ratings_png(summary)).decode()
            + '">'
        )
    except ImportError:
        plot = "<p>(install matplotlib for the ratings plot)</p>"
    board = _table(HEADERS, [[esc(c) for c in row] for row in leaderboard_rows(summary)], "board")
    seats = _table(
        ["seat", "games", "mean score", "mean position", "first-place share"],
        [
            [str(s.seat), str(s.games), _fmt(s.mean_score, 2), _fmt(s.mean_position, 2), _fmt(s.win_share, 3)]
            for s in summary.seats
        ],
        "seats",
    )
    seat_cols = [f"seat {i}" for i in range(summary.num_players)]
    per_player = _table(
        ["entrant"] + seat_cols,
        [[esc(n)] + [_fmt(x, 2) for x in pos] for n, pos in summary.player_seat_positions.items()],
        "seats",
    )
    pairs = _table(
        [
            "A",
            "B",
            "games",
            "deals",
            "A above B",
            "simultaneous 95%",
            "p (Holm)",
            "resolved",
            "mean score A−B",
            "simultaneous 95%",
        ],
        [
            [
                esc(p.a),
                esc(p.b),
                str(p.games),
                str(p.clusters),
                f"{p.a_above_b:.3f}",
                _pair_interval(p.sim_low, p.sim_high, p.low, p.high, 3),
                _pvalue(p.p_holm),
                _verdict(p.resolved, p.sim_low, p.sim_high, 0.5),
                f"{p.mean_score_diff:.2f}",
                _pair_interval(p.diff_sim_low, p.diff_sim_high, p.diff_low, p.diff_high, 2),
            ]
            for p in summary.head_to_head
        ],
        "pairs",
    )
    rating_pairs = _table(
        ["A", "B", "rating A−B", "simultaneous 95%", "p (Holm)", "resolved"],
        [
            [
                esc(p.a),
                esc(p.b),
                f"{p.diff:.0f}",
                _pair_interval(p.sim_low, p.sim_high, p.low, p.high, 0),
                _pvalue(p.p_holm),
                _verdict(p.resolved, p.sim_low, p.sim_high, 0.0),
            ]
            for p in summary.rating_pairs
        ],
        "pairs",
    )
    meta = (
        f"Game <b>{esc(summary.game)}</b> ({summary.num_players} players), {esc(summary.design)} design, "
        f"{summary.tables} tables × {summary.deals} deals: {summary.games_scheduled} games scheduled, "
        f"{summary.games_recorded} recorded, {summary.games_scored} scored, {summary.games_truncated} truncated, "
        f"{summary.games_with_faults} with player faults. Policy {esc(str(summary.settings['policy']))}."
    )
    method = summary.method
    terminal = [title_line(summary), *leaderboard_notes(summary), *fault_lines(summary)]
    footing = "".join(f"<p>{esc(line)}</p>" for line in footing_lines(summary))
    notes = "".join(f"<p>{esc(line)}</p>" for line in terminal)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{esc(summary.name)} – Arena tournament report</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }}
table {{ border-collapse: collapse; margin: 1em 0; font-size: 14px; }}
th, td {{ border: 1px solid #ccc; padding: 4px 8px; text-align: right; }}
th {{ background: #f3f3f3; }}
td:nth-child(2) {{ text-align: left; }}
.matrix td {{ padding: 0; text-align: center; }}
.matrix .h2h {{ padding: 4px 6px; }}
.na {{ color: #aaa; }}
small {{ color: #555; }}
{drill_css}
</style></head>
<body>
<h1 id="title">{esc(summary.name)}</h1>
<p id="meta">{meta}</p>
<h2>Leaderboard</h2>
<p>Ratings: {esc(method.model)}; {esc(method.scale)}; {esc(method.intervals)}.</p>
<div id="leaderboard">{board}</div>
<div id="notes">{notes}</div>
<h2>Ratings plot</h2>
<div id="plot">{plot}</div>
<div id="footing">{footing}</div>
<h2>Rating pairs</h2>
<p>Each pair's rating difference with its simultaneous interval, its Holm-adjusted p-value and verdict (the lines under the leaderboard list the same verdicts).</p>
<div id="rating-pairs">{rating_pairs}</div>
<h2>Head to head</h2>
<p>Share of shared games in which the row entrant finished above the column entrant (ties count half), with its simultaneous deal-level interval; ✓ = resolved (differs from 0.5 under Holm's control over all pairs).</p>
<p id="why-disagree">{esc(DISAGREE_WHY)}</p>
<div id="head-to-head">{_h2h_matrix(summary)}</div>
<div id="pairs">{pairs}</div>
<h2>Seat bias</h2>
<div id="seats">{seats}</div>
<h3>Mean finishing position by seat</h3>
<div id="player-seats">{per_player}</div>
{drilldown}
<script>
window.addEventListener("load", function () {{
  var img = document.querySelector("#plot img");
  var plot = document.getElementById("plot");
  plot.setAttribute("data-rendered", img && img.naturalWidth > 0 ? img.naturalWidth + "x" + img.naturalHeight : "no");
}});
</script>
</body></html>
"""


def write_html(
    summary: RatingsSummary,
    path: str | os.PathLike[str],
    *,
    results: str | os.PathLike[str] | None = None,
    prices: Mapping[str, ModelPrice] | None = None,
) -> Path:
    """Write :func:`html_report` atomically (a reader never sees half a page)."""
    from arena_core.outputs import atomic_write_text

    path = Path(path)
    atomic_write_text(path, html_report(summary, results=results, prices=prices))
    return path


def write_all(
    summary: RatingsSummary,
    directory: str | os.PathLike[str],
    *,
    results: str | os.PathLike[str] | None = None,
    prices: Mapping[str, ModelPrice] | None = None,
) -> dict[str, Path]:
    """summary.json, ratings.png and report.html in ``directory``; ``results`` (the results file)
    adds the entrants, their results and usage (cost at ``prices``), the game list and the
    decision viewer to the page."""
    directory = Path(directory)
    out = {
        "json": write_json(summary, directory / "summary.json"),
        "html": write_html(summary, directory / "report.html", results=results, prices=prices),
    }
    try:
        out["png"] = write_png(summary, directory / "ratings.png")
    except ImportError:
        pass
    return out
