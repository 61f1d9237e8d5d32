"""The arena loop's training as a recipe of registered trainers (issue 46; examples/loop_recipe.toml
at a test's size): numeric self-play, then expert iteration into the language model with the
self-play policy as its expert, then a short GRPO polish from the distilled weights, each stage given the previous one's run directory; the stock
model (the last stage's model, untrained) and the polished one seated in the tournaments. A cut
run continues: finished stages are skipped, the GRPO stage resumes from its latest checkpoint
(exactly), the rest is not replayed."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("mlx_lm")

from arena_core.errors import ConfigError
from arena_train.loop import load_config, parse_loop_config, run_loop
from arena_train.loop_config import apply_overrides

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "loop_recipe.toml"
#: the example's recipe at a test's size
SMALL = [
    "tournament.deals=2",
    "tournament.bootstrap=200",
    "tournament.pages=false",
    "seeds=[1]",
]


def _recipe():
    """The example's config at a test's size (its stages cut down)."""
    data = tomllib.loads(EXAMPLE.read_text())
    data = apply_overrides(data, SMALL)
    selfplay, distil, polish = data["stages"]
    selfplay["config"].update(episodes=128, eval_every=2)
    distil["config"].update(rounds=1, deals_per_round=4, epochs=1, eval_deals=2, bootstrap=100)
    polish["config"].update(steps=2, deals_per_step=1, group_size=2, checkpoint_every=1, pool={"snapshot_every": 1})
    polish["config"]["eval"] = {"anchor": "random", "deals": 2}
    return data


RECIPE = _recipe()


def test_a_recipe_of_three_trainers_runs_in_order_and_continues_where_it_was_cut(tmp_path):
    cfg, out, lines = parse_loop_config(RECIPE), tmp_path / "out", []
    report = run_loop(cfg, out, log=lines.append)
    (seed,) = report["seeds"]
    train = out / "seed1" / "train"
    assert [x for x in lines if "stage " in x and "/3" in x] == [
        "seed 1: stage 1/3 selfplay (selfplay_pg)",
        "seed 1: stage 2/3 distil (expert_iteration)",
        "seed 1: stage 3/3 polish (grpo)",
    ]
    # each stage was given the previous one's output
    distil = json.loads((train / "2-distil" / "manifest.json").read_text())["config"]
    assert distil["expert"] == f'numeric_policy{{weights = "{train / "1-selfplay"}/policy.npz"}}'
    polish = json.loads((train / "3-polish" / "manifest.json").read_text())
    assert polish["init_from"].startswith(str(train / "2-distil" / "checkpoints"))
    assert seed["run_id"].count(" > ") == 2 and seed["steps"] == 2 + 1 + 2
    # the stock model is the last stage's model untrained; the trained one its last checkpoint
    for phase, names in (("before", {"stock"}), ("after", {"stock", "rl"})):
        board = {r["name"] for r in seed["ratings"][phase]["leaderboard"]}
        assert names <= board
    assert (train / "stock" / "checkpoints" / "step_000000" / "trainable.safetensors").exists()
    assert seed["faults"]["after"]["faults"] == 0 and seed["faults"]["after"]["decisions"] > 0
    assert {r.get("stage") for r in seed["curve"]} >= {"distil", "polish"}
    final = (train / "3-polish" / "checkpoints" / "step_000002" / "trainable.safetensors").read_bytes()

    # cut in the last stage: its latest checkpoint is step 1
    for done in (out / "seed1" / "result.json", out / "seed1" / "train.json", train / "3-polish.json"):
        done.unlink()
    shutil.rmtree(train / "3-polish" / "checkpoints" / "step_000002")
    lines.clear()
    again = run_loop(cfg, out, log=lines.append)
    assert "seed 1: stage polish resumes from step_000001" in lines
    assert not any("stage 1/3" in x or "stage 2/3" in x for x in lines)  # finished stages are not replayed
    assert "kuhn-recipe-before: 0 games played, 12 already recorded" in lines
    assert (train / "3-polish" / "checkpoints" / "step_000002" / "trainable.safetensors").read_bytes() == final
    assert again["seeds"][0]["opponents"] == json.loads(json.dumps(seed["opponents"]))


def test_a_recipe_is_checked_stage_by_stage_before_it_runs():
    assert [s.trainer for s in load_config(EXAMPLE).stages or []] == ["selfplay_pg", "expert_iteration", "grpo"]
    bad = {**RECIPE, "stages": [RECIPE["stages"][0]]}  # a numeric policy last: nothing to seat as a checkpoint
    with pytest.raises(ConfigError, match="must train a language model"):
        parse_loop_config(bad)
    typo = json.loads(json.dumps(RECIPE))
    typo["stages"][2]["config"]["stpes"] = 2
    with pytest.raises(ConfigError, match=r"stage 'polish'.*stpes"):
        parse_loop_config(typo)
    first = json.loads(json.dumps(RECIPE))
    first["stages"][0]["config"]["note"] = "{previous}"
    with pytest.raises(ConfigError, match="first"):
        parse_loop_config(first)
