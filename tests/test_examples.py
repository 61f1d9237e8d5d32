"""Every example script runs."""

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def run_example(name: str, *args: str) -> str:
    out = subprocess.run([sys.executable, str(EXAMPLES / name), *args], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_quickstart(tmp_path):
    out = run_example("quickstart.py", str(tmp_path))
    assert "replay: verified" in out and "aec: player_0 ends with" in out and "gym: reward" in out
    assert (tmp_path / "kuhn.jsonl").exists()


def _arena(*args: str, timeout: int = 600):
    return subprocess.run(
        [sys.executable, "-m", "arena_core.cli", *args], capture_output=True, text=True, timeout=timeout
    )


def test_train_config_example_runs(tmp_path):
    out = _arena(
        "train",
        str(EXAMPLES / "train_kuhn_grpo.toml"),
        "--set",
        "steps=2",
        "--quiet",
        "--run-dir",
        str(tmp_path / "run"),
    )
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "run" / "manifest.json").exists() and (tmp_path / "run" / "metrics.jsonl").exists()


def test_demo_tournament_config_runs(tmp_path):
    """The README's main job, cut to a few games (the full run is `make demo`)."""
    out = _arena(
        "tournament",
        str(EXAMPLES / "tournament_demo.toml"),
        "--out",
        str(tmp_path / "demo"),
        "--max-games",
        "3",
        "--quiet",
        "--bootstrap",
        "50",
    )
    assert out.returncode == 0, out.stderr
    results = (tmp_path / "demo" / "results.jsonl").read_text().splitlines()
    assert len(results) == 1 + 3  # the schedule line, then one line per game


def test_liars_numeric_selfplay_example_trains_and_plays_the_title(tmp_path):
    import pytest

    pytest.importorskip("textarena")
    out = run_example("liars_numeric_selfplay.py", str(tmp_path / "run"), "--games", "150", "--title-games", "2")
    assert "trained: 150 games, 3 updates" in out and "against random: " in out and "of 2 games won" in out
