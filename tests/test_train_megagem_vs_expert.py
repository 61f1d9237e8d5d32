"""Issue 18: the MegaGem-vs-expert bench on a tiny run (the example config, shrunk), and the
trained-checkpoint tournament example pointed at that run."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

pytest.importorskip("mlx.core")

from arena_core.seeding import derive_seed  # noqa: E402
from arena_tournament.cli import main_tournament  # noqa: E402
from arena_tournament.runner import load_results  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "train_megagem_vs_expert.toml"


def _bench():
    spec = importlib.util.spec_from_file_location(
        "train_megagem_vs_expert", ROOT / "bench" / "train_megagem_vs_expert.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _tiny(cfg: dict) -> dict:
    """The example config with every budget shrunk (the same stages and code path)."""
    cfg = json.loads(json.dumps(cfg))
    cfg["seeds"] = [0, 1]
    cfg["base"].update(rounds=1, deals_per_round=1, epochs=1, eval_deals=2)
    cfg["distil"].update(rounds=2, deals_per_round=1, steps=4, eval_every=2, checkpoint_every=2, eval_deals=2)
    cfg["distil"]["expert"] = cfg["distil"]["expert"].replace("simulations = 12", "simulations = 2")
    cfg["evaluate"].update(deals=2, compare_base_seeds=[0])
    cfg["diagnose"].update(grid_deals=2, label_states=3)
    for stage in cfg["grpo"]:
        stage.update(seeds=[0], steps=2, checkpoint_every=0, plot=False, eval={**stage["eval"], "every": 1, "deals": 2})
    return cfg


def _write_toml(path: Path, cfg: dict) -> Path:
    def value(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + " }"
        return repr(v)

    lines = [f"{k} = {value(v)}" for k, v in cfg.items() if not isinstance(v, dict)]
    for section, body in cfg.items():
        if isinstance(body, dict):
            lines.append(f"[{section}]")
            lines += [f"{k} = {value(v)}" for k, v in body.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("mgvx")
    cfg = _tiny(tomllib.loads(EXAMPLE.read_text()))
    config = _write_toml(root / "tiny.toml", cfg)
    out = root / "out"
    rc = _bench().main(["--config", str(config), "--out", str(out), "--quiet"])
    assert rc == 0
    return out, cfg


def test_tiny_run_trains_from_the_student_shares_the_labels_and_compares(tiny_run):
    out, cfg = tiny_run
    summary = json.loads((out / "summary.json").read_text())
    assert summary["target"] == "megagem_expert"
    assert summary["target_parameters"]["gate"] == 1.0 and summary["target_parameters"]["offset"] == 0.0
    seeds = {row["seed"]: row for row in summary["seeds"]}
    assert sorted(g["from"] for g in summary["grpo"]) == ["base", "distil"]
    for grpo in summary["grpo"]:
        assert grpo["seed"] == 0 and grpo["steps"] == 2 and [s for s, _ in grpo["curve"]] == [0, 1, 2]
        assert grpo["compare"]["checkpoint"].endswith("step_000002") and grpo["compare"]["deals"] == 2
        man = json.loads((out / f"grpo_{grpo['from']}_s0" / "manifest.json").read_text())
        parent = json.loads((out / f"{grpo['from']}_s0" / "manifest.json").read_text())
        assert man["parent_run"] == parent["run_id"]
    dg = summary["diagnosis"]
    assert dg["label_states"] == 3 and 0 <= dg["teacher_self_agreement"] <= 1 and 0 <= dg["teacher_on_expert_bid"] <= 1
    m, lo, hi = dg["grid_expert_margin"]
    assert lo <= m <= hi
    assert set(seeds) == {0, 1}
    # the first seed collected the teacher's labels, the second read the same file
    assert seeds[0]["data"]["source"] == "collected" and seeds[1]["data"]["source"] == "cache"
    assert seeds[0]["data"]["sha256"] == seeds[1]["data"]["sha256"]
    assert seeds[0]["data"]["heldout_rows"] > 0 and seeds[0]["data"]["train_rows"] > 0
    # the base student (before the distillation) is compared on the same held-out deals where asked
    assert seeds[0]["base_compare"]["step"] == 1 and seeds[0]["base_compare"]["deals"] == 2
    assert seeds[1]["base_compare"] is None
    for seed in (0, 1):
        run = out / f"distil_s{seed}"
        man = json.loads((run / "manifest.json").read_text())
        base = json.loads((out / f"base_s{seed}" / "manifest.json").read_text())
        assert man["parent_run"] == base["run_id"] and man["init_from"].endswith(f"step_{1:06d}")
        assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["step_000002", "step_000004"]
        curve = [
            r for r in (json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()) if "eval_mean" in r
        ]
        assert [r["step"] for r in curve] == [0, 2, 4]
        assert all(r["eval_mean_low"] <= r["eval_mean"] <= r["eval_mean_high"] for r in curve)
        res = seeds[seed]["compare"]
        d = res["difference"]
        assert res["deals"] == 2 and res["step"] == 4 and res["checkpoint"].endswith("step_000004")
        # every deal in every seat rotation, for the student and for the expert
        assert sorted(res["games"].values()) == [6, 6]
        assert d["t_low"] <= d["mean"] <= d["t_high"]
        assert 0.0 <= d["win_share"] <= 1.0


def test_bench_refuses_evaluation_deals_used_in_training(tmp_path, capsys):
    cfg = _tiny(tomllib.loads(EXAMPLE.read_text()))
    cfg["evaluate"]["first_deal"] = derive_seed(0, "ei_eval_deal", 0)
    config = _write_toml(tmp_path / "bad.toml", cfg)
    assert _bench().main(["--config", str(config), "--out", str(tmp_path / "o"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "used in training" in err[0] and "first_deal" in err[0]
    assert not (tmp_path / "o" / "base_s0").exists()  # refused before any training
    assert _bench().main(["--config", str(tmp_path / "missing.toml"), "--quiet"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_trained_tournament_example_enters_the_checkpoints(tiny_run, tmp_path, monkeypatch):
    out, _ = tiny_run
    monkeypatch.setenv("ARENA_TRAINED_RUNS", str(out))
    result_dir = tmp_path / "tournament"
    rc = main_tournament(
        [
            str(ROOT / "examples" / "tournament_trained.toml"),
            "--out",
            str(result_dir),
            "--backend",
            "sequential",
            "--max-games",
            "9",
            "--quiet",
            "--no-report",
        ]
    )
    assert rc == 0
    header, games = load_results(result_dir)
    ident = header.identities
    for name, run, step in (
        ("student-grpo-s0", "grpo_distil_s0", 2),
        ("student-distil-s1", "distil_s1", 4),
        ("student-base-s0", "base_s0", 1),
    ):
        params = ident[name]["params"]
        ckpt = Path(params["checkpoint"])
        assert ckpt.parent.parent == out / run and ckpt.name == f"step_{step:06d}" and params["step"] == step
        assert ident[name]["checkpoint_sha256"]
    played = {s for g in games for s in g.seats}
    assert {"student-grpo-s0", "student-distil-s1", "student-base-s0", "expert"} <= played
    assert all(g.returns is not None for g in games)
