"""The arena loop's seats (issue 46, points 2-4), tiny, on KuhnPoker-v0 through `arena loop`: the
model trained and seated on the frontier's terms (view = "text": the title's prompt, answers in its
action strings) and the report saying so; progress on every phase unless --quiet; a frontier seat
that joins an existing directory once its key is set, with only its own games played, within its
spending cap, its unreadable answers counted as faults; and
`frontier.required = true` failing at the start, in one line, without its key."""

from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("textarena")
pytest.importorskip("mlx_lm")

from arena_core.errors import ConfigError
from arena_train.loop import main, parse_loop_config
from report_toys import LegalFake

KUHN = "textarena/KuhnPoker-v0"
URL_VAR = "ARENA_TEST_FRONTIER_URL"
TEXT_LOOP = {
    "name": "tiny-text-loop",
    "game": KUHN,
    "seeds": [2],
    "tournament": {
        "deals": 4,
        "seed": 9,
        "bootstrap": 200,
        "opponents": ["random"],
        "pages": False,
        "frontier": {"model": "fake", "base_url_env": URL_VAR, "api_key_env": "", "max_calls": 24},
    },
    "server": {"enabled": False},
    "train": {
        "view": "text",
        "steps": 2,
        "deals_per_step": 1,
        "group_size": 2,
        "kl_beta": 0.0,
        "plot": False,
        "model": {"path": "tiny", "tiny_games": [KUHN]},
        "pool": {"snapshot_every": 1, "max_snapshots": 2},
        "eval": {"anchor": "random", "deals": 2, "every": 1},
    },
}


def _config(tmp_path, data=TEXT_LOOP):
    frontier = {**data["tournament"]["frontier"], "cache_dir": str(tmp_path / "cache")}
    path = tmp_path / "loop.json"
    path.write_text(json.dumps({**data, "tournament": {**data["tournament"], "frontier": frontier}}))
    return str(path)


def test_a_text_view_loop_with_progress_then_a_frontier_that_joins_later(tmp_path, monkeypatch, capfd):
    config, out = _config(tmp_path), str(tmp_path / "out")
    monkeypatch.delenv(URL_VAR, raising=False)
    assert main([config, "--out", out]) == 0
    err = capfd.readouterr().err
    # one line for the skipped seat, then progress on every phase: tournaments, training steps with reward and entropy, ETA
    assert f"frontier seat 'fake' skipped: {URL_VAR} not set" in err
    assert "seed 2: before tournament, 2 entrants" in err and "seed 2: after tournament, 3 entrants" in err
    assert "seed 2 training" in err and "reward=" in err and "entropy=" in err and "<" in err  # tqdm: elapsed<remaining
    assert "report: " in err
    first = json.loads((tmp_path / "out" / "report.json").read_text())["seeds"][0]
    assert "frontier" not in first["seats"]
    # like for like in what the model reads: the text view, answered in the title's action strings
    assert first["seats"]["rl"]["reads"] == "the game's text view"
    assert first["seats"]["rl"]["answers"].startswith("constrained text") and first["faults"]["after"]["faults"] == 0
    train_json = (tmp_path / "out" / "seed2" / "train.json").read_text()

    # the key (here the endpoint) is set later: the frontier joins the directory, only its games are played
    with LegalFake() as server:
        monkeypatch.setenv(URL_VAR, server.url)
        assert main([config, "--out", out]) == 0
        assert 0 < server.requests <= 2 * 24  # within its cap in each tournament
    err = capfd.readouterr().err
    assert "the frontier seat joins" in err and "frontier joins the recorded games" in err
    # only the new pairs' games: 2 pairs with it x 4 deals x 2 seatings before, 3 pairs after (cut ones recorded unplayed)
    before = re.search(r"tiny-text-loop-before: (\d+) games played, 8 already recorded", err)
    after = re.search(r"tiny-text-loop-after: (\d+) games played, 24 already recorded", err)
    assert before and after and 0 < int(before.group(1)) <= 16 and 0 < int(after.group(1)) <= 24
    assert "training" not in err.replace("training)", "")  # no training step again
    assert (tmp_path / "out" / "seed2" / "train.json").read_text() == train_json
    seed = json.loads((tmp_path / "out" / "report.json").read_text())["seeds"][0]
    assert seed["seats"]["frontier"]["reads"] == seed["seats"]["rl"]["reads"] == "the game's text view"
    assert seed["seats"]["frontier"]["mode"] == "free" and seed["seats"]["rl"]["mode"] == "constrained"
    assert seed["opponents"]["random"] == first["opponents"]["random"]  # the recorded games, not replayed
    f = seed["frontier"]
    for phase, pairs in (("before", 2), ("after", 3)):
        assert f[phase]["games"] == pairs * 8  # every scheduled game counted, played or cut
        assert f[phase]["faults"] > 0  # the fake's words that are no move: faults, counted
    assert 0 < f["before"]["unplayed"] < f["before"]["games"]  # its spending cap (24 calls) cut the rest
    assert f["after"]["decisions"] > 24  # the re-tournament replays its cached answers for free
    page = (tmp_path / "out" / "report.html").read_text()
    assert "like for like in what they read" in page

    # the directory now seats the frontier: continuing a new seed without its endpoint is refused in one line
    monkeypatch.delenv(URL_VAR)
    assert main([config, "--out", out, "--seeds", "2,3", "--quiet"]) == 2
    err = capfd.readouterr().err.strip()
    assert err.count("\n") == 0 and "seats the frontier" in err and URL_VAR in err


def test_a_required_frontier_fails_at_the_start_in_one_line(tmp_path, monkeypatch, capfd):
    monkeypatch.delenv(URL_VAR, raising=False)
    config = _config(tmp_path)
    assert main([config, "--out", str(tmp_path / "out"), "--set", "tournament.frontier.required=true"]) == 2
    err = capfd.readouterr().err.strip()
    assert err.count("\n") == 0 and "required" in err and URL_VAR in err
    assert not (tmp_path / "out").exists()  # nothing ran


@pytest.mark.parametrize(
    "sets, words",
    [
        (["tournament.deals"], "key=value"),
        (["tournament.opponents.x=1"], "is not a table"),
        (["tournament.bogus=1"], "bogus"),
        (['analysis="arena_games.textarena.kuhn_v0:exact_values"'], "analysis"),
        (["tournament.generalist=2"], "generalist"),
    ],
)
def test_bad_overrides_are_one_line(tmp_path, capfd, sets, words):
    args = [x for s in sets for x in ("--set", s)]
    assert main([_config(tmp_path), "--out", str(tmp_path / "out"), *args]) == 2
    err = capfd.readouterr().err.strip()
    assert err.count("\n") == 0 and words in err


def test_overrides_reach_nested_tables():
    from arena_train.loop_config import apply_overrides

    data = apply_overrides(TEXT_LOOP, ["train.optim.learning_rate=3e-4", 'tournament.opponents=["random", "random"]'])
    assert data["train"]["optim"] == {"learning_rate": 3e-4} and data["tournament"]["opponents"] == ["random"] * 2
    assert TEXT_LOOP["train"].get("optim") is None  # the config given is left as it was
    with pytest.raises(ConfigError, match="one of"):
        parse_loop_config({**TEXT_LOOP, "stages": [{"name": "a", "trainer": "grpo"}]})  # [train] and [[stages]]


def test_plot_draws_or_says_why_not(tmp_path, monkeypatch):
    from arena_train.loop_plots import plot_training

    path = tmp_path / "curves.png"
    assert plot_training([], path, "t") == "no finished seed has a training curve yet"
    seeds = [{"seed": 0, "curve": [{"step": 1, "reward_mean": 0.5, "entropy": 0.6}], "entrants": {}}]
    monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)  # not installed: an ImportError
    assert plot_training(seeds, path, "t").startswith("matplotlib is not installed")
    monkeypatch.undo()
    assert plot_training(seeds, path, "t") == path and path.read_bytes()[:4] == b"\x89PNG"
