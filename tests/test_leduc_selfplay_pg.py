"""The numpy self-play PG on native Leduc (issue 31, point 4) at a tiny size: the compiled tree's
exploitability is arena_train.exact's, and bench/leduc_bench.py's selfplay_pg method writes a
resumable curve with the average and the last iterate."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from arena_core.registry import load
from arena_train.compiled import CompiledGame
from arena_train.exact import exploitability

_spec = importlib.util.spec_from_file_location(
    "leduc_bench_pg", Path(__file__).resolve().parents[1] / "bench" / "leduc_bench.py"
)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def test_compiled_leduc_exploitability_is_the_exact_one():
    game = load("games", "leduc_poker")()
    tree = CompiledGame(game)
    assert tree.num_infos == 288
    uniform = tree.mask / tree.mask.sum(axis=1, keepdims=True)
    assert tree.exploitability(uniform) == pytest.approx(2.3736111111, abs=1e-9)  # OpenSpiel's value too
    logits = np.random.default_rng(3).standard_normal(tree.mask.shape)
    p = np.where(tree.mask > 0, np.exp(logits), 0.0)
    p /= p.sum(axis=1, keepdims=True)
    assert tree.exploitability(p) == pytest.approx(exploitability(game, tree.table(p)).exploitability, abs=1e-9)


def test_selfplay_pg_method_writes_average_and_last_iterate(tmp_path):
    path = bench.run("selfplay_pg", 5, 12_800, 3, tmp_path)
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    evals, done = rows[:-1], rows[-1]
    assert done["done"] is True and [r["episodes"] for r in evals] == [128, 1280, 12_800]
    assert all({"exploitability", "last_iterate"} <= r.keys() for r in evals)
    assert evals[-1]["exploitability"] < evals[0]["exploitability"] < 2.4  # it learns from the uniform start
    again = bench.run("selfplay_pg", 5, 12_800, 3, tmp_path)
    assert again.read_text() == path.read_text()  # finished: skipped
