"""Issue 29, points 1-4: a position-biased player cannot fool the study, errored trials are
re-asked on resume, a run with nothing readable fails, near-greedy or overridden sampling is
not passed off as independent, and every cell states what its verdicts could detect."""

from __future__ import annotations

import json

import pytest

from arena_core.errors import ConfigError
from arena_core.players import BasePlayer
from arena_games.matrix import equilibria as eq
from arena_games.matrix.behaviour import copy_behaviour, detection_limits
from arena_games.matrix.fakellm import FORMATS, FakeChatServer
from arena_games.matrix.study import StudyConfig, main, run_study
from arena_players.openai_player import OpenAIPlayer


@pytest.fixture(scope="module", autouse=True)
def private_cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(eq.CACHE_ENV, str(tmp_path_factory.getbasetemp() / "matrix-cache"))
        yield


def factory(url, **options):
    settings = dict(base_url=url, model="fake", api_key_env="", temperature=1.0, concurrency=8, max_retries=0)
    settings.update(options)
    return lambda spec, seed: OpenAIPlayer(seed, **settings)


WELL_FORMED = tuple(f for f in FORMATS if f[1])
HEADLINE = ("coordination", "anti_coordination", "stag_hunt", "battle_of_sexes")


def _flagged(cell, word):
    return any(word in f for f in cell.flags)


# ------------------------------------------------------------------------------ point 1
def test_an_always_first_server_gets_no_unflagged_verdict(tmp_path):
    """The issue's new user: a local server that always answers the first option listed. Every
    above/below verdict carries a flag that names its cause, and the summary says so."""
    config = StudyConfig(player="openai:fake", archetypes=HEADLINE, ks=(3,), trials=30, batch=64)
    with FakeChatServer(seed=1, pick="first", formats=WELL_FORMED) as server:
        result = run_study(config, tmp_path, player_factory=factory(server.url), plot=False)
    decided = [c for c in result.cells if c.verdict in ("above", "below")]
    assert decided, "the shared listing reproduces the seed's headline"
    for c in decided:
        assert _flagged(c, "position-driven"), (c.listing, c.archetype, c.flags)
    independent = [c for c in result.cells if c.listing == "independent"]
    assert all(_flagged(c, "position-driven (copy 0)") for c in independent)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["behaviour"]["position_driven"] is True
    assert "listing order" in summary["behaviour"]["note"]
    cell = summary["cells"][0]
    assert {b["copy"] for b in cell["behaviour"]} == {0, 1}
    contrast = {c["archetype"]: c for c in summary["listing_contrast"]}
    assert set(contrast) == set(HEADLINE)
    assert contrast["coordination"]["difference"] > 0.5  # the shared edge is the listing order
    import csv

    cells_csv = list(csv.DictReader(open(tmp_path / "cells.csv", encoding="utf-8")))
    assert {r["position_driven"] for r in cells_csv if r["listing"] == "independent"} == {"True"}
    assert {r["min_trials_near_worst"] for r in cells_csv} == {"35"}


def test_the_focal_bot_is_label_driven_not_position_driven():
    config = StudyConfig(player="matrix_focal", archetypes=("coordination",), ks=(3,), trials=30)
    result = run_study(config, None)
    for c in result.cells:
        assert not _flagged(c, "position-driven"), c.flags
    independent = next(c for c in result.cells if c.listing == "independent")
    assert all(b["label_share"] == 1.0 and not b["position_driven"] for b in independent.behaviour)
    assert _flagged(independent, "deterministic")


def test_a_uniform_player_is_neither_position_driven_nor_deterministic():
    config = StudyConfig(player="matrix_uniform", archetypes=("coordination", "chicken"), ks=(3,), trials=60)
    for c in run_study(config, None).cells:
        assert not _flagged(c, "position-driven") and not _flagged(c, "deterministic"), c.flags


def test_a_shared_only_run_still_flags_the_always_first_player():
    config = StudyConfig(
        player="matrix_first_label", archetypes=("coordination",), ks=(3,), trials=9, listings=("shared",)
    )
    (cell,) = run_study(config, None).cells
    assert cell.verdict == "above" and _flagged(cell, "deterministic")


def test_copy_behaviour_separates_position_from_label():
    rows = [
        {"seat_of_player": 0, "position_0": 0, "label_0": lab, "position_1": p, "label_1": "B"}
        for lab, p in zip("ABCABCABCABC", [0, 1, 2] * 4)
    ]
    first, focal = copy_behaviour(rows, 3, "independent", 0), copy_behaviour(rows, 3, "independent", 1)
    assert first.position_driven and first.position_share == 1.0 and first.label_share == pytest.approx(1 / 3)
    assert not focal.position_driven and focal.deterministic and focal.top_label == "B"
    assert not copy_behaviour(rows, 3, "shared", 0).position_driven  # inseparable under one listing


# ------------------------------------------------------------------------------ point 2
def test_errored_trials_are_re_asked_on_resume(tmp_path):
    config = StudyConfig(
        player="openai:fake", archetypes=("coordination",), ks=(2,), trials=6, listings=("shared",), max_error_share=1.0
    )
    with FakeChatServer(seed=2, fail_status=503) as server:
        down = run_study(config, tmp_path, player_factory=factory(server.url), plot=False)
        assert down.cells[0].errors == 6
        server.fail_status = None
        before = server.requests
        up = run_study(config, tmp_path, player_factory=factory(server.url), plot=False)
        assert server.requests - before >= 6, "the errored trials were asked again"
    assert up.cells[0].errors == 0 and up.resumed == 0


class Mumbler(BasePlayer):
    name = "mumbler"

    def act(self, decision):
        return "hmm"


def test_a_run_where_nothing_was_read_exits_non_zero(tmp_path, capsys, monkeypatch):
    import arena_games.matrix.study as study

    monkeypatch.setattr(study, "make_player", lambda spec, seed=0: Mumbler(seed))
    code = main(
        ["--player", "mumbler", "--archetypes", "coordination", "--k", "2", "--trials", "4"]
        + ["--out", str(tmp_path), "--no-plot", "--quiet"]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1 and "not one of" in err[0], err


def test_the_unreadable_flag_counts_trials_not_answers(tmp_path):
    config = StudyConfig(player="m", archetypes=("coordination",), ks=(2,), trials=4, listings=("shared",))
    (cell,) = run_study(config, None, player_factory=lambda spec, seed: Mumbler(seed)).cells
    assert any("4 of 4 trials ended on an unreadable" in f for f in cell.flags), cell.flags


# ------------------------------------------------------------------------------ point 3
@pytest.mark.parametrize(
    "options, why",
    [
        ({"temperature": 0.001}, "temperature 0.001"),
        ({"top_p": 0.001}, "top_p 0.001"),
        ({"extra_body": {"temperature": 0}}, "temperature 0"),
        ({"extra_body": {"top_k": 1}}, "extra_body sets sampling"),
    ],
)
def test_near_greedy_or_overridden_sampling_is_not_independent(options, why):
    config = StudyConfig(player="openai:fake", archetypes=("coordination",), ks=(2,), trials=2, listings=("shared",))
    with FakeChatServer(seed=4) as server:
        with pytest.raises(ConfigError, match=why):
            run_study(config, None, player_factory=factory(server.url, **options))
        allowed = config.model_copy(update={"allow_greedy": True})
        result = run_study(allowed, None, player_factory=factory(server.url, **options))
    assert result.sampling["independent_sampling"] is False and result.sampling["not_independent"]
    if "extra_body" in options and "temperature" in options["extra_body"]:
        assert result.sampling["copies"][0]["temperature"] == 0  # the value sent, not the setting


# ------------------------------------------------------------------------------ point 4
def test_every_cell_states_what_its_verdicts_could_detect():
    limits = detection_limits("coordination", 2)
    assert limits["near_worst"] == 35 and limits["above"] <= 8 and limits["planning"] > limits["above"]
    config = StudyConfig(
        player="matrix_uniform", archetypes=("coordination",), ks=(2,), trials=12, listings=("shared",)
    )
    (cell,) = run_study(config, None).cells
    assert cell.limits["near_worst"] == 35
    assert any("'near_worst' cannot fire below 35" in f for f in cell.flags), cell.flags


# ------------------------------------------------------------------------------ point 5
def test_entrant_names_are_readable():
    from arena_games.matrix.merge import entrant_name

    spec = "openai:base_url=http://127.0.0.1:9/v1,model=tiny-chat,api_key_env=,temperature=1"
    assert entrant_name(spec) == "openai:tiny-chat temperature=1"
    assert entrant_name("matrix_focal:label=C") == 'matrix_focal{label = "C"}'
    assert entrant_name("matrix_uniform") == "matrix_uniform"


def test_merged_tables_control_errors_across_runs_and_test_the_pattern(tmp_path, capsys):
    games = ("coordination", "stag_hunt", "anti_coordination", "battle_of_sexes", "chicken")
    runs = []
    for player in ("matrix_first_label", "matrix_uniform"):
        out = tmp_path / player
        config = StudyConfig(player=player, archetypes=games, ks=(2,), trials=40)
        run_study(config, out, plot=False)
        runs.append(out)
    code = main(["--merge", *map(str, runs), "--archetypes", ",".join(games), "--out", str(tmp_path / "m")])
    assert code == 0, capsys.readouterr().err
    import csv

    rows = list(csv.DictReader(open(tmp_path / "m" / "merged_cells.csv", encoding="utf-8")))
    assert len(rows) == 2 * 2 * len(games)
    assert {r["entrant"] for r in rows} == {"matrix_first_label", "matrix_uniform"}
    summary = json.loads((tmp_path / "m" / "merged_summary.json").read_text())
    assert "over 2 runs" in summary["error_control"]["family"]
    per_run = sum(
        c["verdict"] in ("above", "below") for d in runs for c in json.loads((d / "summary.json").read_text())["cells"]
    )
    merged = sum(r["verdict"] in ("above", "below") for r in rows)
    assert merged <= per_run  # a larger family claims no more
    tests = {(t["entrant"], t["listing"]): t for t in summary["pattern"]["tests"]}
    assert {t["pattern"] for t in tests.values()} <= {"holds", "falsified", "not shown"}
    uniform = [t for (e, _), t in tests.items() if e == "matrix_uniform"]
    assert all(t["pattern"] == "not shown" for t in uniform)  # chance claims nothing
    first_shared = tests["matrix_first_label", "shared"]
    assert first_shared["matching"]["verdict"] == "above"
    if first_shared["pattern"] == "holds":
        assert "listing order" in first_shared["falsifier"]


# ------------------------------------------------------------------------------ point 7 (the study's own options)
@pytest.mark.parametrize(
    "option, value, needle",
    [
        ("--archetypes", "coordination,,chicken", "empty"),
        ("--listings", "shared,", "empty"),
        ("--k", "2,,3", "empty"),
        ("--k", "2,2", "twice"),
        ("--archetypes", "coordination,coordination", "twice"),
    ],
)
def test_the_study_refuses_empty_or_repeated_entries(tmp_path, capsys, option, value, needle):
    code = main(["--player", "matrix_uniform", option, value, "--trials", "2", "--out", str(tmp_path), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and needle in err[0], err
