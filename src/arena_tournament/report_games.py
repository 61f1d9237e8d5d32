"""The HTML report's drill-down: each entrant described, every game listed, and a step-through
viewer of any recorded game's decisions (prompt, answer, action), all inside the one page.

The game list comes from the results file; the decisions from the per-game episode records kept
beside it (when the run kept them). Text shown in the page is scrubbed of secrets, then cut.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from arena_core.errors import ConfigError
from arena_core.outputs import scrub_secrets
from arena_core.playerspec import as_player_spec

from .identity import is_secret_name
from .summary import RatingsSummary

#: characters of one prompt or answer shown in the page (the record keeps the whole text)
TEXT_LIMIT = 4000
#: characters of decision data the page embeds; games past it are listed without the viewer
#: (their records stay in records.jsonl.gz: `arena replay DIR --game KEY`)
PAGE_DECISIONS_BUDGET = 30_000_000


# ---------------------------------------------------------------------- data
def _cut(text: Any, limit: int = TEXT_LIMIT) -> str | None:
    if text is None:
        return None
    text = scrub_secrets(text if isinstance(text, str) else json.dumps(text, default=str))
    cut: str = text if len(text) <= limit else text[: limit - 1] + f"… ({len(text)} characters in all)"
    return cut


def public_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """An entrant's options without secrets: credential-named keys dropped to ``***`` (a key
    that names an environment variable, such as ``api_key_env``, is kept), values scrubbed."""
    out: dict[str, Any] = {}
    for key, value in options.items():
        if is_secret_name(str(key)):
            out[key] = "***"
        elif isinstance(value, str):
            out[key] = scrub_secrets(value)
        elif isinstance(value, Mapping):
            out[key] = public_options(value)
        else:
            out[key] = value
    return out


def _public_spec(entrant: Mapping[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """The player name (or factory) and the options without secrets of a stored entrant, whatever
    spelling wrote its spec (results files written before specs were parsed on entry too)."""
    options = dict(entrant.get("options") or {})
    player = entrant.get("player")
    if player is None:
        return entrant.get("factory"), public_options(options)
    try:
        spec = as_player_spec(player)
    except ConfigError:
        return scrub_secrets(str(player)), public_options(options)
    return spec.name, public_options({**spec.options, **options})


def _field(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _dump(obj: Any) -> Any:
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json")
    return obj


def entrant_rows(
    entrants: Iterable[Any], modes: Mapping[str, str], identities: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Name, player (or factory), options without secrets, seed and mode of each entrant, and
    its resolved identity where the results keep one (class, every parameter after defaults,
    distribution versions, digest)."""
    rows = []
    for e in entrants:
        e = _dump(e)
        ident = dict((identities or {}).get(e["name"]) or {})
        player, options = _public_spec(e)
        rows.append(
            {
                "name": e["name"],
                "player": player,
                "options": options,
                "seed": e.get("seed", 0),
                "mode": modes.get(e["name"], "-"),
                "identity": {
                    "class": ident.get("class"),
                    "params": public_options(ident.get("params") or {}),
                    "versions": ident.get("versions") or {},
                    "digest": ident.get("digest"),
                }
                if ident
                else None,
            }
        )
    return rows


def _identity_text(ident: Mapping[str, Any] | None) -> str:
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


def _mode_of(telemetry: Mapping[str, Any]) -> str | None:
    mode = telemetry.get("mode")
    if mode in ("free", "free_text"):
        return "free"
    if mode is not None:
        return str(mode)
    return None


def decisions_of(record: Any, seats: list[str]) -> list[dict[str, Any]]:
    """Each event of an episode record as the viewer shows it."""
    out = []
    for ev in _field(record, "events", []) or []:
        ev = _dump(ev)
        tel = ev.get("telemetry") or {}
        seat = ev.get("player")
        item = {
            "kind": ev.get("type"),
            "ply": ev.get("ply"),
            "seat": seat,
            "entrant": seats[seat] if isinstance(seat, int) and 0 <= seat < len(seats) else "?",
            "prompt": _cut(tel.get("prompt")),
            "prompt_hash": tel.get("prompt_sha256") or tel.get("prompt_hash"),
            "answer": _cut(tel.get("response", tel.get("raw_answer"))),
        }
        if ev.get("type") == "step":
            item.update(action=ev.get("action"), substituted=bool(ev.get("substituted")))
        else:
            item.update(
                action=None,
                verdict=ev.get("verdict"),
                fault=ev.get("kind") or tel.get("fault") or tel.get("error_type"),
                attempted=_cut(ev.get("attempted"), 500),
                detail=_cut(ev.get("detail"), 1000),
            )
        out.append(item)
    return out


def game_rows(games: Iterable[Any], records: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """One row per recorded game: deal, seats, scores, end reason, faults; with its decisions
    when the game's episode record is available."""
    rows = []
    records = records or {}
    budget = PAGE_DECISIONS_BUDGET
    for g in games:
        g = _dump(g)
        seats = list(g.get("seats") or [])
        faults = [
            {
                "seat": f.get("seat"),
                "entrant": f.get("player"),
                "kind": f.get("kind") or f.get("verdict"),
                "detail": _cut(f.get("detail"), 300),
            }
            for f in (_dump(x) for x in g.get("faults") or [])
        ]
        row = {
            "key": g.get("key"),
            "deal": g.get("deal"),
            "table": g.get("table"),
            "rotation": g.get("rotation"),
            "seats": seats,
            "returns": g.get("returns"),
            "reason": g.get("reason"),
            "offender": g.get("offender"),
            "plies": g.get("plies"),
            "faults": faults,
            "decisions": None,
            "detail": _cut(g.get("detail"), 300) or "",
        }
        rec = records.get(g.get("key"))
        if rec is not None and budget > 0:
            row["decisions"] = decisions_of(rec, seats)
            budget -= sum(100 + len(d.get("prompt") or "") + len(d.get("answer") or "") for d in row["decisions"])
        row["omitted"] = rec is not None and row["decisions"] is None
        rows.append(row)
    return rows


def modes_from_records(games: Iterable[Any], records: Mapping[str, Any] | None) -> dict[str, str]:
    """Each entrant's mode as its decisions' telemetry states it (``free``: answers in free text,
    parsed; otherwise ``constrained``: picks among the legal moves), where the summary has none."""
    seen: dict[str, set[str]] = {}
    for g in games:
        g = _dump(g)
        rec = (records or {}).get(g.get("key"))
        if rec is None:
            continue
        seats = list(g.get("seats") or [])
        for ev in _field(rec, "events", []) or []:
            ev = _dump(ev)
            seat = ev.get("player")
            if not isinstance(seat, int) or seat >= len(seats):
                continue
            mode = _mode_of(ev.get("telemetry") or {}) or "constrained"
            seen.setdefault(seats[seat], set()).add(mode)
    return {name: ", ".join(sorted(modes)) for name, modes in seen.items()}


def load_games_and_records(results: str | os.PathLike[str]) -> tuple[list[Any], dict[str, Any], Any, str]:
    """(games, records by game key, the results' schedule line, note) of a results file or its directory.

    Records come from the per-game episode records beside the results, when the run kept them;
    a records file that cannot be read leaves the games listed without decisions, and ``note``
    says why (the page shows it)."""
    from arena_core.errors import ArenaError

    from .results import load_results

    path = Path(results)
    header, games = load_results(path)
    directory = path if path.is_dir() else path.parent
    records: dict[str, Any] = {}
    from . import records as records_module  # written by tournaments that keep game records

    reader = getattr(records_module, "read_game_records", None)
    if reader is not None:
        try:
            found = reader(directory)
        except (ArenaError, OSError, ValueError) as exc:  # damaged records: the games are still listed
            return list(games), {}, header, f"the game records could not be read: {exc}"
        if isinstance(found, Mapping):
            records = dict(found)
        else:
            for item in found or ():
                if isinstance(item, tuple) and len(item) == 2:
                    records[item[0]] = item[1]
                else:
                    key = _field(item, "key") or _field(_field(item, "header"), "key")
                    if key is not None:
                        records[key] = item
    return list(games), records, header, ""


def drilldown_for(summary: RatingsSummary, results: str | os.PathLike[str]) -> str:
    """The drill-down HTML of the tournament whose results are at ``results``."""
    games, records, header, note = load_games_and_records(results)
    modes = {r.name: r.mode for r in summary.leaderboard if r.mode}
    modes = {**modes_from_records(games, records), **modes}
    entrants = entrant_rows(header.schedule.entrants, modes, getattr(header, "identities", None))
    return drilldown_html(entrants, game_rows(games, records), note=note)


# ---------------------------------------------------------------------- HTML
def _scores(returns: Any) -> str:
    if returns is None:
        return "no result"
    return ", ".join(f"{r:g}" for r in returns)


def entrants_html(rows: list[dict[str, Any]]) -> str:
    esc = html.escape
    body = "".join(
        "<tr>"
        f"<td>{esc(r['name'])}</td><td>{esc(str(r['player']))}</td>"
        f"<td><code>{esc(json.dumps(r['options'], sort_keys=True)) if r['options'] else '-'}</code></td>"
        f"<td>{r['seed']}</td><td>{esc(r['mode'])}</td><td><small>{esc(_identity_text(r.get('identity')))}</small></td>"
        "</tr>"
        for r in rows
    )
    return (
        '<table class="entrants"><thead><tr><th>entrant</th><th>player</th><th>options (secrets removed)</th>'
        f"<th>seed</th><th>mode</th><th>resolved identity</th></tr></thead><tbody>{body}</tbody></table>"
    )


def games_html(rows: list[dict[str, Any]]) -> str:
    esc = html.escape
    out = []
    for i, r in enumerate(rows):
        seats = ", ".join(f"{s}: {esc(name)}" for s, name in enumerate(r["seats"]))
        faults = (
            "; ".join(
                f'<span class="fault" title="{esc(f["detail"] or "")}">seat {f["seat"]} ({esc(str(f["entrant"]))}) {esc(str(f["kind"]))}</span>'
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
        reason = esc(str(r["reason"])) + (f" (offender seat {r['offender']})" if r["offender"] is not None else "")
        if unplayed and r["detail"]:
            reason += f": {esc(r['detail'])}"
        out.append(
            f'<tr class="game" id="game-{i}" data-key="{esc(str(r["key"]))}">'
            f"<td>{esc(str(r['key']))}</td><td>{r['deal']}</td><td>{seats}</td><td>{esc(_scores(r['returns']))}</td>"
            f"<td>{reason}</td><td>{r['plies']}</td><td>{faults}</td><td>{view}</td></tr>"
        )
    return (
        '<table class="games"><thead><tr><th>game</th><th>deal</th><th>seats</th><th>scores</th><th>end</th>'
        f"<th>decisions</th><th>faults</th><th>view</th></tr></thead><tbody>{''.join(out)}</tbody></table>"
    )


def _json_for_script(data: Any) -> str:
    """JSON safe inside <script>: no '</script>' or '<!--' can close or confuse the element."""
    return (
        json.dumps(data, separators=(",", ":")).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    )


VIEWER_JS = r"""
(function () {
  var games = JSON.parse(document.getElementById("game-data").textContent);
  var box = document.getElementById("game-viewer");
  var current = null, step = 0;
  function el(tag, cls, text) { var e = document.createElement(tag); if (cls) e.className = cls; if (text != null) e.textContent = text; return e; }
  function field(dl, name, value, cls) {
    dl.appendChild(el("dt", null, name));
    var dd = el("dd", cls || null); var pre = el("pre", null, value == null ? "(not recorded)" : String(value)); dd.appendChild(pre); dl.appendChild(dd);
  }
  function show() {
    box.innerHTML = "";
    if (current === null) { box.appendChild(el("p", "na", "Choose a game above (its 'decisions' button)." )); return; }
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
    if (!ds.length) return;
    var d = ds[step], dl = el("dl", "decision");
    dl.id = "decision";
    field(dl, "ply", d.ply);
    field(dl, "player", "seat " + d.seat + " (" + d.entrant + ")");
    field(dl, "prompt", d.prompt != null ? d.prompt : (d.prompt_hash ? "sha256 " + d.prompt_hash + " (the run kept the hash only)" : null), "prompt");
    field(dl, "answer", d.answer != null ? d.answer : d.attempted, "answer");
    if (d.kind === "step") field(dl, "action", d.action + (d.substituted ? " (played by the policy in place of the answer)" : ""), "action");
    else field(dl, "fault", (d.fault || "fault") + ": policy " + d.verdict + ": " + (d.detail || ""), "fault");
    box.appendChild(dl);
    box.appendChild(el("p", "na", "Final scores: " + (g.returns ? g.returns.join(", ") : "no result") + "; end: " + g.reason));
  }
  function open(i, s) { current = i; step = Math.max(0, Math.min(s || 0, ((games[i] || {}).decisions || [1]).length - 1)); show(); }
  document.querySelectorAll("button.view").forEach(function (b) {
    b.addEventListener("click", function () { open(+b.getAttribute("data-game"), 0); box.scrollIntoView(); });
  });
  // report.html#game=KEY&step=N opens that game at that decision (links, and the browser test)
  // (KEY percent-encoded: keys hold entrant names, which may hold '&')
  var want = {};
  (location.hash || "").replace(/^#/, "").split("&").forEach(function (kv) {
    var at = kv.indexOf("="); if (at > 0) want[kv.slice(0, at)] = decodeURIComponent(kv.slice(at + 1));
  });
  if (want.game != null) {
    for (var i = 0; i < games.length; i++) { if (games[i].key === want.game && games[i].decisions) { open(i, want.step ? +want.step : 0); break; } }
  }
  if (current === null) show();
})();
"""

CSS = """
.games td, .entrants td { text-align: left; }
.games td:nth-child(2), .games td:nth-child(6) { text-align: right; }
#game-viewer { border: 1px solid #ccc; padding: 0.5em 1em; margin: 1em 0; }
#game-viewer dl { display: grid; grid-template-columns: 8em 1fr; gap: 4px 12px; }
#game-viewer dt { font-weight: bold; }
#game-viewer dd { margin: 0; }
#game-viewer pre { white-space: pre-wrap; margin: 0; max-height: 24em; overflow: auto; background: #fafafa; padding: 4px; }
button.view { font-size: 12px; }
"""


def drilldown_html(entrants: list[dict[str, Any]], games: list[dict[str, Any]], *, note: str = "") -> str:
    """Entrants, the game list and the decision viewer (HTML + its inline script)."""
    viewable = sum(1 for g in games if g["decisions"] is not None)
    note = (
        f"{len(games)} games; {viewable} with decision records"
        + (
            ""
            if viewable == len(games)
            else " (the others were not played, were played before records were kept, or are past "
            "the page's size limit: `arena replay DIR --game KEY` re-runs any recorded game)"
        )
        + f". Prompts and answers are shown up to {TEXT_LIMIT} characters, with secrets removed."
        + (f" Note: {scrub_secrets(note)}" if note else "")
    )
    data = [{k: v for k, v in g.items()} for g in games]
    return f"""
<h2>Entrants</h2>
<div id="entrants">{entrants_html(entrants)}</div>
<h2>Games</h2>
<p id="games-note">{html.escape(note)}</p>
<div id="games">{games_html(games)}</div>
<h2>Game viewer</h2>
<div id="game-viewer"></div>
<script type="application/json" id="game-data">{_json_for_script(data)}</script>
<script>{VIEWER_JS}</script>
"""
