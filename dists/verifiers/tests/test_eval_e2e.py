"""End to end through verifiers' own command (`vf-eval arena-verifiers`): its loader, the null
harness in a subprocess runtime, and a local fake OpenAI-compatible server that streams answers
(some hedged, so retries happen). Two games: matrix against an Arena player (one model seat),
and Kuhn poker in self-play (both seats played by the run's model: the `player` and `opponent`
roles, one trace each). Each episode's rewards and counted faults are then re-derived by
replaying the model's replies from the traces through the same game. Cost: about 20 s per run
(the harness launches a chat program per conversation)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("verifiers.v1")
from arena_verifiers.seat import ModelSeatGame  # noqa: E402
from arena_verifiers.taskset import _seat_task  # noqa: E402
from sse_fake import StreamingFakeServer  # noqa: E402

SRC = Path(__file__).resolve().parents[1] / "src"


def eval_command() -> str:
    """verifiers' evaluation command for its v1 environments: ``eval`` where the installed release
    ships the v1 CLI under that name (verifiers' main after 0.4 moved ``vf-eval`` to its legacy
    stack), else ``vf-eval`` (0.4.x); dists/verifiers/README.md, "Which command"."""
    from importlib.metadata import entry_points

    scripts = {ep.name: ep.value for ep in entry_points(group="console_scripts") if ep.value.startswith("verifiers")}
    name = "eval" if "eval" in scripts else "vf-eval"
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    assert found, f"verifiers installs no {name!r} command beside this Python (its commands: {sorted(scripts)})"
    return found


def vf_eval(tmp_path: Path, n: int, fake_seed: int, *options: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Run verifiers' eval command on arena-verifiers for n episodes against the fake server: (episodes, requests)."""
    vf = eval_command()
    with StreamingFakeServer(seed=fake_seed) as server:
        env = dict(os.environ, FAKE_KEY="x", PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
        args = [vf, "arena-verifiers", "-m", "fake", "-n", str(n), "--no-push", "-o", str(tmp_path / "out")]
        args += ["--client.base-url", server.url, "--client.api-key-var", "FAKE_KEY", *options]
        out = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    (traces,) = list((tmp_path / "out").rglob("traces.jsonl"))
    episodes = [json.loads(line) for line in traces.read_text().splitlines()]
    assert len(episodes) == n and all(e["ok"] for e in episodes)
    assert all(r.get("stream") for r in server.requests)
    return episodes, server.requests


def replies(trace: dict[str, Any]) -> list[str]:
    return [node["message"]["content"] for node in trace["nodes"] if node["message"]["role"] == "assistant"]


def test_vf_eval_plays_arena_games_against_a_fake_model(tmp_path):
    episodes, requests = vf_eval(
        tmp_path, 4, 2, "--env.taskset.game", "matrix", "--env.taskset.opponents", "matrix_uniform"
    )
    assert len(requests) >= 4
    total_faults = 0
    for e in episodes:
        (trace,) = e["traces"]
        info = e["task"]["data"]["info"]
        assert trace["info"]["seed"] == info["seed"] and trace["info"]["seat"] == info["seat"]
        game = ModelSeatGame(_seat_task(info))
        for reply in replies(trace):
            game.reply(reply)
        assert game.done and game.reward == trace["rewards"]["game_reward"]["score"]
        assert game.faults == trace["info"]["faults"]
        total_faults += len(game.faults)
    assert total_faults > 0, "the fake model hedges sometimes: some answers should have been retried"


def test_vf_eval_self_play_gives_each_seat_its_own_trace_and_return(tmp_path):
    """Kuhn poker, both seats the run's model; the opponent role marked untrainable
    (`--env.train-opponent false`): a fixed copy, its traces kept out of training."""
    # fake seed 11: some answers hedge (3 faults expected from replaying the fake offline)
    episodes, _ = vf_eval(
        tmp_path,
        2,
        11,
        "--env.taskset.game",
        "kuhn_poker",
        "--env.taskset.opponents",
        "model",
        "--env.train-opponent",
        "false",
    )
    total_faults = 0
    for e in episodes:
        info = e["task"]["data"]["info"]
        by_role = {t["agent"]["name"]: t for t in e["traces"]}
        assert sorted(by_role) == ["opponent", "player"]
        assert by_role["player"]["agent"]["trainable"] and not by_role["opponent"]["agent"]["trainable"]
        seats = {role: t["info"]["seat"] for role, t in by_role.items()}
        assert seats == {"player": info["seat"], "opponent": 1 - info["seat"]}
        game = ModelSeatGame(_seat_task(info))  # replay: the game says whose reply comes next
        queue = {seats[role]: replies(t) for role, t in by_role.items()}
        while (seat := game.to_answer) is not None:
            game.reply(queue[seat].pop(0), seat)
        assert game.done and queue == {0: [], 1: []}
        for role, t in by_role.items():
            assert t["rewards"]["game_reward"]["score"] == game.reward_of(seats[role])
            assert t["info"]["faults"] == game.faults_by_seat[seats[role]] and t["info"]["role"] == role
        if game.match.end.reason.value == "natural":
            assert game.reward_of(0) + game.reward_of(1) == 0
        total_faults += sum(len(f) for f in game.faults_by_seat.values())
    assert total_faults > 0, "some hedged answers should have been retried"
