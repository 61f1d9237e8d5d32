"""Reports of a tournament summary: JSON, PNG plot, self-contained HTML (the leaderboard's text,
which the terminal prints too, is :mod:`.leaderboard`)."""

from __future__ import annotations

import base64
import html
import io
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .leaderboard import (
    DISAGREE_WHY,
    FOOTING,
    HEADERS,
    OLD_FOOTING,
    fault_lines,
    footing_lines,
    footing_notes,
    interval_text,
    leaderboard_notes,
    leaderboard_rows,
    number_text,
    print_faults,
    print_leaderboard,
    title_line,
)
from .summary import RatingsSummary

if TYPE_CHECKING:
    from .usage import ModelPrice

__all__ = [
    "DISAGREE_WHY",
    "FOOTING",
    "OLD_FOOTING",
    "fault_lines",
    "footing_notes",
    "html_report",
    "leaderboard_notes",
    "print_faults",
    "print_leaderboard",
    "ratings_png",
    "title_line",
    "write_all",
    "write_html",
    "write_json",
    "write_png",
]


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
        return interval_text(lo, hi, digits)
    return "-" if plain_lo is None else interval_text(plain_lo, plain_hi, digits) + " (this pair alone)"


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
            [
                str(s.seat),
                str(s.games),
                number_text(s.mean_score, 2),
                number_text(s.mean_position, 2),
                number_text(s.win_share, 3),
            ]
            for s in summary.seats
        ],
        "seats",
    )
    seat_cols = [f"seat {i}" for i in range(summary.num_players)]
    per_player = _table(
        ["entrant"] + seat_cols,
        [[esc(n)] + [number_text(x, 2) for x in pos] for n, pos in summary.player_seat_positions.items()],
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
