"""Known-answer study runs with scripted players whose welfare has a closed form, the study's
outputs and CLI, scoring, and the example script."""

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from arena_core.episode import read_episodes
from arena_core.players import BasePlayer
from arena_core.replay import replay
from arena_games.matrix import MatrixGame
from arena_games.matrix import equilibria as eq
from arena_games.matrix.equilibria import metric_matrix, reference_points
from arena_games.matrix.scoring import control, score_cell
from arena_games.matrix.study import StudyConfig, main, run_study

KS = (2, 3, 5, 10)


@pytest.fixture(scope="module", autouse=True)
def private_cache(tmp_path_factory):
    """A disk cache private to this test session (shared by the matrix test modules)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(eq.CACHE_ENV, str(tmp_path_factory.getbasetemp() / "matrix-cache"))
        yield


def _diagonal_mean(archetype, k):
    """Both players on the same label: over a rotation cycle, every diagonal cell once."""
    return float(np.mean(np.diag(metric_matrix(archetype, k)[1])))


def _cells(result):
    return {(c.archetype, c.k): c for c in result.cells}


def test_first_label_shared_order_is_the_diagonal_mean():
    result = run_study(StudyConfig(player="matrix_first_label", ks=KS, trials=20 * 3, listings=("shared",)), None)
    for (a, k), cell in _cells(result).items():
        if 60 % k == 0:  # whole rotation cycles: the mean is exact
            assert cell.mean == pytest.approx(_diagonal_mean(a, k), abs=1e-12), (a, k)
        assert cell.scored == cell.trials == 60 and cell.invalid == 0


def test_focal_label_survives_independent_order_and_first_label_does_not():
    """The note's caveat: a shared position bias stops coordinating under independent listing
    orders, a label-based focal point does not."""
    common = dict(archetypes=("coordination",), ks=(4,), trials=400, listings=("independent",), level=0.99)
    focal = run_study(StudyConfig(player="matrix_focal:label=C", **common), None).cells[0]
    first = run_study(StudyConfig(player="matrix_first_label", **common), None).cells[0]
    assert focal.mean == 2.0 and focal.verdict == "above"
    assert first.low <= 0.5 <= first.high  # uniform matching: 2 * 1/4
    assert first.verdict == "indistinguishable"  # the baseline is uniform play


def test_the_independent_listing_runs_beside_the_shared_one_by_default():
    """A shared 'pick the first label' habit coordinates perfectly under the shared listing
    and falls to chance under the independent one; both conditions run unless asked otherwise."""
    result = run_study(
        StudyConfig(player="matrix_first_label", archetypes=("coordination",), ks=(4,), trials=200), None
    )
    cells = {c.listing: c for c in result.cells}
    assert set(cells) == {"shared", "independent"}
    assert cells["shared"].mean == 2.0 and cells["shared"].verdict == "above"
    assert cells["independent"].verdict == "indistinguishable"


def test_uniform_self_play_matches_uniform_welfare():
    """E[W] = mean of W for independent uniform play. A 95% interval misses now and then, so:
    most intervals cover, and every mean is within 4.5 standard errors."""
    result = run_study(StudyConfig(player="matrix_uniform", ks=KS, trials=300, listings=("shared",)), None)
    covered = 0
    for (a, k), cell in _cells(result).items():
        W = metric_matrix(a, k)[1]
        expected = float(W.mean())
        assert cell.uniform == pytest.approx(expected)
        se = np.sqrt(W.var() / cell.scored)
        assert abs(cell.mean - expected) <= 4.5 * se + 1e-12, (a, k)
        covered += cell.low <= expected <= cell.high
    assert covered >= 0.85 * len(result.cells)


def test_one_shared_instance_still_samples_independently():
    """With --share-instance both seats use one object; the uniform player draws from
    decision.rng, keyed by seat, so the copies still match at chance: E[W] = 2/k."""
    cell = run_study(
        StudyConfig(
            player="matrix_uniform",
            archetypes=("coordination",),
            ks=(5,),
            trials=500,
            share_instance=True,
            level=0.99,
            listings=("shared",),
        ),
        None,
    ).cells[0]
    assert cell.low <= 2 / 5 <= cell.high and cell.high < 1.0


def test_max_own_payoff_known_answers():
    """Each copy picks the row with its own best payoff: BoS and chicken crash into the worst
    joint cell, stag hunt reaches the best, the PD lands on claims k, public goods on (0, 0).
    Verdicts are asserted where the data can carry them: at k = 10 the baselines of BoS and
    chicken lie so close to the worst cell that 0 of 120 does not rule them out (an honest
    interval, where a bootstrap would have claimed certainty)."""
    result = run_study(StudyConfig(player="matrix_max_payoff", ks=KS, trials=120, listings=("shared",)), None)
    cells = _cells(result)
    for k in KS:
        assert cells["battle_of_sexes", k].mean == 0 and cells["battle_of_sexes", k].near_worst
        assert cells["chicken", k].mean == 0
        assert (
            cells["stag_hunt", k].mean == 4 * k
            and cells["stag_hunt", k].score == 1
            and cells["stag_hunt", k].verdict == "above"
        )
        assert cells["prisoners_dilemma", k].mean == 2 * k
        assert cells["public_goods", k].mean == 2 * (k - 1)
        assert cells["public_goods", k].vs_nash == "indistinguishable"  # exactly the NE ...
        assert cells["public_goods", k].verdict == "indistinguishable"  # ... so never "below" both
        assert cells["coordination", k].mean == 2  # all rows tie: the first listed, shared
        if k <= 3:
            assert cells["battle_of_sexes", k].verdict == "below" and cells["chicken", k].verdict == "below"
            assert cells["public_goods", k].vs_uniform == "below"  # the NE is the worst joint cell


def test_cross_play_alternates_seats():
    """first label (A) against a fixed label (B): over whole cycles of 2k trials each seat
    order and rotation appears equally often."""
    k = 3
    result = run_study(
        StudyConfig(
            player="matrix_first_label",
            opponent="matrix_focal:label=B",
            archetypes=("battle_of_sexes", "hide_and_seek"),
            ks=(k,),
            trials=12,
            listings=("shared",),
        ),
        None,
    )
    for cell in result.cells:
        _, M = metric_matrix(cell.archetype, k)
        expected = np.mean([(M[r, (r + 1) % k] + M[(r + 1) % k, r]) / 2 for r in range(k)])
        assert cell.mean == pytest.approx(expected)
        assert cell.player == "matrix_first_label vs matrix_focal:label=B"


class Mumbler(BasePlayer):
    name = "mumbler"

    def act(self, decision):
        return "I would rather not say."


def test_unparseable_answers_are_counted_not_scored(tmp_path):
    config = StudyConfig(player="mumbler", archetypes=("coordination",), ks=(2,), trials=6)
    result = run_study(config, tmp_path, player_factory=lambda spec, seed: Mumbler(seed), plot=False)
    cell = result.cells[0]
    assert cell.invalid == 6 and cell.scored == 0 and cell.verdict == "no data"
    assert cell.unparseable == 6 and cell.errors == 0
    rows = list(csv.DictReader(open(tmp_path / "trials.csv")))
    assert {r["end"] for r in rows} == {"forfeit"}
    assert {r["outcome"] for r in rows} == {r["fault_kind"] for r in rows} == {"unparseable"}


def test_outputs_and_replay(tmp_path):
    config = StudyConfig(
        player="matrix_uniform",
        archetypes=("stag_hunt", "hide_and_seek"),
        ks=(2, 3),
        trials=6,
        listings=("independent",),
    )
    result = run_study(config, tmp_path)
    episodes = read_episodes(tmp_path / "episodes.jsonl")
    assert len(episodes) == 4 * 6
    for record in episodes[::7]:
        replay(record, MatrixGame(record.header.params))
    rows = list(csv.DictReader(open(tmp_path / "trials.csv")))
    assert len(rows) == 24 and [int(r["rotation"]) for r in rows[:6]] == [t % 2 for t in range(6)]
    for row, record in zip(rows, episodes):
        assert float(row["return_0"]) == record.end.returns[0] and int(row["episode_seed"]) == record.header.seed
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["config"]["player"] == "matrix_uniform" and summary["counterpart"] == "copy"
    assert len(summary["cells"]) == len(summary["reference_points"]) == 4
    assert summary["cells"][2]["metric"] == "row_payoff"  # hide and seek: the matcher's payoff
    assert (tmp_path / "study.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "choices.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(list(csv.DictReader(open(tmp_path / "cells.csv")))) == 4
    again = run_study(config, tmp_path / "again", plot=False)
    assert (tmp_path / "trials.csv").read_text() == (tmp_path / "again" / "trials.csv").read_text()
    assert [c.mean for c in again.cells] == [c.mean for c in result.cells]


def test_cli(tmp_path, capsys):
    code = main(
        [
            "--player",
            "matrix_first_label",
            "--archetypes",
            "coordination,chicken",
            "--k",
            "2-3,5",
            "--trials",
            "10",
            "--out",
            str(tmp_path),
            "--no-plot",
            "--quiet",
        ]
    )
    assert code == 0
    assert len(list(csv.DictReader(open(tmp_path / "cells.csv")))) == 12  # both listings
    assert not (tmp_path / "study.png").exists()
    assert main(["--player", "matrix_uniform", "--archetypes", "stag", "--out", str(tmp_path)]) == 2
    assert "unknown archetypes ['stag']" in capsys.readouterr().err
    assert main(["--player", "matrix_uniform", "--k", "1-3", "--out", str(tmp_path)]) == 2


def test_module_entry_point(tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "arena_games.matrix.study",
            "--player",
            "matrix_uniform",
            "--archetypes",
            "public_goods",
            "--k",
            "2",
            "--trials",
            "4",
            "--out",
            str(tmp_path),
            "--no-plot",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ),
    )
    assert out.returncode == 0, out.stderr
    assert "public_goods" in out.stdout and (tmp_path / "summary.json").exists()


# ---------------------------------------------------------------------------- scoring
def test_score_cell_normalises_and_reports_sensitivity():
    ref = reference_points("battle_of_sexes", 3)
    cell = score_cell("p", ref, [2.0] * 400)  # the neutral-venue compromise
    assert cell.score == pytest.approx(0.4) and cell.baseline_score == pytest.approx(ref.baseline / 5)
    # the note's example: above the pre-registered full-support baseline (and uniform play),
    # below the best symmetric NE
    assert cell.verdict == "above" and cell.vs_uniform == "above"
    assert cell.sensitivity["best_symmetric_ne"]["verdict"] == "below (unadjusted)"
    assert set(cell.sensitivity) == {"ne_mean", "ne_best", "ne_worst", "best_symmetric_ne", "worst_symmetric_ne"}
    assert cell.low < 2.0 < cell.high  # no spread, yet never a zero-width interval


def test_above_nash_is_not_above_chance():
    """Stag hunt: uniform play beats the Nash baseline, so play at the uniform level is
    'above Nash' but not above chance; the headline verdict needs both."""
    ref = reference_points("stag_hunt", 5)
    assert ref.uniform > ref.baseline
    values = [float(v) for v in metric_matrix("stag_hunt", 5)[1].ravel()] * 30  # exactly uniform play's outcomes
    cell = score_cell("p", ref, values)
    assert cell.vs_nash == "above" and cell.vs_uniform == "indistinguishable"
    assert cell.verdict == "indistinguishable"


def test_one_error_control_over_all_cells():
    """Holm over every comparison of every cell: a p-value that passes alone (0.01) does not
    pass among 72 cells x 3 comparisons; Benjamini-Hochberg is the stated alternative."""
    ref = reference_points("coordination", 2)
    values = [2.0] * 224 + [0.0] * 176  # matches 56% of the time, against 50% for uniform play
    one = score_cell("p", ref, values)
    assert 0.001 < one.comparisons["uniform"].pvalue < 0.05 and one.vs_uniform == "above"
    null = [score_cell("p", ref, [2.0, 0.0] * (200 + n)) for n in range(71)]
    holm_cells = control([one, *null], alpha=0.05, correction="holm")
    assert holm_cells[0].vs_uniform == "indistinguishable" and all(c.correction == "holm" for c in holm_cells)
    assert sum(c.verdict in ("above", "below") for c in holm_cells[1:]) == 0
    bh_cells = control([one, *null], alpha=0.05, correction="bh")
    assert all(c.correction == "bh" for c in bh_cells)
    with pytest.raises(ValueError):
        control([one], correction="bonferroni")


def test_uniform_play_over_many_cells_makes_no_false_claims():
    """72 cells of uniform self-play (the null for 'coordinates above chance'): no headline verdict."""
    result = run_study(StudyConfig(player="matrix_uniform", trials=20, listings=("shared",), seed=11), None)
    assert len(result.cells) == 72
    assert [c for c in result.cells if c.verdict in ("above", "below")] == []


def test_example_runs(tmp_path):
    example = Path(__file__).resolve().parents[1] / "examples" / "matrix_study.py"
    out = subprocess.run(
        [sys.executable, str(example), str(tmp_path)], capture_output=True, text=True, timeout=600, env=dict(os.environ)
    )  # the session's private equilibrium cache
    assert out.returncode == 0, out.stderr
    assert "battle_of_sexes   2    0.000" in out.stdout and "(near the worst joint cell)" in out.stdout
    assert (tmp_path / "matrix_uniform" / "study.png").exists()
