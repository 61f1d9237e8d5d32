"""The study's LLM path against a local fake OpenAI-compatible server that logs its own uniformly
random picks: answers read strictly (none misread), no verdict beyond the error control, greedy
self-play refused, outages and error floods stop the study, concurrency, resume, outputs."""

from __future__ import annotations

import csv
import json
import re
import socket

import pytest

from arena_core.errors import ConfigError
from arena_core.text import parse_choice
from arena_games.matrix.bots import UniformPlayer
from arena_games.matrix.fakellm import FORMATS, FakeChatServer
from arena_games.matrix.study import StudyAbortedError, StudyConfig, build_parser, main, run_study
from arena_players.openai_player import OpenAIPlayer


@pytest.fixture
def server():
    with FakeChatServer(seed=3) as srv:
        yield srv


def factory(srv_url, **options):
    settings = dict(
        base_url=srv_url,
        model="fake",
        api_key_env="",
        temperature=1.0,
        concurrency=8,
        max_retries=0,
        record_response="full",
    )
    settings.update(options)
    return lambda spec, seed: OpenAIPlayer(seed, **settings)


def _no_nan(text):
    return json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(f"bare {c} in JSON")))


def test_every_format_is_read_or_refused_and_never_misread(server):
    """3000 server answers straight through the parser: every well-formed answer is read as the
    server's logged pick; malformed ones (hedges, prose, think-only, two answers) are unreadable."""
    labels = list("ABCDEFGHIJ")
    for n in range(3000):
        k = 2 + n % 9
        server.answer(
            {
                "messages": [{"content": f"The options are: {', '.join(labels[:k])}. Which one do you choose?"}],
                "seed": n,
            }
        )
    legal = {lab: i for i, lab in enumerate(labels)}
    well = read_well = misread = read_bad = 0
    for entry in server.log:
        r = parse_choice(
            entry["text"],
            {lab: legal[lab] for lab in entry["labels"]},
            default=lambda: None,
            json_keys=("action", "label", "answer", "choice"),
        )
        got = None if r.default_used else labels[r.action]
        misread += got is not None and got != entry["pick"]
        if entry["well_formed"]:
            well += 1
            read_well += got == entry["pick"]
        else:
            read_bad += got is not None
    assert {e["format"] for e in server.log} == {name for name, _, _ in FORMATS}
    assert misread == 0 and read_bad == 0
    assert read_well >= 0.99 * well and well > 1500


def test_a_random_server_study_reads_its_picks_and_claims_nothing(server, tmp_path):
    """The done-when check: every well-formed answer read as logged, none misread, and no
    'above'/'below' verdict (uniform picks are the null hypothesis of 'coordinates above chance')."""
    config = StudyConfig(
        player="openai:fake", archetypes=("coordination", "stag_hunt", "chicken"), ks=(2, 3), trials=30, seed=2
    )
    result = run_study(config, tmp_path, player_factory=factory(server.url), plot=False)
    by_text = {e["text"]: e for e in server.log}
    read = well_unread = misread = 0
    for line in open(tmp_path / "episodes.jsonl", encoding="utf-8"):
        d = json.loads(line)
        if d["type"] == "step":
            entry = by_text[d["telemetry"]["response"]]
            read += 1
            misread += d["action"] != entry["pick"]
        elif d["type"] == "policy":
            entry = by_text[d["telemetry"]["response"]]
            well_unread += entry["well_formed"]
            assert d["telemetry"]["parse_method"] == "unparseable"
    assert misread == 0 and well_unread == 0 and read > 200
    assert [c for c in result.cells if c.verdict in ("above", "below")] == []
    assert sum(c.unparseable for c in result.cells) > 0 and sum(c.errors for c in result.cells) == 0
    summary = _no_nan((tmp_path / "summary.json").read_text())
    assert (
        summary["sampling"]["copies"][0]["temperature"] == 1.0 and not summary["sampling"]["identical_by_construction"]
    )
    assert summary["error_control"]["procedure"].startswith("Holm")
    rows = list(csv.DictReader(open(tmp_path / "trials.csv", encoding="utf-8")))
    assert {r["outcome"] for r in rows} == {"scored", "unparseable"}
    assert {r["model_0"] for r in rows} == {"fake"} and {r["mode_0"] for r in rows} == {"free"}
    assert {r["temperature_1"] for r in rows} == {"1.0"} and {r["top_p_0"] for r in rows} == {"1.0"}
    assert len({r["seed_0"] for r in rows} | {r["seed_1"] for r in rows}) == 2  # one seed per copy


def test_trials_run_concurrently(server):
    """Counted at the server (no timing): with a concurrency limit of 8, up to 8 requests are in flight at once."""
    server.latency_s = 0.05
    config = StudyConfig(player="openai:fake", archetypes=("coordination",), ks=(4,), trials=32, listings=("shared",))
    run_study(config, None, player_factory=factory(server.url, concurrency=8))
    assert 4 <= server.max_in_flight <= 8
    server.max_in_flight = 0
    run_study(config.model_copy(update={"batch": 1}), None, player_factory=factory(server.url, concurrency=8))
    assert server.max_in_flight == 1  # one trial at a time: the sequential baseline


def test_greedy_self_play_is_refused_unless_asked_for(server, tmp_path, capsys):
    config = StudyConfig(player="openai:fake", archetypes=("coordination",), ks=(2,), trials=6, listings=("shared",))
    with pytest.raises(ConfigError, match="allow-greedy"):
        run_study(config, None, player_factory=factory(server.url, temperature=0.0))
    result = run_study(
        config.model_copy(update={"allow_greedy": True}),
        tmp_path,
        player_factory=factory(server.url, temperature=0.0),
        plot=False,
    )
    summary = _no_nan((tmp_path / "summary.json").read_text())
    assert (
        summary["sampling"]["identical_by_construction"] is True
        and "identical by construction" in summary["sampling"]["note"]
    )
    assert any("identical by construction" in f for f in result.cells[0].flags)
    rows = list(csv.DictReader(open(tmp_path / "trials.csv", encoding="utf-8")))
    assert all(r["label_0"] == r["label_1"] for r in rows if r["outcome"] == "scored")  # the copies answer alike
    spec = f"openai:base_url={server.url},model=fake,api_key_env=,temperature=0"
    assert (
        main(
            [
                "--player",
                spec,
                "--archetypes",
                "coordination",
                "--k",
                "2",
                "--trials",
                "2",
                "--out",
                str(tmp_path / "g"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--allow-greedy" in err[0]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_provider_exits_non_zero_in_one_line(tmp_path, capsys):
    spec = f"openai:base_url=http://127.0.0.1:{_free_port()}/v1,model=fake,api_key_env=,temperature=1,max_retries=0"
    code = main(["--player", spec, "--archetypes", "coordination", "--k", "2", "--trials", "4", "--out", str(tmp_path)])
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert code == 1 and len(err) == 1 and "cannot reach" in err[0]


def test_an_outage_mid_study_stops_it(tmp_path, capsys):
    """The model list answers (preflight passes) but every completion fails: the first cell's
    errors exceed the limit, the study stops with one line and exit 1; errors are not 'unparseable', and
    a 503 is the provider's outage (``unavailable``), not the player's error."""
    with FakeChatServer(fail_status=503) as down:
        spec = f"openai:base_url={down.url},model=fake,api_key_env=,temperature=1,max_retries=0"
        code = main(
            [
                "--player",
                spec,
                "--archetypes",
                "coordination,chicken",
                "--k",
                "2",
                "--trials",
                "4",
                "--out",
                str(tmp_path),
            ]
        )
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert code == 1 and len(err) == 1 and "study stopped" in err[0] and "player errors" in err[0]
    rows = list(csv.DictReader(open(tmp_path / "trials.csv", encoding="utf-8")))
    assert rows and {r["outcome"] for r in rows} == {"error"} and {r["fault_kind"] for r in rows} == {"unavailable"}
    # a cell of the study stops it: the study pipelines trials, so cells of both archetypes can be in flight
    # at once and any of them may be the first to exceed the limit (a full-suite run saw chicken's first)
    assert re.search(r"trials in \w+/(coordination|chicken)/k=2 ended in player errors", err[0])


class Flaky(UniformPlayer):
    """Raises on every third decision: a player error, not an unreadable answer."""

    calls = 0

    def act(self, decision):
        Flaky.calls += 1
        if Flaky.calls % 3 == 0:
            raise TimeoutError("the provider timed out")
        return super().act(decision)


def test_errors_are_counted_apart_and_a_flood_stops_the_study(tmp_path):
    config = StudyConfig(
        player="flaky", archetypes=("coordination",), ks=(2,), trials=20, listings=("shared",), max_error_share=0.9
    )
    result = run_study(config, tmp_path, player_factory=lambda spec, seed: Flaky(seed), plot=False)
    cell = result.cells[0]
    assert cell.errors > 0 and cell.unparseable == 0 and cell.scored + cell.errors == cell.trials
    rows = list(csv.DictReader(open(tmp_path / "trials.csv", encoding="utf-8")))
    assert {r["fault_kind"] for r in rows if r["outcome"] == "error"} == {"timeout"}
    with pytest.raises(StudyAbortedError, match="over the 10% limit"):
        run_study(
            config.model_copy(update={"max_error_share": 0.1}), None, player_factory=lambda spec, seed: Flaky(seed)
        )


def test_defaulted_trials_are_counted_and_excluded(tmp_path):
    class Mumbler(UniformPlayer):
        def act(self, decision):
            return "Hmm, B or C." if decision.seat == 0 else super().act(decision)

    config = StudyConfig(
        player="m", archetypes=("coordination",), ks=(2,), trials=6, listings=("shared",), policy="default"
    )
    cell = run_study(config, tmp_path, player_factory=lambda spec, seed: Mumbler(seed), plot=False).cells[0]
    assert cell.defaulted == 6 and cell.scored == 0 and cell.verdict == "no data"
    assert any("defaulted" in f for f in cell.flags)


class Interrupting(UniformPlayer):
    """Uniform play, interrupted (as by Ctrl-C) at its ``stop_at``-th decision."""

    stop_at: int | None = None
    calls = 0

    def act(self, decision):
        Interrupting.calls += 1
        if Interrupting.stop_at is not None and Interrupting.calls == Interrupting.stop_at:
            raise KeyboardInterrupt
        return super().act(decision)


def test_an_interrupted_study_resumes_without_replaying(tmp_path):
    config = StudyConfig(
        player="u", archetypes=("coordination", "chicken"), ks=(2, 3), trials=6, listings=("shared",), batch=4
    )
    make = lambda spec, seed: Interrupting(seed)  # noqa: E731
    Interrupting.calls, Interrupting.stop_at = 0, 30
    with pytest.raises(KeyboardInterrupt):
        run_study(config, tmp_path / "r", player_factory=make, plot=False)
    done = len((tmp_path / "r" / "trials.jsonl").read_text().splitlines())
    assert 0 < done < 24
    Interrupting.calls, Interrupting.stop_at = 0, None
    resumed = run_study(config, tmp_path / "r", player_factory=make, plot=False)
    assert resumed.resumed == done and Interrupting.calls == 2 * (24 - done)  # only the missing trials were played
    again = run_study(config, tmp_path / "r", player_factory=make, plot=False)  # idempotent: nothing left to play
    assert again.resumed == 24
    whole = run_study(config, tmp_path / "w", player_factory=make, plot=False)
    assert (tmp_path / "r" / "trials.csv").read_text() == (tmp_path / "w" / "trials.csv").read_text()

    def episodes(run):  # each line without its timing telemetry
        lines = [json.loads(ln) for ln in (tmp_path / run / "episodes.jsonl").read_text().splitlines()]
        for d in lines:
            d.get("telemetry", {}).pop("latency_s", None)
        return lines

    assert episodes("r") == episodes("w")  # no duplicate or torn episodes
    assert [c.mean for c in resumed.cells] == [c.mean for c in whole.cells]
    with pytest.raises(ConfigError, match="different study"):
        run_study(config.model_copy(update={"trials": 12}), tmp_path / "r", player_factory=make)


def test_trial_counts_are_rounded_to_k_or_warned_about(capsys):
    config = StudyConfig(
        player="matrix_uniform", archetypes=("coordination",), ks=(3, 4), trials=10, listings=("shared",)
    )
    assert config.trials_for(3) == 12 and config.trials_for(4) == 12
    result = run_study(config, None)
    assert [c.trials for c in result.cells] == [12, 12]
    unrounded = config.model_copy(update={"round_trials": False})
    assert unrounded.trials_for(3) == 10 and "not a multiple of k = 3, 4" in unrounded.warnings()[0]
    run_study(unrounded, None)
    assert "warning: 10 trials is not a multiple" in capsys.readouterr().err


def test_cli_names_itself_defaults_its_output_and_merges(tmp_path, monkeypatch, capsys):
    assert build_parser().format_help().startswith("usage: arena study")
    monkeypatch.chdir(tmp_path)
    assert (
        main(
            [
                "--player",
                "matrix_first_label",
                "--trials",
                "4",
                "--k",
                "2",
                "--archetypes",
                "paper",
                "--quiet",
                "--no-plot",
            ]
        )
        == 0
    )
    summary = _no_nan((tmp_path / "runs" / "study" / "matrix_first_label" / "summary.json").read_text())
    assert {c["archetype"] for c in summary["cells"]} == {
        "coordination",
        "anti_coordination",
        "stag_hunt",
        "public_goods",
        "battle_of_sexes",
        "prisoners_dilemma",
        "chicken",
    }
    assert (
        main(
            [
                "--player",
                "matrix_uniform",
                "--trials",
                "4",
                "--k",
                "2,3",
                "--archetypes",
                "paper",
                "--quiet",
                "--no-plot",
            ]
        )
        == 0
    )
    code = main(
        [
            "--merge",
            "runs/study/matrix_first_label",
            "runs/study/matrix_uniform",
            "--out",
            "figs",
            "--archetypes",
            "paper",
        ]
    )
    assert code == 0 and len(list((tmp_path / "figs").glob("*.png"))) == 7
    assert main(["--merge", "nowhere", "--out", "figs"]) == 2
    assert "no summary.json" in capsys.readouterr().err


def test_a_retried_answer_that_is_then_read_is_scored(tmp_path):
    """Under ``retry:1`` an unreadable first answer followed by a readable one is a scored trial
    (the retry is noted), not an unreadable one."""

    class Hesitant(UniformPlayer):
        def __init__(self, seed=0):
            super().__init__(seed)
            self.asked = set()

        def act(self, decision):
            key = (decision.episode_seed, decision.seat)
            if key not in self.asked:
                self.asked.add(key)
                return "B or C"
            return f"Answer: {decision.observation['labels'][0]}"

    config = StudyConfig(
        player="h", archetypes=("coordination",), ks=(2,), trials=4, listings=("shared",), policy="retry:1"
    )
    cell = run_study(config, tmp_path, player_factory=lambda spec, seed: Hesitant(seed), plot=False).cells[0]
    assert cell.scored == 4 and cell.unparseable == 0 and cell.mean == 2.0
    rows = list(csv.DictReader(open(tmp_path / "trials.csv", encoding="utf-8")))
    assert {r["outcome"] for r in rows} == {"scored"} and all("retried" in r["detail"] for r in rows)


def test_the_fake_llm_example_runs(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    example = Path(__file__).resolve().parents[1] / "examples" / "matrix_fake_llm.py"
    out = subprocess.run(
        [sys.executable, str(example), str(tmp_path)], capture_output=True, text=True, timeout=600, env=dict(os.environ)
    )
    assert out.returncode == 0, out.stderr
    assert "misread: 0" in out.stdout and "(of them well-formed: 0)" in out.stdout
    assert "=> above" not in out.stdout and "=> below" not in out.stdout


class BatchedOpenAI(OpenAIPlayer):
    """The same player, declared unsafe to call on several threads: the study plays it in batches."""

    concurrent_act = False


def test_a_pipelined_study_gives_the_batched_trials_through_a_flaky_provider(server, tmp_path):
    """Issue 43.3: pipelining changes when trials are asked, not what they answer: with 20% of
    requests failing (retried, no wait), the pipelined and the batched study record the same trials."""
    server.fail_rate = 0.2
    config = StudyConfig(
        player="openai:fake", archetypes=("coordination",), ks=(2, 3), trials=12, listings=("shared",), batch=8
    )
    options = dict(base_url=server.url, model="fake", api_key_env="", temperature=1.0, max_retries=8, backoff_s=0.0)
    run_study(config, tmp_path / "piped", player_factory=lambda spec, seed: OpenAIPlayer(seed, **options), plot=False)
    run_study(
        config, tmp_path / "batched", player_factory=lambda spec, seed: BatchedOpenAI(seed, **options), plot=False
    )
    assert server.failed > 0

    def trials(out):
        rows = [json.loads(x) for x in (out / "trials.jsonl").read_text().splitlines()]
        return sorted(
            ({k: v for k, v in r.items() if k not in ("_episodes_end",)} for r in rows),
            key=lambda r: (r["archetype"], r["k"], r["trial"]),
        )

    piped, batched = trials(tmp_path / "piped"), trials(tmp_path / "batched")
    assert len(piped) == 2 * 12 and piped == batched
    assert {r["outcome"] for r in piped} <= {"scored", "unparseable"}  # every outage ridden out by the retries
