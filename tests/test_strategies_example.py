"""The plugin example's own property tests run, and a third-party game package goes through the
whole loop: a property of its own in a few lines, a failing case shrunk to a short episode, that
episode replayed with `arena replay`, and the kit run with `pytest --arena-conformance`."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from arena_core.spec import CONFORMANCE_CHECKS
from test_strategies_plugin import PLUGIN

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "plugin_example"


def run(*args, env, cwd):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300, env=env, cwd=cwd)


def third_party_env(tmp_path: Path) -> dict:
    """The example package and a buggy variant of its game, registered through a dist-info."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "leaky_nim.py").write_text(
        textwrap.dedent("""
        from arena_example_plugin.nim import Nim, NimState

        class LeakyNim(Nim):
            spec = Nim.spec.model_copy(update={"id": "leaky_nim"})

            def next_state(self, state, joint):  # planted bug: below 6 stones, a take of 3 adds one back
                after = super().next_state(state, joint)
                if joint[state.to_play] == 3 and after.stones < 6 and after.winner is None:
                    return NimState(after.stones + 4, after.to_play)
                return after
    """)
    )
    info = site / "leaky_nim-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: leaky-nim\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[arena.games]\nexample_nim = arena_example_plugin.nim:Nim\nleaky_nim = leaky_nim:LeakyNim\n"
    )
    path = os.pathsep.join([str(site), str(EXAMPLE / "src"), os.environ.get("PYTHONPATH", "")])
    return dict(os.environ, PYTHONPATH=path)


def test_the_example_property_tests_pass():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(EXAMPLE / "src"), os.environ.get("PYTHONPATH", "")]))
    out = run("-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE / "tests"), env=env, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "3 passed" in out.stdout


def test_a_third_party_property_shrinks_to_a_short_episode_that_replays(tmp_path):
    env = third_party_env(tmp_path)
    env["ARENA_FAILING_EPISODES"] = str(tmp_path / "failing")
    (tmp_path / "test_pile.py").write_text(
        textwrap.dedent("""
        from hypothesis import given
        from arena_core.testing.strategies import playthroughs
        from leaky_nim import LeakyNim

        @given(playthroughs(LeakyNim()))
        def test_the_pile_never_grows(pt):
            for before, _, _, after in pt.transitions():
                assert after.state.stones <= before.state.stones
    """)
    )
    (tmp_path / "conftest.py").write_text(
        (EXAMPLE / "tests" / "conftest.py").read_text()
    )  # no deadline on a busy machine
    out = run("-m", "pytest", "-q", "-p", "no:cacheprovider", "test_pile.py", env=env, cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    episode = re.search(r"episode: leaky_nim seed 0: (.*) -> stopped after (\d+) decision", out.stdout)
    assert episode, out.stdout
    # the bug first fires at decision k = 3 (the fourth take of 3: 15 -> 3): at most k + 2 decisions
    assert int(episode.group(2)) <= 5 and episode.group(1).endswith("take 3")
    (path,) = (tmp_path / "failing").glob("leaky_nim-seed0-*.jsonl")
    replayed = run("-m", "arena_core.cli", "replay", str(path), env=env, cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stderr
    assert "turn_cap" in replayed.stdout and "1 episode(s) replayed exactly" in replayed.stdout


def test_a_third_party_game_runs_the_whole_kit_from_pytest(tmp_path):
    env = third_party_env(tmp_path)
    out = run(
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        *PLUGIN,
        "--arena-conformance",
        "--arena-games=example_nim",
        "--arena-max-examples=5",
        env=env,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    # every check, plus the game's ::registration item (a broken registration fails there)
    assert f"{len(CONFORMANCE_CHECKS) + 1} passed" in out.stdout, out.stdout
    assert (
        "::registration"
        in run(
            "-m",
            "pytest",
            "-q",
            "--collect-only",
            "-p",
            "no:cacheprovider",
            *PLUGIN,
            "--arena-conformance",
            "--arena-games=example_nim",
            env=env,
            cwd=tmp_path,
        ).stdout
    )
