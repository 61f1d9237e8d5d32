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
