"""`arena loop`'s command line (issue 46, points 1-2): --set overrides reach nested tables and a bad
one is one line naming the fix; --plot draws or says why not. The loop's seats, progress, a frontier
that joins later and a required one: tests/test_loop_real_config.py; the README's run to the page:
tests/test_loop_product.py."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("textarena")
pytest.importorskip("mlx_lm")

from arena_core.errors import ConfigError
from arena_train.loop import main, parse_loop_config

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
