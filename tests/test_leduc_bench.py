"""bench/leduc_bench.py at a tiny size: one result file per method and seed, written as it
goes; a finished file is skipped, an unfinished one started again; an unknown method or a missing
framework is one line and exit 2, with no file written; the report renders every seed from the
files (tuning seeds marked, means with t intervals, the LM-over-NFSP ratio at the largest common
episode count, the speed ratios). OpenSpiel's JAX methods run only where the bench extra is
installed (tests/test_leduc_bench_jax.py)."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location(
    "leduc_bench", Path(__file__).resolve().parents[1] / "bench" / "leduc_bench.py"
)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def _rows(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_cfr_writes_a_curve_and_a_finished_file_is_skipped(tmp_path, capsys):
    assert (
        bench.main(
            ["run", "--method", "cfr", "--seed", "1", "--episodes", "480", "--evals", "2", "--out", str(tmp_path)]
        )
        == 0
    )
    path = tmp_path / "cfr" / "seed_1.jsonl"
    rows = _rows(path)
    assert [r["episodes"] for r in rows[:-1]] == [240, 480] and rows[-1]["done"] is True
    assert rows[1]["exploitability"] < rows[0]["exploitability"] < 2.6
    before = path.read_text()
    assert bench.main(["run", "--method", "cfr", "--seed", "1", "--episodes", "480", "--out", str(tmp_path)]) == 0
    assert path.read_text() == before and "skipped" in capsys.readouterr().out


def test_an_unfinished_file_is_run_again(tmp_path):
    path = tmp_path / "cfr" / "seed_0.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"episodes": 240, "exploitability": 9.0, "wall_s": 1.0}) + "\n")
    assert not bench.finished(path)
    bench.run("cfr", 0, 240, 1, tmp_path)
    assert bench.finished(path) and _rows(path)[0]["exploitability"] < 9.0


def test_openspiel_cfrplus_runs_where_installed(tmp_path):
    pytest.importorskip("pyspiel")
    path = bench.run("cfrplus", 0, 480, 2, tmp_path)
    rows = _rows(path)
    assert rows[0]["exploitability"] == pytest.approx(2.3736111, abs=1e-6)  # the uniform first average
    assert rows[1]["exploitability"] < rows[0]["exploitability"]


def test_an_unknown_method_is_one_line_and_exit_2(tmp_path, capsys):
    assert bench.main(["run", "--method", "nfps", "--seed", "0", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "unknown method 'nfps'" in err and "nfsp" in err
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("method", ["nfsp", "policy_gradient"])
def test_a_missing_framework_is_one_line_naming_the_extra(tmp_path, capsys, monkeypatch, method):
    monkeypatch.setattr(bench, "_importable", lambda module: module != "jax")
    assert bench.main(["run", "--method", method, "--seed", "0", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "needs jax" in err and '".[bench]"' in err
    assert not any(tmp_path.iterdir())  # no half-written result file


def test_the_jax_frameworks_are_imported_lazily():
    """The module itself imports no framework: the dev install (no JAX) can run the rest of it."""
    source = (Path(__file__).resolve().parents[1] / "bench" / "leduc_bench.py").read_text()
    top = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert not any(m in line for line in top for m in ("jax", "open_spiel", "pyspiel", "mlx", "haiku"))


def test_evaluation_marks_are_a_shared_grid():
    assert bench._episode_marks(20000, 20) == [1000, 1500, 2000, 3000, 5000, 7000, 10000, 15000, 20000]
    assert bench._episode_marks(25000, 3) == [1000, 20000, 25000]
    assert bench._episode_marks(500, 20) == [500]


def _fixture(out: Path, method: str, seed: int, points: list[tuple[int, float]], **extra: float) -> None:
    path = out / method / f"seed_{seed}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [{"episodes": n, "exploitability": v, **extra, "wall_s": n / 100} for n, v in points]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + json.dumps({"done": True}) + "\n")


def test_the_report_renders_every_seed_and_compares_at_the_largest_common_count(tmp_path):
    out = tmp_path
    for seed, v in ((100, 0.8), (101, 1.0), (0, 0.1)):  # seed 0: a tuning seed of the LM
        _fixture(out, "lm_selfplay", seed, [(1000, 2.0), (2000, v), (4000, v / 2)], last_iterate=1.5)
    for seed, v in ((100, 1.5), (101, 2.5)):
        _fixture(out, "nfsp", seed, [(1000, 3.0), (2000, v)])
    _fixture(out, "policy_gradient", 100, [(1000, 2.2), (3000, 2.0)])
    (out / "nfsp" / "seed_102.jsonl").write_text(json.dumps({"episodes": 1000, "exploitability": 9.9}) + "\n")
    verdict = {"lm_selfplay": (100, 101, 102)}
    table = bench.report(out, None, verdict)
    assert table.count("\n| ") == 6  # one row per finished file; the unfinished nfsp seed 102 is not one
    assert "| lm_selfplay | 0 (tuning seed, not in the means) | 4,000 |" in table
    assert "| policy_gradient | 100 | 3,000 | **2.0000** (current policy) |" in table
    text = bench.summarise(bench.load_curves(out), verdict)
    assert "`lm_selfplay` at 4,000 episodes: average policy 0.4500 (t 95% [" in text  # seeds 100, 101 only
    assert "every learning method reached (2,000)" in text
    assert "`nfsp`: 2.0000 (t 95% [" in text and "`lm_selfplay`: 0.9000 (t 95% [" in text
    # policy_gradient's curve between 1,000 (2.2) and 3,000 (2.0), read at 2,000 in log episodes
    assert "`policy_gradient`: 2.0738 (1 seed, no interval); seed 100: 2.0738" in text
    assert "over NFSP's = 0.450 (means over their seeds above; the LM is below NFSP there)" in text
    assert "the runs reached only 2,000." in text
    assert "Lowest first, by the mean: `lm_selfplay` < `nfsp` < `policy_gradient`." in text
    assert "Ratios: `lm_selfplay` / `nfsp` = 1." in text  # the fixtures' wall_s give 100 episodes/s each
    missing = bench.not_run(bench._verdict(bench.load_curves(out), verdict))
    assert (
        "- `nfsp`: 2 of 3 seeds, to 2,000 episodes; the rest (2,996,000 episodes) at 100 episodes/s is 8.3" in missing
    )
    assert "- `cfr`: no finished run." in missing
    assert bench.value_at([{"episodes": 10, "exploitability": 1.0}], 20) is None  # not past a curve's end


def test_the_test_install_does_not_pull_the_deep_learning_framework():
    """JAX and its libraries come with the `bench` extra only; `make test` installs `test`."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    extras = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    test_extras = re.search(r"\[(.*)\]", extras["test"][0]).group(1).split(",")
    pulled = {re.split(r"[<>=;\[ ]", r)[0] for e in test_extras for r in extras[e]}
    framework = {"jax", "flax", "optax", "chex", "dm-haiku", "rlax", "orbax-checkpoint", "torch", "tensorflow"}
    assert not pulled & framework and "bench" not in test_extras
    assert framework - {"torch", "tensorflow"} <= {re.split(r"[<>=;\[ ]", r)[0] for r in extras["bench"]}


def test_the_kuhn_floor_variant_is_compared_with_the_first_lm_config_paired_by_seed(tmp_path):
    verdict = {"lm_selfplay": (100, 101, 102), "lm_selfplay_floor": (100, 101, 102)}
    for seed, v in ((100, 0.8), (101, 1.0), (0, 0.1)):
        _fixture(tmp_path, "lm_selfplay", seed, [(1000, 2.0), (4000, v)], last_iterate=1.5)
    for seed, v in ((100, 0.7), (101, 0.8), (0, 5.0)):  # seed 0 (tuning) must not enter the pairs
        _fixture(tmp_path, "lm_selfplay_floor", seed, [(1000, 2.0), (4000, v)], last_iterate=1.0)
    text = bench.summarise(bench.load_curves(tmp_path), verdict)
    assert "paired by seed, 2 seeds at 4,000 episodes" in text
    assert "average policy -0.1500 (t 95% [" in text and "last iterate -0.5000 (t 95% [-inf, +inf])" in text
    # a variant that ended elsewhere is not paired
    _fixture(tmp_path, "lm_selfplay_floor", 101, [(1000, 2.0), (2000, 0.8)], last_iterate=1.0)
    assert "paired by seed" not in bench.summarise(bench.load_curves(tmp_path), verdict)
