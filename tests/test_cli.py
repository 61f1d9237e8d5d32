"""The arena command: listing, playing, replaying, and one clear line for user errors."""

import json
import subprocess
import sys

import pytest

ARENA = [sys.executable, "-m", "arena_core.cli"]


def run(*args):
    return subprocess.run(ARENA + list(args), capture_output=True, text=True, timeout=120)


def test_list_shows_games_and_players():
    out = run("list")
    assert out.returncode == 0
    assert "kuhn_poker" in out.stdout and "random" in out.stdout and "trainers" in out.stdout


def test_play_prints_transcript_and_result_and_replays(tmp_path):
    log = tmp_path / "game.jsonl"
    out = run("play", "kuhn_poker", "--players", "random,first_legal", "--seed", "7", "--log", str(log))
    assert out.returncode == 0, out.stderr
    assert "ply   0  player 0 (random)" in out.stdout and "result (natural)" in out.stdout
    again = run("play", "kuhn_poker", "--players", "random,first_legal", "--seed", "7")
    assert again.stdout.splitlines()[:-1] == out.stdout.splitlines()[:-2]  # same seed, same game
    rep = run("replay", str(log))
    assert rep.returncode == 0 and "replayed exactly" in rep.stdout


def test_replay_divergence_exits_nonzero(tmp_path):
    log = tmp_path / "game.jsonl"
    run("play", "kuhn_poker", "--players", "random,random", "--seed", "1", "--log", str(log))
    lines = log.read_text().splitlines()
    end = json.loads(lines[-1])
    end["returns"] = [r + 1 for r in end["returns"]]
    log.write_text("\n".join(lines[:-1] + [json.dumps(end)]) + "\n")
    rep = run("replay", str(log))
    assert rep.returncode == 1
    assert "replay diverged" in rep.stderr and "returns" in rep.stderr and "Traceback" not in rep.stderr


@pytest.mark.parametrize(
    "args,message",
    [
        (("play", "kuhn_pokr", "--players", "random,random"), "did you mean kuhn_poker"),
        (("play", "kuhn_poker", "--players", "random"), "played by 2 players, not 1"),
        (
            ("play", "kuhn_poker", "--players", "random,random", "--param", "depth=3"),
            "invalid parameters for kuhn_poker",
        ),
        (("play", "kuhn_poker", "--players", "random,rnadom"), "did you mean random"),
        (("play", "kuhn_poker", "--players", "random,random", "--param", "oops"), "key=value"),
        (("play", "kuhn_poker", "--players", "random,random", "--policy", "explode"), "is not a policy; use raise"),
        (("replay", "/nonexistent/file.jsonl"), "No such file"),
    ],
)
def test_user_errors_are_one_clear_line(args, message):
    out = run(*args)
    assert out.returncode == 2
    assert message in out.stderr
    assert "Traceback" not in out.stderr
    assert out.stderr.startswith("arena: error:")


def test_turn_cap_reports_no_result():
    out = run("play", "kuhn_poker", "--players", "random,random", "--turn-cap", "1", "--seed", "0")
    assert out.returncode == 0
    assert "no result: cut off by the harness (turn_cap)" in out.stdout


@pytest.mark.parametrize(
    "command,expected", [("tournament", "config"), ("ratings", "results"), ("study", "--player"), ("train", "config")]
)
def test_delegated_sub_commands_are_reachable(command, expected):
    out = run(command, "--help")
    assert out.returncode == 0, out.stderr
    assert expected in out.stdout


def test_help_lists_plugin_commands():
    out = run("--help")
    assert "study" in out.stdout and "train" in out.stdout and "tournament" in out.stdout
