"""The documented real-model loop (examples/textarena_loop_real.toml, docs/training.md) on the code
path a real model takes, with the tiny model standing in for its weights (none can be downloaded
here): the tiny model written to a directory by the documented command
(`python -m arena_players.tiny_model OUTDIR`), served from it by `mlx_lm.server --model OUTDIR`
(the loop's plumbing check), loaded from that local path by mlx-lm, fine-tuned with LoRA on the
text view; a hub id that cannot be fetched fails in one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("textarena")
pytest.importorskip("mlx_lm")

from arena_train.loop import load_config, main, run_loop

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "examples" / "textarena_loop_real.toml"
KUHN = "textarena/KuhnPoker-v0"


def test_the_real_model_config_loads_serves_and_trains_a_local_model_with_lora(tmp_path, monkeypatch):
    model_dir = tmp_path / "tiny"
    built = subprocess.run(
        [sys.executable, "-m", "arena_players.tiny_model", str(model_dir), "--games", KUHN],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    assert Path(built.stdout.strip()) == model_dir and (model_dir / "config.json").exists()
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # the frontier seat is skipped (required = false)
    small = [
        f"train.model.path={model_dir}",
        f"game={KUHN}",  # the real config's LiarsDice prompts are long for a test: the same path on KuhnPoker-v0
        'tournament.opponents=["random"]',
        "tournament.deals=2",
        "tournament.bootstrap=200",
        "tournament.pages=false",
        "server.enabled=true",  # mlx_lm.server --model OUTDIR, played through the openai player
        "server.deals=1",
        "server.max_tokens=4",
        "train.steps=1",
        "train.deals_per_step=1",
        "train.group_size=2",
        "train.optim.grad_accum=2",
        "train.pool.snapshot_every=1",
        "train.eval.deals=1",
        "train.eval.every=1",
    ]
    cfg = load_config(REAL, small)
    model = cfg.train["model"] if cfg.train else {}
    assert model["finetune"] == "lora" and cfg.train and cfg.train["view"] == "text"
    lines: list[str] = []
    report = run_loop(cfg, tmp_path / "out", log=lines.append)
    assert f"model: {model_dir}" in lines and any("frontier seat 'gpt-4.1' skipped" in x for x in lines)
    (seed,) = report["seeds"]
    assert seed["train_status"] == "ok" and seed["faults"]["after"]["faults"] == 0
    assert seed["seats"]["rl"]["reads"] == "the game's text view"
    # LoRA: the checkpoints hold the adapters only, on the model loaded from the local directory
    import mlx.core as mx

    weights = mx.load(
        str(tmp_path / "out" / "seed0" / "train" / "checkpoints" / "step_000001" / "trainable.safetensors")
    )
    assert weights and all(k.endswith(("lora_a", "lora_b")) for k in weights)
    saved = json.loads(
        (tmp_path / "out" / "seed0" / "train" / "checkpoints" / "step_000001" / "state.json").read_text()
    )
    assert saved["config"]["model"]["path"] == str(model_dir)
    server = report["server"]  # the stock model served from the directory answered every game
    assert server["faults"]["games"] == 2 and server["faults"]["decisions"] > 0


def test_a_hub_model_that_cannot_be_fetched_fails_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # no network here: fail at once rather than after timeouts
    out = tmp_path / "out"
    assert (
        main([str(REAL), "--out", str(out), "--quiet", "--set", "train.model.path=no-such-org/no-such-model-4bit"]) == 2
    )
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "cannot load model 'no-such-org/no-such-model-4bit'" in err
    # nothing was recorded: the same directory takes the corrected command
    assert main([str(REAL), "--out", str(out), "--quiet", "--set", "train.model.path=other-org/other-4bit"]) == 2
    assert "another config" not in capsys.readouterr().err
