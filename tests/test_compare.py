"""`arena compare`: schedule, analysis (battery, luck control, deals needed), CLI and example."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
