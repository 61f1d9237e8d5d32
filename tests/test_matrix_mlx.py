"""The matrix study with a local MLX model (the tiny offline test model): trials of a cell
reach the player as one batch (one batched generation), sampling is recorded, greedy refused."""

from __future__ import annotations

import csv
import json

import pytest

pytest.importorskip("mlx.core")

from arena_core.errors import ConfigError  # noqa: E402
from arena_games.matrix.study import StudyConfig, run_study  # noqa: E402
from arena_players.mlx_player import MLXEngine, MLXPlayer, load_model  # noqa: E402


@pytest.fixture(scope="module")
def engine() -> MLXEngine:
    return MLXEngine(*load_model("tiny"))


class Counting(MLXPlayer):
    batches: list[int] = []

    def act_batch(self, decisions):
        Counting.batches.append(len(decisions))
        return super().act_batch(decisions)


def test_a_cell_is_one_batched_generation(engine, tmp_path):
    Counting.batches = []
    config = StudyConfig(player="mlx:tiny", archetypes=("coordination",), ks=(3,), trials=12, listings=("shared",))
    factory = lambda spec, seed: Counting(seed, engine=engine, mode="constrained", temperature=1.0)  # noqa: E731
    cell = run_study(config, tmp_path, player_factory=factory, plot=False).cells[0]
    assert Counting.batches == [12, 12]  # seat 0's twelve decisions at once, then seat 1's
    assert cell.scored == 12  # constrained decoding always names a label
    summary = json.loads((tmp_path / "summary.json").read_text())
    copies = summary["sampling"]["copies"]
    assert [c["mode"] for c in copies] == ["constrained", "constrained"] and copies[0]["seed"] != copies[1]["seed"]
    rows = list(csv.DictReader(open(tmp_path / "trials.csv", encoding="utf-8")))
    assert {r["mode_0"] for r in rows} == {"constrained"} and {r["temperature_0"] for r in rows} == {"1.0"}


def test_greedy_mlx_self_play_is_refused(engine):
    config = StudyConfig(player="mlx:tiny", archetypes=("coordination",), ks=(2,), trials=2, listings=("shared",))
    with pytest.raises(ConfigError, match="temperature 0"):
        run_study(config, None, player_factory=lambda spec, seed: MLXPlayer(seed, engine=engine))
