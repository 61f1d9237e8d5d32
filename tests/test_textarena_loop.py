"""The local-model arena loop end to end, tiny: a baseline tournament, two GRPO steps against a
snapshot pool with the game's exact analysis at every step, the re-tournament and the before/after
report. (The plumbing check through a real local mlx_lm.server runs in tests/test_loop_real_config.py,
from a model directory as a real model's is.)"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("textarena")
pytest.importorskip("mlx_lm")

from arena_core.errors import ConfigError
from arena_train.loop import load_config, main, parse_loop_config, run_loop

TINY = {
    "name": "tiny-loop",
    "game": "textarena/KuhnPoker-v0",
    "seeds": [5],
    "analysis": "arena_games.textarena.kuhn_v0:exact_values",
    "tournament": {
        "deals": 2,
        "seed": 7,
        "bootstrap": 200,
        "opponents": ["textarena_kuhn_equilibrium", "random"],
        "pages": False,
    },
    "server": {"enabled": False},
    "train": {
        "steps": 2,
        "deals_per_step": 1,
        "group_size": 2,
        "kl_beta": 0.0,
        "plot": False,
        "pool": {"snapshot_every": 1, "max_snapshots": 2, "snapshot_temperature": 1.0},
        "eval": {"anchor": "textarena_kuhn_equilibrium", "deals": 2},
    },
}


def test_tiny_loop_end_to_end(tmp_path):
    cfg = parse_loop_config(TINY)
    lines = []
    report = run_loop(cfg, tmp_path / "out", log=lines.append)
    (seed,) = report["seeds"]
    assert seed["seed"] == 5 and seed["train_status"] == "ok"
    # the untrained model (step 0) and the trained one were both saved and entered
    ckpts = sorted(p.name for p in (tmp_path / "out" / "seed5" / "train" / "checkpoints").iterdir())
    assert ckpts == ["step_000000", "step_000002"]
    for spec in ("textarena_kuhn_equilibrium", "random"):
        o = seed["opponents"][spec]
        for phase in ("before", "after"):
            r = o[phase]
            assert r["games"] == 4 and r["deals"] == 2  # 2 deals x 2 seatings
            assert r["wilson"][0] <= r["win_rate"] <= r["wilson"][1]
            assert r["deal_clustered"][0] <= r["win_rate"] <= r["deal_clustered"][1]
        d = o["after_minus_before"]
        assert d["diff"] == pytest.approx(o["after"]["win_rate"] - o["before"]["win_rate"])
        assert d["interval"][0] <= d["diff"] <= d["interval"][1]
    assert seed["faults"]["before"]["faults"] == 0 and seed["faults"]["after"]["faults"] == 0
    assert seed["faults"]["before"]["decisions"] > 0
    # exact curve: one point per step, probabilities, and the equilibrium's ceiling of 1/2
    curve = seed["exact"]["curve"]
    assert [c["step"] for c in curve] == [0, 1, 2]
    assert all(0.0 <= c["win_vs_equilibrium"] <= 0.5 + 1e-9 for c in curve)
    assert report["coverage"]["compact_labels_single_token"] is True
    assert report["coverage"]["model"].startswith("tiny-llama-")  # pinned once for the whole loop
    saved = json.loads((tmp_path / "out" / "report.json").read_text())
    assert saved["seeds"][0]["opponents"] == json.loads(json.dumps(seed["opponents"]))
    assert "after - before" in (tmp_path / "out" / "report.md").read_text()
    # the same command again continues the directory: the server check and the seed are done, skipped
    lines.clear()
    again = run_loop(cfg, tmp_path / "out", log=lines.append)
    assert "seed 5: finished already, skipped" in lines
    assert again["seeds"] == saved["seeds"]
    # runs never mix: another config on this directory is refused (tests/test_loop_resume.py)
    with pytest.raises(ConfigError, match="another config"):
        run_loop(parse_loop_config({**TINY, "name": "other"}), tmp_path / "out", log=lines.append)


def test_the_example_config_is_valid():
    cfg = load_config("examples/textarena_loop.toml")
    assert cfg.game == "textarena/KuhnPoker-v0" and len(cfg.seeds) >= 3


@pytest.mark.parametrize(
    "change, words",
    [
        ({"train": {**TINY["train"], "self_play": True}}, "self_play"),
        ({"train": {**TINY["train"], "pool": {"snapshot_every": 0}}}, "snapshot_every"),
        ({"train": {**TINY["train"], "seed": 3}}, "must not set 'seed'"),
        ({"tournament": {"deals": 1}}, "tournament.deals"),
        ({"bogus": 1}, "bogus"),
        ({"analysis": "arena_games.textarena.kuhn_v0:nothing_here"}, "must name a function"),
        ({"analysis": "no_such_module_x:f"}, "cannot be imported"),
        ({"train": {**TINY["train"], "view": "text"}}, "analysis reads the model's menu"),  # text answers: no menus
        ({"stages": [{"name": "a", "trainer": "grpo"}]}, "exactly one of"),
    ],
)
def test_bad_configs_name_the_field(change, words):
    with pytest.raises(ConfigError, match=words):
        parse_loop_config({**TINY, **change})


def test_cli_bad_config_is_one_line(tmp_path, capsys):
    assert main([str(tmp_path / "missing.toml")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "does not exist" in err
