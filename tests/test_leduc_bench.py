"""bench/leduc_bench.py at a tiny size: one result file per method and seed, written as it
goes; a finished file is skipped, an unfinished one started again; methods not written yet
exit 2 with one line."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location(
    "leduc_bench", Path(__file__).resolve().parents[1] / "bench" / "leduc_bench.py"
)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def _rows(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_cfr_writes_a_curve_and_a_finished_file_is_skipped(tmp_path, capsys):
    assert (
        bench.main(
            ["run", "--method", "cfr", "--seed", "1", "--episodes", "480", "--evals", "2", "--out", str(tmp_path)]
        )
        == 0
    )
    path = tmp_path / "cfr" / "seed_1.jsonl"
    rows = _rows(path)
    assert [r["episodes"] for r in rows[:-1]] == [240, 480] and rows[-1]["done"] is True
    assert rows[1]["exploitability"] < rows[0]["exploitability"] < 2.6
    before = path.read_text()
    assert bench.main(["run", "--method", "cfr", "--seed", "1", "--episodes", "480", "--out", str(tmp_path)]) == 0
    assert path.read_text() == before and "skipped" in capsys.readouterr().out


def test_an_unfinished_file_is_run_again(tmp_path):
    path = tmp_path / "cfr" / "seed_0.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"episodes": 240, "exploitability": 9.0, "wall_s": 1.0}) + "\n")
    assert not bench.finished(path)
    bench.run("cfr", 0, 240, 1, tmp_path)
    assert bench.finished(path) and _rows(path)[0]["exploitability"] < 9.0


def test_openspiel_cfrplus_runs_where_installed(tmp_path):
    pytest.importorskip("pyspiel")
    path = bench.run("cfrplus", 0, 480, 2, tmp_path)
    rows = _rows(path)
    assert rows[0]["exploitability"] == pytest.approx(2.3736111, abs=1e-6)  # the uniform first average
    assert rows[1]["exploitability"] < rows[0]["exploitability"]


@pytest.mark.parametrize("method", ["lm_selfplay", "nfsp", "policy_gradient"])
def test_methods_not_written_yet_say_so(tmp_path, method, capsys):
    assert bench.main(["run", "--method", method, "--seed", "0", "--out", str(tmp_path)]) == 2
    assert "not written yet" in capsys.readouterr().err
