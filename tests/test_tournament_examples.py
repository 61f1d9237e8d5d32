"""The tournament examples: the bots tournament (the README's main command) and the LLM
baseline (local MLX model + an OpenAI-compatible model, here a local ``mlx_lm.server``)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from arena_tournament.cli import main_tournament
from arena_tournament.config import load_config
from arena_tournament.runner import check_entrants, load_results, resolve_schedule, run_tournament

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_bots_example_is_the_624_game_steiner_schedule():
    cfg = load_config(EXAMPLES / "tournament_bots.toml")
    schedule = resolve_schedule(cfg)
    check_entrants(schedule)
    assert len(schedule.entrants) == 13 and schedule.design == "steiner"
    assert len(schedule.tables) == 26 and len(schedule.games()) == 624
    assert schedule.deals == tuple(range(770001, 770009))


def test_bots_example_runs_and_reports(tmp_path, capsys):
    out = tmp_path / "bots"
    rc = main_tournament(
        [
            str(EXAMPLES / "tournament_bots.toml"),
            "--out",
            str(out),
            "--max-games",
            "9",
            "--backend",
            "sequential",
            "--bootstrap",
            "100",
        ]
    )
    assert rc == 0
    header, games = load_results(out)
    assert len(games) == 9 and all(g.reason == "natural" for g in games)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["games_recorded"] == 9 and summary["games_scheduled"] == 624
    assert (out / "report.html").exists() and (out / "ratings.png").exists()
    assert "rating [95%]" in capsys.readouterr().out


def test_llm_example_config_reads_models_from_the_environment(monkeypatch):
    monkeypatch.setenv("ARENA_OPENAI_MODEL", "some-model")
    monkeypatch.setenv("ARENA_OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    cfg = load_config(EXAMPLES / "tournament_megagem.toml")
    by_name = {e.name: e for e in cfg.entrants}
    assert by_name["openai"].options["model"] == "some-model"
    assert by_name["openai"].options["base_url"] == "http://127.0.0.1:9/v1"
    assert by_name["openai"].options["api_key_env"] == "OPENAI_API_KEY"  # the key itself is never in the config
    assert len(resolve_schedule(cfg).games()) == 7 * 4 * 3
    assert cfg.prices["gpt-4o-mini"].completion == 0.60 and cfg.prices["tiny"].prompt == 0  # the report's cost


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def mlx_server(tmp_path):
    pytest.importorskip("mlx_lm")
    pytest.importorskip("arena_players.mlx_player")
    from arena_players.tiny_model import ensure_tiny_model

    model = str(ensure_tiny_model())
    port = _free_port()
    log = open(tmp_path / "server.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "mlx_lm", "server", "--model", model, "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        "mlx_lm.server did not start: " + (tmp_path / "server.log").read_text()[-2000:]
                    ) from None
                time.sleep(0.5)
        yield model, f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


@pytest.mark.slow
def test_llm_example_plays_against_a_local_mlx_lm_server(mlx_server, tmp_path, monkeypatch):
    model, url = mlx_server
    monkeypatch.setenv("ARENA_OPENAI_MODEL", model)
    monkeypatch.setenv("ARENA_OPENAI_BASE_URL", url)
    monkeypatch.setenv("OPENAI_API_KEY", "local-server-needs-none")
    cfg = load_config(EXAMPLES / "tournament_megagem.toml")
    # shorten the game and the answers so the check takes seconds; entrants and run options as shipped
    entrants = [
        e.model_copy(update={"options": {**e.options, "max_tokens": 8}}) if e.name == "openai" else e
        for e in cfg.entrants
    ]
    cfg = cfg.model_copy(
        update={"params": {**cfg.params, "round_cap": 2}, "entrants": entrants, "output": str(tmp_path / "out")}
    )
    report = run_tournament(cfg, quiet=True, max_games=1)
    _, games = load_results(report.path)
    (game,) = games
    assert set(game.seats) == {"mlx", "openai", "fair-value"}
    assert game.reason == "natural" and game.returns is not None
    openai_seat = game.seats.index("openai")
    crashes = [f.detail for f in game.faults if f.seat == openai_seat and f.detail.startswith("player raised")]
    assert not crashes, crashes  # the server answered (unreadable answers become defaults, as data)
    assert os.environ["OPENAI_API_KEY"] not in Path(report.path).read_text()
