"""examples/llm_players.py runs end to end with the tiny model."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "llm_players.py"


def test_llm_players_example(tmp_path):
    pytest.importorskip("mlx_lm")
    out = subprocess.run([sys.executable, str(EXAMPLE), str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "megagem constrained:" in out.stdout and "methods: ['constrained']" in out.stdout
    assert "batched: 8 games" in out.stdout
    for name in ("megagem_llm.jsonl", "kuhn_free.jsonl", "kuhn_batch.jsonl"):
        lines = [json.loads(x) for x in (tmp_path / name).read_text().splitlines()]
        assert lines[0]["type"] == "header" and lines[-1]["type"] == "end"
