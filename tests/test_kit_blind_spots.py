"""The kit's former blind spots outside the per-playthrough checks: a game run as a script,
the cross-process check naming the global RNG, replays of a state-mutating game, entry-point
names, and the harness's default turn cap."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from arena_core import EndReason, IllegalActionPolicy, Match, ReplayDivergenceError, play_episode
from arena_core.errors import PluginProtocolError
from arena_core.registry import _validate_game
from arena_core.replay import replay
from arena_core.testing import run_conformance
from arena_games.kuhn import KuhnPoker
from arena_players.random_player import RandomPlayer
from broken_games import DealsFromGlobalRandom, MutatesInputState, TooLong

TESTS = Path(__file__).resolve().parent


def _script(tmp_path, body: str) -> subprocess.CompletedProcess:
    path = tmp_path / "my_game.py"
    path.write_text(textwrap.dedent(body))
    env_path = str(TESTS)
    return subprocess.run(
        [sys.executable, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**__import__("os").environ, "PYTHONPATH": env_path},
    )


def test_a_game_defined_in_the_script_that_runs_the_kit_passes_cross_process(tmp_path):
    out = _script(
        tmp_path,
        """
        from arena_core.testing import assert_conformance
        from arena_games.kuhn import KuhnPoker

        class MyGame(KuhnPoker):
            pass

        # at top level, unguarded: the kit's subprocess imports this file without running the kit again
        results = assert_conformance(MyGame(), checks=["cross_process_determinism"])
        print("STATUS", [(r.name, r.status) for r in results])
    """,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "STATUS [('cross_process_determinism', 'passed')]" in out.stdout


def test_a_script_game_that_differs_across_processes_still_fails(tmp_path):
    out = _script(
        tmp_path,
        """
        from arena_core.testing import run_conformance
        from broken_games import HashOrderedDeal

        class MyGame(HashOrderedDeal):
            pass

        if __name__ == "__main__":
            (r,) = run_conformance(MyGame(), checks=["cross_process_determinism"])
            print("STATUS", r.status, r.detail)
    """,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "STATUS failed cross_process_determinism:" in out.stdout and "PYTHONHASHSEED" in out.stdout


def test_a_class_no_other_process_can_import_is_reported_exempt_with_the_reason():
    class Local(KuhnPoker):
        pass

    (r,) = run_conformance(Local(), checks=["cross_process_determinism"])
    assert r.status == "exempt" and r.detail.startswith("exempt:") and "inside a function" in r.detail


def test_cross_process_failure_of_a_global_rng_game_names_the_global_rng():
    (r,) = run_conformance(DealsFromGlobalRandom(), checks=["cross_process_determinism"])
    assert r.status == "failed" and "global RNG" in r.detail and "PYTHONHASHSEED" not in r.detail


def test_replay_of_a_state_mutating_game_is_not_exact():
    game = MutatesInputState()
    match = Match(game, 3)
    while not match.done:
        p = match.to_act()
        match.submit(p, match.legal_actions(p)[0])
    with pytest.raises(ReplayDivergenceError, match="changed its input state"):
        replay(match.record, MutatesInputState())
    good = Match(KuhnPoker(), 3)
    while not good.done:
        good.submit(good.to_act(), good.legal_actions(good.to_act())[0])
    replay(good.record, KuhnPoker())  # a correct game still replays exactly


def test_entry_point_name_must_equal_spec_id():
    _validate_game("kuhn_poker", KuhnPoker)
    with pytest.raises(PluginProtocolError, match="entry-point name must equal spec.id") as err:
        _validate_game("kuhn", KuhnPoker)
    assert "'kuhn_poker'" in str(err.value)


def test_without_a_turn_cap_a_game_longer_than_max_length_is_truncated_not_drawn():
    game = TooLong()  # Kuhn declaring max_length 2; pass-bet-* needs 3 decisions
    ends = set()
    for seed in range(40):
        record = play_episode(game, [RandomPlayer(1), RandomPlayer(2)], seed)
        assert record.end.ply <= 2
        if record.end.reason is EndReason.TURN_CAP:
            assert record.end.truncated and record.end.returns is None
            assert "max_length" in record.end.detail
        ends.add(record.end.reason)
    assert EndReason.TURN_CAP in ends and EndReason.NATURAL in ends
    capped = Match(game, 0, turn_cap=50, policy=IllegalActionPolicy())
    assert capped.turn_cap == 50  # an explicit cap still wins


EXAMPLES = TESTS.parent / "examples"


def test_the_conformance_script_example_runs_every_check(tmp_path):
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / "conformance_script.py")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    from arena_core.spec import CONFORMANCE_CHECKS

    n = len(CONFORMANCE_CHECKS)
    assert "cross_process_determinism passed" in out.stdout and f"{n}/{n} checks passed" in out.stdout


def test_an_installed_game_registered_under_another_name_is_refused_with_the_rule(tmp_path):
    """A third-party package whose entry-point name differs from spec.id: listed as unavailable
    with the reason, and `arena play` says what to rename (before, it played, and `arena replay`
    could not find the game)."""
    pkg = tmp_path / "src" / "misnamed"
    (pkg / "misnamed_game").mkdir(parents=True)
    (pkg / "misnamed_game" / "__init__.py").write_text("from arena_games.kuhn import KuhnPoker as Kuhn\n")
    (pkg / "pyproject.toml").write_text(
        textwrap.dedent("""
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "misnamed-game"
        version = "0.0.1"
        [tool.setuptools]
        packages = ["misnamed_game"]
        [project.entry-points."arena.games"]
        my_kuhn = "misnamed_game:Kuhn"
    """)
    )
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(pkg),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    env = {**__import__("os").environ, "PYTHONPATH": str(target)}
    out = subprocess.run(
        [sys.executable, "-m", "arena_core.cli", "play", "my_kuhn", "--players", "random,random", "--seed", "1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert (
        out.returncode == 2 and "entry-point name must equal spec.id" in out.stderr and "'kuhn_poker'" in out.stderr
    ), out.stderr
    assert "Traceback" not in out.stderr


def test_a_game_in_a_module_run_with_python_m_is_imported_by_its_name(tmp_path):
    (tmp_path / "kitdemo").mkdir()
    (tmp_path / "kitdemo" / "__init__.py").write_text("")
    (tmp_path / "kitdemo" / "game.py").write_text(
        textwrap.dedent("""
        from arena_core.testing import run_conformance
        from arena_games.kuhn import KuhnPoker
        from . import __name__ as package  # a relative import: only works inside the package

        class MyGame(KuhnPoker):
            pass

        if __name__ == "__main__":
            (r,) = run_conformance(MyGame(), checks=["cross_process_determinism"])
            print("STATUS", r.status, r.detail)
    """)
    )
    out = subprocess.run(
        [sys.executable, "-m", "kitdemo.game"], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "STATUS passed" in out.stdout
