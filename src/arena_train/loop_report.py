"""The arena loop's report (:mod:`arena_train.loop`): markdown tables of its seeds' result.json,
and a self-contained HTML page (``report.html``): the headline comparison and what it compares,
every entrant's seat (what it reads, how it answers, its mode), the ratings of stock, RL'd,
generalist, frontier and bots on one scale, the training curve against the generalist, the
per-seed before/after table, faults, and links to each tournament's own page with its
drill-down. Rendering only: every number comes from the loop's results, computed by
``arena_core.stats`` and ``arena_tournament.ratings``."""

from __future__ import annotations

import base64
import html
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .loop_plots import generalist_level, ratings_png, training_png

if TYPE_CHECKING:
    from .loop_config import LoopConfig


def _pct(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{100 * x:.1f}"


def _iv(iv: Sequence[float] | None, scale: float = 100.0) -> str:
    if iv is None:
        return "n/a"
    return f"[{scale * iv[0]:.1f}, {scale * iv[1]:.1f}]"


def _diff(d: dict[str, Any]) -> str:
    if d["interval"] is None:
        return "n/a"
    return f"{100 * d['diff']:+.1f} [{100 * d['interval'][0]:+.1f}, {100 * d['interval'][1]:+.1f}]"


BEFORE_AFTER_HEADERS = [
    "seed",
    "opponent",
    "before",
    "Wilson 95%",
    "deal-clustered 95%",
    "after",
    "Wilson 95%",
    "deal-clustered 95%",
    "after - before (paired by deal)",
    "resolved",
]


def before_after_rows(seeds: Sequence[dict[str, Any]]) -> list[list[str]]:
    rows = []
    for r in seeds:
        for spec, o in r["opponents"].items():
            b, a, d = o["before"], o["after"], o["after_minus_before"]
            rows.append(
                [
                    str(r["seed"]),
                    f"`{spec}`",
                    _pct(b["win_rate"]),
                    _iv(b["wilson"]),
                    _iv(b["deal_clustered"]),
                    _pct(a["win_rate"]),
                    _iv(a["wilson"]),
                    _iv(a["deal_clustered"]),
                    _diff(d),
                    "yes" if d["resolved"] else "no",
                ]
            )
    return rows


def _md(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return [
        "| " + " | ".join(headers) + " |",
        "|" + "---|" * len(headers),
        *("| " + " | ".join(r) + " |" for r in rows),
    ]


def before_after_table(seeds: Sequence[dict[str, Any]]) -> list[str]:
    """Per seed and opponent: the model's win rate before and after (Wilson and deal-clustered
    95% intervals) and the difference after - before paired by deal (in points; its interval
    clipped to the possible range, -100 to +100)."""
    return _md(BEFORE_AFTER_HEADERS, before_after_rows(seeds))


def _rating(row: dict[str, Any], key: str, digits: int = 0) -> str:
    low, high = row[f"{key}_low"], row[f"{key}_high"]
    span = "no interval" if low is None else f"[{low:.{digits}f}, {high:.{digits}f}]"
    return f"{row[key]:.{digits}f} {span}"


def ratings_table(seeds: Sequence[dict[str, Any]]) -> list[str]:
    """Per seed and tournament: every entrant's rating and rank with 95% intervals (seeds run
    before the loop rated its tournaments have none and are left out)."""
    rated = [r for r in seeds if r.get("ratings")]
    if not rated:
        return []
    rows = [
        [
            str(r["seed"]),
            phase,
            row["name"],
            _rating(row, "rating"),
            _rating(row, "rank"),
            str(row["games"]),
            str(row["faults"]),
        ]
        for r in rated
        for phase in ("before", "after")
        for row in r["ratings"][phase]["leaderboard"]
    ]
    return _md(["seed", "tournament", "entrant", "rating [95%]", "rank [95%]", "games", "faults"], rows)


def seats_rows(seeds: Sequence[dict[str, Any]]) -> list[list[str]]:
    """Every entrant of the last seed: name, role, who, what it reads, how it answers, its mode."""
    last = next((r for r in reversed(seeds) if r.get("seats")), None)
    if last is None:
        return []
    return [
        [
            n,
            s.get("role", ""),
            last["entrants"].get(n, ""),
            s.get("reads", "?"),
            s.get("answers", "?"),
            s.get("mode") or "-",
        ]
        for n, s in last["seats"].items()
    ]


SEATS_HEADERS = ["entrant", "role", "who", "reads", "answers", "mode"]


def headline(seeds: Sequence[dict[str, Any]]) -> str:
    """The sentence that says which comparison the headline makes, and whether it is like for like."""
    last = next((r for r in reversed(seeds) if r.get("seats")), None)
    if last is None:
        return "No seed has finished yet."
    seats = last["seats"]
    rl = seats.get("rl", {})
    says = (
        "The headline compares the trained model (`rl`) with the stock model (`stock`, before training) and the "
        "fixed opponents, on the same deals and seats before and after training"
    )
    front = seats.get("frontier")
    if front is None:
        return says + "; no frontier seat was played."
    if rl.get("reads") == front.get("reads"):
        return (
            f"{says}, and with the frontier model: like for like in what they read ({rl.get('reads')}); "
            f"`rl` answers in {rl.get('answers')}, so every move it makes is legal, while the frontier answers in "
            f"{front.get('answers')} and an unreadable answer is a fault (counted below)."
        )
    return (
        f"{says}, and with the frontier model, which is not like for like: `rl` reads {rl.get('reads')} and answers "
        f"by {rl.get('answers')}; the frontier reads {front.get('reads')} and answers in {front.get('answers')}. "
        "To compare on the frontier's terms, train with view = \"text\" (the game's text view, answers in the "
        "title's own action strings under constrained decoding)."
    )


def report_markdown(cfg: LoopConfig, seeds: list[dict[str, Any]], server: dict[str, Any] | None) -> str:
    """The loop's report: a section per measure, over every finished seed."""
    lines = [
        f"Loop `{cfg.name}` on `{cfg.game}`: {len(seeds)} seed(s); tournaments of {cfg.tournament.deals} deals x 2 seatings "
        f"per pair; the model plays at temperature {cfg.tournament.model_temperature!r}. Win rates in %, 95% intervals: "
        "Wilson (games independent) and deal-clustered; the difference after - before is paired by deal (bootstrap, "
        "clipped to its range).",
        "",
        headline(seeds),
        "",
        *before_after_table(seeds),
        *_seats_section(seeds),
        *_ratings_section(seeds),
        *_head_to_head_section(seeds),
        *_exact_section(cfg, seeds),
        *_faults_section(seeds),
        *_server_section(server),
    ]
    return "\n".join(lines) + "\n"


def _seats_section(seeds: Sequence[dict[str, Any]]) -> list[str]:
    rows = seats_rows(seeds)
    if not rows:
        return []
    return ["", "Seats (what each entrant reads and how it answers):", "", *_md(SEATS_HEADERS, rows)]


def _ratings_section(seeds: Sequence[dict[str, Any]]) -> list[str]:
    ratings = ratings_table(seeds)
    if not ratings:
        return []
    first = next(r for r in seeds if r.get("ratings"))
    legend = "; ".join(f"`{n}`: {who}" for n, who in first["entrants"].items())
    return [
        "",
        "Ratings among all entrants (`arena_tournament.ratings`: Plackett-Luce, Elo scale; "
        f"{first['ratings']['after']['method']}). The re-tournament seats the stock and the trained model "
        f"together, so its ratings put every entrant on one scale. Entrants: {legend}.",
        "",
        *ratings,
    ]


def _head_to_head_section(seeds: Sequence[dict[str, Any]]) -> list[str]:
    head = [r for r in seeds if r.get("rl_vs_stock")]
    if not head:
        return []
    return [
        "",
        "The trained model against the stock one (re-tournament, head to head): "
        + "; ".join(
            f"seed {r['seed']}: {_pct(r['rl_vs_stock']['win_rate'])}% of {r['rl_vs_stock']['games']} games, "
            f"Wilson {_iv(r['rl_vs_stock']['wilson'])}, clustered {_iv(r['rl_vs_stock']['deal_clustered'])}"
            for r in head
        ),
    ]


def _exact_section(cfg: LoopConfig, seeds: Sequence[dict[str, Any]]) -> list[str]:
    exact = [r for r in seeds if r.get("exact")]
    if not exact:
        return []
    keys = [k for k in exact[0]["exact"]["before"] if k != "step"]
    lines = [
        "",
        f"Exact values of the model's sampling policy (`{cfg.analysis}`; no games), before -> after:",
        "",
        "| seed | " + " | ".join(keys) + " |",
        "|---|" + "---|" * len(keys),
    ]
    for r in exact:
        b, a = r["exact"]["before"], r["exact"]["after"]
        lines.append(f"| {r['seed']} | " + " | ".join(f"{b[k]:.4f} -> {a[k]:.4f}" for k in keys) + " |")
    return lines


def _faults_lines(seeds: Sequence[dict[str, Any]]) -> list[str]:
    lines = [
        "Faults of the model (decisions / faults): "
        + "; ".join(
            f"seed {r['seed']}: before {r['faults']['before']['decisions']}/{r['faults']['before']['faults']}, "
            f"after {r['faults']['after']['decisions']}/{r['faults']['after']['faults']}"
            for r in seeds
        )
    ]
    frontier = [r for r in seeds if r.get("frontier")]
    if frontier:
        lines.append(
            "Frontier seat (evaluation only; games / cut by its cap / decisions / faults): "
            + "; ".join(
                f"seed {r['seed']} {phase} {f['games']}/{f['unplayed']}/{f['decisions']}/{f['faults']}"
                for r in frontier
                for phase, f in r["frontier"].items()
            )
        )
    return lines


def _faults_section(seeds: Sequence[dict[str, Any]]) -> list[str]:
    return [x for line in _faults_lines(seeds) for x in ("", line)]


def _server_line(server: dict[str, Any]) -> str:
    f = server["faults"]
    rates = ", ".join(f"{spec} {_pct(o['win_rate'])}% of {o['games']}" for spec, o in server["opponents"].items())
    return (
        f"Plumbing check (the stock model via mlx_lm.server + openai player, counted apart): {f['games']} games, "
        f"{f['decisions']} decisions, {f['faults']} faults; win rates {rates}; {server['wall_s']} s."
    )


def _server_section(server: dict[str, Any] | None) -> list[str]:
    return [] if server is None else ["", _server_line(server)]


# ---------------------------------------------------------------------- the page
def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], cls: str) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c).replace('`', '')}</td>" for c in row) + "</tr>" for row in rows
    )
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _img(make: Any, alt: str) -> str:
    try:
        png = make()
    except ImportError:
        return "<p>(install matplotlib for this plot)</p>"
    if png is None:
        return "<p>(nothing to plot yet)</p>"
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode()}">'


def anchor_label(cfg: LoopConfig) -> str | None:
    """The training's evaluation anchor, as an opponent label (its player spec), when it names one."""
    from arena_core.playerspec import as_player_spec

    train = cfg.train if cfg.train is not None else (cfg.stages or [])[-1].config
    anchor = (train.get("eval") or {}).get("anchor")
    if not anchor or anchor == "initial":
        return None
    try:
        return str(as_player_spec(anchor))
    except Exception:  # noqa: BLE001 - a spelling the report cannot read: no label, no level drawn
        return None


def _ratings_rows(seeds: list[dict[str, Any]]) -> list[list[str]]:
    return [
        [
            str(r["seed"]),
            row["name"],
            r["seats"].get(row["name"], {}).get("role", ""),
            _rating(row, "rating"),
            _rating(row, "rank"),
            str(row["games"]),
            str(row["faults"]),
        ]
        for r in seeds
        if r.get("ratings")
        for row in r["ratings"]["after"]["leaderboard"]
    ]


def _curve_note(seeds: list[dict[str, Any]], anchor: str | None) -> str:
    levels = [(r["seed"], generalist_level(r, anchor)) for r in seeds]
    level_text = "; ".join(
        f"seed {s}: the generalist won {_pct(lv[1])}% against {lv[0]} before training" for s, lv in levels if lv
    )
    return (
        f"The evaluation curve is the model's greedy win rate against the training's anchor ({anchor or 'none'}), "
        "with the mean reward and the entropy of its answers at each step"
        + (
            f"; the dashed line is the generalist's level against the same anchor ({level_text})."
            if level_text
            else "."
        )
    )


def _tournament_links(cfg: LoopConfig, seeds: list[dict[str, Any]]) -> str:
    if not cfg.tournament.pages:
        return "<li>(not written: tournament.pages = false; `arena report DIR` writes one)</li>"
    return "".join(
        f'<li><a href="seed{r["seed"]}/{phase}/report.html">seed {r["seed"]}, {phase} training</a></li>'
        for r in seeds
        for phase in ("before", "after")
    )


def _meta(cfg: LoopConfig, seeds: list[dict[str, Any]]) -> str:
    return (
        f"Game <b>{html.escape(cfg.game)}</b>; {len(seeds)} finished seed(s); each tournament is a round robin on "
        f"{cfg.tournament.deals} shared deals × 2 seatings per pair; the model plays at temperature "
        f"{html.escape(repr(cfg.tournament.model_temperature))}. Win rates in %, 95% intervals: Wilson (games "
        "independent) and deal-clustered; after − before is paired by deal (bootstrap, clipped to −100…+100)."
    )


_PAGE_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 14px; }
th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: right; }
th { background: #f3f3f3; }
td:nth-child(2), .seats td { text-align: left; }
#headline { font-size: 15px; background: #f7f7f0; padding: 8px; }
"""
_PAGE_SCRIPT = """
window.addEventListener("load", function () {
  document.querySelectorAll(".plot").forEach(function (plot) {
    var img = plot.querySelector("img");
    plot.setAttribute("data-rendered", img && img.naturalWidth > 0 ? img.naturalWidth + "x" + img.naturalHeight : "no");
  });
});
"""


def report_html(cfg: LoopConfig, seeds: list[dict[str, Any]], server: dict[str, Any] | None) -> str:
    """The loop's self-contained page (nothing fetched): see the module docstring."""
    esc = html.escape
    anchor = anchor_label(cfg)
    faults = "".join(f"<p>{esc(line)}</p>" for line in _faults_lines(seeds)) if seeds else ""
    server_html = f"<p>{esc(_server_line(server))}</p>" if server is not None else ""
    ratings_headers = ["seed", "entrant", "role", "rating [95%]", "rank [95%]", "games", "faults"]
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{esc(cfg.name)} – Arena loop report</title>
<style>{_PAGE_CSS}</style></head>
<body>
<h1 id="title">{esc(cfg.name)}</h1>
<p id="meta">{_meta(cfg, seeds)}</p>
<p id="headline">{esc(headline(seeds)).replace("`", "")}</p>
<h2>Seats</h2>
<p>What each entrant reads and how it answers (from the identities the tournaments record); mode is the tournament's: constrained picks a legal move, free writes text the game parses.</p>
<div id="seats">{_table(SEATS_HEADERS, seats_rows(seeds), "seats")}</div>
<h2>Ratings on one scale</h2>
<p>The re-tournament seats the stock and the trained model beside the generalist, the frontier and the bots: Plackett-Luce ratings on the Elo scale with 95% deal-clustered intervals (arena_tournament.ratings).</p>
<div id="ratings">{_table(ratings_headers, _ratings_rows(seeds), "ratings")}</div>
<div id="ratings-plot" class="plot">{_img(lambda: ratings_png(seeds), "ratings with 95% intervals")}</div>
<h2>Training</h2>
<p>{esc(_curve_note(seeds, anchor))}</p>
<div id="training-plot" class="plot">{_img(lambda: training_png(seeds, anchor), "training curves")}</div>
<h2>Before and after, per seed</h2>
<div id="per-seed">{_table(BEFORE_AFTER_HEADERS, before_after_rows(seeds), "before-after")}</div>
<h2>Faults</h2>
<div id="faults">{faults}{server_html}</div>
<h2>Tournaments</h2>
<p>Each tournament's own page: its leaderboard, every game, and a viewer of each decision (the seat's view, the prompt and the answer in full, usage).</p>
<ul id="tournaments">{_tournament_links(cfg, seeds)}</ul>
<script>{_PAGE_SCRIPT}</script>
</body></html>
"""
