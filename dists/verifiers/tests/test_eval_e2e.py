"""End to end through verifiers' own command (`vf-eval arena-verifiers`): its loader, the null
harness in a subprocess runtime, and a local fake OpenAI-compatible server that streams matrix
answers (some hedged, so retries happen). Each episode's reward and counted faults are then
re-derived by replaying the model's replies from the trace through the same game. Cost: about
20 s per run of 4 episodes (the harness launches a chat program per episode)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("verifiers.v1")
from arena_verifiers.seat import ModelSeatGame  # noqa: E402
from arena_verifiers.taskset import _seat_task  # noqa: E402
from sse_fake import StreamingFakeServer  # noqa: E402

SRC = Path(__file__).resolve().parents[1] / "src"


def test_vf_eval_plays_arena_games_against_a_fake_model(tmp_path):
    vf_eval = shutil.which("vf-eval", path=str(Path(sys.executable).parent))
    assert vf_eval, "verifiers' vf-eval is not installed beside this Python"
    with StreamingFakeServer(seed=2) as server:
        env = dict(os.environ, FAKE_KEY="x", PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
        args = [vf_eval, "arena-verifiers", "-m", "fake", "-n", "4", "--no-push", "-o", str(tmp_path / "out")]
        args += ["--client.base-url", server.url, "--client.api-key-var", "FAKE_KEY"]
        args += ["--env.taskset.game", "matrix", "--env.taskset.opponents", "matrix_uniform"]
        args += ["--env.player.harness.id", "null", "--env.player.runtime.type", "subprocess"]
        out = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    (traces,) = list((tmp_path / "out").rglob("traces.jsonl"))
    episodes = [json.loads(line) for line in traces.read_text().splitlines()]
    assert len(episodes) == 4 and all(e["ok"] for e in episodes)
    assert len(server.requests) >= 4 and all(r.get("stream") for r in server.requests)
    total_faults = 0
    for e in episodes:
        (trace,) = e["traces"]
        info = e["task"]["data"]["info"]
        assert trace["info"]["seed"] == info["seed"] and trace["info"]["seat"] == info["seat"]
        game = ModelSeatGame(_seat_task(info))
        replies = [n["message"]["content"] for n in trace["nodes"] if n["message"]["role"] == "assistant"]
        for reply in replies:
            game.reply(reply)
        assert game.done and game.reward == trace["rewards"]["game_reward"]["score"]
        assert game.faults == trace["info"]["faults"]
        total_faults += len(game.faults)
    assert total_faults > 0, "the fake model hedges sometimes: some answers should have been retried"
