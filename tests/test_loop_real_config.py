"""The documented real-model loop (examples/textarena_loop_real.toml, docs/training.md) through
`arena loop`, on the code path a real model takes, with the tiny model standing in for its weights
(none can be downloaded here), at a small size: the tiny model written to a directory by the
documented command (`python -m arena_players.tiny_model OUTDIR`), served from it by `mlx_lm.server
--model OUTDIR` (the loop's plumbing check), loaded from that local path by mlx-lm and fine-tuned
with LoRA on the text view, the title's prompt answered in its own action strings (issue 46, points
1-4): the report says the model and the frontier read the same view; progress shows on every phase
unless --quiet; the frontier, skipped without its key, joins the directory once the key is set
and plays only its own games, within its spending cap; `required = true` fails at the start in one
line; a hub id that cannot be fetched fails in one line."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

pytest.importorskip("textarena")
pytest.importorskip("mlx_lm")

from arena_train.loop import main
from report_toys import LegalFake

ROOT = Path(__file__).resolve().parents[1]
REAL = str(ROOT / "examples" / "textarena_loop_real.toml")
KUHN = "textarena/KuhnPoker-v0"


def _run(argv):
    """``arena loop ARGV``: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def test_the_real_model_config_on_a_local_model_then_the_frontier_joins(tmp_path, monkeypatch):
    from arena_players.tiny_model import main as tiny_model

    model_dir = tmp_path / "tiny"
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        assert tiny_model([str(model_dir), "--games", KUHN]) == 0  # python -m arena_players.tiny_model OUTDIR
    assert Path(printed.getvalue().strip()) == model_dir and (model_dir / "config.json").exists()
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with LegalFake() as fake:
        small = [
            f"train.model.path={model_dir}",
            f"game={KUHN}",  # the real config's LiarsDice prompts are long for a test: the same path on KuhnPoker-v0
            'tournament.opponents=["random"]',
            "tournament.deals=2",
            "tournament.bootstrap=200",
            "tournament.pages=false",
            f"tournament.frontier.base_url={fake.url}",
            f'tournament.frontier.cache_dir="{tmp_path / "cache"}"',
            "tournament.frontier.max_calls=12",
            "server.enabled=true",  # mlx_lm.server --model OUTDIR, played through the openai player
            "server.deals=1",
            "server.max_tokens=4",
            "train.steps=2",
            "train.deals_per_step=1",
            "train.group_size=2",
            "train.optim.grad_accum=2",
            "train.checkpoint_every=1",
            "train.pool.snapshot_every=1",
            "train.eval.deals=2",
            "train.eval.every=1",
        ]
        argv = [REAL, "--out", str(tmp_path / "out"), *(x for s in small for x in ("--set", s))]
        code, _, err = _run(argv)
        assert code == 0, err
        # one line for the skipped seat; progress on every phase: tournaments, training steps with reward and entropy, ETA
        assert "frontier seat 'gpt-4.1' skipped: OPENAI_API_KEY not set" in err and f"model: {model_dir}" in err
        assert "server check: the stock model behind mlx_lm.server" in err
        assert "seed 0: before tournament, 2 entrants" in err and "seed 0: after tournament, 3 entrants" in err
        assert (
            "seed 0 training" in err and "reward=" in err and "entropy=" in err and "<" in err
        )  # tqdm: elapsed<remaining
        report = json.loads((tmp_path / "out" / "report.json").read_text())
        first = report["seeds"][0]
        assert first["train_status"] == "ok" and "frontier" not in first["seats"]
        # the text view, answered in the title's action strings: every move legal
        assert first["seats"]["rl"]["reads"] == "the game's text view" and first["faults"]["after"]["faults"] == 0
        assert first["seats"]["rl"]["answers"].startswith("constrained text")
        # LoRA: the checkpoints hold the adapters only, on the model loaded from the local directory
        import mlx.core as mx

        ckpt = tmp_path / "out" / "seed0" / "train" / "checkpoints" / "step_000002"
        assert all(k.endswith(("lora_a", "lora_b")) for k in mx.load(str(ckpt / "trainable.safetensors")))
        assert json.loads((ckpt / "state.json").read_text())["config"]["model"]["path"] == str(model_dir)
        server = report["server"]  # the stock model served from the directory played its games
        assert server["faults"]["games"] == 2 and server["faults"]["decisions"] > 0
        train_json = (tmp_path / "out" / "seed0" / "train.json").read_text()

        # the key is set later: the frontier joins the directory, only its games are played
        monkeypatch.setenv("OPENAI_API_KEY", "not-a-real-key")  # the fake ignores it
        code, _, err = _run(argv)
        assert code == 0, err
        assert 0 < fake.requests <= 2 * 12  # within its cap in each tournament
    assert "the frontier seat joins" in err and "frontier joins the recorded games" in err
    assert "server check: done already" in err and "seed 0 training" not in err  # nothing trained again
    # only the new pairs' games: 2 pairs with it x 2 deals x 2 seatings before, 3 pairs after (cut ones recorded unplayed)
    before = re.search(r"liars-qwen3-4b-before: (\d+) games played, 4 already recorded", err)
    after = re.search(r"liars-qwen3-4b-after: (\d+) games played, 12 already recorded", err)
    assert before and after and 0 < int(before.group(1)) <= 8 and 0 < int(after.group(1)) <= 12
    assert (tmp_path / "out" / "seed0" / "train.json").read_text() == train_json
    seed = json.loads((tmp_path / "out" / "report.json").read_text())["seeds"][0]
    assert seed["opponents"]["random"] == first["opponents"]["random"]  # the recorded games, not replayed
    # like for like in what they read; the model's answers constrained, the frontier's free text
    assert seed["seats"]["frontier"]["reads"] == seed["seats"]["rl"]["reads"] == "the game's text view"
    assert seed["seats"]["frontier"]["mode"] == "free" and seed["seats"]["rl"]["mode"] == "constrained"
    assert "like for like in what they read" in (tmp_path / "out" / "report.html").read_text()
    f = seed["frontier"]
    for phase, pairs in (("before", 2), ("after", 3)):
        assert f[phase]["games"] == pairs * 4  # every scheduled game counted, played or cut
        assert f[phase]["faults"] > 0  # the fake's words that are no move: faults, counted
    assert 0 < f["before"]["unplayed"] < f["before"]["games"]  # its spending cap cut the rest

    # the directory now seats the frontier: playing a new seed without its key is refused in one line
    monkeypatch.delenv("OPENAI_API_KEY")
    code, _, err = _run([*argv, "--seeds", "0,1", "--quiet"])
    assert code == 2 and err.strip().count("\n") == 0 and "seats the frontier" in err and "OPENAI_API_KEY" in err
    # and a required frontier without its key stops at the start, before anything runs
    code, _, err = _run([*argv[:2], str(tmp_path / "fresh"), *argv[3:], "--set", "tournament.frontier.required=true"])
    assert code == 2 and err.strip().count("\n") == 0 and "required" in err and "OPENAI_API_KEY" in err
    assert not (tmp_path / "fresh").exists()


def test_a_hub_model_that_cannot_be_fetched_fails_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # no network here: fail at once rather than after timeouts
    out = str(tmp_path / "out")
    code, _, err = _run([REAL, "--out", out, "--quiet", "--set", "train.model.path=no-such-org/no-such-model-4bit"])
    assert code == 2 and err.strip().count("\n") == 0 and "cannot load model 'no-such-org/no-such-model-4bit'" in err
    # nothing was recorded: the same directory takes the corrected command
    code, _, err = _run([REAL, "--out", out, "--quiet", "--set", "train.model.path=other-org/other-4bit"])
    assert code == 2 and "another config" not in err
