"""`arena compare`: schedule, analysis (battery, luck control, deals needed), CLI and example."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from arena_core.seeding import make_rng
from arena_tournament.compare import (
    analyse,
    compare_schedule,
    format_report,
    main,
    per_deal_margins,
    reference_margins,
)
from arena_tournament.results import GameResult
from arena_tournament.synthetic import luck_slope_games

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _games(deals: int, skill_a: float, skill_b: float, luck_sd: float, seed: int = 0) -> list[GameResult]:
    """Two-player games: A, B and the reference R each play both seats of every deal against O;
    the deal-and-seat luck (shared by A, B and R) is large, the skills small."""
    rng = make_rng(seed, "compare-test")
    out = []
    for d in range(deals):
        luck = luck_sd * rng.standard_normal(2)
        for who, skill in (("A", skill_a), ("B", skill_b), ("R", 0.0)):
            for seat in range(2):
                noise = 0.3 * rng.standard_normal()
                x = skill + luck[seat] + noise
                seats = [who, "O"] if seat == 0 else ["O", who]
                returns = [x, -x] if seat == 0 else [-x, x]
                out.append(
                    GameResult(
                        key=f"{d}/{'|'.join(seats)}",
                        cluster=f"{d}",
                        table=0,
                        deal=d,
                        seed=d,
                        rotation=seat,
                        seats=seats,
                        reason="natural",
                        returns=returns,
                        plies=1,
                    )
                )
    return out


def test_schedule_seats_everyone_against_the_same_opponents():
    s = compare_schedule(
        "megagem",
        "megagem_expert",
        "random",
        ["random", "megagem_market"],
        [1, 2],
        reference="megagem_expert",
        num_players=3,
    )
    names = [e.name for e in s.entrants]
    assert names[:3] == ["A=megagem_expert", "B=random", "ref=megagem_expert"]
    assert [tuple(sorted(t[1:])) for t in s.tables] == [(3, 4)] * 3
    assert len(s.games()) == 3 * 3 * 2  # 3 focal tables x 3 rotations x 2 deals
    with pytest.raises(Exception, match="at least 2 opponents"):
        compare_schedule("megagem", "a", "b", ["random"], [1], num_players=3)


def test_an_entrant_given_by_a_path_is_named_by_its_model_directory(tmp_path):
    """Issue 46.6: not by the whole absolute path (the terminal, the JSON and the report show the name)."""
    model = tmp_path / "deep" / "models" / "megagem-student"
    s = compare_schedule(
        "megagem",
        f"checkpoint:run={model}",
        f'checkpoint{{run = "{model}/", base_url = "http://127.0.0.1:1/v1"}}',  # a URL stays whole
        ["random", "random"],
        [1],
        num_players=3,
    )
    a, b = (e.name for e in s.entrants[:2])
    assert a == "A=checkpoint:run=megagem-student"
    assert b == 'B=checkpoint{run = "megagem-student", base_url = "http:__127.0.0.1:1_v1"}'
    assert str(tmp_path).replace("/", "_") not in a + b
    assert s.entrants[0].options["run"] == str(model)  # the player still gets the whole path


def test_analysis_battery_and_luck_control():
    games = _games(30, 0.4, 0.0, luck_sd=2.0)
    r = analyse(games, "A", "B", reference="R", effect=0.8)
    assert r["deals"] == 30 and r["games"] == {"A": 60, "B": 60}
    d = r["difference"]
    assert (
        d["t_low"] < 0.8 < d["t_high"]
    )  # margin = own minus the other: twice the skill gap and d["t_p"] < 0.01 and d["sign_p"] < 0.05
    per = r["reference"]["per_player"]
    # the reference shares the deal-and-seat luck: subtracting it removes most of each player's variance
    assert per["A"]["variance_reduction"] > 0.8 and per["B"]["variance_reduction"] > 0.8
    assert r["deals_needed"] >= 2
    text = format_report(r)
    for word in ("paired t", "Wilcoxon", "bootstrap", "sign test", "deals won", "variance reduction", "deals needed"):
        assert word in text


def test_reference_must_have_played_the_same_games():
    games = [g for g in _games(6, 0.0, 0.0, 1.0) if not (g.seats == ["R", "O"] and g.seed == 3)]
    assert reference_margins(games, "A", "R") is None
    r = analyse(games, "A", "B", reference="R")
    assert r["reference"]["available"] is False and "not available" in format_report(r)


def test_per_deal_margins_average_seats():
    games = _games(2, 1.0, 0.0, 0.0)
    m = per_deal_margins(games, "A")
    assert set(m) == {0, 1} and all(v > 0 for v in m.values())


def test_cli_plays_a_two_player_game_and_reanalyses_its_results(tmp_path, capsys):
    out = tmp_path / "kuhn"
    rc = main(
        [
            "kuhn_king_only",
            "random",
            "--game",
            "kuhn_poker",
            "--opponents",
            "random",
            "--reference",
            "random",
            "--deals",
            "12",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert rc == 0
    first = capsys.readouterr().out
    assert "paired t" in first and "luck control" in first
    saved = json.loads((out / "compare.json").read_text())
    assert saved["deals"] == 12
    assert (
        main(
            [
                "A=kuhn_king_only",
                "B=random",
                "--results",
                str(out / "results.jsonl"),
                "--reference",
                "ref=random",
                "--json",
            ]
        )
        == 0
    )
    again = json.loads(capsys.readouterr().out)
    assert again["difference"] == saved["difference"]


@pytest.mark.parametrize(
    "argv, words",
    [
        (["random", "random", "--game", "megagem", "--opponents", "random"], "opponents"),
        (["random", "random"], "--game"),
        (["random", "random", "--game", "kuhn_poker", "--deals", "1"], "at least 2"),
        (["x", "y", "--results", "/no/such/file.jsonl"], ""),
    ],
)
def test_bad_input_is_one_line_exit_2(argv, words, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("arena compare:") and "\n" not in err and words in err


def test_example_runs(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / "compare_megagem.py"), "--deals", "4", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "megagem_fair_value vs B=megagem_heuristic: 4 shared deals" in proc.stdout
    assert "ref=megagem_expert" in proc.stdout
    assert (tmp_path / "results.jsonl").exists()


def test_bad_option_value_is_one_line(capsys):
    assert main(["random", "random", "--game", "kuhn_poker", "--deals", "x"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--deals" in err


# ---------------------------------------------------------------------- issue 28: claims that cannot overclaim
def _luck_games(deals: int, slope_a: float, slope_b: float, seed: int, skill_a: float = 0.0) -> list[GameResult]:
    return luck_slope_games(deals, slope_a, slope_b, seed, skill_a=skill_a)


def test_luck_controlled_difference_covers_when_a_and_b_respond_differently_to_luck():
    """The hard case of issue 28: slopes 1 and 0 on a shared luck term, 40 deals, no true
    difference. The interval fitted on the same deals covered about 83%; the honest one >= 90%
    here (the bench runs 200 nulls per case: bench/compare_coverage.py)."""
    sims, covered, claimed = 80, 0, 0
    for k in range(sims):
        r = analyse(_luck_games(40, 1.0, 0.0, seed=k), "A", "B", reference="R", resamples=50)
        diff = r["reference"]["difference"]
        covered += diff["low"] <= 0.0 <= diff["high"]
        claimed += diff["p"] < 0.05
    assert covered / sims >= 0.9, covered / sims
    assert claimed / sims <= 0.1


def test_no_variance_reduction_is_printed_for_the_difference_and_the_slope_is():
    r = analyse(_luck_games(40, 1.0, 0.0, seed=3), "A", "B", reference="R", resamples=50)
    diff = r["reference"]["difference"]
    assert diff["variance_reduction"] is None and diff["why"]
    assert diff["beta_low"] > 0.5  # A and B respond differently to the luck: the slope says so
    line = next(ln for ln in format_report(r).splitlines() if "difference A-B:" in ln)
    assert "variance reduction" not in line and "cannot narrow" in line


def test_minus_reference_is_own_margin_minus_the_references_on_the_same_games():
    games = _luck_games(12, 1.0, 1.0, seed=4, skill_a=0.5)
    r = analyse(games, "A", "B", reference="R", resamples=50)
    per = r["reference"]["per_player"]["A"]
    a, ref = per_deal_margins(games, "A"), reference_margins(games, "A", "R")
    assert ref is not None
    assert per["controlled"][0] == pytest.approx(np.mean([a[d] - ref[d] for d in a]))
    assert "own minus the reference's margin" in format_report(r)


def test_the_same_spec_on_both_sides_is_seeded_apart_and_is_a_real_null(capsys):
    s = compare_schedule("kuhn_poker", "random", "random", ["random"], [0, 1], reference="random", num_players=2)
    seeds = [e.seed for e in s.entrants]
    assert len(set(seeds)) == len(seeds)
    assert main(["random", "random", "--game", "kuhn_poker", "--deals", "8", "--json", "--quiet"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["difference"]["sd"] > 0  # two independently seeded copies: not identical play


def test_analyse_accepts_the_plain_spec_strings_of_the_schedule():
    from arena_tournament.compare import play
    from arena_tournament.results import Settings

    s = compare_schedule(
        "kuhn_poker", "kuhn_king_only", "random", ["random"], range(6), reference="random", num_players=2
    )
    games = play(s, Settings(policy="default"), quiet=True)
    r = analyse(games, "kuhn_king_only", "random", reference="random", resamples=50)
    assert (r["a"], r["b"], r["reference"]["name"]) == ("A=kuhn_king_only", "B=random", "ref=random")
    assert {"low", "high", "p"} <= set(r["reference"]["difference"])


def test_deals_needed_is_fast_for_any_effect_and_refuses_non_positive_ones(capsys):
    import time

    from arena_core.errors import ConfigError

    games = _luck_games(10, 1.0, 0.0, seed=5)
    t0 = time.perf_counter()
    r = analyse(games, "A", "B", effect=0.005, resamples=50)
    assert time.perf_counter() - t0 < 1.0 and r["deals_needed"] > 10_000
    for bad in (0.0, -1.0):
        with pytest.raises(ConfigError, match="positive"):
            analyse(games, "A", "B", effect=bad)
        assert main(["random", "random", "--game", "kuhn_poker", "--effect", str(bad)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("arena compare:") and "\n" not in err and "positive" in err


def test_the_sign_test_counts_deals_not_games():
    """A 12-0 sweep over 4 deals (3 games a deal): 4 of 4 deals, p 0.125, not 12 of 12."""
    games = [g for g in _luck_games(4, 0.0, 0.0, seed=6, skill_a=3.0)]
    r = analyse(games, "A", "B", resamples=50)
    assert (r["difference"]["sign_positive"], r["difference"]["sign_nonzero"]) == (4, 4)
    assert r["difference"]["sign_p"] == pytest.approx(0.125)


def test_a_per_player_variance_reduction_is_shown_only_where_the_reference_tracks_the_luck():
    """A ignores the luck the reference feels (slope 0): subtracting the reference adds variance,
    so no reduction is shown for A; B shares it (slope 1): a real reduction is."""
    r = analyse(_luck_games(40, 0.0, 1.0, seed=7), "A", "B", reference="R", resamples=50)
    per = r["reference"]["per_player"]
    assert per["A"]["variance_reduction"] is None and per["A"]["variance_reduction_estimate"] < 0
    assert per["B"]["variance_reduction"] > 0.5
    text = format_report(r)
    assert "no variance reduction shown" in text and "variance reduction -" not in text
