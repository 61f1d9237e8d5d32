"""The arena loop as a new user runs it from the README (issue 46): `arena loop` on LiarsDice-v0
with the tiny model and a frontier seat behind a local fake OpenAI-compatible server, at a small
size (`--set`), to a before/after page checked in headless Chromium: every entrant's seat (what it
reads, how it answers, its mode), the ratings of stock, RL'd, generalist, frontier and bots on one
scale, the training curve, the per-seed table with intervals inside their range, and the
drill-down of a tournament's own page into the frontier's decisions. `--plot` draws; `--quiet`
prints the report alone."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pytest

pytest.importorskip("textarena")
pytest.importorskip("mlx_lm")

from arena_core.cli import main as arena
from browser import chromium_dom
from report_toys import LegalFake

ROOT = Path(__file__).resolve().parents[1]
LIARS = str(ROOT / "examples" / "textarena_loop_liars.toml")
SEARCH = 'search{simulations = 2, rollout = "random"}'
SMALL = [
    "tournament.deals=2",
    f"tournament.opponents=['{SEARCH}']",  # the generalist alone (the config's random bot: tests/test_loop_real_config.py)
    "tournament.bootstrap=200",
    "tournament.frontier.max_calls=60",
    "seeds=[0]",
    # the recipe's stages, by name: numeric self-play on the native engine, then distillation
    "stages.selfplay.config.games=128",
    "stages.selfplay.config.parallel=64",
    "stages.selfplay.config.eval_every=0",
    "stages.distil.config.rounds=2",
    "stages.distil.config.deals_per_round=2",
    "stages.distil.config.steps=2",
    "stages.distil.config.eval_deals=1",
    "stages.distil.config.eval_every=0",
    "stages.distil.config.checkpoint_every=0",
    "stages.distil.config.eval_expert=false",
]


def _sets(items):
    return [x for item in items for x in ("--set", item)]


@pytest.fixture(scope="module")
def liars(tmp_path_factory):
    """The README's command at a small size: (output directory, stdout, stderr, plot path)."""
    import os

    tmp = tmp_path_factory.mktemp("liars-loop")
    out, plot = tmp / "out", tmp / "curves.png"
    with LegalFake() as server:
        old = os.environ.get("OPENAI_API_KEY")
        os.environ["OPENAI_API_KEY"] = "not-a-real-key"  # the config's frontier key variable; the fake ignores it
        try:
            extra = [f"tournament.frontier.base_url={server.url}", f'tournament.frontier.cache_dir="{tmp / "cache"}"']
            argv = ["loop", LIARS, "--out", str(out), "--quiet", "--plot", str(plot), *_sets(SMALL + extra)]
            import contextlib
            import io

            stdout, stderr = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                code = arena(argv)
        finally:
            if old is None:
                del os.environ["OPENAI_API_KEY"]
            else:
                os.environ["OPENAI_API_KEY"] = old
        assert code == 0, stderr.getvalue()
        assert server.requests > 0
    return out, stdout.getvalue(), stderr.getvalue(), plot


def test_the_loop_runs_quietly_to_its_report_and_plot(liars):
    out, stdout, stderr, plot = liars
    assert stderr == ""  # --quiet: no progress, no phase lines
    assert "after - before (paired by deal)" in stdout and "Tokenizer" not in stdout
    assert "not like for like" in stdout  # the headline says what it compares
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (seed,) = json.loads((out / "report.json").read_text())["seeds"]
    seats = seed["seats"]
    assert {n: s["role"] for n, s in seats.items()} == {
        "rl": "rl",
        "stock": "stock",
        "opp1-search": "generalist",
        "frontier": "frontier",
    }
    # like for like, or not: what each reads and how it answers, and the tournament's mode
    assert seats["rl"]["reads"] == seats["stock"]["reads"] == "the game's compact view"
    assert seats["rl"]["answers"].startswith("menu") and seats["rl"]["mode"] == "constrained"
    assert seats["frontier"]["reads"] == "the game's text view" and seats["frontier"]["answers"].startswith("free text")
    assert seats["frontier"]["mode"] == "free"
    assert (
        seats["opp1-search"]["answers"].startswith("a legal action") and seats["opp1-search"]["mode"] == "constrained"
    )
    # every difference interval inside the range a win-rate difference can take
    for o in seed["opponents"].values():
        iv = o["after_minus_before"]["interval"]
        assert iv is None or -1.0 <= iv[0] <= o["after_minus_before"]["diff"] <= iv[1] <= 1.0
    assert seed["opponents"]["frontier:gpt-4.1"]["after"]["games"] > 0
    assert {r.get("stage") for r in seed["curve"]} == {"selfplay", "distil"}
    # constrained decoding on the compact view: every decision of the model is a legal move
    for phase in ("before", "after"):
        assert seed["faults"][phase]["decisions"] > 0 and seed["faults"][phase]["faults"] == 0
    # distillation moved the weights, and reported its agreement with the teacher with an interval
    train = out / "seed0" / "train"
    before = _weights(train / "stock" / "checkpoints" / "step_000000")
    after = _weights(train / "2-distil" / "checkpoints" / "step_000002")
    assert set(before) == set(after) and any(not np.array_equal(before[k], after[k]) for k in before)
    report = json.loads((train / "2-distil" / "manifest.json").read_text())["report"]
    low, high = report["agreement_student_interval"]
    assert 0.0 <= low <= report["agreement_student"] <= high <= 1.0 and low < high


def _weights(path: Path) -> dict[str, np.ndarray]:
    import mlx.core as mx

    return {k: np.array(v) for k, v in mx.load(str(path / "trainable.safetensors")).items()}


def test_the_before_after_page_renders_in_chromium(liars):
    out = liars[0]
    page = (out / "report.html").read_text()
    assert not re.search(r"""(src|href)=["']https?:""", page)  # self-contained: nothing fetched
    dom = chromium_dom(out / "report.html")
    assert '<h1 id="title">textarena-liars-loop</h1>' in dom
    assert "not like for like" in dom[dom.index('id="headline"') :]
    seats = dom[dom.index('id="seats"') : dom.index('id="ratings"')]
    for name, reads in (("rl", "compact view"), ("frontier", "text view"), ("opp1-search", "observation")):
        row = seats[seats.index(f"<td>{name}</td>") :]
        assert reads in row[: row.index("</tr>")]
    ratings = dom[dom.index('id="ratings"') : dom.index('id="ratings-plot"')]
    assert all(f"<td>{n}</td>" in ratings for n in ("rl", "stock", "opp1-search", "frontier"))
    assert len(re.findall(r'class="plot" data-rendered="\d+x\d+"', dom)) == 2  # ratings and training plots decoded
    per_seed = dom[dom.index('id="per-seed"') : dom.index('id="faults"')]
    assert per_seed.count("<tr>") == 1 + 2  # the header and one row per opponent (search, frontier)
    assert 'href="seed0/after/report.html"' in dom


def test_a_tournaments_page_drills_down_into_the_frontiers_decisions_in_chromium(liars):
    from arena_tournament.records import read_game_records

    after = liars[0] / "seed0" / "after"
    records = read_game_records(after)
    key, record = next((k, r) for k, r in sorted(records.items()) if r.header.players[0] == "frontier")
    dom = chromium_dom(after / "report.html", f"#entrant=frontier&game={quote(key, safe='')}")
    viewer = dom[dom.index('id="game-viewer"') :]
    viewer = viewer[: viewer.index("</dl>")]
    assert "seat's view" in viewer and "seat 0 (frontier)" in viewer
    sent = json.loads(record.events[0].telemetry["prompt"])
    assert "Liar's Dice" in sent[-1]["content"]
    assert html.escape(sent[-1]["content"], quote=False) in viewer  # the frontier's whole prompt
