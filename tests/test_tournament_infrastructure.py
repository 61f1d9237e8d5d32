"""Issue 43: an outage or a dead machine is nobody's move. Through the real paths: OpenAI players
against the local fake OpenAI-compatible server (arena_games.matrix.fakellm) playing the matrix
game, real SIGKILLs of pool workers, SIGTERM of a real `arena tournament` process, and a writer
that fails with ENOSPC part-way (the full disk)."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena_games.matrix.fakellm import FORMATS, FakeChatServer
from arena_tournament.cli import EXIT_INCOMPLETE, main_ratings, main_tournament
from arena_tournament.config import config_from_dict
from arena_tournament.ratings import summarize
from arena_tournament.results import load_results
from arena_tournament.runner import run_tournament

HERE = Path(__file__).parent
READABLE = tuple(f for f in FORMATS if f[1])  # answers the parser reads: any fault is then the infrastructure's


@pytest.fixture
def server():
    with FakeChatServer(seed=3, formats=READABLE) as s:
        yield s


def llm(name: str, url: str, model: str = "fake", **options) -> dict:
    opts = {"base_url": url, "model": model, "api_key_env": "", "temperature": 1.0, "max_retries": 0}
    opts.update(options)
    on_outage = opts.pop("on_outage", None)
    entrant = {"name": name, "player": "openai", "options": opts}
    return entrant if on_outage is None else {**entrant, "on_outage": on_outage}


def matrix_config(out: Path, entrants: list[dict], deals: int = 2, **run) -> str:
    """A TOML tournament of the matrix game (coordination, 3 actions)."""

    def value(v):
        if isinstance(v, str):
            return f'"{v}"'
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + " }"
        return repr(v)

    lines = [
        'name = "infra"',
        'game = "matrix"',
        'params = { archetype = "coordination", k = 3 }',
        f"deals = {deals}",
        f'output = "{out}"',
        "entrants = [",
        *(f"  {value(e)}," for e in entrants),
        "]",
        "[run]",
        'policy = "penalize"',
        *(f"{k} = {value(v)}" for k, v in run.items()),
        "[ratings]",
        "bootstrap = 0",
    ]
    path = out.parent / f"{out.name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


BOTS = [{"name": "uniform", "player": "matrix_uniform"}, {"name": "first", "player": "matrix_first_label"}]


def games_by_key(out: Path) -> dict:
    return {g.key: g for g in load_results(out)[1]}


# ---------------------------------------------------------------------- 43.1: outages are replayed, not charged
def test_an_outage_leaves_its_games_to_replay_and_the_next_run_plays_them(server, tmp_path, capsys):
    out = tmp_path / "out"
    cfg = matrix_config(out, [llm("llm-a", server.url, "a"), llm("llm-b", server.url, "b"), *BOTS])
    server.fail_status = 503  # the provider is down for the whole first run
    assert main_tournament([cfg, "--quiet", "--no-report"]) == EXIT_INCOMPLETE
    err = capsys.readouterr().err
    assert (
        err.count("\n") == 1
        and "20 game(s) were cut short by a provider outage" in err
        and "run the same command again" in err
    )
    games = games_by_key(out)
    assert len(games) == 4 and all("llm-a" not in g.seats and "llm-b" not in g.seats for g in games.values())
    assert (
        (out / "attempts.jsonl").read_text().count("\n") == 20 == server.failed
    )  # one lost attempt per failed request
    server.fail_status = None  # back up
    assert main_tournament([cfg, "--quiet", "--no-report"]) == 0
    games = games_by_key(out)
    header, _ = load_results(out)
    assert sorted(games) == sorted(g.key for g in header.schedule.games())  # every game once
    replayed = [g for g in games.values() if g.retried]
    assert len(replayed) == 20 and all("HTTP 503" in g.retried[0] for g in replayed)
    assert not any(f.player.startswith("llm") for g in games.values() for f in g.faults)  # nobody charged
    summary = summarize(*load_results(out), resamples=0)
    assert summary.games_replayed == 20 and summary.attempts_lost == 20 and summary.games_scored == 24
    assert summary.row("llm-a").faults == summary.row("llm-b").faults == 0
    assert (
        main_tournament([cfg, "--quiet", "--no-report"]) == 0 and len(games_by_key(out)) == 24
    )  # nothing left, nothing twice


def test_flaky_provider_every_lost_attempt_is_in_the_server_log_and_no_game_twice(server, tmp_path):
    """20% of requests fail (no client retries): each failure is one attempt replayed, and the run
    repeated until done records every game once, with exactly as many lost attempts as the server failed."""
    server.fail_rate = 0.2
    cfg = config_from_dict(
        {
            "name": "flaky",
            "game": "matrix",
            "params": {"archetype": "coordination", "k": 3},
            "entrants": [llm("llm-a", server.url, "a"), llm("llm-b", server.url, "b"), *BOTS],
            "deals": 3,
            "output": str(tmp_path / "out"),
            "run": {"policy": "penalize", "outage_replays": 50, "preflight": False},
        }
    )
    for _ in range(12):
        report = run_tournament(cfg, quiet=True)
        if report.incomplete == 0:
            break
    assert report.incomplete == 0
    header, games = load_results(tmp_path / "out")
    assert len({g.key for g in games}) == len(games) == len(header.schedule.games())
    assert sum(len(g.retried) for g in games) == server.failed > 0
    assert not any(f.player.startswith("llm") for g in games for f in g.faults)


def test_past_its_replays_a_game_is_recorded_as_an_outage_and_not_rated(server, tmp_path):
    out = tmp_path / "out"
    cfg = matrix_config(out, [llm("llm", server.url), *BOTS], deals=1, outage_replays=1)
    server.fail_status = 500
    assert main_tournament([cfg, "--quiet", "--no-report"]) == EXIT_INCOMPLETE  # attempt 1: left to replay
    assert main_tournament([cfg, "--quiet", "--no-report"]) == 0  # attempt 2: past outage_replays = 1
    games = games_by_key(out)
    outage = [g for g in games.values() if g.reason == "outage"]
    assert len(outage) == 4 and all(len(g.retried) == 2 and g.returns is None for g in outage)
    summary = summarize(*load_results(out), resamples=0)
    assert summary.games_outage == 4 and summary.row("llm").games == 0 and summary.games_truncated == 0


def test_an_entrant_may_opt_into_default_moves_and_the_ratings_say_so_side_by_side(server, tmp_path, capsys):
    out = tmp_path / "out"
    server.fail_rate = 0.5
    entrants = [llm("llm", server.url, on_outage="default"), llm("other", server.url, "b"), *BOTS]
    cfg = matrix_config(out, entrants, deals=3, outage_replays=50, preflight=False)
    for _ in range(12):
        if main_tournament([cfg, "--quiet", "--no-report"]) != EXIT_INCOMPLETE:
            break
    games = games_by_key(out)
    touched = [g for g in games.values() if any(f.kind == "unavailable" for f in g.faults)]
    assert touched and all({f.player for f in g.faults if f.kind == "unavailable"} == {"llm"} for g in touched)
    capsys.readouterr()
    assert main_ratings([str(out), "--faulted", "both"]) == 0
    text = capsys.readouterr().out
    assert f"{len(touched)} rated games include moves the policy played while a provider was unavailable (llm" in text
    assert f"with and without the {len(touched)} games an infrastructure fault touched" in text
    both = summarize(*load_results(out), resamples=0, faulted="both")
    assert both.without_faulted is not None and both.without_faulted.games_excluded == len(touched)
    without = summarize(*load_results(out), resamples=0, faulted="exclude")
    assert without.games_scored == both.games_scored - len(touched) and without.games_excluded == len(touched)


# ---------------------------------------------------------------------- 43.3: one limit per endpoint, any worker count
def test_requests_in_flight_per_endpoint_stay_within_the_limit_whatever_the_workers(server, tmp_path):
    server.latency_s = 0.05
    entrants = [
        llm("shared-1", server.url, "shared", concurrency=2),
        llm("shared-2", server.url, "shared", concurrency=2),  # the same endpoint: one limit for both
        llm("solo", server.url, "solo", concurrency=1),
        *BOTS,
    ]
    cfg = config_from_dict(
        {
            "name": "limits",
            "game": "matrix",
            "params": {"archetype": "coordination", "k": 3},
            "entrants": entrants,
            "deals": 2,
            "output": str(tmp_path / "out"),
            "run": {"backend": "process", "workers": 5, "start_method": "fork", "policy": "penalize"},
        }
    )
    report = run_tournament(cfg, quiet=True)
    assert report.played == report.total
    assert server.max_in_flight_by_model == {"shared": 2, "solo": 1}  # reached, never passed
    assert server.max_in_flight >= 3  # the workers did overlap: a limit of 2 was not the pool's


# ---------------------------------------------------------------------- 43.2: a dead worker replays, then charges
def draw_config(tmp_path: Path, entrants: list[dict], backend: str = "process", skilled: int = 3) -> object:
    others = [
        {"name": f"s{i}", "factory": "tournament_toys:Skilled", "options": {"skill": i / 3}} for i in range(skilled)
    ]
    return config_from_dict(
        {
            "name": "deaths",
            "game": "draw_or_stand",
            "game_factory": "tournament_toys:DrawOrStand",
            "entrants": others + entrants,
            "deals": 1,
            "output": str(tmp_path / "out"),
            "run": {"backend": backend, "workers": 2, "policy": "penalize"},
        }
    )


def test_a_pool_worker_killed_mid_game_costs_nobody_and_the_game_is_played_again(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))
    flags = tmp_path / "flags"
    flags.mkdir()
    cfg = draw_config(
        tmp_path, [{"name": "killed", "factory": "fault_toys:KillsWorkerOnce", "options": {"flags": str(flags)}}]
    )
    report = run_tournament(cfg, quiet=True)
    games = games_by_key(tmp_path / "out")
    kills = len(os.listdir(flags))  # one per (deal, seat) it sat in: a real SIGKILL each
    replayed = [g for g in games.values() if g.retried]
    assert len(games) == report.total and report.crashes == 0 and report.replayed == len(replayed) == kills > 0
    for g in replayed:
        assert "killed" in g.seats and g.reason == "natural" and not g.faults  # played on the replay: nobody charged
        (lost,) = g.retried
        assert "killed by SIGKILL" in lost and "'killed'" in lost


def test_deaths_at_different_decisions_are_infrastructure_charged_to_nobody(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))
    flags = tmp_path / "flags"
    flags.mkdir()
    around = {"name": "around", "factory": "fault_toys:DiesAtEachPoint", "options": {"flags": str(flags)}}
    cfg = draw_config(tmp_path, [around], skilled=2)  # one table: its three games seat 'around' in three seats
    report = run_tournament(cfg, quiet=True)
    games = games_by_key(tmp_path / "out")
    mine = [g for g in games.values() if "around" in g.seats]
    assert len(games) == report.total == len(mine) == 3 and report.crashes == 0
    for g in mine:
        assert g.reason == "game_error" and g.returns is None and not g.faults and len(g.retried) == 3
        assert "charged to nobody" in g.detail
    assert summarize(*load_results(tmp_path / "out"), resamples=0).row("around").games == 0


# ---------------------------------------------------------------------- 43.5: SIGTERM and a full disk
def env() -> dict:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(HERE), e.get("PYTHONPATH", "")])
    return e


def test_sigterm_stops_like_ctrl_c_one_line_lock_released_exit_143(tmp_path):
    """On the process backend (its workers ignore SIGTERM and are stopped by the run); the sequential
    run takes the same handler (Ctrl-C's test in test_faults_tournament.py runs that one)."""
    backend = "process"
    out = tmp_path / "out"
    ents = ",".join(f'{{ name = "s{i}", factory = "fault_toys:SlowSkilled" }}' for i in range(4))
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        f'game = "draw_or_stand"\ngame_factory = "tournament_toys:DrawOrStand"\ndeals = 1\noutput = "{out}"\n'
        f'entrants = [{ents}]\n[run]\nbackend = "{backend}"\nworkers = 2\n'
    )
    cmd = [sys.executable, "-m", "arena_tournament.cli", "tournament", str(cfg), "--quiet", "--no-report"]
    proc = subprocess.Popen(cmd, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    results = out / "results.jsonl"
    deadline = time.monotonic() + 60
    while (not results.exists() or results.read_text().count("\n") < 4) and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143, stderr
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "interrupted" in lines[0] and "run the same command again" in lines[0]
    assert not (out / ".arena.lock").exists()
    done = subprocess.run(cmd, env=env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    header, games = load_results(out)
    assert sorted(g.key for g in games) == sorted(g.key for g in header.schedule.games())


def test_a_full_disk_is_one_line_naming_the_file_and_the_same_command_resumes(tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(HERE))
    import arena_tournament.store as store

    real = store.append_jsonl
    writes = {"left": 5}

    def fills_up(fh, obj):  # a disk with room for five lines
        if writes["left"] <= 0:
            fh.write('{"type": "game", "ke')  # what a full disk leaves: part of a line
            raise OSError(errno.ENOSPC, "No space left on device", fh.name)
        writes["left"] -= 1
        real(fh, obj)

    out = tmp_path / "out"
    cfg = tmp_path / "c.toml"
    ents = ",".join(f'{{ name = "s{i}", factory = "tournament_toys:Skilled" }}' for i in range(5))
    cfg.write_text(
        f'game = "draw_or_stand"\ngame_factory = "tournament_toys:DrawOrStand"\ndeals = 1\noutput = "{out}"\nentrants = [{ents}]\n'
    )
    monkeypatch.setattr(store, "append_jsonl", fills_up)
    assert main_tournament([str(cfg), "--quiet", "--no-report"]) == 2
    (line,) = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert f"no space left on the device while writing {out / 'results.jsonl'}" in line
    assert "free some space" in line and "run the same command again" in line
    assert not (out / ".arena.lock").exists()
    monkeypatch.setattr(store, "append_jsonl", real)
    assert main_tournament([str(cfg), "--quiet", "--no-report"]) == 0
    header, games = load_results(out)
    assert sorted(g.key for g in games) == sorted(g.key for g in header.schedule.games())


# ---------------------------------------------------------------------- 43.4: the reaper of a run's Ray cluster
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the reaper reads /proc")
def test_the_reaper_kills_the_clusters_processes_and_only_them_when_its_pipe_closes():
    """What a driver killed outright leaves: its Ray agents (here a stand-in whose command line names
    a Ray module, as theirs do) and its other children (left alone). The reaper notes them while the
    driver lives and kills the Ray ones once its stdin closes (the kernel closes it when the driver dies)."""
    sleep = [sys.executable, "-c", "import time; time.sleep(60)"]
    agent = subprocess.Popen([*sleep, "/venv/site-packages/ray/dashboard/agent.py"])
    other = subprocess.Popen(sleep)
    reaper = subprocess.Popen(
        [sys.executable, "-m", "arena_tournament.ray_reaper", str(os.getpid())], stdin=subprocess.PIPE, env=env()
    )
    try:
        time.sleep(1.5)  # it notes the processes below its driver every half second
        assert reaper.stdin is not None
        reaper.stdin.close()
        assert reaper.wait(timeout=10) == 0
        assert agent.wait(timeout=5) == -signal.SIGKILL
        assert other.poll() is None  # not Ray: not its business
    finally:
        for p in (agent, other, reaper):
            if p.poll() is None:
                p.kill()
                p.wait()


def test_the_outage_example_runs_and_charges_nobody(tmp_path, capsys):
    import runpy

    example = runpy.run_path(str(HERE.parent / "examples" / "tournament_outage.py"))
    example["main"](tmp_path / "out")
    out = capsys.readouterr().out
    assert "provider down: 0 games recorded, 12 cut short" in out and "provider back: 12 games replayed, 0 left" in out
    assert "12 of 12 games recorded" in out and "faults charged: 0" in out
