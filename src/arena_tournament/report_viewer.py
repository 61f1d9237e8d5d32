"""The drill-down's HTML, script and styles: the entrants with their results and usage, the
game list with its filters (by entrant and result), and the step-through game viewer (the seat's
view of the position, the prompt, the answer, the action, the decision's tokens, latency and cost).

Everything is inline (one self-contained page). The data travel as one JSON element: the text
table (each distinct text once) and the games; the script builds the viewer from them.
``report.html#entrant=NAME&result=lost&game=KEY&step=N`` (values percent-encoded) opens the page
filtered and a game at a decision.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from arena_core.outputs import scrub_secrets

from .report_games import RESULTS, TEXT_LIMIT, Drilldown, drilldown, load_games_and_records
from .summary import RatingsSummary
from .usage import ModelPrice, UsageTotals, dollars, unused_prices


def identity_text(ident: Mapping[str, Any] | None) -> str:
    if not ident:
        return "-"
    parts = [str(ident.get("class") or "?")]
    if ident.get("params"):
        parts.append(json.dumps(ident["params"], sort_keys=True))
    if ident.get("versions"):
        parts.append(", ".join(f"{k} {v}" for k, v in sorted(ident["versions"].items())))
    if ident.get("digest"):
        parts.append(f"digest {ident['digest']}")
    return "; ".join(parts)


def _esc(x: Any) -> str:
    return html.escape(str(x))


def _scores(returns: Any) -> str:
    if returns is None:
        return "no result"
    return ", ".join(f"{r:g}" for r in returns)


def _link(name: str, result: str, count: int) -> str:
    if not count:
        return "0"
    return f'<a class="filter-link" href="#entrant={quote(name, safe="")}&amp;result={quote(result)}">{count}</a>'


def entrants_html(rows: list[dict[str, Any]]) -> str:
    body = "".join(
        "<tr>"
        f"<td>{_esc(r['name'])}</td><td>{_esc(r['player'])}</td>"
        f"<td><code>{_esc(json.dumps(r['options'], sort_keys=True)) if r['options'] else '-'}</code></td>"
        f"<td>{r['seed']}</td><td>{_esc(r['mode'])}</td><td><small>{_esc(identity_text(r.get('identity')))}</small></td>"
        "</tr>"
        for r in rows
    )
    return (
        '<table class="entrants"><thead><tr><th>entrant</th><th>player</th><th>options (secrets removed)</th>'
        f"<th>seed</th><th>mode</th><th>resolved identity</th></tr></thead><tbody>{body}</tbody></table>"
    )


def _seconds(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def results_html(data: Drilldown) -> str:
    """Per entrant: games won, tied, lost and without a result (each a link that filters the game
    list), games with its faults, then its usage from the records: decisions, model calls, tokens,
    latency (mean, 95th percentile, total) and cost (total and per recorded game)."""
    names = [r["name"] for r in data.entrants]
    counts = {n: dict.fromkeys((*RESULTS, "faulted", "games", "recorded"), 0) for n in names}
    for g in data.games:
        for name, result in g["outcomes"].items():
            c = counts.setdefault(name, dict.fromkeys((*RESULTS, "faulted", "games", "recorded"), 0))
            c[result] += 1
            c["games"] += 1
            c["faulted"] += name in g["faulted"]
            c["recorded"] += g["usage"] is not None
    rows = []
    for name in names:
        c, u = counts[name], data.usage.get(name, UsageTotals())
        per_game = "-" if u.calls == 0 else "unknown" if u.cost is None else dollars(u.cost / max(1, c["recorded"]))
        rows.append(
            f'<tr data-entrant="{_esc(name)}"><td>{_esc(name)}</td><td>{c["games"]}</td>'
            + "".join(f"<td>{_link(name, r, c[r])}</td>" for r in RESULTS)
            + f"<td>{_link(name, 'faulted', c['faulted'])}</td>"
            f"<td>{u.decisions}</td><td>{u.calls}</td>"
            f"<td>{u.tokens_in:,}" + (f" ({u.cached_tokens:,} cached)" if u.cached_tokens else "") + "</td>"
            f"<td>{u.tokens_out:,}</td>"
            f"<td>{_seconds(u.latency_mean_s)}</td><td>{_seconds(u.latency_quantile_s(0.95))}</td>"
            f"<td>{'-' if not u.latencies else f'{u.latency_total_s:.1f}'}</td>"
            f'<td class="cost">{_esc(u.cost_text())}</td><td class="cost">{_esc(per_game)}</td></tr>'
        )
    head = (
        "<tr><th>entrant</th><th>games</th><th>won</th><th>tied</th><th>lost</th><th>no result</th>"
        "<th>with its faults</th><th>decisions</th><th>model calls</th><th>tokens in</th><th>tokens out</th>"
        "<th>latency mean (s)</th><th>latency p95 (s)</th><th>latency total (s)</th><th>cost</th><th>cost per game</th></tr>"
    )
    return f'<table class="results"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'


def usage_notes(data: Drilldown) -> list[str]:
    """Plain lines under the results table: where the numbers come from, prices missing or unused."""
    recorded = sum(g["usage"] is not None for g in data.games)
    lines = [
        f"Results count every listed game ({len(data.games)}); usage comes from the decisions of the "
        f"{recorded} games with records (tokens and latency as each decision's telemetry reports them; "
        "latency is the wall time of the decision, as the player or the game loop measured it)."
    ]
    if data.prices:
        lines.append(
            "Cost: tokens at the price table's USD per million tokens ("
            + "; ".join(
                f"{m}: prompt {p.prompt:g}, completion {p.completion:g}"
                + ("" if p.cached_prompt is None else f", cached prompt {p.cached_prompt:g}")
                for m, p in sorted(data.prices.items())
            )
            + "); an answer from a player's response cache costs nothing."
        )
    else:
        lines.append('Cost: no price table was given ([prices."MODEL"] in the tournament config).')
    unpriced: dict[str, int] = {}
    for u in data.usage.values():
        for model, n in u.unpriced.items():
            unpriced[model] = unpriced.get(model, 0) + n
    if unpriced:
        lines.append(
            "Cost unknown (never counted as 0) for model calls without a price: "
            + ", ".join(f"{m} ({n} calls)" for m, n in sorted(unpriced.items()))
            + "; add them to the price table (a local model at prompt = 0, completion = 0)."
        )
    unused = unused_prices(data.prices, data.usage.values())
    if unused:
        lines.append("The price table names models no decision used: " + ", ".join(unused) + " (a misspelt name?).")
    return lines


def _result_text(g: dict[str, Any]) -> str:
    by = g["outcomes"]
    if g["returns"] is None:
        return "no result"
    won = [n for n, r in by.items() if r == "won"]
    tied = [n for n, r in by.items() if r == "tied"]
    return f"won: {won[0]}" if won else "tied first: " + ", ".join(tied)


def games_html(rows: list[dict[str, Any]]) -> str:
    out = []
    for i, r in enumerate(rows):
        seats = ", ".join(f"{s}: {_esc(name)}" for s, name in enumerate(r["seats"]))
        faults = (
            "; ".join(
                f'<span class="fault" title="{_esc(f["detail"] or "")}">seat {f["seat"]} ({_esc(f["entrant"])}) {_esc(f["kind"])}</span>'
                for f in r["faults"]
            )
            or "-"
        )
        unplayed = r["reason"] == "unplayed"
        view = (
            f'<button type="button" class="view" data-game="{i}">decisions ({len(r["decisions"])})</button>'
            if r["decisions"] is not None
            else f'<span class="na">{"not played" if unplayed else "not embedded (page size)" if r.get("omitted") else "no record"}</span>'
        )
        reason = _esc(r["reason"]) + (f" (offender seat {r['offender']})" if r["offender"] is not None else "")
        if unplayed and r["detail"]:
            reason += f": {_esc(r['detail'])}"
        u = r.get("usage")
        usage = (
            '<td class="na">-</td><td class="na">-</td><td class="na">-</td>'
            if u is None
            else f"<td>{u['tokens_in']:,} / {u['tokens_out']:,}</td><td>{u['latency_s']:.2f}</td>"
            f'<td class="cost">{_esc(u["cost"])}</td>'
        )
        out.append(
            f'<tr class="game" id="game-{i}" data-game="{i}" data-key="{_esc(r["key"])}" '
            f'data-outcomes="{_esc(json.dumps(r["outcomes"]))}" data-faulted="{_esc(json.dumps(r["faulted"]))}">'
            f"<td>{_esc(r['key'])}</td><td>{r['deal']}</td><td>{seats}</td><td>{_esc(_scores(r['returns']))}</td>"
            f"<td>{_esc(_result_text(r))}</td><td>{reason}</td><td>{r['plies']}</td><td>{faults}</td>{usage}<td>{view}</td></tr>"
        )
    return (
        '<table class="games"><thead><tr><th>game</th><th>deal</th><th>seats</th><th>scores</th><th>result</th><th>end</th>'
        "<th>decisions</th><th>faults</th><th>tokens in / out</th><th>latency (s)</th><th>cost</th><th>view</th></tr></thead>"
        f"<tbody>{''.join(out)}</tbody></table>"
    )


def filter_html(data: Drilldown) -> str:
    names = [r["name"] for r in data.entrants]
    entrants = "".join(f'<option value="{_esc(n)}">{_esc(n)}</option>' for n in names)
    results = "".join(f'<option value="{r}">{r}</option>' for r in RESULTS)
    return (
        '<div id="game-filter">Show games of <select id="filter-entrant"><option value="">any entrant</option>'
        f'{entrants}</select> with result <select id="filter-result"><option value="">any</option>{results}'
        '<option value="faulted">a fault</option></select> <span id="filter-count"></span>'
        "<br><small>With an entrant chosen, the result is that entrant's (a fault: one of its decisions failed); "
        "with any entrant, a game matches when one of its seats had that result.</small></div>"
    )


def pack(data: Any) -> str:
    """The viewer's data as the page holds it: JSON, gzip-compressed (no timestamp: the same data
    give the same page), base64-encoded; nothing in it can close the script element."""
    raw = json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=6, mtime=0)).decode("ascii")


def unpack(text: str) -> Any:
    """What :func:`pack` packed (for tests and tools that read a page)."""
    return json.loads(gzip.decompress(base64.b64decode(text)))


VIEWER_JS = r"""
(function () {
  var games = [], T = [], L = [];
  var box = document.getElementById("game-viewer");
  var current = null, step = 0, ready = false;
  function text(i) {  // text i: runs of line numbers [first, count, ...] into the table of lines
    if (i == null) return null;
    var runs = T[i], out = [];
    for (var r = 0; r < runs.length; r += 2) for (var n = runs[r]; n < runs[r] + runs[r + 1]; n++) out.push(L[n]);
    return out.join("\n");
  }
  function el(tag, cls, content) { var e = document.createElement(tag); if (cls) e.className = cls; if (content != null) e.textContent = content; return e; }
  function field(dl, name, value, cls) {
    dl.appendChild(el("dt", null, name));
    var dd = el("dd", cls || null); dd.appendChild(el("pre", null, value == null ? "(not recorded)" : String(value))); dl.appendChild(dd);
    return dd;
  }
  function promptField(dl, d) {
    dl.appendChild(el("dt", null, "prompt"));
    var dd = el("dd", "prompt");
    if (d.prompt_note) dd.appendChild(el("p", "note", d.prompt_note));
    if (d.prompt == null) { if (!d.prompt_note) dd.appendChild(el("pre", null, "(not recorded: this player was sent no prompt)")); }
    else d.prompt.forEach(function (m) {
      var msg = el("div", "message");
      if (m[0]) msg.appendChild(el("span", "role", m[0]));
      msg.appendChild(el("pre", null, text(m[1]))); dd.appendChild(msg);
    });
    dl.appendChild(dd);
  }
  function usageText(u) {
    if (!u) return null;
    var parts = [];
    if (u.call) parts.push("tokens " + u.tokens_in + " in" + (u.cached ? " (" + u.cached + " cached)" : "") + ", " + u.tokens_out + " out" + (u.model ? " (" + u.model + ")" : "") + (u.cache_hit ? ", from the response cache" : ""));
    else parts.push("no model call");
    parts.push("latency " + (u.latency_s == null ? "not recorded" : u.latency_s + " s"));
    parts.push("cost " + u.cost);
    return parts.join("; ");
  }
  function show() {
    box.innerHTML = "";
    if (!ready) { box.appendChild(el("p", "na", box.getAttribute("data-error") || "Unpacking the games' decisions…")); return; }
    if (current === null) { box.appendChild(el("p", "na", "Choose a game above (its 'decisions' button).")); return; }
    var g = games[current], ds = g.decisions || [];
    box.setAttribute("data-game", g.key); box.setAttribute("data-step", String(step));
    box.appendChild(el("h3", null, "Game " + g.key + " (deal " + g.deal + "): " + g.seats.map(function (s, i) { return i + ": " + s; }).join(", ")));
    var nav = el("div", "nav");
    var prev = el("button", null, "◀ previous"); prev.type = "button"; prev.id = "prev-step"; prev.disabled = step <= 0;
    var next = el("button", null, "next ▶"); next.type = "button"; next.id = "next-step"; next.disabled = step >= ds.length - 1;
    prev.onclick = function () { if (step > 0) { step--; show(); } };
    next.onclick = function () { if (step < ds.length - 1) { step++; show(); } };
    nav.appendChild(prev); nav.appendChild(el("span", "pos", ds.length ? " decision " + (step + 1) + " of " + ds.length + " " : " no decisions ")); nav.appendChild(next);
    box.appendChild(nav);
    if (g.views_note) box.appendChild(el("p", "note", "Seat views: " + g.views_note));
    if (ds.length) {
      var d = ds[step], dl = el("dl", "decision");
      dl.id = "decision";
      field(dl, "ply", d.ply);
      field(dl, "player", "seat " + d.seat + " (" + d.entrant + ")");
      field(dl, "seat's view", d.view == null ? "(not available)" : text(d.view), "view");
      promptField(dl, d);
      (d.earlier || []).forEach(function (a, k) { field(dl, "answer " + (k + 1) + " (retried)", text(a), "answer earlier"); });
      var bot = d.usage && !d.usage.call && d.answer == null && d.attempted == null;
      field(dl, "answer", d.answer != null ? text(d.answer) : bot ? "(no text: the player answered with an action)" : d.attempted, "answer");
      if (d.kind === "step") field(dl, "action", d.action + (d.label != null && d.label !== String(d.action) ? " (" + d.label + ")" : "") + (d.substituted ? " (played by the policy in place of the answer)" : ""), "action");
      else field(dl, "fault", (d.fault || "fault") + ": policy " + d.verdict + ": " + (d.detail || ""), "fault");
      if (d.usage) field(dl, "usage", usageText(d.usage), "usage");
      box.appendChild(dl);
    }
    if (g.final && g.final.length) {
      var fin = el("details", "final"); fin.id = "final-views"; fin.open = step >= ds.length - 1;
      fin.appendChild(el("summary", null, "At the end"));
      g.final.forEach(function (f) { fin.appendChild(el("p", "role", "seat " + f.seat + " (" + f.entrant + ") sees:")); fin.appendChild(el("pre", null, text(f.view))); });
      box.appendChild(fin);
    }
    box.appendChild(el("p", "na", "Final scores: " + (g.returns ? g.returns.join(", ") : "no result") + "; end: " + g.reason));
  }
  function open(i, s) { current = i; step = Math.max(0, Math.min(s || 0, ((games[i] || {}).decisions || [1]).length - 1)); show(); }
  document.querySelectorAll("button.view").forEach(function (b) {
    b.addEventListener("click", function () { if (ready) { open(+b.getAttribute("data-game"), 0); box.scrollIntoView(); } });
  });
  // the game list's filters: each row carries its entrants' results (they work before the data are unpacked)
  var who = document.getElementById("filter-entrant"), what = document.getElementById("filter-result");
  var rows = document.querySelectorAll("tr.game"), count = document.getElementById("filter-count");
  function matches(row) {
    var e = who.value, r = what.value;
    var outcomes = JSON.parse(row.getAttribute("data-outcomes")), faulted = JSON.parse(row.getAttribute("data-faulted"));
    if (e && !(e in outcomes)) return false;
    if (!r) return true;
    if (r === "faulted") return e ? faulted.indexOf(e) >= 0 : faulted.length > 0;
    if (e) return outcomes[e] === r;
    for (var k in outcomes) if (outcomes[k] === r) return true;
    return false;
  }
  function filter() {
    var shown = 0;
    rows.forEach(function (row) { var ok = matches(row); row.hidden = !ok; shown += ok; });
    count.textContent = "showing " + shown + " of " + rows.length + " games";
    count.setAttribute("data-shown", String(shown));
  }
  who.addEventListener("change", filter); what.addEventListener("change", filter);
  // report.html#entrant=NAME&result=lost&game=KEY&step=N: the list filtered, a game opened at a decision
  // (values percent-encoded: keys hold entrant names, which may hold '&')
  function fromHash() {
    var want = {};
    (location.hash || "").replace(/^#/, "").split("&").forEach(function (kv) {
      var at = kv.indexOf("="); if (at > 0) want[kv.slice(0, at)] = decodeURIComponent(kv.slice(at + 1));
    });
    if (want.entrant != null) who.value = want.entrant;
    if (want.result != null) what.value = want.result;
    filter();
    if (ready && want.game != null) {
      for (var i = 0; i < games.length; i++) { if (games[i].key === want.game && games[i].decisions) { open(i, want.step ? +want.step : 0); break; } }
    }
    if (current === null) show();
  }
  window.addEventListener("hashchange", fromHash);
  fromHash();
  // the viewer's data: JSON, gzip-compressed and base64-encoded (a MegaGem view repeats most of the last one)
  (async function () {
    try {
      var packed = document.getElementById("game-data");
      var bytes = Uint8Array.from(atob(packed.textContent.trim()), function (c) { return c.charCodeAt(0); });
      var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      var data = JSON.parse(await new Response(stream).text());
      games = data.games; T = data.texts; L = data.lines; ready = true;
      box.setAttribute("data-ready", "yes");
    } catch (err) {
      box.setAttribute("data-error", "This browser could not unpack the decisions (" + err + "); the viewer needs " +
        "DecompressionStream (Chrome 80, Firefox 113, Safari 16.4 or later). `arena replay DIR --game KEY --show` prints any game.");
    }
    fromHash();
  })();
})();
"""

CSS = """
.games td, .entrants td, .results td:first-child { text-align: left; }
.games td:nth-child(2), .games td:nth-child(7) { text-align: right; }
.results td { text-align: right; }
#game-filter { margin: 0.5em 0; }
#game-viewer { border: 1px solid #ccc; padding: 0.5em 1em; margin: 1em 0; }
#game-viewer dl { display: grid; grid-template-columns: 8em 1fr; gap: 4px 12px; }
#game-viewer dt { font-weight: bold; }
#game-viewer dd { margin: 0; }
#game-viewer pre { white-space: pre-wrap; margin: 0; max-height: 24em; overflow: auto; background: #fafafa; padding: 4px; }
#game-viewer dd.view pre { background: #f2f7ff; }
#game-viewer .message { margin-bottom: 4px; }
#game-viewer .role { font-size: 12px; color: #555; font-weight: bold; }
#game-viewer .note { font-size: 12px; color: #555; margin: 0 0 4px 0; }
button.view { font-size: 12px; }
"""


def drilldown_html(data: Drilldown) -> str:
    """Entrants, their results and usage, the filtered game list and the game viewer (HTML + its inline script)."""
    games = data.games
    viewable = sum(1 for g in games if g["decisions"] is not None)
    without_views = sum(1 for g in games if g["decisions"] is not None and g["views_note"])
    note = (
        f"{len(games)} games; {viewable} with decision records"
        + (
            ""
            if viewable == len(games)
            else " (the others were not played, were played before records were kept, or are past "
            "the page's size limit: `arena replay DIR --game KEY` re-runs any recorded game)"
        )
        + (f"; {without_views} of them without the seats' views (the viewer says why)" if without_views else "")
        + ". Each decision shows the acting seat's view of the position (the game's own human view, from a replay "
        f"of the record), the prompt and the answer in full (up to {TEXT_LIMIT:,} characters each, secrets removed), "
        "the action, and its tokens, latency and cost." + (f" Note: {scrub_secrets(data.note)}" if data.note else "")
    )
    payload = {"lines": data.texts.lines, "texts": data.texts.items, "games": games}
    notes = "".join(f"<p>{_esc(line)}</p>" for line in usage_notes(data))
    return f"""
<h2>Entrants</h2>
<div id="entrants">{entrants_html(data.entrants)}</div>
<h2>Results and usage</h2>
<div id="results">{results_html(data)}</div>
<div id="usage-notes">{notes}</div>
<h2>Games</h2>
<p id="games-note">{_esc(note)}</p>
{filter_html(data)}
<div id="games">{games_html(games)}</div>
<h2>Game viewer</h2>
<div id="game-viewer"></div>
<script type="application/octet-stream" id="game-data" data-encoding="gzip+base64">{pack(payload)}</script>
<script>{VIEWER_JS}</script>
"""


def drilldown_for(
    summary: RatingsSummary,
    results: str | os.PathLike[str],
    *,
    prices: Mapping[str, ModelPrice] | None = None,
) -> str:
    """The drill-down HTML of the tournament whose results are at ``results``."""
    games, records, header, note = load_games_and_records(results)
    try:
        from .entrants import build_game

        game = build_game(header.schedule)
    except Exception as exc:  # noqa: BLE001 - a game not installed here: the page says so, without views
        game = None
        note = " ".join(x for x in (note, f"the game could not be built here ({type(exc).__name__}: {exc})") if x)
    modes = {r.name: r.mode for r in summary.leaderboard if r.mode}
    data = drilldown(
        header.schedule.entrants,
        games,
        records,
        game=game,
        modes=modes,
        identities=getattr(header, "identities", None),
        prices=prices,
        note=note,
    )
    return drilldown_html(data)
