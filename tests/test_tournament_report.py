"""Reports: the HTML page renders in headless Chromium with its content; JSON, PNG and CLI."""

from __future__ import annotations

import html
import json
import os
import re
import sys

import pytest

from arena_tournament.cli import cli, main_ratings, main_report
from arena_tournament.config import config_from_dict
from arena_tournament.report import html_report, print_leaderboard
from arena_tournament.runner import run_tournament
from browser import chromium_dom

ENTRANTS = [{"name": f"s{i}", "factory": "tournament_toys:Skilled", "options": {"skill": i / 6}} for i in range(6)] + [
    {"name": "crash <&>", "factory": "tournament_toys:Crashing"}  # a name that needs escaping
]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    cfg = config_from_dict(
        {
            "name": "toy report",
            "game": "draw_or_stand",
            "game_factory": "tournament_toys:DrawOrStand",
            "entrants": ENTRANTS,
            "deals": 4,
            "output": str(out),
        }
    )
    return run_tournament(cfg, quiet=True).path


def test_html_report_renders_in_chromium_with_its_content(results, tmp_path):
    assert main_report([results, "--out", str(tmp_path), "--bootstrap", "200", "--quiet"]) == 0
    page = tmp_path / "report.html"
    text = page.read_text()
    assert not re.search(r"""(src|href)=["']https?:""", text)  # self-contained: nothing fetched
    dom = chromium_dom(page)
    assert '<h1 id="title">toy report</h1>' in dom
    assert re.search(r'data-rendered="\d+x\d+"', dom), "the ratings plot did not decode in the browser"
    summary = json.loads((tmp_path / "summary.json").read_text())
    board = dom[dom.index('id="leaderboard"') : dom.index('id="plot"')]
    positions = [
        board.index(f"<td>{r['name'].replace('&', '&amp;').replace('<', '&lt;').replace('>', '&gt;')}</td>")
        for r in summary["leaderboard"]
    ]
    assert positions == sorted(positions)  # rows in rank order
    assert "crash &lt;&amp;&gt;" in dom and "crash <&>" not in dom
    matrix = dom[dom.index('id="head-to-head"') : dom.index('id="pairs"')]
    assert matrix.count('class="h2h"') == 7 * 6
    assert 'id="seats"' in dom and "seat 2" in dom
    assert (tmp_path / "ratings.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_summary_json_and_ratings_cli(results, capsys):
    assert main_ratings([results, "--json", "--bootstrap", "100"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["games_scored"] == summary["games_scheduled"] == 7 * 3 * 4  # 4 deals: fewer give no intervals
    assert summary["leaderboard"][-1]["name"] == "crash <&>"
    ranks = [r["rank"] for r in summary["leaderboard"]]
    assert ranks == sorted(ranks)
    for r in summary["leaderboard"]:
        assert r["rating_low"] <= r["rating"] <= r["rating_high"] or r["name"] == "crash <&>"
    assert len(summary["head_to_head"]) == 21
    assert [s["seat"] for s in summary["seats"]] == [0, 1, 2]
    from arena_tournament.summary import RatingsSummary

    typed = RatingsSummary.model_validate(summary)  # the JSON reads back into the typed summary, whole
    assert typed.to_json() == summary and typed.faults is not None and typed.row("crash <&>").faults > 0
    with pytest.raises(ValueError, match="frozen"):
        typed.leaderboard[0].rating = 0.0  # one reader cannot change what another reads


def test_terminal_leaderboard_and_dispatcher(results, capsys):
    assert cli(["ratings", results, "--bootstrap", "50"]) == 0
    out = capsys.readouterr().out
    assert "rating [95%]" in out and "s5" in out
    assert cli(["nope"]) == 2
    assert main_ratings(["/no/such/results.jsonl"]) == 2
    assert "run `arena tournament CONFIG` first" in capsys.readouterr().err


def test_html_without_intervals_still_renders():
    from arena_tournament.summary import RatingsSummary

    summary = {
        "name": "n",
        "game": "g",
        "params": {},
        "num_players": 2,
        "design": "round_robin",
        "deals": 1,
        "tables": 1,
        "games_scheduled": 2,
        "games_recorded": 2,
        "games_scored": 2,
        "games_truncated": 0,
        "games_unplayed": 0,
        "games_with_faults": 0,
        "deals_scored": 1,
        "clusters": 1,
        "settings": {"policy": "penalize"},
        "method": {"model": "PL", "regularization": 0.1, "scale": "x", "intervals": "none", "seed": 0},
        "groups": [["a", "b"]],
        "note": None,
        "rating_pairs": [],
        "leaderboard": [
            {
                "name": "a",
                "rating": 1010.0,
                "rating_low": None,
                "rating_high": None,
                "rank": 1,
                "rank_low": None,
                "rank_high": None,
                "group": 1,
                "theta": 0.05,
                "faults": 0,
                "games": 2,
                "mean_score": 1.0,
                "mean_margin": 2.0,
                "mean_position": 1.0,
                "win_share": 1.0,
            },
            {
                "name": "b",
                "rating": 990.0,
                "rating_low": None,
                "rating_high": None,
                "rank": 2,
                "rank_low": None,
                "rank_high": None,
                "group": 1,
                "theta": -0.05,
                "faults": 0,
                "games": 2,
                "mean_score": -1.0,
                "mean_margin": -2.0,
                "mean_position": 2.0,
                "win_share": 0.0,
            },
        ],
        "head_to_head": [
            {
                "a": "a",
                "b": "b",
                "games": 2,
                "clusters": 1,
                "a_above_b": 1.0,
                "low": None,
                "high": None,
                "mean_score_diff": 2.0,
                "diff_low": None,
                "diff_high": None,
                "resolved": False,
            }
        ],
        "seats": [{"seat": 0, "games": 2, "mean_score": 0.0, "mean_position": 1.5, "win_share": 0.5}] * 2,
        "player_seat_positions": {"a": [1.0, 1.0], "b": [2.0, 2.0]},
    }
    typed = RatingsSummary.model_validate(summary)  # summary.json, read back
    page = html_report(typed)
    assert "1010" in page and "1.00" in page
    print_leaderboard(typed, file=sys.stderr)


# ---------------------------------------------------------------------- drill-down: entrants, games, decisions
DRILL_ENTRANTS = [
    {
        "name": "chatty & co",
        "factory": "report_toys:Chatty",
        "options": {"garbage_every": 3, "api_key_env": "MY_KEY_VARIABLE"},
    },
    {"name": "s1", "factory": "tournament_toys:Skilled", "options": {"skill": 0.9}},
    {"name": "s0", "factory": "tournament_toys:Skilled", "options": {"skill": 0.1}},
    {"name": "crash", "factory": "tournament_toys:Crashing"},
    {"name": "capped", "factory": "fault_toys:Capped", "options": {"calls": 2}},  # its later games go unplayed
    {"name": "leaky", "factory": "fault_toys:Leaky"},  # its error text quotes a key
    # the real OpenAI-compatible player with its default options, on a local fake server (report_toys.DrawServer)
    {"name": "frontier", "player": "openai", "options": {"model": "fake-frontier", "api_key_env": ""}},
]
#: USD per million tokens: the fake frontier priced, chatty's model ("chatty-1") not, one name misspelt
PRICES = {"fake-frontier": {"prompt": 2.5, "completion": 10.0}, "fake-frontr": {"prompt": 1.0, "completion": 1.0}}


@pytest.fixture(scope="module")
def drill(tmp_path_factory):
    """`arena tournament` with a price table (kept as prices.json), then `arena report` (which reads it)."""
    from arena_tournament.cli import main_tournament
    from report_toys import DrawServer

    out = tmp_path_factory.mktemp("drill")
    with DrawServer() as server:
        entrants = [
            {**e, "options": {**e["options"], "base_url": server.url}} if e["name"] == "frontier" else e
            for e in DRILL_ENTRANTS
        ]
        config = {
            "name": "drill",
            "game": "draw_or_stand",
            "game_factory": "tournament_toys:DrawOrStand",
            "entrants": entrants,
            "deals": 2,
            "output": str(out),
            "run": {"fresh_players": False},
            "prices": PRICES,
        }
        (out / "drill.yaml").write_text(json.dumps(config))  # YAML reads JSON
        # 3: entrants over the fault-rate limit are flagged (chatty's garbage, crash, capped, leaky)
        assert main_tournament([str(out / "drill.yaml"), "--quiet", "--bootstrap", "0"]) == 3
    assert json.loads((out / "prices.json").read_text()) == PRICES
    (out / "report.html").unlink()
    assert main_report([str(out), "--bootstrap", "0", "--quiet"]) == 0  # prices from prices.json
    return out


def test_report_lists_every_game_and_describes_each_entrant(drill):
    from arena_tournament.records import read_game_records
    from arena_tournament.runner import load_results

    _, games = load_results(drill)
    page = (drill / "report.html").read_text()
    assert not re.search(r"""(src|href)=["']https?:""", page)
    table = page[page.index('id="games"') : page.index('id="game-viewer"')]
    assert table.count('<tr class="game"') == len(games) > 0
    for g in games:  # deal, seats, scores, end reason of every game
        row = table[table.index(f'data-key="{g.key.replace("&", "&amp;")}"') :]
        row = row[: row.index("</tr>")]
        assert f"<td>{g.deal}</td>" in row and g.reason in row
        assert ", ".join(f"{s}: {n}".replace("&", "&amp;") for s, n in enumerate(g.seats)) in row
        assert (", ".join(f"{r:g}" for r in g.returns) if g.returns is not None else "no result") in row
        if g.faults:
            assert all(f"seat {f.seat}" in row for f in g.faults)
    played = [g for g in games if g.reason != "unplayed"]
    unplayed = [g for g in games if g.reason == "unplayed"]
    assert unplayed and all("capped" in g.seats for g in unplayed)
    assert (
        table.count('<span class="na">not played</span>') == len(unplayed)
        and unplayed[0].detail
        and html.escape(unplayed[0].detail) in table
    )
    assert len(read_game_records(drill)) == len(played)
    assert page.count('class="view"') == len(played)  # each played game can be stepped through
    assert "sk-live-ABCDEF" not in page and "leaky" in table  # the leaked key never reaches the page ...
    viewer_data = json.dumps(_page_data(page))  # ... nor the viewer's packed data
    assert "leaky" in viewer_data and "sk-live-ABCDEF" not in viewer_data and "***" in viewer_data
    entrants = page[page.index('id="entrants"') : page.index("<h2>Games")]
    for e in DRILL_ENTRANTS:
        assert e["name"].replace("&", "&amp;") in entrants
    chatty = entrants[entrants.index("chatty &amp; co") :]
    chatty = chatty[: chatty.index("</tr>")]
    assert "MY_KEY_VARIABLE" in chatty and "<td>free</td>" in chatty  # a variable's name is no secret; the mode
    assert (
        "report_toys.Chatty" in chatty and "&quot;garbage_every&quot;: 3" in chatty and "digest " in chatty
    )  # its resolved identity


def test_public_options_remove_secrets():
    from arena_tournament.report_games import public_options

    shown = public_options(
        {
            "api_key": "sk-live-abcdefghijklmnop",
            "api_key_env": "OPENAI_API_KEY",
            "model": "m",
            "headers": {"Authorization": "Bearer abcdefghijkl"},
            "note": "token sk-abcdefghijklmn",
        }
    )
    text = json.dumps(shown)
    assert "abcdefghijk" not in text and "OPENAI_API_KEY" in text and shown["model"] == "m"


def test_the_viewer_steps_through_a_games_decisions_in_chromium(drill):
    from urllib.parse import quote

    from arena_tournament.records import read_game_records

    records = read_game_records(drill)
    # a game in which chatty (seat 0) answered in text and later decisions followed
    key, record = next(
        (k, r)
        for k, r in sorted(records.items())
        if k.split("/")[1].startswith("chatty") and len(r.events) >= 2 and r.events[0].type == "step"
    )
    n = max(i for i, e in enumerate(record.events) if e.player == 0)  # chatty's last decision
    event = record.events[n]
    dom = chromium_dom(drill / "report.html", f"#game={quote(key, safe='')}&step={n}")
    viewer = dom[dom.index('id="game-viewer"') :]
    viewer = viewer[: viewer.index("</dl>")]
    assert f'data-step="{n}"' in viewer and f"decision {n + 1} of {len(record.events)}" in viewer
    assert 'id="prev-step"' in viewer and 'id="next-step"' in viewer
    if event.type == "step":
        assert f"<pre>{event.action}" in viewer
    tel = event.telemetry
    assert "</script>" in tel["response"]  # the raw answer, shown escaped: it cannot close the page's script
    assert html.escape(tel["response"], quote=False) in viewer
    assert html.escape(tel["prompt"], quote=False) in viewer
    assert "seat 0 (chatty &amp; co)" in viewer


def test_the_game_list_filters_by_entrant_and_result_and_the_viewer_shows_the_seats_view_in_chromium(drill):
    """One browser run: the list filtered to the frontier's games with one result (the link the
    results table offers), and one of them opened (at its first decision, the frontier's): the
    seat's view of the position, the whole prompt it was sent, its answer, action and usage."""
    from urllib.parse import quote

    from arena_tournament.records import read_game_records
    from arena_tournament.report_games import outcomes
    from arena_tournament.runner import load_results

    _, games = load_results(drill)
    records = read_game_records(drill)
    key = next(g.key for g in games if g.key in records and g.seats[0] == "frontier")  # it decides first
    record, n = records[key], 0
    result = outcomes(record.header.players, records[key].end.returns)["frontier"]
    same = [g for g in games if "frontier" in g.seats and outcomes(g.seats, g.returns)["frontier"] == result]
    page = (drill / "report.html").read_text()
    assert f'href="#entrant=frontier&amp;result={result}"' in page  # the link the results table offers
    dom = chromium_dom(drill / "report.html", f"#entrant=frontier&result={result}&game={quote(key, safe='')}")  # step 0
    table = dom[dom.index('class="games"') : dom.index('id="game-viewer"')]
    rows = re.findall(r'<tr class="game"[^>]*>', table)
    shown = {html.unescape(re.search(r'data-key="([^"]*)"', r).group(1)) for r in rows if "hidden" not in r}
    assert shown == {g.key for g in same} and len(rows) == len(games)  # the others are hidden, not removed
    assert f'data-shown="{len(same)}"' in dom and f"showing {len(same)} of {len(games)} games" in dom
    viewer = dom[dom.index('id="game-viewer"') :]
    viewer = viewer[: viewer.index("</dl>")]
    assert f'data-step="{n}"' in viewer and "seat's view" in viewer
    view = viewer[viewer.index('class="view"') :]
    assert re.search(r"<pre>card: \d+\nturn: \d+", view), view[:300]
    sent = json.loads(record.events[n].telemetry["prompt"])
    for message in sent:  # the prompt the real player sent, whole, message by message
        assert (
            f'<span class="role">{message["role"]}</span><pre>{html.escape(message["content"], quote=False)}</pre>'
            in viewer
        )
    assert "Answer: draw" in viewer and "tokens 100 in, 10 out (fake-frontier)" in viewer
    assert re.search(r"cost (\$0\.0003|\$0\.0000)", viewer)


def test_report_files_have_the_mode_of_an_ordinary_write(drill):
    """Atomic writes go through a private temporary file; the page must not stay private (0600)."""
    mask = os.umask(0o022)
    os.umask(mask)
    for name in ("report.html", "summary.json"):
        assert (drill / name).stat().st_mode & 0o777 == 0o666 & ~mask, name


def test_past_the_page_budget_games_are_listed_without_their_decisions(drill, monkeypatch):
    from arena_tournament import report_games
    from arena_tournament.records import read_game_records
    from arena_tournament.runner import load_results

    _, games = load_results(drill)
    records = read_game_records(drill)
    monkeypatch.setattr(report_games, "PAGE_DECISIONS_BUDGET", 1)
    rows = report_games.game_rows(games, records)
    embedded = [r for r in rows if r["decisions"] is not None]
    assert len(embedded) == 1 and sum(r["omitted"] for r in rows) == len(records) - 1
    from arena_tournament.report_viewer import games_html

    assert "not embedded (page size)" in games_html(rows)


def test_damaged_game_records_leave_the_games_listed_and_say_why(drill, tmp_path):
    import shutil as _shutil

    copy = tmp_path / "copy"
    _shutil.copytree(drill, copy)
    import gzip

    (copy / "records.jsonl.gz").write_bytes(gzip.compress(b"{not json"))  # a complete member that is not a record
    assert main_report([str(copy), "--bootstrap", "0", "--quiet"]) == 0
    page = (copy / "report.html").read_text()
    assert "the game records could not be read" in page and page.count('<tr class="game"') > 0
    assert 'class="view"' not in page


# ---------------------------------------------------------------------- issue 28: the page says what the terminal says
def _flat(text: str) -> str:
    return " ".join(text.split())


def _page_text(page: str) -> str:
    return _flat(html.unescape(re.sub(r"<[^>]+>", " ", page)))


def test_the_page_carries_every_line_the_terminal_prints_about_resolution_and_sample_size(results, capsys):
    from arena_tournament.ratings import summarize
    from arena_tournament.report import fault_lines, leaderboard_notes, title_line
    from arena_tournament.results import load_results

    summary = summarize(*load_results(results), resamples=100)
    print_leaderboard(summary)
    terminal = _flat(capsys.readouterr().out)
    lines = [title_line(summary), *leaderboard_notes(summary), *fault_lines(summary)]
    assert any(line.startswith("Resolved orderings") for line in lines)
    page = _page_text(html_report(summary))
    for line in leaderboard_notes(summary):
        assert _flat(line) in terminal, line  # the terminal prints it ...
    for line in lines:
        assert _flat(line) in page, line  # ... and so does the page


def test_the_page_says_why_a_rating_pair_and_a_head_to_head_cell_disagree(results):
    from arena_tournament.ratings import summarize
    from arena_tournament.report import DISAGREE_WHY
    from arena_tournament.results import load_results

    summary = summarize(*load_results(results), resamples=100)
    rating = next(p for p in summary.rating_pairs if not p.resolved)
    cells = [
        h.model_copy(update={"resolved": True, "low": 0.55, "high": 0.9, "a_above_b": 0.75})  # as in the demo:
        if {h.a, h.b} == {rating.a, rating.b}  # expert ~ tiny-llm, cell ✓
        else h
        for h in summary.head_to_head
    ]
    page = _page_text(html_report(summary.model_copy(update={"head_to_head": cells})))
    assert _flat(DISAGREE_WHY) in page
    assert f"{rating.a} ~ {rating.b} by rating, but head to head" in page


def test_redaction_goes_by_secret_option_names_only():
    from arena_tournament.identity import is_secret_name
    from arena_tournament.report_games import public_options

    shown = public_options(
        {"max_tokens": 256, "max_new_tokens": 64, "tokenizer": "t", "hf_token": "abc", "apiKey": "k", "model": "m"}
    )
    assert shown == {
        "max_tokens": 256,
        "max_new_tokens": 64,
        "tokenizer": "t",
        "hf_token": "***",
        "apiKey": "***",
        "model": "m",
    }
    assert not is_secret_name("api_key_env") and is_secret_name("client_secret")


# ---------------------------------------------------------------------- issue 46.5: the evaluator's drill-down
def _page_data(page: str) -> dict:
    """The viewer's data as the page embeds it (packed JSON the script unpacks), with each text
    spelt out (the page keeps runs of line numbers into its table of lines)."""
    from arena_tournament.report_viewer import unpack

    start = page.index('id="game-data" data-encoding="gzip+base64">') + len(
        'id="game-data" data-encoding="gzip+base64">'
    )
    data = unpack(page[start : page.index("</script>", start)])
    lines = data["lines"]
    data["texts"] = [
        "\n".join(lines[n] for a, k in zip(runs[::2], runs[1::2]) for n in range(a, a + k)) for runs in data["texts"]
    ]
    return data


def _row(page: str, table: str, name: str) -> str:
    part = page[page.index(f'class="{table}"') :]
    part = part[part.index(f'data-entrant="{html.escape(name)}"') :]
    return part[: part.index("</tr>")]


def test_llm_prompts_are_kept_whole_and_shown_with_the_seats_view_of_each_position(drill):
    from arena_tournament.records import read_game_records

    records = read_game_records(drill)
    mine = [(k, r) for k, r in sorted(records.items()) if "frontier" in r.header.players]
    asked = [
        e.telemetry for _, r in mine for e in r.events if e.player == r.header.players.index("frontier") and e.telemetry
    ]
    assert asked and all("prompt" in t and "prompt_sha256" not in t for t in asked)  # the player's default: in full
    data = _page_data((drill / "report.html").read_text())
    texts, games = data["texts"], {g["key"]: g for g in data["games"]}
    key, record = mine[0]
    seat = record.header.players.index("frontier")
    n = next(i for i, e in enumerate(record.events) if e.player == seat)
    shown = games[key]["decisions"][n]
    sent = json.loads(record.events[n].telemetry["prompt"])
    assert [[role, texts[i]] for role, i in shown["prompt"]] == [[m["role"], m["content"]] for m in sent]
    assert len(texts[shown["prompt"][0][1]]) > 100 and "draw_or_stand" in texts[shown["prompt"][0][1]]
    from tournament_toys import DrawOrStand

    game = DrawOrStand(num_players=3)
    position = game.start(record.header.seed)
    for e in record.events[:n]:  # the seat's view is the game's human view of the position it decided at
        position = game.act(position, e.player, e.action)
    from arena_core.views import get_view

    assert texts[shown["view"]] == get_view(game, "human").render(game, position, seat)
    assert f"card: {position.state.cards[seat]}" in texts[shown["view"]]
    assert shown["usage"] == {
        "tokens_in": 100,
        "cached": 0,
        "tokens_out": 10,
        "latency_s": shown["usage"]["latency_s"],
        "cost": "$0.0003",  # (100 x 2.5 + 10 x 10) / 1e6 = 0.00035
        "model": "fake-frontier",
        "call": True,
        "cache_hit": False,
    }
    final = games[key]["final"]  # hidden information: every seat's view at the end
    assert [f["seat"] for f in final] == [0, 1, 2] and all("card: " in texts[f["view"]] for f in final)


def test_results_usage_and_cost_per_entrant_and_per_game(drill):
    from arena_tournament.records import read_game_records
    from arena_tournament.runner import load_results

    _, games = load_results(drill)
    records = read_game_records(drill)
    page = (drill / "report.html").read_text()
    asked = [
        e.telemetry
        for r in records.values()
        for e in r.events
        if "frontier" in r.header.players and e.player == r.header.players.index("frontier") and e.telemetry
    ]
    calls, billed = len(asked), sum(not t["cached"] for t in asked)  # an answer from its response cache is free
    frontier = _row(page, "results", "frontier")
    cost = billed * (100 * 2.5 + 10 * 10) / 1e6
    assert f"<td>{calls}</td><td>{calls * 100:,}</td><td>{calls * 10:,}</td>" in frontier
    assert f'<td class="cost">${cost:.4f}</td>' in frontier
    mine = [g for g in games if "frontier" in g.seats]
    won = sum(1 for g in mine if g.returns and sorted(g.returns)[-2] < g.returns[g.seats.index("frontier")])
    assert f'result=won">{won}</a>' in frontier and won > 0
    chatty = _row(page, "results", "chatty & co")
    assert "unknown (no price for chatty-1)" in chatty and "$" not in chatty  # a missing price is never 0
    bot = _row(page, "results", "s1")
    assert bot.count('<td class="cost">-</td>') == 2 and "<td>0</td><td>0</td>" in bot  # no model calls
    notes = page[page.index('id="usage-notes"') : page.index("<h2>Games")]
    assert "chatty-1 (" in notes and "never counted as 0" in notes
    assert "names models no decision used: fake-frontr" in notes
    table = page[page.index('class="games"') :]
    for g in mine:  # per game: priced calls in dollars; a call of chatty's unpriced model makes it unknown
        row = table[table.index(f'data-key="{html.escape(g.key)}"') :]
        row = row[: row.index("</tr>")]
        if g.key not in records:  # not played: nothing used
            assert '<td class="na">-</td><td class="na">-</td><td class="na">-</td>' in row
            continue
        models = {e.telemetry.get("model") for e in records[g.key].events}
        expect = "unknown" if "chatty-1" in models else "$" if "fake-frontier" in models else "-<"
        assert expect in row[row.index('<td class="cost">') :], row


def test_a_hashed_prompt_is_rebuilt_and_a_record_that_does_not_replay_says_so(drill):
    import hashlib

    from arena_tournament.records import read_game_records
    from arena_tournament.report_games import Texts, decisions_of, seat_views
    from tournament_toys import DrawOrStand

    records = read_game_records(drill)
    key, record = next((k, r) for k, r in sorted(records.items()) if r.header.players[0] == "frontier")
    first = record.events[0]
    sent = first.telemetry.pop("prompt")
    first.telemetry["prompt_sha256"] = hashlib.sha256(sent.encode()).hexdigest()  # as record_prompt = "hash" keeps it
    game, texts = DrawOrStand(num_players=3), Texts()
    views = seat_views(record, game, texts)
    (shown, *_) = decisions_of(record, list(record.header.players), texts=texts, views=views)
    assert "rebuilt from the game's text view" in shown["prompt_note"]
    assert json.dumps([{"role": r, "content": texts.text(i)} for r, i in shown["prompt"]], ensure_ascii=False) == sent
    first.telemetry["prompt_sha256"] = "0" * 64  # a hash the rebuild does not match: the hash, said so
    (shown, *_) = decisions_of(record, list(record.header.players), texts=texts, views=seat_views(record, game, texts))
    assert shown["prompt"] is None and "kept the hash only" in shown["prompt_note"]
    end = record.end.model_copy(update={"returns": [99.0] * 3})
    broken = seat_views(record.model_copy(update={"end": end}), game, texts)  # it no longer replays: no views, and why
    assert broken.seen == [None] * len(record.events) and "could not be rebuilt" in broken.note


def test_prices_are_validated_in_one_line(tmp_path, capsys):
    from arena_core.errors import ConfigError
    from arena_tournament.usage import ModelPrice, decision_usage, load_prices

    base = {"game": "draw_or_stand", "entrants": ["random", "first_legal"]}
    for prices, says in [
        ({"m": {"promt": 1, "completion": 1}}, "did you mean 'prompt'"),
        ({"m": {"prompt": -1, "completion": 1}}, "greater than or equal to 0"),
        ({"m": {"prompt": float("nan"), "completion": 1}}, "finite number"),
        ({"m": {"prompt": True, "completion": 1}}, "a price (a number)"),
        ({" ": {"prompt": 1, "completion": 1}}, "model name is empty"),
    ]:
        with pytest.raises(ConfigError, match=re.escape(says)):
            config_from_dict({**base, "prices": prices})
    bad = tmp_path / "prices.toml"
    bad.write_text('[prices.m]\nprompt = "cheap"\ncompletion = 1\n')
    assert main_report([str(tmp_path), "--prices", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "price of 'm'" in err and "USD per million tokens" in err
    (tmp_path / "ok.json").write_text(json.dumps({"m": {"prompt": 3, "completion": 15, "cached_prompt": 0.3}}))
    table = load_prices(tmp_path / "ok.json")
    assert table == {"m": ModelPrice(prompt=3, completion=15, cached_prompt=0.3)}
    u = decision_usage({"model": "m", "tokens_in": 1000, "cached_tokens": 400, "tokens_out": 100}, table)
    assert u.cost == pytest.approx((600 * 3 + 400 * 0.3 + 100 * 15) / 1e6)
    assert decision_usage({"model": "m", "tokens_in": 1000, "tokens_out": 9, "cached": True}, table).cost == 0.0
    assert decision_usage({"model": "other", "tokens_in": 5}, table).cost_unknown
    assert decision_usage({"model": "other", "tokens_in": 5, "cost": 0.25}, table).cost == 0.25  # the player's own
    assert not decision_usage({"latency_s": 0.1}, table).call  # a bot: no model call, no cost
