"""examples/trainer_example.py (docs/developing.md, "Adding a trainer"): a trainer written through
the protocol learns, and ``arena train`` runs it once its entry point is registered."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from arena_core import registry
from arena_core.registry import Trainer, make_game, make_player
from arena_core.runner import play_episode

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
_spec = importlib.util.spec_from_file_location("trainer_example", EXAMPLES / "trainer_example.py")
example = importlib.util.module_from_spec(_spec)
sys.modules["trainer_example"] = example
_spec.loader.exec_module(example)


def value_against_king_only(policy: dict[str, str]) -> float:
    """The policy's mean return over Kuhn's six deals in both seats against ``kuhn_king_only``
    (both deterministic: exact); an observation the policy never met plays its first legal action."""

    class Greedy:
        name = "greedy"

        def act(self, decision):
            want = policy.get(json.dumps(decision.observation, sort_keys=True))
            named = {decision.game.action_to_str(a): a for a in decision.legal_actions}
            return named.get(want, decision.legal_actions[0])

    game, total = make_game("kuhn_poker"), 0.0
    for deal, _ in game.enumerate_deals():
        for seat in (0, 1):
            players = [make_player("kuhn_king_only"), make_player("kuhn_king_only")]
            players[seat] = Greedy()
            total += play_episode(game, players, deal).end.returns[seat]
    return total / 12


def test_the_example_trainer_learns_a_best_response(tmp_path):
    assert isinstance(example.TRAINER, Trainer)
    summary = example.TRAINER({"game": "kuhn_poker", "opponent": "kuhn_king_only"}, tmp_path / "run")
    policy = json.loads(Path(summary.files["policy"]).read_text())
    # seed 0 reaches the best response (1/4; the best card-blind policy gets 1/6, the fallback 0)
    assert value_against_king_only(policy) == pytest.approx(0.25)
    assert value_against_king_only({}) == pytest.approx(0.0)  # the untrained fallback: the check can fail
    assert [r["step"] for r in summary.metrics] == [500, 1000, 1500, 2000, 2500, 3000]


def test_arena_train_runs_the_registered_example(tmp_path, monkeypatch, capsys):
    from arena_train.cli import main

    info = tmp_path / "site" / "mc_example-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mc-example\nVersion: 0\n")
    (info / "entry_points.txt").write_text("[arena.trainers]\nmc_values = trainer_example:TRAINER\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path / "site"), str(EXAMPLES), *sys.path])
    registry.refresh()
    try:
        config = tmp_path / "mc.json"
        config.write_text(
            json.dumps({"trainer": "mc_values", "game": "kuhn_poker", "opponent": "kuhn_king_only", "episodes": 200})
        )
        assert main([str(config), "--run-dir", str(tmp_path / "run"), "--quiet"]) == 0
        printed = json.loads(capsys.readouterr().out)
        assert printed["steps"] == 200 and printed["policy"].endswith("policy.json")
        config.write_text(json.dumps({"trainer": "mc_values", "game": "kuhn_poker"}))
        assert main([str(config), "--run-dir", str(tmp_path / "other"), "--quiet"]) == 2
        assert "opponent: Field required" in capsys.readouterr().err
    finally:
        monkeypatch.undo()
        registry.refresh()


def test_the_example_is_about_thirty_lines_of_trainer():
    """The trainer itself (its config, its function and its registration), not counting the
    docstring and the command-line lines, stays small: the point of the example."""
    source = (EXAMPLES / "trainer_example.py").read_text()
    body = source.split('"""\n', 2)[2].split('if __name__ == "__main__":')[0]
    code = [
        line for line in body.splitlines() if line.strip() and not line.strip().startswith(("#", "from ", "import "))
    ]
    assert len(code) <= 45, len(code)
    pytest.importorskip("arena_train")
