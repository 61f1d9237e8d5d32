"""Running tournaments: backends agree, failures are data, resume is idempotent, configs explain."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from arena_core.errors import ArenaError, ConfigError
from arena_tournament.config import config_from_dict, load_config
from arena_tournament.ratings import summarize
from arena_tournament.runner import ResultsFile, load_results, resolve_schedule, run_tournament

TOY = "tournament_toys:DrawOrStand"


def skilled(name: str, skill: float, **extra) -> dict:
    return {"name": name, "factory": "tournament_toys:Skilled", "options": {"skill": skill, **extra}}


def toy_config(tmp_path: Path, entrants: list[dict], **overrides) -> object:
    data = {
        "name": "toy",
        "game": "draw_or_stand",
        "game_factory": TOY,
        "entrants": entrants,
        "deals": 2,
        "output": str(tmp_path / "out"),
    }
    data.update(overrides)
    return config_from_dict(data)


SEVEN = [skilled(f"s{i}", i / 6) for i in range(7)]


def outcomes(path) -> list[dict]:
    _, games = load_results(path)
    return sorted((g.outcome() for g in games), key=lambda o: o["key"])


def test_kuhn_round_robin_plays_every_ordered_pair_on_every_deal(tmp_path):
    cfg = config_from_dict(
        {
            "game": "kuhn_poker",
            "entrants": [
                "first_legal",
                {"name": "r1", "player": "random", "seed": 1},
                {"name": "r2", "player": "random", "seed": 2},
            ],
            "deals": 3,
            "output": str(tmp_path / "kuhn"),
        }
    )
    report = run_tournament(cfg, quiet=True)
    assert (report.total, report.played) == (3 * 2 * 3, 18)
    header, games = load_results(report.path)
    assert header.schedule.design == "round_robin"
    assert all(g.reason == "natural" and abs(sum(g.returns)) < 1e-9 for g in games)
    assert len({(tuple(g.seats), g.seed) for g in games}) == 18


def test_process_pool_gives_the_sequential_results(tmp_path):
    seq = run_tournament(toy_config(tmp_path / "a", SEVEN), quiet=True)
    pool = run_tournament(toy_config(tmp_path / "b", SEVEN, run={"backend": "process", "workers": 2}), quiet=True)
    assert seq.played == pool.played == 7 * 2 * 3
    assert outcomes(seq.path) == outcomes(pool.path)


def test_four_player_tables_are_sampled_and_rotated(tmp_path):
    ents = [skilled(f"s{i}", i / 8) for i in range(9)]
    cfg = toy_config(tmp_path, ents, num_players=4, deals=1)
    report = run_tournament(cfg, quiet=True)
    header, games = load_results(report.path)
    assert header.schedule.design == "sampled" and len(header.schedule.tables) == 6  # ceil(36 pairs / 6 per table)
    assert report.played == 6 * 4
    for table in {g.cluster for g in games}:
        at = [g for g in games if g.cluster == table]
        assert all(sorted(g.seats[s] for g in at) == sorted(at[0].seats) for s in range(4))  # everyone in every seat
    summary = summarize(header, games, resamples=50)
    assert summary.num_players == 4 and len(summary.seats) == 4


def test_crashing_and_garbage_players_are_recorded_and_the_tournament_goes_on(tmp_path):
    ents = SEVEN[:5] + [
        {"name": "crash", "factory": "tournament_toys:Crashing"},
        {"name": "junk", "factory": "tournament_toys:Garbage"},
    ]
    report = run_tournament(toy_config(tmp_path, ents, run={"policy": "penalize"}), quiet=True)
    assert report.played == report.total == 42
    _, games = load_results(report.path)
    for g in games:
        bad = [s for s, name in enumerate(g.seats) if name in ("crash", "junk")]
        if not bad:
            assert g.reason == "natural" and not g.faults
            continue
        assert g.reason in ("player_error", "forfeit")
        assert g.seats[g.offender] in ("crash", "junk")
        assert g.returns[g.offender] == -1.0  # the game's lowest reward
        fault = g.faults[0]
        assert fault.player == g.seats[g.offender]
        assert (
            ("RuntimeError: boom" in fault.detail)
            if fault.player == "crash"
            else ("'12345' is not legal" in fault.detail)
        )
    summary = summarize(*load_results(report.path), resamples=50)
    last_two = {r.name for r in summary.leaderboard[-2:]}
    assert last_two == {"crash", "junk"}
    assert summary.row("crash").faults > 0


def test_default_policy_plays_the_default_action_for_a_crashing_player(tmp_path):
    ents = SEVEN[:6] + [{"name": "crash", "factory": "tournament_toys:Crashing"}]
    report = run_tournament(toy_config(tmp_path, ents, deals=1, run={"policy": "default"}), quiet=True)
    _, games = load_results(report.path)
    crash_games = [g for g in games if "crash" in g.seats]
    assert crash_games and all(g.reason == "natural" and g.returns is not None for g in crash_games)
    assert all(f.verdict == "default" for g in crash_games for f in g.faults)


def check_hanging(tmp_path) -> None:
    ents = SEVEN[:5] + [
        {"name": "hang", "factory": "tournament_toys:Hanging"},
        {"name": "stubborn", "factory": "tournament_toys:StubbornHanging"},
    ]
    cfg = toy_config(tmp_path, ents, deals=1, run={"policy": "penalize", "decision_time_limit_s": 0.1})
    report = run_tournament(cfg, quiet=True)
    assert report.played == 21
    _, games = load_results(report.path)
    hung = [g for g in games if {"hang", "stubborn"} & set(g.seats)]
    assert len(hung) == 15  # STS(7): the two share one table
    for g in hung:
        assert g.reason == "player_error" and g.seats[g.offender] in ("hang", "stubborn")
        assert "no answer within 0.1 s" in g.faults[0].detail
    assert all(g.reason == "natural" for g in games if g not in hung)


def test_a_hanging_player_times_out_per_decision(tmp_path):
    check_hanging(tmp_path)  # main thread: the SIGALRM timer


def test_a_hanging_player_times_out_off_the_main_thread(tmp_path):
    errors = []

    def body():
        try:
            check_hanging(tmp_path)  # not the main thread: a worker thread per decision
        except BaseException as exc:  # handed to the test thread
            errors.append(exc)

    thread = threading.Thread(target=body)
    thread.start()
    thread.join(60)
    assert not thread.is_alive() and not errors, errors


def test_the_game_time_limit_truncates_and_truncated_games_are_not_rated(tmp_path):
    ents = SEVEN[:6] + [skilled("slow", 1.0, delay_s=0.3)]
    cfg = toy_config(tmp_path, ents, deals=1, run={"game_time_limit_s": 0.15})
    report = run_tournament(cfg, quiet=True)
    header, games = load_results(report.path)
    slow = [g for g in games if "slow" in g.seats]
    assert slow and all(g.reason == "time_cap" and g.returns is None for g in slow)
    summary = summarize(header, games, resamples=20)
    assert summary.games_truncated == len(slow)
    assert summary.row("slow").games == 0


def test_resume_plays_only_missing_games_and_drops_a_torn_line(tmp_path):
    cfg = toy_config(tmp_path, SEVEN)
    first = run_tournament(cfg, quiet=True, max_games=10)
    assert first.played == 10
    with open(first.path, "a", encoding="utf-8") as fh:
        fh.write('{"type": "game", "key": "torn')  # a kill in the middle of a write
    second = run_tournament(cfg, quiet=True)
    assert (second.already_recorded, second.played) == (10, 32)
    third = run_tournament(cfg, quiet=True)
    assert third.played == 0
    lines = Path(first.path).read_text().splitlines()
    keys = [json.loads(x)["key"] for x in lines[1:]]
    assert len(keys) == len(set(keys)) == 42
    whole = run_tournament(toy_config(tmp_path / "whole", SEVEN), quiet=True)
    assert outcomes(first.path) == outcomes(whole.path)


def test_resume_refuses_a_different_schedule(tmp_path):
    run_tournament(toy_config(tmp_path, SEVEN), quiet=True, max_games=3)
    with pytest.raises(ConfigError, match="different schedule"):
        run_tournament(toy_config(tmp_path, SEVEN, deals=3), quiet=True)


def test_results_file_saves_the_schedule(tmp_path):
    cfg = toy_config(tmp_path, SEVEN)
    report = run_tournament(cfg, quiet=True, max_games=1)
    header, _ = ResultsFile(report.path).read()
    assert header.schedule == resolve_schedule(cfg)
    assert header.schedule.design == "steiner" and len(header.schedule.tables) == 7


def test_unknown_players_fail_before_any_game(tmp_path):
    cfg = config_from_dict({"game": "kuhn_poker", "entrants": ["random", "no_such_player"], "output": str(tmp_path)})
    with pytest.raises(ArenaError, match="no_such_player"):
        run_tournament(cfg, quiet=True)
    assert not (tmp_path / "results.jsonl").exists()


@pytest.mark.parametrize(
    "data, message",
    [
        ({"game": "kuhn_poker", "entrants": ["random", "first_legal"], "backendd": "ray"}, "backendd: unknown key"),
        (
            {"game": "kuhn_poker", "entrants": ["random", "first_legal"], "run": {"backnd": "ray"}},
            "did you mean 'backend'",
        ),
        (
            {"game": "kuhn_poker", "entrants": ["random", "first_legal"], "run": {"policy": "raise"}},
            "cannot use policy 'raise'",
        ),
        ({"game": "kuhn_poker", "entrants": ["random", "random"]}, "unique"),
        ({"game": "kuhn_poker", "entrants": ["random"]}, "entrants"),
        ({"entrants": ["random", "first_legal"]}, "game: required"),
        ({"game": "kuhn_poker", "entrants": ["random", "first_legal"], "deals": [1, 1]}, "distinct"),
        ({"game": "kuhn_poker", "entrants": ["random", "first_legal"], "run": {"backend": "gpu"}}, "run.backend"),
    ],
)
def test_config_errors_name_the_field_and_the_fix(data, message):
    with pytest.raises(ConfigError, match=message):
        config_from_dict(data)


def test_toml_and_yaml_configs_load_the_same(tmp_path):
    toml = tmp_path / "t.toml"
    toml.write_text(
        'game = "kuhn_poker"\ndeals = 2\nentrants = ["random", "first_legal"]\n[run]\nbackend = "process"\n'
    )
    yaml_path = tmp_path / "t.yaml"
    yaml_path.write_text("game: kuhn_poker\ndeals: 2\nentrants: [random, first_legal]\nrun:\n  backend: process\n")
    assert load_config(toml) == load_config(yaml_path)
    bad = tmp_path / "bad.toml"
    bad.write_text("game = \n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad)
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "missing.toml")
