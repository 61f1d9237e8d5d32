"""bench/train_kuhn_lm_floor.py (issue 31, point 5 on the language model): a finished run's
evaluations collected into a small file, the equal-weights average recomputed from its snapshots,
and the verdict counted on the fresh seeds only, by the issue's rule (5 of 5 and 3 of 5)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("mlx.core")

from arena_train import grpo  # noqa: E402
from arena_train.exact import average_policy, exploitability  # noqa: E402
from arena_train.run import RunDir  # noqa: E402
from arena_train.trainer import Parts  # noqa: E402

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))
_spec = importlib.util.spec_from_file_location("train_kuhn_lm_floor", BENCH / "train_kuhn_lm_floor.py")
floor = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(floor)

TINY = dict(
    game="kuhn_poker",
    seed=4,
    steps=3,
    deals_per_step=2,
    group_size=2,
    self_play=True,
    baseline="role",
    temperature=3.0,
    entropy_beta=0.05,
    kl_beta=0.2,
    magnet_every=1,
    optim=dict(learning_rate=1e-4),
    eval=dict(anchor="kuhn_king_only", every=1, exploitability=True, average="linear"),
    plot=False,
)


def test_the_trials_are_round_3_configs_and_the_seeds_are_apart():
    assert not set(floor.TUNING_SEEDS) & set(floor.VERDICT_SEEDS) and len(floor.VERDICT_SEEDS) == 5
    assert floor.CHOSEN in floor.TRIALS
    for name in floor.TRIALS:
        assert floor.kn.ROUND3[name]["eval"]["average"] == "linear"
        assert floor.changes(name)["eval"]["average"] == "linear"


def test_collect_keeps_every_evaluation_and_recomputes_the_equal_weights_average(tmp_path):
    run_dir = tmp_path / "p5" / "seed_4"
    run = RunDir.claim(run_dir)
    trainer = grpo.start(grpo.TRAINER.parse(TINY), run, Parts())
    grpo.run_steps(run, trainer, Parts())
    path = floor.collect_run(run_dir, tmp_path / "out" / "seed_4.jsonl")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["step"] for r in rows[:-1]] == [0, 1, 2, 3]
    logged = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [r["average"] for r in rows[:-1]] == [
        x["eval_avg_exploitability"] for x in logged if "eval_exploitability" in x
    ]
    game = trainer.game
    want = exploitability(game, average_policy(game, trainer.state.policy_tables)).exploitability
    assert rows[-1]["done"] is True and rows[-1]["average_weights"] == "linear"
    assert rows[-1]["uniform_average"] == pytest.approx(want, abs=1e-12)
    assert rows[-1]["uniform_average"] != pytest.approx(rows[-2]["average"], abs=1e-9)
    # an unfinished run (its manifest short of the planned steps) is not collected
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest["steps_done"] = 2
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    assert floor.collect_run(run_dir, tmp_path / "out" / "again.jsonl") is None


def _runs(avg, last, seeds=None):
    seeds = seeds or floor.VERDICT_SEEDS
    return {
        s: {"evals": [{"episodes": 300_000, "average": a, "last_iterate": lt}], "final": {"uniform_average": a}}
        for s, a, lt in zip(seeds, avg, last)
    }


@pytest.mark.parametrize(
    "avg, last, met",
    [
        ([0.01] * 5, [0.01, 0.02, 0.019, 0.03, 0.5], True),  # 5 of 5 and 3 of 5 (0.02 counts)
        ([0.01] * 4 + [0.0201], [0.01] * 5, False),  # the average misses on one seed
        ([0.01] * 5, [0.01, 0.01, 0.021, 0.03, 0.5], False),  # the last iterate in 2 of 5
        ([0.01] * 4, [0.01] * 4, False),  # a verdict seed missing
    ],
)
def test_the_verdict_follows_the_issue_rule(avg, last, met):
    assert floor.verdict(_runs(avg, last))[0] is met


def test_tuning_seeds_never_enter_the_verdict_or_its_table(tmp_path):
    runs = {**_runs([0.01] * 5, [0.01] * 5), **_runs([0.5, 0.5], [0.5, 0.5], seeds=floor.TUNING_SEEDS)}
    assert floor.verdict(runs)[:4] == (True, 5, 5, 5)
    for seed, r in runs.items():
        path = tmp_path / floor.CHOSEN / f"seed_{seed}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            "\n".join(json.dumps(x) for x in r["evals"]) + "\n" + json.dumps({"done": True, **r["final"]}) + "\n"
        )
    text = floor.report(tmp_path, plot=None)
    assert "**Verdict on the fresh seeds: met**" in text
    assert "holds for the average policy (5 of 5, goal 5) and holds for the last iterate (5 of 5, goal 3)" in text
    verdict_part, trials = text.split("**Trials on the tuning seeds**")
    assert "| 100 |" in verdict_part and "| 0 |" not in verdict_part
    # the tuning seeds are listed as trials, the verdict seeds are not
    assert f"| `{floor.CHOSEN}` | " in trials and "| 0 | 0.5000 |" in trials and "| 100 |" not in trials
