"""faults.py and outputs.py: fault kinds, the run lock, atomic writes, durable appends, scrubbing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_core.errors import ConfigError, PlayerError
from arena_core.faults import FaultKind, classify
from arena_core.outputs import LOCK_NAME, RunLock, append_jsonl, atomic_write_text, scrub_and_cut, scrub_secrets
from arena_core.players import preflight_player


def test_fault_kinds_are_the_contract():
    assert {k.value for k in FaultKind} == {
        "illegal",
        "unparseable",
        "default_applied",
        "forfeit",
        "timeout",
        "error",
        "unavailable",  # issue 43: the provider's outage, not the player's error
        "cap_exhausted",
        "crash",
    }
    assert FaultKind("crash") is FaultKind.CRASH and FaultKind.CRASH == "crash"


def test_classify_is_deprecated_and_agrees_with_the_one_classifier():
    with pytest.warns(DeprecationWarning, match="fault_of"):
        assert classify("timeout", illegal=False) is FaultKind.TIMEOUT
    with pytest.warns(DeprecationWarning):
        _test_classify()


def _test_classify():
    assert classify("cap_exhausted", illegal=False) is FaultKind.CAP_EXHAUSTED
    assert classify("crash", illegal=False) is FaultKind.CRASH
    assert classify("ValueError", illegal=False) is FaultKind.ERROR
    assert classify(None, illegal=True) is FaultKind.ILLEGAL
    assert classify("unparseable", illegal=True) is FaultKind.UNPARSEABLE


# ---------------------------------------------------------------------- lock
def test_second_lock_on_a_directory_is_refused_with_one_line(tmp_path):
    with RunLock(tmp_path):
        info = json.loads((tmp_path / LOCK_NAME).read_text())
        assert info["pid"] == os.getpid() and "host" in info and "started" in info
        with pytest.raises(ConfigError) as err:
            RunLock(tmp_path).acquire()
        assert "\n" not in str(err.value) and str(os.getpid()) in str(err.value)
    assert not (tmp_path / LOCK_NAME).exists()
    with RunLock(tmp_path):  # free again
        pass


def test_lock_held_by_another_live_process_is_refused(tmp_path):
    code = (
        "import sys,time; from arena_core.outputs import RunLock; l=RunLock(sys.argv[1]).acquire();"
        "print('held', flush=True); time.sleep(30)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "held"
        with pytest.raises(ConfigError, match=f"pid {proc.pid}"):
            RunLock(tmp_path).acquire()
    finally:
        proc.kill()
        proc.wait()
    # the holder was killed: its lock file is still there, and it is taken over
    assert (tmp_path / LOCK_NAME).exists()
    with RunLock(tmp_path):
        assert json.loads((tmp_path / LOCK_NAME).read_text())["pid"] == os.getpid()


def test_stale_lock_file_of_a_dead_pid_is_taken_over(tmp_path):
    (tmp_path / LOCK_NAME).write_text(json.dumps({"pid": 999999999, "host": os.uname().nodename, "started": 0}))
    with RunLock(tmp_path):
        pass


def test_lock_on_unwritable_directory_is_one_line(tmp_path):
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(ConfigError) as err:
        RunLock(target / "sub").acquire()
    assert "\n" not in str(err.value)


# ---------------------------------------------------------------------- writes
def test_atomic_write_replaces_whole_and_leaves_no_temp(tmp_path):
    path = tmp_path / "out" / "summary.json"
    atomic_write_text(path, "old")
    atomic_write_text(path, "new" * 1000)
    assert path.read_text() == "new" * 1000
    assert sorted(p.name for p in path.parent.iterdir()) == ["summary.json"]


def test_atomic_write_failure_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "summary.json"
    atomic_write_text(path, "old")

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        atomic_write_text(path, "new")
    assert path.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["summary.json"]


def test_append_jsonl_models_and_dicts(tmp_path):
    from pydantic import BaseModel

    class Settings(BaseModel):
        policy: str

    path = tmp_path / "a.jsonl"
    with open(path, "a", encoding="utf-8") as fh:
        append_jsonl(fh, {"a": 1, "b": "é\nx"})
        append_jsonl(fh, Settings(policy="penalize"))
    lines = path.read_text(encoding="utf-8").split("\n")
    assert len(lines) == 3 and lines[2] == ""
    assert json.loads(lines[0]) == {"a": 1, "b": "é\nx"}
    assert json.loads(lines[1])["policy"] == "penalize"


# ---------------------------------------------------------------------- secrets
KEY = "sk-proj-AbCdEf0123456789xyzXYZ"


@pytest.mark.parametrize(
    "text",
    [
        f"HTTP 401: invalid key {KEY}",
        f"Authorization: Bearer {KEY}",
        "headers {'Authorization': 'Bearer abcdefghijklmnop1234'}",
        "url?api_key=zzzzyyyyxxxx1234&x=1",
        '{"api_key": "plainsecretvalue99"}',
    ],
)
def test_scrub_removes_key_shapes(text):
    out = scrub_secrets(text)
    for secret in (KEY, "abcdefghijklmnop1234", "zzzzyyyyxxxx1234", "plainsecretvalue99"):
        assert secret not in out
        assert secret[:10] not in out


def test_scrub_explicit_and_environment_secrets(monkeypatch):
    monkeypatch.setenv("MY_PROVIDER_API_KEY", "qwertyuiopasdfgh")
    out = scrub_secrets("a qwertyuiopasdfgh b custom-SECRET-1 c", ["custom-SECRET-1"])
    assert out == "a *** b *** c"
    assert scrub_secrets("") == ""
    assert scrub_secrets("nothing secret, move: a1") == "nothing secret, move: a1"


@settings(max_examples=200, deadline=None)
@given(
    prefix=st.text(max_size=200),
    key=st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=20, max_size=60),
    limit=st.integers(1, 400),
)
def test_scrub_before_cut_never_leaks_a_fragment(prefix, key, limit):
    """Whatever the cut point, no 8-character piece of the key survives scrub-then-cut."""
    out = scrub_and_cut(f"{prefix}Bearer sk-{key} tail", limit, [f"sk-{key}"])
    assert len(out) <= limit
    for i in range(len(key) - 7):
        assert key[i : i + 8] not in out or key[i : i + 8] in prefix


# ---------------------------------------------------------------------- preflight
def test_preflight_player_names_the_entrant_and_scrubs():
    class Bad:
        def preflight(self):
            raise RuntimeError(f"endpoint refused key {KEY}\nsecond line")

    class Fine:
        def preflight(self):
            pass

    preflight_player("fine", Fine())
    preflight_player("none", object())
    with pytest.raises(PlayerError) as err:
        preflight_player("gpt", Bad())
    msg = str(err.value)
    assert msg.startswith("entrant 'gpt' failed its preflight") and "\n" not in msg and KEY not in msg
