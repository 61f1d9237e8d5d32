"""The LiarsDice-v0 recipe (issue 42, points 5b and 7): numeric self-play on the native engine, then
expert iteration distilling the policy's greedy choice into the tiny language model, its agreement
with the teacher on a held-out round reported with a deal-clustered interval. The loop runs this
config end to end, tiny, in tests/test_loop_product.py; here the trainers at a tiny size, the
pieces they added, and the example config against the bench's chosen settings."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_core.errors import ConfigError
from arena_train.loop_config import apply_overrides

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "textarena_loop_liars.toml"
TITLE = "textarena/LiarsDice-v0"


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location("liars_specialist", ROOT / "bench" / "liars_specialist.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_set_reaches_a_stage_by_its_name_and_an_unknown_name_is_one_line():
    data = {"stages": [{"name": "selfplay", "config": {"games": 9}}, {"name": "distil", "config": {}}]}
    out = apply_overrides(data, ["stages.distil.config.steps=5", "stages.selfplay.config.games=3"])
    assert [s["config"] for s in out["stages"]] == [{"games": 3}, {"steps": 5}]
    assert data["stages"][0]["config"] == {"games": 9}  # the input is not changed
    with pytest.raises(ConfigError, match=r"no item named 'polish'.*\['selfplay', 'distil'\]"):
        apply_overrides(data, ["stages.polish.config.steps=5"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.booleans(), min_size=1, max_size=12), min_size=0, max_size=12))
def test_the_agreement_interval_holds_its_share_and_never_has_zero_width(deals):
    from arena_train.expert_iteration import Labelled, agreement_interval
    from arena_train.lm import LMRecord

    rec = LMRecord((1,), (1,), (True,), 0, 0.0, "")
    data = [Labelled(rec, 0, 1, d) for d, hits in enumerate(deals) for _ in hits]
    hits = [h for hits in deals for h in hits]
    iv = agreement_interval(data, hits)
    assert iv["decisions"] == len(hits) and iv["deals"] == len(deals)
    if len(deals) < 2:  # one deal is one cluster: no interval, said so
        assert iv["low"] != iv["low"] and iv["high"] != iv["high"]
    else:
        assert 0.0 <= iv["low"] <= iv["agreement"] <= iv["high"] <= 1.0 and iv["low"] < iv["high"]


def test_the_expert_moves_in_the_students_seat_and_the_students_own_answer_is_recorded():
    from arena_core.registry import make_game, make_player
    from arena_train.expert_iteration import _LabellingLearner
    from arena_train.rollout import Choice, Request
    from arena_train.views import compact_view

    game = make_game("kuhn_poker")
    view = compact_view(game)

    class FirstEntry:  # a student that always answers its menu's first entry
        include_illegal = False

        def decide(self, requests):
            return [Choice(view.menu(r.game, r.pos, r.seat).actions[0], record=("student", 0)) for r in requests]

    expert = make_player("kuhn_king_only", seed=0)
    # a decision where the expert's answer is not the student's (else the test could not tell them apart)
    found = None
    for deal in range(50):
        p = game.start(deal)
        seat = game.current_player(p)
        probe = _LabellingLearner(FirstEntry(), expert, view)  # type: ignore[arg-type]
        probe.decide([Request(game, p, seat, 0, 7)])
        if probe.pairs[0][1] != 0:
            found = p, seat
            break
    assert found is not None
    pos, seat = found
    menu = view.menu(game, pos, seat)
    requests = [Request(game, pos, seat, 0, 7)]
    for play_expert in (False, True):
        learner = _LabellingLearner(FirstEntry(), expert, view, play_expert=play_expert)  # type: ignore[arg-type]
        (choice,) = learner.decide(requests)
        ((record, label, episode),) = learner.pairs
        assert record == ("student", 0) and episode == 0 and label != 0  # the student's answer, whoever moves
        assert choice.action == (menu.actions[label] if play_expert else menu.actions[0])


def test_the_example_is_the_benchs_chosen_recipe_and_the_binomial_bidder_never_trains():
    pytest.importorskip("mlx_lm")
    from arena_core.playerspec import parse_player_spec
    from arena_train.loop import load_config

    bench = _bench()
    cfg = load_config(EXAMPLE)
    assert cfg.game == TITLE and cfg.tournament.generalist == 1
    assert cfg.tournament.opponents[0] == parse_player_spec(bench.GENERALIST)
    assert cfg.tournament.frontier is not None
    selfplay, distil = cfg.stages or []
    assert (selfplay.trainer, distil.trainer) == ("numeric_selfplay", "expert_iteration")
    assert selfplay.config["simulator"] == "liars_dice"
    assert {k: selfplay.config[k] for k in bench.CONFIGS[bench.CHOSEN]} == bench.CONFIGS[bench.CHOSEN]
    chosen = bench.DISTIL_CONFIGS[bench.DISTIL_CHOSEN]
    assert {k: distil.config[k] for k in chosen} == chosen
    assert distil.config["expert"] == 'numeric_mixture{weights = "{previous}/policy.npz", greedy = true}'
    assert "liars_binomial" not in json.dumps([s.config for s in cfg.stages or []])


def test_the_recipe_at_a_tiny_size_distils_reports_agreement_and_resumes_a_cut_selfplay_stage(tmp_path):
    """The example's recipe (tiny stages) as the loop trains a seed: self-play, then the student
    distilled with its held-out agreement and interval in the stage's report; cut inside the
    self-play stage, a rerun resumes it from its latest checkpoint to the same policy and the same
    student (the loop's tournaments around it: tests/test_loop_product.py)."""
    pytest.importorskip("mlx_lm")
    pytest.importorskip("textarena")
    import shutil

    from arena_train.loop import load_config
    from arena_train.loop_training import RecipeTraining, TrainingProgress

    cfg = load_config(
        EXAMPLE,
        [
            "stages.selfplay.config.games=256",
            "stages.selfplay.config.parallel=64",
            "stages.selfplay.config.hidden=16",
            "stages.selfplay.config.eval_every=0",
            "stages.selfplay.config.checkpoint_every=2",
            "stages.distil.config.rounds=2",
            "stages.distil.config.deals_per_round=2",
            "stages.distil.config.steps=2",
            "stages.distil.config.eval_deals=1",
            "stages.distil.config.eval_every=0",
            "stages.distil.config.checkpoint_every=0",
            "stages.distil.config.eval_expert=false",
        ],
    )
    lines: list[str] = []

    def train() -> None:
        plan = RecipeTraining(cfg, cfg.seeds[0], tmp_path)
        plan.train(lines.append, TrainingProgress(enabled=False))

    train()
    root = tmp_path / "train"
    policy = (root / "1-selfplay" / "policy.npz").read_bytes()
    student = (root / "2-distil" / "checkpoints" / "step_000002" / "trainable.safetensors").read_bytes()
    distil = json.loads((root / "2-distil" / "manifest.json").read_text())
    assert (
        distil["config"]["expert"] == f'numeric_mixture{{weights = "{root / "1-selfplay"}/policy.npz", greedy = true}}'
    )
    report = distil["report"]
    assert report["agreement_heldout_decisions"] == report["data"]["heldout_rows"] > 0  # the second round, held out
    low, high = report["agreement_student_interval"]
    assert 0.0 <= low <= report["agreement_student"] <= high <= 1.0 and low < high
    rows = [json.loads(x) for x in (root / "2-distil" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows if "heldout_agreement_low" in r] == [0, 2]

    # cut after the self-play stage's second checkpoint (of four updates)
    for done in (root / "1-selfplay.json", root / "2-distil.json", root / "1-selfplay" / "policy.npz"):
        done.unlink()
    shutil.rmtree(root / "2-distil")
    shutil.rmtree(root / "1-selfplay" / "checkpoints" / "step_000004")
    lines.clear()
    train()
    assert f"seed {cfg.seeds[0]}: stage selfplay resumes from step_000002" in lines
    assert (root / "1-selfplay" / "policy.npz").read_bytes() == policy
    assert (root / "2-distil" / "checkpoints" / "step_000002" / "trainable.safetensors").read_bytes() == student
