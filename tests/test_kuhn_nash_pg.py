"""bench/train_kuhn_nash.py's numpy self-play PG (issue 31, point 5) at a tiny size: one file per
variant and seed written as it goes, a finished file skipped, and the report's verdict counted
on the fresh seeds only."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "train_kuhn_nash", Path(__file__).resolve().parents[1] / "bench" / "train_kuhn_nash.py"
)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def test_tuning_and_fresh_seeds_are_apart():
    assert not set(bench.PG_TUNING_SEEDS) & set(bench.PG_FRESH_SEEDS) and len(bench.PG_FRESH_SEEDS) == 5


def test_pg_run_writes_a_file_and_skips_a_finished_one(tmp_path, capsys):
    path = bench.pg_run(3, "magnet", episodes=5_120, out=tmp_path)
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    assert rows[-1]["done"] is True and rows[-1]["config"]["magnet_every"] == 100
    assert [r["episodes"] for r in rows[:-1]] == [0, 2_560, 5_120]
    assert rows[-2]["avg_exploitability"] < rows[0]["avg_exploitability"]
    before = path.read_text()
    bench.pg_run(3, "magnet", episodes=5_120, out=tmp_path)
    assert path.read_text() == before and "skipped" in capsys.readouterr().out


def test_report_counts_only_fresh_seeds(tmp_path):
    for seed in (0, 100):  # a tuning seed's file must not enter the table or the verdict
        bench.pg_run(seed, "magnet", episodes=2_560, out=tmp_path)
    text = bench.pg_report(tmp_path, plot=tmp_path / "p.png")
    assert "| 100 |" in text and "| 0 |" not in text
    assert "not met" in text and "in 0 of 1" in text  # 2,560 episodes are far from 0.02
