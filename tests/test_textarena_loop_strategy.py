"""The local-model arena loop's strategy-title config (issue 32): LiarsDice-v0 against the generic
search player, fixed before any training. The loop on it runs end to end, tiny, in
tests/test_loop_product.py (the README's `arena loop` command, to the before/after page)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("textarena")
pytest.importorskip("mlx_lm")

from arena_train.loop import load_config

ROOT = Path(__file__).resolve().parents[1]


def test_the_strategy_loop_config_is_valid_and_seats_the_fixed_generalist():
    cfg = load_config(ROOT / "examples" / "textarena_loop_liars.toml")
    assert cfg.game == "textarena/LiarsDice-v0"
    import importlib.util

    from arena_core.playerspec import parse_player_spec

    spec = importlib.util.spec_from_file_location("liars_specialist", ROOT / "bench" / "liars_specialist.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert cfg.tournament.opponents[0] == parse_player_spec(bench.GENERALIST)  # ismcts, fixed before training
    assert cfg.tournament.generalist == 1  # and named so in the report
