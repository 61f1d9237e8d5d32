"""Issue 27, point 3: `arena replay` proves what it says. A game that changes the state it is
given (here only from its seventh move on, an outsider's "optimisation") is refused, not
"replayed exactly"; a tournament's damaged or truncated records.jsonl.gz is reported against
results.jsonl with a non-zero exit."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from arena_core import Match, ReplayDivergenceError
from arena_core.replay import replay
from outsider_games import LateMutatingTally

TESTS = Path(__file__).resolve().parent


def _arena(*args, cwd, env=None):
    return subprocess.run(
        [sys.executable, "-m", "arena_core.cli", *args], capture_output=True, text=True, timeout=300, cwd=cwd, env=env
    )


def test_a_game_that_mutates_its_state_late_in_the_game_is_not_replayed_exactly():
    game = LateMutatingTally()
    match = Match(game, 1)
    while not match.done:
        match.submit(match.to_act(), 1)
    with pytest.raises(ReplayDivergenceError, match=r"event 6 \(ply 6\): the game changed its input state"):
        replay(match.record, LateMutatingTally())


def test_arena_replay_of_a_registered_mutating_game_exits_non_zero(tmp_path):
    info = tmp_path / "site" / "outsider_games-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: outsider-games\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[arena.games]\noutsider_late_mutating = outsider_games:LateMutatingTally\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), str(tmp_path / "site")])}
    played = _arena(
        "play",
        "outsider_late_mutating",
        "--players",
        "random,random",
        "--seed",
        "1",
        "--log",
        "ep.jsonl",
        cwd=tmp_path,
        env=env,
    )
    assert played.returncode == 0, played.stderr
    out = _arena("replay", "ep.jsonl", cwd=tmp_path, env=env)
    assert out.returncode != 0 and "changed its input state" in out.stderr, out.stdout + out.stderr
    assert "replayed exactly" not in out.stdout


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A 36-game Kuhn tournament with its records."""
    where = tmp_path_factory.mktemp("kuhn-run")
    (where / "t.toml").write_text(
        textwrap.dedent("""
        name = "kuhn-records"
        game = "kuhn_poker"
        num_players = 2
        deals = 18
        seed = 5
        output = "out"

        [[entrants]]
        name = "a"
        player = "random"

        [[entrants]]
        name = "b"
        player = "kuhn_king_only"
    """)
    )
    done = _arena("tournament", "t.toml", "--quiet", "--bootstrap", "0", cwd=where)
    assert done.returncode == 0, done.stderr
    return where / "out"


def _copy(run_dir: Path, to: Path) -> Path:
    to.mkdir()
    for f in ("results.jsonl", "records.jsonl.gz"):
        (to / f).write_bytes((run_dir / f).read_bytes())
    return to


def test_an_intact_run_replays_exactly(run_dir):
    out = _arena("replay", str(run_dir), cwd=run_dir)
    assert out.returncode == 0 and "36 episode(s) replayed exactly" in out.stdout, out.stderr


def test_64_overwritten_bytes_are_reported_against_the_results_with_a_non_zero_exit(run_dir, tmp_path):
    copy = _copy(run_dir, tmp_path / "damaged")
    data = bytearray((copy / "records.jsonl.gz").read_bytes())
    mid = len(data) // 2
    data[mid : mid + 64] = b"\0" * 64
    (copy / "records.jsonl.gz").write_bytes(bytes(data))
    out = _arena("replay", str(copy), cwd=tmp_path)
    assert out.returncode != 0, out.stdout
    assert "replayed exactly" not in out.stdout
    assert "results.jsonl" in out.stderr and "no readable record" in out.stderr and "unreadable bytes" in out.stderr
    # only the members the damage touches are lost: the records after it still read
    assert "1 of the 36 played games" in out.stderr or "2 of the 36 played games" in out.stderr, out.stderr


def test_a_truncated_records_file_is_reported_with_a_non_zero_exit(run_dir, tmp_path):
    copy = _copy(run_dir, tmp_path / "cut")
    data = (copy / "records.jsonl.gz").read_bytes()
    (copy / "records.jsonl.gz").write_bytes(data[: len(data) * 3 // 4])
    out = _arena("replay", str(copy), cwd=tmp_path)
    assert out.returncode != 0 and "replayed exactly" not in out.stdout
    assert "of the 36 played games listed in" in out.stderr, out.stderr
