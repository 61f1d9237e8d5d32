"""The HTML report's drill-down data: each entrant described, its results and its usage (tokens,
latency, cost), every game listed with each entrant's result, and each recorded game's decisions
with the acting seat's view of the position, the prompt, the answer and the action.

One file (over 500 lines) because the entrant rows, the game list and the decisions are gathered in
one pass over the results and records and must agree game by game; the HTML is in report_viewer.py.

The game list comes from the results file; the decisions from the per-game episode records kept
beside it (when the run kept them). Each embedded game is replayed from its record (the replay
verifies it) and the seat's view at each decision is the game's ``"human"`` view (``Game.views()``,
the plugin mechanism: a game that brings its own shows its own, any other the one
turn-arena-players registers for every game in ``arena.views``). Text shown in the page is scrubbed of secrets. :func:`drilldown` gathers it for games and
records from anywhere (the loop's own pages); the HTML and its script are in
:mod:`arena_tournament.report_viewer` (``drilldown_for`` builds the section of a results directory).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena_core.errors import ConfigError
from arena_core.outputs import scrub_secrets
from arena_core.playerspec import as_player_spec

from .identity import is_secret_name
from .usage import ModelPrice, UsageTotals, decision_usage, dollars

#: characters of one text (a prompt message, an answer, a view) shown in the page; the record
#: keeps the whole text. Prompts of our games are a few thousand characters: they are shown whole.
TEXT_LIMIT = 100_000
#: characters of decision data the page embeds; games past it are listed without the viewer
#: (their records stay in records.jsonl.gz: `arena replay DIR --game KEY`)
PAGE_DECISIONS_BUDGET = 30_000_000
#: games whose seats' views the page rebuilds (a replay and a rendering at every decision: about
#: 0.05 s a MegaGem game here), games with model calls first; the others show their decisions
#: without views (`arena replay DIR --game KEY --show` prints any game's)
VIEW_GAMES = 200
#: a game's result for one of its entrants (the filter's values)
RESULTS = ("won", "tied", "lost", "no result")


# ---------------------------------------------------------------------- text
def _cut(text: Any, limit: int = TEXT_LIMIT, *, scrub: bool = True) -> str | None:
    if text is None:
        return None
    text = text if isinstance(text, str) else json.dumps(text, default=str)
    text = scrub_secrets(text) if scrub else text
    cut: str = text if len(text) <= limit else text[: limit - 1] + f"… ({len(text)} characters in all)"
    return cut


@dataclass
class Texts:
    """The page's text table. A text is stored once (a rules prompt repeats at every decision) as
    runs of line numbers into one table of distinct lines (a seat's view of the next position
    repeats most lines of the last: a 624-game MegaGem page holds 175 thousand characters of
    distinct lines for 28 million of views). ``items[i]`` is text i as ``[first line, count, ...]``;
    ``chars`` estimates the characters the page holds for them."""

    lines: list[str] = field(default_factory=list)
    items: list[list[int]] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)
    line_index: dict[str, int] = field(default_factory=dict)
    chars: int = 0

    def add(self, text: Any, limit: int = TEXT_LIMIT, *, scrub: bool = True) -> int | None:
        """Text ``text`` (scrubbed of secrets unless ``scrub`` is false: a game's own rendering of
        its position holds none), cut at ``limit``; its index."""
        cut = _cut(text, limit, scrub=scrub)
        if cut is None:
            return None
        if cut not in self.index:
            runs: list[int] = []
            for line in cut.split("\n"):
                n = self.line_index.get(line)
                if n is None:
                    n = self.line_index[line] = len(self.lines)
                    self.lines.append(line)
                    self.chars += len(line) + 3
                if runs and runs[-2] + runs[-1] == n:
                    runs[-1] += 1
                else:
                    runs += [n, 1]
            self.index[cut] = len(self.items)
            self.items.append(runs)
            self.chars += 4 * len(runs)
        return self.index[cut]

    def text(self, i: int) -> str:
        runs = self.items[i]
        return "\n".join(self.lines[n] for a, k in zip(runs[::2], runs[1::2]) for n in range(a, a + k))


def _messages(prompt: Any) -> list[tuple[str, Any]]:
    """A recorded prompt as (role, text) pairs: the chat messages when it is their JSON, else one
    message without a role."""
    if isinstance(prompt, list):
        messages = prompt
    else:
        try:
            messages = json.loads(prompt)
        except (TypeError, ValueError):
            return [("", prompt)]
    if isinstance(messages, list) and all(isinstance(m, Mapping) and "content" in m for m in messages):
        return [(str(m.get("role", "")), m["content"]) for m in messages]
    return [("", prompt)]


# ---------------------------------------------------------------------- entrants
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


def _mode_of(telemetry: Mapping[str, Any]) -> str | None:
    mode = telemetry.get("mode")
    if mode in ("free", "free_text"):
        return "free"
    if mode is not None:
        return str(mode)
    return None


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


# ---------------------------------------------------------------------- results and usage
def outcomes(seats: Sequence[str], returns: Sequence[float] | None) -> dict[str, str]:
    """Each seated entrant's result: ``won`` (the top score alone), ``tied`` (the top score
    shared), ``lost``, or ``no result`` (the game was cut off or not played)."""
    if returns is None:
        return {name: "no result" for name in seats}
    top = max(returns)
    shared = sum(r == top for r in returns) > 1
    return {name: ("tied" if shared else "won") if r == top else "lost" for name, r in zip(seats, returns)}


def _asked(event: Mapping[str, Any]) -> bool:
    """A decision asked of a player (a policy's substitute move is not one)."""
    return not (event.get("type") == "step" and event.get("substituted"))


def usage_by_entrant(
    games: Iterable[Any], records: Mapping[str, Any] | None, prices: Mapping[str, ModelPrice]
) -> tuple[dict[str, UsageTotals], dict[str, UsageTotals]]:
    """Usage totals per entrant and per game key, over every decision of every recorded game."""
    by_entrant: dict[str, UsageTotals] = {}
    by_game: dict[str, UsageTotals] = {}
    for g in games:
        g = _dump(g)
        rec = (records or {}).get(g.get("key"))
        if rec is None:
            continue
        seats = list(g.get("seats") or [])
        game_total = by_game.setdefault(g["key"], UsageTotals())
        for ev in _field(rec, "events", []) or []:
            ev = _dump(ev)
            seat = ev.get("player")
            if not _asked(ev) or not isinstance(seat, int) or not 0 <= seat < len(seats):
                continue
            u = decision_usage(ev.get("telemetry") or {}, prices)
            game_total.add(u)
            by_entrant.setdefault(seats[seat], UsageTotals()).add(u)
    return by_entrant, by_game


def _usage_cell(u: Any) -> dict[str, Any]:
    return {
        "tokens_in": u.tokens_in,
        "cached": u.cached_tokens,
        "tokens_out": u.tokens_out,
        "latency_s": None if u.latency_s is None else round(u.latency_s, 4),
        "cost": "-" if not u.call else ("unknown" if u.cost is None else dollars(u.cost)),
        "model": u.model,
        "call": u.call,
        "cache_hit": u.cache_hit,
    }


# ---------------------------------------------------------------------- decisions, with the seat's view
@dataclass
class SeatViews:
    """What a replay of one record gives the viewer: per event the acting seat's view of the
    position (``seen``, text indices), the action's name and a prompt rebuilt from its hash; the
    final views; ``note`` when it failed."""

    seen: list[int | None]
    labels: list[str | None]
    prompts: list[tuple[list[Any], str] | None]
    final: list[dict[str, Any]]
    note: str = ""


def seat_views(record: Any, game: Any, texts: Texts) -> SeatViews:
    """Replay ``record`` on ``game``, rendering the acting seat's ``"human"`` view before each
    decision and every seat's at the end (the board once under perfect information). A record
    that does not replay, or a game without a human view, gives empty views and says why."""
    from arena_core.replay import replay
    from arena_core.spec import Information

    from .export import decision_prompt

    events = list(_field(record, "events", []) or [])
    out = SeatViews([None] * len(events), [None] * len(events), [None] * len(events), [])
    if game is None:
        out.note = "the game could not be built here"
        return out
    factory = game.views().get("human")  # the game's own, else the one a plugin registers for every game
    if factory is None:
        out.note = f"{game.spec.id} has no 'human' view here (pip install turn-arena-players adds one for every game)"
        return out
    view = factory()
    names = list(_field(_field(record, "header"), "players", []) or [])
    n = 0

    def on_event(game: Any, header: Any, pos: Any, event: Any) -> None:
        nonlocal n
        if event.type == "end":
            seats = range(1 if game.spec.information is Information.PERFECT else game.num_players)
            out.final = [
                {
                    "seat": s,
                    "entrant": names[s] if s < len(names) else "?",
                    "view": texts.add(view.render(game, pos, s), scrub=False),
                }
                for s in seats
            ]
            return
        out.seen[n] = texts.add(view.render(game, pos, event.player), scrub=False)
        if event.type == "step":
            action = event.action if event.action_id < 0 else game.action_from_id(event.action_id)
            out.labels[n] = str(game.action_label(pos.state, event.player, action))
        tel = event.telemetry or {}
        if "prompt" not in tel and "prompt_sha256" in tel:  # the run kept the hash: rebuild and check it
            out.prompts[n] = decision_prompt(game, pos, event.player, tel)
        n += 1

    try:
        replay(record, game, on_event=on_event)
    except Exception as exc:  # noqa: BLE001 - a record that does not replay is shown without views, and says so
        from arena_core.outputs import scrub_and_cut

        out.note = f"the seat's views could not be rebuilt: {scrub_and_cut(f'{type(exc).__name__}: {exc}', 300)}"
        out.seen = [None] * len(events)
        out.final = []
    return out


def decisions_of(
    record: Any,
    seats: list[str],
    *,
    texts: Texts | None = None,
    prices: Mapping[str, ModelPrice] | None = None,
    views: SeatViews | None = None,
) -> list[dict[str, Any]]:
    """Each event of an episode record as the viewer shows it (texts as indices into ``texts``)."""
    texts = Texts() if texts is None else texts
    out = []
    for n, ev in enumerate(_field(record, "events", []) or []):
        ev = _dump(ev)
        tel = ev.get("telemetry") or {}
        seat = ev.get("player")
        rebuilt = views.prompts[n] if views is not None and n < len(views.prompts) else None
        prompt: Any = tel.get("prompt")
        note = "transcript view: the messages this turn added" if tel.get("view") == "transcript" else None
        kept_hash = tel.get("prompt_sha256") or tel.get("prompt_hash")
        if prompt is None and rebuilt is not None and rebuilt[1] == "rebuilt":
            prompt, note = rebuilt[0], "rebuilt from the game's text view at this position; its hash matches the record"
        elif prompt is None and kept_hash:
            note = f"sha256 {kept_hash} (the run kept the hash only, and the game's text view does not rebuild it)"
        item = {
            "kind": ev.get("type"),
            "ply": ev.get("ply"),
            "seat": seat,
            "entrant": seats[seat] if isinstance(seat, int) and 0 <= seat < len(seats) else "?",
            "view": views.seen[n] if views is not None and n < len(views.seen) else None,
            "prompt": None if prompt is None else [[role, texts.add(text)] for role, text in _messages(prompt)],
            "prompt_note": note,
            "answer": texts.add(tel.get("response", tel.get("raw_answer"))),
            "earlier": [texts.add(a) for a in tel.get("earlier_responses") or []],  # in-player retries, before it
            "usage": _usage_cell(decision_usage(tel, prices or {})) if _asked(ev) else None,
        }
        if ev.get("type") == "step":
            label = views.labels[n] if views is not None and n < len(views.labels) else None
            item.update(action=ev.get("action"), label=label, substituted=bool(ev.get("substituted")))
        else:
            item.update(
                action=None,
                verdict=ev.get("verdict"),
                fault=ev.get("fault") or ev.get("kind") or tel.get("fault") or tel.get("error_type"),
                attempted=_cut(ev.get("attempted"), 500),
                detail=_cut(ev.get("detail"), 1000),
            )
        out.append(item)
    return out


def game_rows(
    games: Iterable[Any],
    records: Mapping[str, Any] | None,
    *,
    game: Any = None,
    prices: Mapping[str, ModelPrice] | None = None,
    texts: Texts | None = None,
) -> list[dict[str, Any]]:
    """One row per recorded game: deal, seats, scores, each entrant's result, end reason, faults,
    usage; with its decisions (and, given ``game``, the seats' views) while the page's budget lasts."""
    rows = []
    records = records or {}
    prices = prices or {}
    texts = Texts() if texts is None else texts
    spent = 0
    games = [_dump(g) for g in games]
    _, usage = usage_by_entrant(games, records, prices)
    with_calls = [g["key"] for g in games if g.get("key") in usage and usage[g["key"]].calls]
    viewed = set((with_calls + [g["key"] for g in games if g.get("key") in records])[:VIEW_GAMES])
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
        total = usage.get(g.get("key"))
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
            "outcomes": outcomes(seats, g.get("returns")),
            "faulted": sorted({str(f["entrant"]) for f in faults}),
            "usage": None
            if total is None
            else {
                "tokens_in": total.tokens_in,
                "tokens_out": total.tokens_out,
                "latency_s": round(total.latency_total_s, 3),
                "cost": total.cost_text(),
            },
            "decisions": None,
            "final": None,
            "views_note": "",
            "detail": _cut(g.get("detail"), 300) or "",
        }
        rec = records.get(g.get("key"))
        budget_left = PAGE_DECISIONS_BUDGET - (texts.chars + spent)
        if rec is not None and budget_left > 0:
            views = seat_views(rec, game if row["key"] in viewed else None, texts)
            if row["key"] not in viewed:
                views.note = (
                    f"not rebuilt for this game (the page rebuilds them for {VIEW_GAMES} games, those with model calls "
                    "first); `arena replay DIR --game KEY --show` prints them"
                )
            row["decisions"] = decisions_of(rec, seats, texts=texts, prices=prices, views=views)
            row["final"], row["views_note"] = views.final, views.note
            spent += 200 * len(row["decisions"])
        row["omitted"] = rec is not None and row["decisions"] is None
        rows.append(row)
    return rows


def load_games_and_records(results: str | os.PathLike[str]) -> tuple[list[Any], dict[str, Any], Any, str]:
    """(games, records by game key, the results' schedule line, note) of a results file or its directory.

    Records come from the per-game episode records beside the results, when the run kept them;
    a records file that cannot be read leaves the games listed without decisions, and ``note``
    says why (the page shows it)."""
    from arena_core.errors import ArenaError

    from .records import read_game_records
    from .results import load_results

    path = Path(results)
    header, games = load_results(path)
    directory = path if path.is_dir() else path.parent
    try:
        records = dict(read_game_records(directory))
    except (ArenaError, OSError, ValueError) as exc:  # damaged records: the games are still listed
        return list(games), {}, header, f"the game records could not be read: {exc}"
    return list(games), records, header, ""


# ---------------------------------------------------------------------- the section
@dataclass
class Drilldown:
    """Everything the drill-down section shows (:func:`arena_tournament.report_viewer.drilldown_html`)."""

    entrants: list[dict[str, Any]]
    games: list[dict[str, Any]]
    texts: Texts
    usage: dict[str, UsageTotals]
    prices: Mapping[str, ModelPrice]
    note: str = ""


def drilldown(
    entrants: Iterable[Any],
    games: Sequence[Any],
    records: Mapping[str, Any],
    *,
    game: Any = None,
    modes: Mapping[str, str] | None = None,
    identities: Mapping[str, Any] | None = None,
    prices: Mapping[str, ModelPrice] | None = None,
    note: str = "",
) -> Drilldown:
    """The drill-down of any tournament's games and records (``game``: the game they were played
    on, for the seats' views; ``modes``: each entrant's mode where known, else from the records)."""
    prices = dict(prices or {})
    texts = Texts()
    modes = {**modes_from_records(games, records), **(modes or {})}
    by_entrant, _ = usage_by_entrant(games, records, prices)
    return Drilldown(
        entrants=entrant_rows(entrants, modes, identities),
        games=game_rows(games, records, game=game, prices=prices, texts=texts),
        texts=texts,
        usage=by_entrant,
        prices=prices,
        note=note,
    )
