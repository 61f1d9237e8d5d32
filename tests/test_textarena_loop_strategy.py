"""The local-model arena loop on a strategy title (issue 32), tiny, end to end: LiarsDice-v0 with
the stock tiny model on its compact view, a baseline tournament against the generic search
player and random, two GRPO steps of self-play against a snapshot pool, the re-tournament."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("textarena")
pytest.importorskip("mlx_lm")

from arena_train.loop import load_config, parse_loop_config, run_loop

ROOT = Path(__file__).resolve().parents[1]
SEARCH = 'search{simulations = 4, rollout = "random"}'
TINY = {
    "name": "tiny-liars-loop",
    "game": "textarena/LiarsDice-v0",
    "seeds": [3],
    "tournament": {"deals": 2, "seed": 11, "opponents": [SEARCH, "random"], "bootstrap": 200},
    "server": {"enabled": False},
    "train": {
        "steps": 2,
        "deals_per_step": 1,
        "group_size": 2,
        "kl_beta": 0.0,
        "plot": False,
        "optim": {"learning_rate": 1e-2},
        "pool": {"snapshot_every": 1, "max_snapshots": 2, "snapshot_temperature": 1.0},
        "eval": {"anchor": "random", "deals": 1},
    },
}


def _weights(path: Path) -> dict[str, np.ndarray]:
    import mlx.core as mx

    return {k: np.array(v) for k, v in mx.load(str(path / "trainable.safetensors")).items()}


def test_tiny_strategy_loop_end_to_end(tmp_path):
    report = run_loop(parse_loop_config(TINY), tmp_path / "out", log=lambda _: None)
    (seed,) = report["seeds"]
    assert seed["train_status"] == "ok"
    for spec in (SEARCH, "random"):
        o = seed["opponents"][spec]
        for phase in ("before", "after"):
            r = o[phase]
            assert r["games"] == 4 and r["deals"] == 2  # 2 deals x 2 seatings
            assert r["wilson"][0] <= r["win_rate"] <= r["wilson"][1]
    # constrained decoding on the compact view: every decision of the model is a legal move
    for phase in ("before", "after"):
        assert seed["faults"][phase]["decisions"] > 0 and seed["faults"][phase]["faults"] == 0
    assert report["coverage"]["compact_labels_single_token"] is True
    # GRPO moved the weights (outcome rewards of self-play against the snapshot pool)
    ckpts = tmp_path / "out" / "seed3" / "train" / "checkpoints"
    before, after = _weights(ckpts / "step_000000"), _weights(ckpts / "step_000002")
    assert set(before) == set(after)
    assert any(not np.array_equal(before[k], after[k]) for k in before)


def test_the_strategy_loop_config_is_valid_and_seats_the_fixed_generalist():
    cfg = load_config(ROOT / "examples" / "textarena_loop_liars.toml")
    assert cfg.game == "textarena/LiarsDice-v0"
    import importlib.util

    from arena_core.playerspec import parse_player_spec

    spec = importlib.util.spec_from_file_location("textarena_loop_liars", ROOT / "bench" / "textarena_loop_liars.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert cfg.tournament.opponents[0] == parse_player_spec(bench.GENERALIST)  # the generalist fixed before training
