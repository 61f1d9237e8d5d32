"""`arena train CONFIG` (arena_train.cli.main) and the training examples, run short."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

pytest.importorskip("mlx.core")

from arena_train.cli import main  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _example(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_trains_policy_gradient_from_a_toml_config(tmp_path, capsys):
    cfg = tmp_path / "pg.toml"
    cfg.write_text(
        'trainer = "policy_gradient"\nname = "pg-cli"\ngame = "kuhn_poker"\nsteps = 2\nepisodes_per_step = 8\nopponents = ["kuhn_king_only"]\neval_deals = 4\nbootstrap = 100\n'
    )
    assert main([str(cfg), "--run-dir", str(tmp_path / "run"), "--quiet", "--set", "steps=3"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "eval_mean" in out["final_eval"]
    rows = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert rows[-1]["step"] == 3


def test_cli_trains_grpo_from_json(tmp_path, capsys):
    cfg = tmp_path / "grpo.json"
    cfg.write_text(
        json.dumps(
            {
                "trainer": "grpo",
                "game": "kuhn_poker",
                "steps": 1,
                "deals_per_step": 1,
                "group_size": 2,
                "plot": False,
                "pool": {"players": ["kuhn_king_only"]},
                "eval": {"anchor": "kuhn_king_only", "deals": 2, "bootstrap": 100},
            }
        )
    )
    assert main([str(cfg), "--run-dir", str(tmp_path / "g"), "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["steps"] == 1


def test_cli_reports_bad_configs_as_user_errors(tmp_path, capsys):
    cfg = tmp_path / "bad.json"
    cfg.write_text(
        json.dumps(
            {"trainer": "grpo", "game": "kuhn_poker", "steps": 0, "pool": {"players": ["x"]}, "eval": {"anchor": "x"}}
        )
    )
    assert main([str(cfg), "--quiet"]) == 2
    assert "steps" in capsys.readouterr().err
    assert main([str(tmp_path / "missing.json"), "--quiet"]) == 2
    cfg.write_text(json.dumps({"game": "kuhn_poker"}))
    assert main([str(cfg), "--quiet"]) == 2
    assert "'trainer' key" in capsys.readouterr().err


def test_grpo_example_runs_short(tmp_path, capsys):
    report = _example("train_grpo_kuhn").main([str(tmp_path / "k"), "--steps", "2"])
    assert report["steps"] == 2 and "eval_mean" in report["final_eval"]
    assert (tmp_path / "k" / "metrics.png").exists()
    # an exact improvement (all deals, a deterministic anchor) is said to be exact, never a zero-width interval
    lines = [line for line in capsys.readouterr().out.splitlines() if "improvement" in line]
    assert lines and all("exact over all 6 deals" in line and "[" not in line for line in lines)


def test_expert_iteration_example_runs_short(tmp_path):
    report = _example("expert_iteration").main(
        [str(tmp_path / "e"), "--rounds", "1", "--deals", "1", "--eval-deals", "2"]
    )
    assert report["eval_deals"] == 2 and "recovered_fraction" in report


def test_selfplay_example_runs_short(tmp_path):
    report = _example("train_kuhn_selfplay").main([str(tmp_path / "s"), "--steps", "2"])
    assert report["steps"] == 2 and 0 <= report["final_eval"]["eval_exploitability"] <= 1
    parent = json.loads((tmp_path / "s" / "selfplay" / "manifest.json").read_text())["run_id"]
    assert report["child_parent"] == parent


def test_selfplay_toml_config_trains_through_the_cli(tmp_path, capsys):
    assert (
        main(
            [
                str(ROOT / "examples" / "train_kuhn_selfplay.toml"),
                "--run-dir",
                str(tmp_path / "t"),
                "--quiet",
                "--set",
                "steps=2",
                "--set",
                "checkpoint_every=1",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["steps"] == 2 and "eval_avg_exploitability" in out["final_eval"]
    # the run directory is taken now: a second run there is refused with one line
    assert (
        main(
            [
                str(ROOT / "examples" / "train_kuhn_selfplay.toml"),
                "--run-dir",
                str(tmp_path / "t"),
                "--quiet",
                "--set",
                "steps=2",
            ]
        )
        == 2
    )
    assert "already holds a run" in capsys.readouterr().err
