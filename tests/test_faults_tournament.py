"""Failures are data: dead workers, BaseException players, preflight, fault rates, spending caps,
one writer per directory, secrets, game records and resolved identities (issue 14)."""

from __future__ import annotations

import gzip
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_core.errors import ConfigError
from arena_core.faults import FaultKind
from arena_core.outputs import RunLock
from arena_tournament.audit import EXIT_FLAGGED, fault_summary
from arena_tournament.config import config_from_dict
from arena_tournament.play import rank_offender_last
from arena_tournament.ratings import summarize
from arena_tournament.records import RECORDS_NAME, RecordsFile, read_game_records
from arena_tournament.runner import load_results, run_tournament

HERE = Path(__file__).parent
TOY = "tournament_toys:DrawOrStand"


def skilled(name: str, skill: float = 1.0, **extra) -> dict:
    return {"name": name, "factory": "tournament_toys:Skilled", "options": {"skill": skill, **extra}}


def toy(name: str, factory: str, **options) -> dict:
    return {"name": name, "factory": f"fault_toys:{factory}", "options": options}


def config(tmp_path: Path, entrants: list[dict], **overrides):
    data = {
        "name": "faults",
        "game": "draw_or_stand",
        "game_factory": TOY,
        "entrants": entrants,
        "deals": 1,
        "output": str(tmp_path / "out"),
    }
    run = {"policy": "penalize", **overrides.pop("run", {})}
    data.update(overrides, run=run)
    return config_from_dict(data)


def by_key(path) -> dict:
    return {g.key: g for g in load_results(path)[1]}


def env() -> dict:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(HERE), e.get("PYTHONPATH", "")])
    return e


def cli(*args, **kw) -> subprocess.CompletedProcess:
    kw.setdefault("env", env())
    return subprocess.run(
        [sys.executable, "-m", "arena_tournament.cli", *args], capture_output=True, text=True, timeout=120, **kw
    )


# ---------------------------------------------------------------------- item 1: isolation
@pytest.mark.parametrize("how", ["exit", "segv"])
def test_a_dead_worker_costs_its_game_as_a_crash_of_the_deciding_entrant(tmp_path, how):
    ents = [skilled("a"), skilled("b"), skilled("c", 0.5), toy("dies", "ExitsWorker", how=how)]
    cfg = config(tmp_path, ents, run={"backend": "process", "workers": 2})
    report = run_tournament(cfg, quiet=True)
    games = by_key(report.path)
    assert len(games) == report.total == report.played  # every game recorded once, the run went on
    dead = [g for g in games.values() if "dies" in g.seats]
    assert dead and report.crashes == len(dead)
    for g in dead:
        assert g.reason == "crash" and g.seats[g.offender] == "dies"
        (fault,) = g.faults
        assert fault.kind is FaultKind.CRASH and fault.player == "dies"
        assert ("SIGSEGV" if how == "segv" else "exit status 3") in fault.detail
        others = [r for i, r in enumerate(g.returns) if i != g.offender]
        assert g.returns[g.offender] < min(others)  # a loss, last place: rated, never dropped
    assert all(g.reason == "natural" for g in games.values() if "dies" not in g.seats)
    summary = summarize(*load_results(report.path), resamples=0)
    assert summary.leaderboard[-1].name == "dies"
    assert summary.row("dies").games == len(dead)
    again = run_tournament(cfg, quiet=True)  # resume does not loop on it
    assert again.played == 0 and by_key(report.path).keys() == games.keys()


@pytest.mark.parametrize("what", ["SystemExit", "KeyboardInterrupt", "GeneratorExit"])
def test_base_exceptions_from_player_code_are_faults_of_that_player(tmp_path, what):
    ents = [skilled("a"), skilled("b"), toy("bad", "RaisesBase", what=what)]
    report = run_tournament(config(tmp_path, ents), quiet=True)
    games = list(by_key(report.path).values())
    assert report.played == report.total == len(games) > 0
    for g in games:
        assert g.reason == "player_error" and g.seats[g.offender] == "bad"
        assert g.faults[0].kind is FaultKind.ERROR and what in g.faults[0].detail


def test_base_exceptions_in_a_process_pool_are_faults_too(tmp_path):
    ents = [
        skilled("a"),
        skilled("b"),
        toy("exit", "RaisesBase", what="SystemExit"),
        toy("ctrlc", "RaisesBase", what="KeyboardInterrupt"),
    ]
    report = run_tournament(config(tmp_path, ents, run={"backend": "process", "workers": 2}), quiet=True)
    games = by_key(report.path)
    assert len(games) == report.total and report.crashes == 0
    assert all(g.faults[0].kind is FaultKind.ERROR for g in games.values() if {"exit", "ctrlc"} & set(g.seats))


def test_a_real_ctrl_c_stops_the_run_with_one_line_and_resume_finishes_it(tmp_path):
    ents = ",".join(f'{{ name = "s{i}", factory = "fault_toys:SlowSkilled" }}' for i in range(7))
    cfg = tmp_path / "c.toml"
    out = tmp_path / "out"
    cfg.write_text(
        f'game = "draw_or_stand"\ngame_factory = "{TOY}"\ndeals = 1\noutput = "{out}"\nentrants = [{ents}]\n'
    )
    results = out / "results.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena_tournament.cli", "tournament", str(cfg), "--quiet", "--no-report"],
        env=env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while (not results.exists() or results.read_text().count("\n") < 4) and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert len(err.strip().splitlines()) == 1 and "interrupted" in err and "Traceback" not in err, err
    header, games = load_results(results)
    assert 0 < len(games) < 21 and all(not g.faults for g in games)  # no game blamed on a player
    done = cli("tournament", str(cfg), "--quiet", "--no-report")
    assert done.returncode == 0, done.stderr
    assert len(load_results(results)[1]) == 21


# ---------------------------------------------------------------------- item 2: preflight
def test_an_entrant_that_cannot_be_built_fails_before_the_first_game(tmp_path):
    cfg = config(
        tmp_path,
        [skilled("a"), skilled("b"), {"name": "typo", "factory": "tournament_toys:Skilled", "options": {"skil": 1}}],
    )
    with pytest.raises(ConfigError, match="entrant 'typo' cannot be built") as err:
        run_tournament(cfg, quiet=True)
    assert "\n" not in str(err.value)
    assert not (tmp_path / "out" / "results.jsonl").exists()


def test_preflight_failure_is_one_line_exit_2_and_can_be_skipped(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        f'game = "draw_or_stand"\ngame_factory = "{TOY}"\ndeals = 1\noutput = "{tmp_path / "out"}"\n'
        'entrants = [{ name = "a", factory = "tournament_toys:Skilled" }, { name = "b", factory = "tournament_toys:Skilled" },'
        ' { name = "remote", factory = "fault_toys:PreflightFails" }]\n'
    )
    bad = cli("tournament", str(cfg), "--quiet")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "entrant 'remote' failed its preflight" in bad.stderr and "--no-preflight" in bad.stderr
    assert not (tmp_path / "out" / "results.jsonl").exists()
    ok = cli("tournament", str(cfg), "--quiet", "--no-preflight", "--no-report")
    assert ok.returncode == 0, ok.stderr


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_openai_preflight_checks_the_key_and_the_endpoint(monkeypatch):
    from arena_core.errors import ArenaError
    from arena_core.players import preflight_player
    from arena_players.openai_player import OpenAIPlayer

    monkeypatch.delenv("ARENA_TEST_KEY", raising=False)
    with pytest.raises(ArenaError, match="ARENA_TEST_KEY is not set"):
        preflight_player("gpt", OpenAIPlayer(api_key_env="ARENA_TEST_KEY"))
    monkeypatch.setenv("ARENA_TEST_KEY", "sk-test-0123456789abcdefghij")
    dead = OpenAIPlayer(api_key_env="ARENA_TEST_KEY", base_url=f"http://127.0.0.1:{closed_port()}/v1", timeout_s=2)
    with pytest.raises(ArenaError, match="entrant 'gpt' failed its preflight: cannot reach") as err:
        preflight_player("gpt", dead)
    assert "sk-test" not in str(err.value)


# ---------------------------------------------------------------------- item 3: faults on the leaderboard
def test_fault_rates_modes_and_the_flag(tmp_path):
    ents = [
        skilled("good"),
        skilled("ok", 0.5),
        {"name": "junk", "factory": "tournament_toys:Garbage"},
        toy("boom", "RaisesBase", what="SystemExit"),
        {"name": "chat", "factory": "report_toys:Chatty"},  # answers in text that names its move
    ]
    cfg = config(tmp_path, ents, deals=2, run={"policy": "default", "max_fault_rate": 0.25})
    report = run_tournament(cfg, quiet=True)
    header, games = load_results(report.path)
    faults = fault_summary(header, games)
    junk, boom, good = faults.entrants["junk"], faults.entrants["boom"], faults.entrants["good"]
    assert junk.rates["illegal"] == 1.0 and junk.rates["default_applied"] == 1.0 and junk.mode == "constrained"
    assert boom.rates["error"] == 1.0 and boom.counts["forfeit"] == 0
    # a bot answering with the game's own action strings picks a legal move: constrained, not free text
    assert good.fault_rate == 0.0 and good.mode == "constrained" and not good.flagged
    assert faults.entrants["chat"].mode == "free"
    assert faults.flagged == ["junk", "boom"] and faults.mixed_modes
    assert all(f.kind in (FaultKind.ILLEGAL, FaultKind.ERROR) for g in games for f in g.faults)
    assert all(not f.detail.startswith(("illegal", "error")) for g in games for f in g.faults)  # the type is a field


def test_max_fault_rate_none_never_flags(tmp_path):
    # None ("never") used to reach the results header as None, which reads as "not recorded": the
    # audit then flagged at the 0.25 default and the run exited non-zero
    ents = [skilled("good"), skilled("ok", 0.5), {"name": "junk", "factory": "tournament_toys:Garbage"}]
    cfg = config(tmp_path, ents, deals=1, run={"policy": "default", "max_fault_rate": None})
    assert cfg.run.max_fault_rate == 1.0
    header, games = load_results(run_tournament(cfg, quiet=True).path)
    faults = fault_summary(header, games)
    assert faults.entrants["junk"].fault_rate == 1.0 and not faults.flagged


def test_the_cli_finishes_the_schedule_then_exits_non_zero_naming_the_flagged_entrant(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        f'game = "draw_or_stand"\ngame_factory = "{TOY}"\ndeals = 1\noutput = "{tmp_path / "out"}"\n'
        'entrants = [{ name = "a", factory = "tournament_toys:Skilled" }, { name = "b", factory = "tournament_toys:Skilled" },'
        ' { name = "junk", factory = "tournament_toys:Garbage" }]\n[run]\npolicy = "default"\n[ratings]\nbootstrap = 0\n'
    )
    done = cli("tournament", str(cfg), "--quiet")
    assert done.returncode == EXIT_FLAGGED
    assert done.stderr.strip().splitlines() == [done.stderr.strip()] and "junk (100%)" in done.stderr
    header, games = load_results(tmp_path / "out")
    assert len(games) == len(header.schedule.games())  # the schedule was finished first
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    row = next(r for r in summary["leaderboard"] if r["name"] == "junk")
    assert row["flagged"] and row["fault_rates"]["illegal"] == 1.0
    assert summary["faults"]["flagged"] == ["junk"]


def test_an_exhausted_cap_stops_the_entrant_and_its_games_are_listed_unplayed(tmp_path, capsys):
    ents = [skilled("a"), skilled("b"), skilled("c"), toy("capped", "Capped", calls=3)]
    cfg = config(tmp_path, ents, deals=3, run={"fresh_players": False})
    report = run_tournament(cfg, quiet=False)
    err = capsys.readouterr().err
    assert "'capped' exhausted its spending cap" in err and "not played" in err
    header, games = load_results(report.path)
    keys = [g.key for g in games]
    assert len(keys) == len(set(keys)) == len(header.schedule.games())  # every scheduled game once
    capped = [g for g in games if "capped" in g.seats]
    hit = [g for g in capped if any(f.kind is FaultKind.CAP_EXHAUSTED for f in g.faults)]
    unplayed = [g for g in capped if g.reason == "unplayed"]
    assert len(hit) == 1 and unplayed and report.unplayed == len(unplayed)
    assert all("exhausted its spending cap" in g.detail and g.returns is None and not g.faults for g in unplayed)
    assert hit[0].seats[hit[0].offender] == "capped"  # the game it ran out in is its forfeit (penalize)
    assert all(g.reason == "natural" for g in games if "capped" not in g.seats)
    faults = fault_summary(header, games)
    assert faults.entrants["capped"].unplayed_games == len(unplayed) == faults.games_unplayed
    summary = summarize(header, games, resamples=0)
    assert summary.row("capped").games == len(capped) - len(unplayed)
    again = run_tournament(cfg, quiet=True)
    assert again.played == 0 and again.unplayed == 0  # unplayed games are recorded: resume keeps them


@settings(max_examples=200, deadline=None)
@given(returns=st.lists(st.floats(-100, 100, allow_nan=False), min_size=2, max_size=6), data=st.data())
def test_a_forfeit_or_crash_always_ranks_its_offender_strictly_last(returns, data):
    offender = data.draw(st.integers(0, len(returns) - 1))
    reason = data.draw(st.sampled_from(["forfeit", "player_error", "crash"]))
    out = rank_offender_last(returns, offender, reason)
    assert all(out[offender] < r for i, r in enumerate(out) if i != offender)
    assert [r for i, r in enumerate(out) if i != offender] == [r for i, r in enumerate(returns) if i != offender]
    assert rank_offender_last(returns, offender, "natural") == returns


# ---------------------------------------------------------------------- item 4: one writer
def test_a_second_run_on_a_locked_directory_is_refused(tmp_path):
    cfg = config(tmp_path, [skilled("a"), skilled("b"), skilled("c")])
    with RunLock(tmp_path / "out"):
        with pytest.raises(ConfigError, match="another run is writing"):
            run_tournament(cfg, quiet=True)
    assert run_tournament(cfg, quiet=True).played > 0


def test_ratings_refuse_duplicate_game_keys(tmp_path):
    report = run_tournament(config(tmp_path, [skilled("a"), skilled("b"), skilled("c")]), quiet=True)
    path = Path(report.path)
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines + [lines[1]]) + "\n")  # a second writer's copy of a game
    with pytest.raises(ConfigError, match="recorded twice"):
        load_results(path)
    bad = cli("ratings", str(path))
    assert bad.returncode == 2 and "recorded twice" in bad.stderr and "Traceback" not in bad.stderr


# ---------------------------------------------------------------------- item 5: secrets
def test_errors_are_scrubbed_before_they_are_cut(tmp_path):
    report = run_tournament(config(tmp_path, [skilled("a"), skilled("b"), toy("leaky", "Leaky")]), quiet=True)
    text = Path(report.path).read_text() + gzip.decompress((tmp_path / "out" / RECORDS_NAME).read_bytes()).decode()
    assert "Bearer ***" in text
    for i in range(len("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") - 5):
        assert "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"[i : i + 6] not in text


@pytest.mark.parametrize("options", [{"api_key": "sk-abc123abc123abc123"}, {"extra_body": {"token": "hunter2hunter2"}}])
def test_a_literal_key_in_a_config_is_refused_with_one_line(tmp_path, options):
    ents = [skilled("a"), skilled("b"), {"name": "gpt", "player": "openai", "options": options}]
    with pytest.raises(ConfigError, match="entrant 'gpt'.*literal secret.*api_key_env") as err:
        run_tournament(config(tmp_path, ents), quiet=True)
    assert "\n" not in str(err.value) and "abc123" not in str(err.value) and "hunter2" not in str(err.value)
    assert not (tmp_path / "out" / "results.jsonl").exists()


# ---------------------------------------------------------------------- item 7: records and identities
def test_every_game_has_a_replayable_record_and_a_torn_tail_is_discarded(tmp_path):
    from arena_core.replay import replay

    cfg = config(
        tmp_path,
        [skilled("a"), skilled("b", 0.5), skilled("c", 0.0), {"name": "junk", "factory": "tournament_toys:Garbage"}],
    )
    first = run_tournament(cfg, quiet=True, max_games=5)
    records_path = tmp_path / "out" / RECORDS_NAME
    with open(records_path, "ab") as fh:  # a kill in the middle of writing a record
        fh.write(gzip.compress(b'{"key": "x"}')[:15])
    with open(first.path, "a") as fh:  # ... and of a results line
        fh.write('{"type": "game", "key": "tor')
    assert len(read_game_records(tmp_path / "out")) == 5
    run_tournament(cfg, quiet=True)
    games = by_key(first.path)
    records = read_game_records(tmp_path / "out")
    assert records.keys() == games.keys()
    for key, record in records.items():
        g = games[key]
        assert record.end.reason.value == g.reason and record.header.players == g.seats
        assert len([e for e in record.events if e.type == "policy"]) == len(g.faults)
        assert all(e.obs_digest for e in record.steps)
        replay(
            record, None if False else __import__("tournament_toys").DrawOrStand(record.header.params, num_players=3)
        )
    faulted = next(r for k, r in records.items() if games[k].faults)
    assert next(e for e in faulted.events if e.type == "policy").telemetry["fault"] in (
        "illegal",
        "unparseable",
        "error",
    )


def test_a_record_without_its_results_line_does_not_count(tmp_path):
    cfg = config(tmp_path, [skilled("a"), skilled("b"), skilled("c")])
    run_tournament(cfg, quiet=True, max_games=2)
    path = tmp_path / "out" / "results.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:-1]) + "\n")  # killed after the record, before the line
    assert len(read_game_records(tmp_path / "out")) == 1
    run_tournament(cfg, quiet=True)
    assert read_game_records(tmp_path / "out").keys() == by_key(path).keys()
    assert (
        len(list(RecordsFile(tmp_path / "out" / RECORDS_NAME).members())) == len(by_key(path)) + 1
    )  # the replayed game twice


def test_resume_refuses_changed_identities_and_reads_format_one(tmp_path):
    cfg = config(tmp_path, [skilled("a"), skilled("b"), skilled("c", 0.5)])
    report = run_tournament(cfg, quiet=True, max_games=1)
    header, _ = load_results(report.path)
    assert header.format == "arena.tournament/2"
    ident = header.identities["c"]
    assert ident["params"]["skill"] == 0.5 and ident["params"]["delay_s"] == 0.0 and ident["class"].endswith("Skilled")
    # the same config, but the player's code now resolves a different default
    import tournament_toys

    old = tournament_toys.Skilled.__init__

    def changed(self, seed=0, skill=1.0, delay_s=0.001):
        old(self, seed, skill, delay_s)

    tournament_toys.Skilled.__init__ = changed
    try:
        with pytest.raises(ConfigError, match=r"entrant 'a' changed: params.delay_s was 0.0, now 0.001"):
            run_tournament(cfg, quiet=True)
    finally:
        tournament_toys.Skilled.__init__ = old
    # a results file of format 1 (no identities, untyped faults) still reads and rates
    path = Path(report.path)
    lines = path.read_text().splitlines()
    head = json.loads(lines[0])
    head.update(format="arena.tournament/1")
    head.pop("identities"), head.pop("max_fault_rate")
    games = [json.loads(x) for x in lines[1:]]
    for g in games:
        for k in ("decisions", "modes", "detail"):
            g.pop(k, None)
    old_file = tmp_path / "v1.jsonl"
    old_file.write_text("\n".join(json.dumps(x) for x in [head, *games]) + "\n")
    h1, g1 = load_results(old_file)
    assert h1.format == "arena.tournament/1" and len(g1) == 1
    assert summarize(h1, g1, resamples=0).games_recorded == 1
    assert fault_summary(h1, g1).flagged == []


# ---------------------------------------------------------------------- done when
def test_a_tournament_of_every_failure_completes_with_every_game_once_and_every_fault_visible(tmp_path):
    """Entrants that raise, hang, answer garbage, kill their worker, raise SystemExit, exhaust
    their cap and point at a dead endpoint; process backend, preflight skipped."""
    port = closed_port()
    cfg = tmp_path / "all.toml"
    out = tmp_path / "out"
    cfg.write_text(f'''
name = "every-failure"
game = "draw_or_stand"
game_factory = "{TOY}"
deals = 1
output = "{out}"
entrants = [
  {{ name = "good", factory = "tournament_toys:Skilled" }},
  {{ name = "fair", factory = "tournament_toys:Skilled", options = {{ skill = 0.5 }} }},
  {{ name = "raises", factory = "tournament_toys:Crashing" }},
  {{ name = "hangs", factory = "tournament_toys:Hanging" }},
  {{ name = "garbage", factory = "tournament_toys:Garbage" }},
  {{ name = "kills-worker", factory = "fault_toys:ExitsWorker" }},
  {{ name = "sys-exit", factory = "fault_toys:RaisesBase", options = {{ what = "SystemExit" }} }},
  {{ name = "capped", factory = "fault_toys:Capped", options = {{ calls = 1 }} }},
  {{ name = "dead-endpoint", player = "openai", on_outage = "default", options = {{ base_url = "http://127.0.0.1:{port}/v1", api_key_env = "", max_retries = 0, timeout_s = 2 }} }},
]
[run]
backend = "process"
workers = 2
policy = "penalize"
fresh_players = false
decision_time_limit_s = 0.3
[ratings]
bootstrap = 0
''')
    started = time.monotonic()
    done = cli("tournament", str(cfg), "--no-preflight", "--quiet")
    assert time.monotonic() - started < 60
    assert done.returncode == EXIT_FLAGGED, done.stderr
    assert "Traceback" not in done.stderr
    header, games = load_results(out)
    keys = [g.key for g in games]
    assert sorted(keys) == sorted(g.key for g in header.schedule.games())  # every scheduled game, once
    unplayed = [g for g in games if g.reason == "unplayed"]
    assert unplayed and all("capped" in g.seats and "spending cap" in g.detail for g in unplayed)
    summary = json.loads((out / "summary.json").read_text())
    counts = {n: r["counts"] for n, r in summary["faults"]["entrants"].items()}
    expected = {
        "raises": "error",
        "hangs": "timeout",
        "garbage": "illegal",
        "kills-worker": "crash",
        "sys-exit": "error",
        "capped": "cap_exhausted",
        "dead-endpoint": "unavailable",  # opted into default moves: its outage is counted, not replayed
    }
    for name, kind in expected.items():
        assert counts[name][kind] > 0, (name, counts[name])
    assert counts["good"] == counts["good"] | {k: 0 for k in counts["good"]}
    assert set(summary["faults"]["flagged"]) == set(expected) - {"capped"} | (
        {"capped"} & set(summary["faults"]["flagged"])
    )
    assert summary["faults"]["games_unplayed"] == len(unplayed)
    board = {r["name"]: r for r in summary["leaderboard"]}
    assert board["dead-endpoint"]["mode"] == "free" and board["capped"]["mode"] == "constrained"
    assert read_game_records(out).keys() == {g.key for g in games if g.reason not in ("unplayed", "crash")}


def test_the_openai_player_refuses_a_literal_key_without_echoing_it():
    from arena_players.openai_player import OpenAIPlayer

    with pytest.raises(ConfigError, match="literal 'api_key' is refused.*api_key_env") as err:
        OpenAIPlayer(api_key="sk-verysecret0123456789")
    assert "verysecret" not in str(err.value)


def test_the_faults_example_runs_and_says_what_went_wrong(tmp_path):
    example = HERE.parent / "examples" / "tournament_faults.toml"
    run_env = {"ARENA_TOURNAMENT_OUT": str(tmp_path / "out")}
    stopped = cli("tournament", str(example), "--quiet", env={**env(), **run_env})
    assert stopped.returncode == 2 and "entrant 'dead-endpoint' failed its preflight" in stopped.stderr
    done = cli("tournament", str(example), "--no-preflight", "--bootstrap", "0", env={**env(), **run_env})
    assert done.returncode == EXIT_FLAGGED, done.stderr
    assert "dead-endpoint [free]: 100.0% of" in done.stdout + done.stderr
    key = load_results(tmp_path / "out")[1][0].key
    replayed = subprocess.run(
        [sys.executable, "-m", "arena_core.cli", "replay", str(tmp_path / "out"), "--game", key],
        env=env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert replayed.returncode == 0 and "1 episode(s) replayed exactly" in replayed.stdout, replayed.stderr


def test_an_identity_holds_the_checkpoint_hash_and_it_changes_with_the_weights(tmp_path):
    from arena_tournament.identity import entrant_identity
    from arena_tournament.schedule import Entrant

    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    (ckpt / "trainable.safetensors").write_bytes(b"weights-1")

    class FromCheckpoint:
        def __init__(self):
            self.checkpoint = str(ckpt)
            self.mode = "constrained"

    entrant = Entrant(name="trained", factory="x:y")
    first = entrant_identity(entrant, FromCheckpoint())
    assert len(first["checkpoint_sha256"]) == 64 and first["mode"] == "constrained"
    (ckpt / "trainable.safetensors").write_bytes(b"weights-2")
    second = entrant_identity(entrant, FromCheckpoint())
    assert second["checkpoint_sha256"] != first["checkpoint_sha256"] and second["digest"] != first["digest"]


def test_a_worker_hung_beyond_its_timer_is_killed_and_the_game_is_a_timeout(tmp_path):
    ents = [skilled("a"), skilled("b"), toy("stuck", "Unstoppable")]
    cfg = config(tmp_path, ents, run={"backend": "process", "workers": 3, "decision_time_limit_s": 0.2})
    started = time.monotonic()
    report = run_tournament(cfg, quiet=True)
    assert time.monotonic() - started < 30
    games = by_key(report.path)
    assert len(games) == report.total
    for g in games.values():
        (fault,) = g.faults
        assert g.reason == "player_error" and g.seats[g.offender] == "stuck"
        assert fault.kind is FaultKind.TIMEOUT and "could not be interrupted" in fault.detail
    stuck = fault_summary(*load_results(report.path)).entrants["stuck"]
    assert stuck.rates["timeout"] == 1.0 and stuck.decisions == len(games)


def test_under_the_default_policy_the_moves_after_a_cap_are_counted_never_silent(tmp_path):
    ents = [skilled("a"), skilled("b"), toy("capped", "Capped", calls=1)]
    report = run_tournament(config(tmp_path, ents, run={"policy": "default", "fresh_players": False}), quiet=True)
    games = by_key(report.path)
    hit = [g for g in games.values() if any(f.kind is FaultKind.CAP_EXHAUSTED for f in g.faults)]
    assert len(hit) == 1 and all(f.verdict == "default" and f.kind is FaultKind.CAP_EXHAUSTED for f in hit[0].faults)
    counts = fault_summary(*load_results(report.path)).entrants["capped"].counts
    assert counts["cap_exhausted"] == counts["default_applied"] == len(hit[0].faults) > 0
    unplayed = [g for g in games.values() if g.reason == "unplayed"]
    assert unplayed and all("spending cap" in g.detail for g in unplayed)
    assert all(not g.faults and g.reason == "natural" for g in games.values() if g not in hit and g not in unplayed)
