"""OpenSpiel's JAX NFSP and policy gradient in bench/leduc_bench.py at a tiny size, only where the
bench extra (JAX) is installed: `make test` does not install it, so CI skips this file. A seed
gives the same curve twice; a result file has its rows and its done row. About a minute of JIT
compiling on one core, hence `slow`."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

pytest.importorskip("jax")
pytest.importorskip("open_spiel.python.jax.nfsp")
pytestmark = pytest.mark.slow

_spec = importlib.util.spec_from_file_location(
    "leduc_bench", Path(__file__).resolve().parents[1] / "bench" / "leduc_bench.py"
)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def _values(path: Path) -> list[float]:
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    assert rows[-1]["done"] is True
    return [r["exploitability"] for r in rows[:-1]]


def test_policy_gradient_is_seeded(tmp_path):
    a = _values(bench.run("policy_gradient", 3, 40, 1, tmp_path / "a"))
    b = _values(bench.run("policy_gradient", 3, 40, 1, tmp_path / "b"))
    c = _values(bench.run("policy_gradient", 4, 40, 1, tmp_path / "c"))
    assert a == b != c and 0 < a[0] < 13  # at most the largest win in Leduc (13 chips)


def test_nfsp_writes_its_average_policy_curve(tmp_path):
    values = _values(bench.run("nfsp", 3, 30, 1, tmp_path))
    assert len(values) == 1 and 0 < values[0] < 13
