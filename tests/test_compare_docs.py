"""Issue 28, item 5: the docs say what the code does (a checkpoint entrant's identity; the search
player's margin over the expert comes with its opponent knowledge)."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _identity(tmp_path: Path, seed: int) -> dict:
    from arena_tournament.identity import entrant_identity
    from arena_tournament.schedule import Entrant
    from arena_train.checkpoint_player import CheckpointPlayer

    step = tmp_path / "run" / "checkpoints" / "step_000002"
    step.mkdir(parents=True, exist_ok=True)
    config = {"game": "megagem", "seed": seed, "model": {"path": "tiny"}}
    (step / "state.json").write_text(json.dumps({"trainer": "grpo", "step": 2, "seed": seed, "config": config}))
    (step / "trainable.safetensors").write_bytes(b"weights")
    player = CheckpointPlayer(seed=0, run=str(tmp_path / "run"))
    entrant = Entrant.model_validate({"name": "s", "player": "checkpoint", "options": {"run": str(tmp_path / "run")}})
    return entrant_identity(entrant, player)


def test_checkpoint_identity_is_what_the_docs_say(tmp_path):
    ident = _identity(tmp_path, seed=0)
    params = ident["params"]
    assert params["checkpoint"].endswith("step_000002") and params["step"] == 2
    assert params["temperature"] == 0.0 and params["view_name"] == "auto" and ident["checkpoint_sha256"]
    retrained = _identity(tmp_path, seed=1)  # same name, same weights, another training seed
    assert retrained["checkpoint_sha256"] != ident["checkpoint_sha256"]  # state.json is hashed too
    doc = " ".join((ROOT / "docs" / "training.md").read_text().split())
    toml = " ".join(
        line.lstrip("# ") for line in (ROOT / "examples" / "tournament_trained.toml").read_text().splitlines()
    )
    for text in (doc, toml):
        assert "SHA-256 of every file" in text and "temperature" in text
        assert "the training config and the SHA-256 of the weights" not in text
        assert "the training seed and config, and the SHA-256 of the weights" not in text


def test_the_search_margin_over_the_expert_says_its_rollouts_play_the_opponents_policy():
    for name in ("training.md", "search.md", "benchmarks.md", "tournaments.md"):
        text = " ".join((ROOT / "docs" / name).read_text().split())
        for m in re.finditer(r"\+52(\.5)?\b", text):
            near = text[max(0, m.start() - 400) : m.end() + 400]
            assert "opponents' own" in near, (name, near)
