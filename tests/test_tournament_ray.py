"""The Ray backend (issue 43.2, 43.4) on real local Ray clusters:

- a cluster started with `ray start --head` (the way to join an existing cluster): the Ray backend
  gives the process pool's games, and a Ray worker SIGKILLed mid-game costs nobody (the game is
  played again, the lost attempt listed);
- a cluster `arena tournament` starts itself: bound to 127.0.0.1 only, silent with --quiet, and
  gone within seconds when the driver is SIGKILLed (its reaper); the same command resumes with
  nothing lost or doubled.

The `ray start` cluster is started when the module begins and shared (Ray takes 10-25 s to start
here); it is stopped by terminating its `ray start --block` process, never with `ray stop`, which
would stop every Ray of this user on the machine.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena_tournament.config import config_from_dict
from arena_tournament.ray_reaper import ray_processes
from arena_tournament.runner import load_results, run_tournament

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.slow  # Ray start-up takes 10-25 s here

HERE = Path(__file__).parent
# the test's own `ray start` cluster: off the network, and (so, on loopback only) without Ray's token
LOOPBACK = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_AUTH_MODE": "disabled"}


def env(**extra: str) -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(HERE), e.get("PYTHONPATH", "")])
    e.update(extra)
    return e


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def started(tmp_path_factory):
    """`ray start --head --block` on 127.0.0.1, begun now, ready or not (see :func:`cluster`)."""
    if shutil.which("ray", path=os.path.dirname(sys.executable)) is None:
        pytest.skip("the ray command is not installed beside this Python")
    port = free_port()
    temp = tmp_path_factory.mktemp("ray")
    cmd = [os.path.join(os.path.dirname(sys.executable), "ray"), "start", "--head", f"--port={port}"]
    cmd += ["--num-cpus=2", "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={temp}", "--block"]
    log = open(temp / "ray-start.log", "w")
    proc = subprocess.Popen(cmd, env=env(**LOOPBACK), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    yield proc, f"127.0.0.1:{port}", temp / "ray-start.log"
    noted = ray_processes(proc.pid, -1)
    proc.terminate()  # `ray start --block` takes its cluster down with it
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
    for pid in noted:  # whatever outlived it, by its own id
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    log.close()


@pytest.fixture(scope="module")
def cluster(started):
    proc, address, log = started
    deadline = time.monotonic() + 120
    while "Ray runtime started" not in log.read_text() and time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()[-2000:]
        time.sleep(0.2)
    assert "Ray runtime started" in log.read_text(), log.read_text()[-2000:]
    return address


def config(out: Path, backend: str, extra: list[dict] | None = None, **run):
    entrants = [{"name": f"s{i}", "factory": "tournament_toys:Skilled", "options": {"skill": i / 4}} for i in range(4)]
    entrants[2] = {"name": "crash", "factory": "tournament_toys:Crashing"}  # failures travel through Ray as data too
    return config_from_dict(
        {
            "game": "draw_or_stand",
            "game_factory": "tournament_toys:DrawOrStand",
            "entrants": entrants + (extra or []),
            "deals": 2,
            "output": str(out),
            "run": {"backend": backend, "workers": 2, "decision_time_limit_s": 5, **run},
        }
    )


def outcomes(path):
    return sorted((g.outcome() for g in load_results(path)[1]), key=lambda o: o["key"])


def test_a_project_started_cluster_is_loopback_quiet_and_dies_with_a_killed_driver(started, tmp_path):
    """(Runs first, while the module's `ray start` cluster comes up.)"""
    out = tmp_path / "out"
    ents = ",".join(f'{{ name = "s{i}", factory = "fault_toys:EnvSlowSkilled" }}' for i in range(4))
    cfg = tmp_path / "ray.toml"
    cfg.write_text(
        f'game = "draw_or_stand"\ngame_factory = "tournament_toys:DrawOrStand"\ndeals = 1\noutput = "{out}"\n'
        f'entrants = [{ents}]\n[run]\nbackend = "ray"\nworkers = 2\n'
    )
    cmd = [sys.executable, "-m", "arena_tournament.cli", "tournament", str(cfg), "--quiet", "--no-report"]
    slow = env(ARENA_TOY_DELAY_S="0.25")  # slow enough to be killed mid-run
    driver = subprocess.Popen(cmd, env=slow, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    results = out / "results.jsonl"
    deadline = time.monotonic() + 120
    while (not results.exists() or results.read_text().count("\n") < 3) and time.monotonic() < deadline:
        assert driver.poll() is None, driver.communicate()[1][-2000:]
        time.sleep(0.05)
    noted = ray_processes(driver.pid, -1)
    listening = listening_addresses(noted)
    assert listening and all(a.startswith("127.") for a in listening), listening  # nothing on the network
    driver.kill()  # SIGKILL: no finally runs in the driver
    stdout, stderr = driver.communicate(timeout=30)
    assert stderr == "" and stdout == ""  # --quiet: not one line of Ray's either
    deadline = time.monotonic() + 15
    while any(alive(pid) for pid in noted) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [pid for pid in noted if alive(pid)]  # the reaper took the cluster down (Ray alone: ~1 minute)
    done = subprocess.run(cmd + ["--backend", "sequential"], env=env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    header, games = load_results(out)
    assert sorted(g.key for g in games) == sorted(g.key for g in header.schedule.games())  # none lost, none twice


def test_the_ray_backend_on_a_ray_start_cluster_plays_the_pool_games_and_a_killed_worker_costs_nobody(
    cluster, tmp_path, monkeypatch
):
    """One SIGKILLed worker mid-game on each backend: the same games either way, played again, not charged."""
    monkeypatch.syspath_prepend(str(HERE))
    runs = {}
    for backend, extra in (("process", {}), ("ray", {"ray_address": cluster})):
        flags = tmp_path / f"flags-{backend}"
        flags.mkdir()
        killed = {
            "name": "killed",
            "factory": "fault_toys:KillsWorkerOnce",
            "options": {"flags": str(flags), "just_once": True},
        }
        runs[backend] = run_tournament(config(tmp_path / backend, backend, [killed], **extra), quiet=True)
        assert len(os.listdir(flags)) == 1  # one real SIGKILL of a worker
    assert not ray.is_initialized()  # the runner disconnects from the cluster it joined
    assert outcomes(runs["ray"].path) == outcomes(runs["process"].path)  # the same games, lost attempts aside
    for backend, report in runs.items():
        games = {g.key: g for g in load_results(report.path)[1]}
        (replayed,) = [g for g in games.values() if g.retried]
        assert len(games) == report.total and report.crashes == 0 and report.replayed == 1
        assert "killed" in replayed.seats and not any(f.player == "killed" for g in games.values() for f in g.faults)
        assert ("Ray worker died" if backend == "ray" else "killed by SIGKILL") in replayed.retried[0]


# ---------------------------------------------------------------------- helpers
def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"  # a zombie is dead, only not yet reaped


def listening_addresses(pids) -> list[str]:
    """The local addresses of every listening TCP socket the processes ``pids`` hold (from /proc)."""
    inodes = set()
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    found = []
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            if cols[3] == "0A" and cols[9] in inodes:  # LISTEN
                found.append(_address(cols[1].split(":")[0], width))
    return found


def _address(hexed: str, width: int) -> str:
    raw = bytes.fromhex(hexed)
    if width == 8:
        return socket.inet_ntop(socket.AF_INET, raw[::-1])
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
    text = socket.inet_ntop(socket.AF_INET6, words)
    return text.removeprefix("::ffff:")  # an IPv4 address in an IPv6 socket
