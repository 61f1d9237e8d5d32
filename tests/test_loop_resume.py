"""The arena loop's ratings and resume (issue 32), tiny: Kuhn-v0, 4 deals x 2 seatings (the fewest
that give rating intervals), two GRPO steps. A finished seed is skipped, a cut one continues (its
tournaments through the runner's resume, its training from the latest checkpoint, exactly); a
directory of another config is refused; the tournaments rate every entrant with intervals. (The
frontier seat, capped, skipped without its key and joining later: tests/test_loop_real_config.py.)"""

from __future__ import annotations

import json
import math
import shutil

import pytest

pytest.importorskip("textarena")
pytest.importorskip("mlx_lm")

from arena_core.errors import ConfigError
from arena_train.loop import frontier_options, load_config, main, parse_loop_config, run_loop

EQ = "textarena_kuhn_equilibrium"
TINY = {
    "name": "tiny-resume",
    "game": "textarena/KuhnPoker-v0",
    "seeds": [5],
    "analysis": "arena_games.textarena.kuhn_v0:exact_values",
    "tournament": {"deals": 4, "seed": 7, "bootstrap": 200, "opponents": [EQ, "random"], "pages": False},
    "server": {"enabled": False},
    "train": {
        "steps": 2,
        "deals_per_step": 1,
        "group_size": 2,
        "kl_beta": 0.0,
        "plot": False,
        "checkpoint_every": 1,
        "pool": {"snapshot_every": 1, "max_snapshots": 2, "snapshot_temperature": 1.0},
        "eval": {"anchor": "random", "deals": 2},
    },
}
OPPS = {"opp1-" + EQ, "opp2-random"}


def _quiet(lines):
    return lambda s: lines.append(s)


def _strip(result):
    return {k: v for k, v in result.items() if k not in ("train_s", "resumed_from_step", "run_id")}


def test_ratings_resume_and_a_foreign_config(tmp_path):
    cfg, out, lines, steps = parse_loop_config(TINY), tmp_path / "out", [], []
    first = run_loop(cfg, out, log=_quiet(lines), progress=lambda step, row: steps.append((step, row["step"])))
    (seed5,) = first["seeds"]
    assert steps == [(s, s) for s in range(1, TINY["train"]["steps"] + 1)]  # the hook sees every training step
    # every entrant rated, with a finite interval of non-zero width; the re-tournament seats both models
    for phase, names in (("before", {"stock"} | OPPS), ("after", {"stock", "rl"} | OPPS)):
        board = seed5["ratings"][phase]["leaderboard"]
        assert {r["name"] for r in board} == names
        for r in board:
            assert math.isfinite(r["rating_low"]) and math.isfinite(r["rating_high"])
            assert r["rating_low"] < r["rating"] < r["rating_high"], r
            assert r["rank_low"] <= r["rank"] <= r["rank_high"]
        assert (out / "seed5" / phase / "summary.json").exists()  # the tournament's own summary
    assert seed5["rl_vs_stock"]["games"] == 8
    md = (out / "report.md").read_text()
    assert "| 5 | after | rl |" in md and "| 5 | before | stock |" in md

    # the same command with one more seed: seed 5 is skipped (not replayed), seed 6 runs
    lines.clear()
    both = run_loop(cfg, out, seeds=[5, 6], log=_quiet(lines))
    assert "seed 5: finished already, skipped" in lines and any(x.startswith("continuing") for x in lines)
    assert [r["seed"] for r in both["seeds"]] == [5, 6]
    assert both["seeds"][0] == json.loads(json.dumps(seed5))
    seed6 = both["seeds"][1]

    # cut seed 6 in its re-tournament: the runner's resume plays only the missing games
    s6 = out / "seed6"
    (s6 / "result.json").unlink()
    results = (s6 / "after" / "results.jsonl").read_text().splitlines(keepends=True)
    (s6 / "after" / "results.jsonl").write_text("".join(results[:-3]))
    lines.clear()
    again = run_loop(cfg, out, seeds=[5, 6], log=_quiet(lines))
    assert "tiny-resume-after: 3 games played, 45 already recorded" in lines
    assert again["seeds"][1] == json.loads(json.dumps(seed6))

    # cut seed 6 in its training: it resumes from the latest checkpoint, exactly (the same weights,
    # so the restarted re-tournament gives the uncut run's numbers)
    final = (s6 / "train" / "checkpoints" / "step_000002" / "trainable.safetensors").read_bytes()
    (s6 / "result.json").unlink()
    (s6 / "train.json").unlink()
    shutil.rmtree(s6 / "train" / "checkpoints" / "step_000002")
    lines.clear()
    again = run_loop(cfg, out, seeds=[5, 6], log=_quiet(lines))
    assert "seed 6: resuming the training from step_000001" in lines
    assert "tiny-resume-before: 0 games played, 24 already recorded" in lines
    assert (s6 / "train" / "checkpoints" / "step_000002" / "trainable.safetensors").read_bytes() == final
    resumed = again["seeds"][1]
    assert resumed["resumed_from_step"] == 1
    assert _strip(resumed) == _strip(json.loads(json.dumps(seed6)))
    assert [c["step"] for c in resumed["exact"]["curve"]] == [0, 1, 2]

    # another config on this directory: one line naming what differs, and the fix
    other = parse_loop_config({**TINY, "train": {**TINY["train"], "steps": 3}})
    with pytest.raises(ConfigError, match=r"differs in train\.steps.*--out"):
        run_loop(other, out, log=_quiet(lines))


def test_a_foreign_directory_is_refused_in_one_line(tmp_path, capsys):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("mine")
    cfg = tmp_path / "loop.json"
    cfg.write_text(json.dumps(TINY))
    assert main([str(cfg), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "holds no loop.json" in err and "--out" in err


def test_the_liars_config_seats_a_frontier_model_only_when_its_key_is_set(monkeypatch):
    cfg = load_config("examples/textarena_loop_liars.toml")
    f = cfg.tournament.frontier
    assert f is not None and f.max_calls > 0 and f.api_key_env
    monkeypatch.delenv(f.api_key_env, raising=False)
    lines = []
    assert frontier_options(cfg, log=_quiet(lines)) is None and len(lines) == 1 and f.api_key_env in lines[0]
    monkeypatch.setenv(f.api_key_env, "set")
    opts = frontier_options(cfg, log=_quiet(lines))
    if f.base_url_env is None:
        assert opts is not None and opts["max_calls"] == f.max_calls and "~" not in opts["cache_dir"]
