"""Resume: a subprocess tournament killed with SIGKILL at several points ends with the same games
and the same ratings as an uninterrupted run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

from arena_tournament.ratings import summarize
from arena_tournament.runner import load_results

HERE = Path(__file__).parent

CONFIG = """
name = "kill-test"
game = "draw_or_stand"
game_factory = "tournament_toys:DrawOrStand"
deals = 3
output = "{out}"
entrants = [
{entrants}
]
[run]
backend = "{backend}"
workers = 2
"""


def write_config(tmp: Path, name: str, backend: str = "sequential") -> Path:
    entrants = ",\n".join(
        f'  {{ name = "s{i}", factory = "tournament_toys:Skilled", options = {{ skill = {i / 6}, delay_s = 0.004 }} }}'
        for i in range(7)
    )
    path = tmp / f"{name}.toml"
    path.write_text(CONFIG.format(out=tmp / name, entrants=entrants, backend=backend))
    return path


def command(config: Path) -> list[str]:
    return [sys.executable, "-m", "arena_tournament.cli", "tournament", str(config), "--quiet", "--no-report"]


def env() -> dict:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(HERE), e.get("PYTHONPATH", "")])
    return e


def lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def run_and_kill_at(config: Path, results: Path, at_lines: int) -> int:
    """Start the tournament, SIGKILL it once the results file has ``at_lines`` lines."""
    proc = subprocess.Popen(command(config), env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while lines(results) < at_lines and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    finished = proc.poll() is not None
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not finished, f"the run ended before the kill point: {proc.stderr.read().decode()[-2000:]}"
    return lines(results)


def assert_same(killed: Path, whole: Path) -> None:
    h1, g1 = load_results(killed)
    h2, g2 = load_results(whole)
    keys = [g.key for g in g1]
    assert len(keys) == len(set(keys)) == len(h1.schedule.games())  # none lost, none duplicated
    assert sorted((g.outcome() for g in g1), key=lambda o: o["key"]) == sorted(
        (g.outcome() for g in g2), key=lambda o: o["key"]
    )
    s1, s2 = summarize(h1, g1, resamples=200), summarize(h2, g2, resamples=200)
    assert s1.leaderboard == s2.leaderboard and s1.head_to_head == s2.head_to_head


def test_sigkill_at_several_points_then_resume_gives_the_uninterrupted_results(tmp_path):
    whole_cfg = write_config(tmp_path, "whole")
    subprocess.run(command(whole_cfg), env=env(), check=True, capture_output=True)
    cfg = write_config(tmp_path, "killed")
    results = tmp_path / "killed" / "results.jsonl"
    seen = [run_and_kill_at(cfg, results, n) for n in (1, 4, 20, 45)]  # 1: only the schedule line
    assert seen == sorted(seen) and seen[-1] < 64
    subprocess.run(command(cfg), env=env(), check=True, capture_output=True)
    assert_same(results, tmp_path / "whole" / "results.jsonl")


def processes_marked(marker: str) -> list[int]:
    """Live processes whose environment holds ``marker`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def test_sigkill_of_a_process_pool_run_then_resume(tmp_path, monkeypatch):
    marker = f"ARENA_KILL_TEST={uuid.uuid4().hex}"
    monkeypatch.setenv("ARENA_KILL_TEST", marker.split("=")[1])
    cfg = write_config(tmp_path, "pool", backend="process")
    results = tmp_path / "pool" / "results.jsonl"
    run_and_kill_at(cfg, results, 15)
    if Path("/proc/self/environ").exists():  # the orphaned pool workers notice and exit
        deadline = time.monotonic() + 10
        while processes_marked(marker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert processes_marked(marker) == []
    subprocess.run(command(cfg), env=env(), check=True, capture_output=True)
    whole = write_config(tmp_path, "whole")
    subprocess.run(command(whole), env=env(), check=True, capture_output=True)
    assert_same(results, tmp_path / "whole" / "results.jsonl")
