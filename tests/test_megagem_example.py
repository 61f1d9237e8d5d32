"""The MegaGem example runs and shows what it claims."""

import json
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "megagem_game.py"


def test_megagem_example_runs(tmp_path):
    out = subprocess.run([sys.executable, str(EXAMPLE), str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "end natural" in text
    assert '"turn_context"' in text and "parsed: bid 6 via code_block (legal=True)" in text
    assert "'prose_fallback'" in text  # the text player's bids were read from prose
    assert "published variant, 4 players" in text
    lines = [json.loads(x) for x in (tmp_path / "megagem.jsonl").read_text().splitlines()]
    assert lines[0]["game"] == "megagem" and lines[-1]["reason"] == "natural"
