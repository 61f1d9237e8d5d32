"""The pytest plugin: `--arena-conformance` (one test per game and check), the fixtures, and
nothing at all without the option. Loaded with ``-p`` here; installed, the ``pytest11`` entry
point loads it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from arena_core.spec import CONFORMANCE_CHECKS

pytest_plugins = ["pytester"]


#: load the plugin explicitly and block its entry point (so it is registered once, whether or
#: not the installed core declares the entry point yet)
PLUGIN = ("-p", "no:arena", "-p", "arena_core.testing.pytest_plugin", "-p", "no:cacheprovider")
ROOT = Path(__file__).resolve().parents[1]
ENTRY = "arena_core.testing.pytest_plugin"
NO_HYPOTHESIS_PLUGIN = ("-p", "no:hypothesispytest")  # where hypothesis is absent, so is its own plugin


def test_conformance_runs_one_test_per_game_and_check(pytester):
    result = pytester.runpytest(
        *PLUGIN, "--arena-conformance", "--arena-games=kuhn_poker", "--arena-max-examples=5", "-v"
    )
    result.assert_outcomes(passed=1 + len(CONFORMANCE_CHECKS))  # its registration, then every check
    result.stdout.fnmatch_lines(
        [
            "*arena-conformance::kuhn_poker::registration PASSED*",
            "*arena-conformance::kuhn_poker::determinism PASSED*",
            "*arena-conformance::kuhn_poker::pettingzoo_api PASSED*",
        ]
    )


def test_a_failed_check_names_the_defect_and_an_exempt_one_is_skipped_with_its_reason(pytester, monkeypatch):
    """A third-party package's broken game, registered through a dist-info on the path."""
    site = pytester.mkdir("site")
    (site / "brokenpkg.py").write_text(
        textwrap.dedent("""
        from arena_games.kuhn import KuhnPoker

        class UnfairKuhn(KuhnPoker):
            spec = KuhnPoker.spec.model_copy(update={"id": "unfair_kuhn", "exempt_checks": {"pettingzoo_api": "not an AEC game yet"}})

            def returns(self, state):
                a, b = super().returns(state)
                return (a, b + 4.5)  # every episode: off the zero sum and outside (-2, 2)
    """)
    )
    info = site / "brokenpkg-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: brokenpkg\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[arena.games]\nunfair_kuhn = brokenpkg:UnfairKuhn\nghost_game = no_such_module_here:Ghost\n"
    )
    monkeypatch.setenv("PYTHONPATH", str(site))
    result = pytester.runpytest_subprocess(
        *PLUGIN, "--arena-conformance", "--arena-games=unfair_kuhn,ghost_game", "--arena-max-examples=5", "-rs"
    )
    # unfair_kuhn: the sum fails, and so the bounds; one check exempt. ghost_game imports a module that is not
    # installed and declares no extra: its registration fails, its checks are skipped as not run
    result.assert_outcomes(failed=3, skipped=1 + len(CONFORMANCE_CHECKS), passed=1 + len(CONFORMANCE_CHECKS) - 3)
    result.stdout.fnmatch_lines(
        [
            "*unfair_kuhn fails returns_bounds: returns_bounds:*player 1 returned*",
            "*unfair_kuhn fails returns_sum: returns_sum:*sum to*",
            "*(reproduce with: arena check unfair_kuhn)*",
            "*ghost_game: the registered game cannot be loaded: PluginUnavailableError: game 'ghost_game' from brokenpkg cannot be imported: No module named 'no_such_module_here'*",
            "*SKIPPED*exempt: not an AEC game yet*",
            "*SKIPPED*not run: ghost_game's registration is broken*",
        ]
    )


def test_without_the_option_the_plugin_adds_no_tests(pytester):
    pytester.makepyfile(test_one="def test_one():\n    assert True\n")
    result = pytester.runpytest(*PLUGIN, "-q")
    result.assert_outcomes(passed=1)
    listed = pytester.runpytest(*PLUGIN, "--collect-only", "-q")
    assert [line for line in listed.stdout.lines if "::" in line] == ["test_one.py::test_one"]


def test_fixtures_give_a_game_by_id_and_its_playthroughs(pytester):
    pytester.makepyfile(
        test_nim=textwrap.dedent("""
        from hypothesis import given, settings, strategies as st

        def test_game_by_id(arena_game):
            assert arena_game("megagem", num_players=4).num_players == 4

        @settings(max_examples=10, database=None, deadline=None)
        @given(data=st.data())
        def test_pot_never_shrinks(arena_playthroughs, data):
            pt = data.draw(arena_playthroughs("kuhn_poker"))
            pots = [pt.game.observe(pos, 0)["pot"] for pos in pt.positions]
            assert pots == sorted(pots)
    """)
    )
    pytester.runpytest(*PLUGIN, "-q").assert_outcomes(passed=2)


def test_loading_the_plugin_imports_no_hypothesis():
    code = (
        "import sys; import arena_core.testing.pytest_plugin as p\n"
        "print(sorted(m for m in ('hypothesis', 'arena_core.testing.checks', 'arena_core.testing.strategies') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    # the module lives in arena_core, so loading it imports that package (numpy, pydantic) and the
    # kit's checks module; hypothesis and the strategies are imported only when asked for
    assert "hypothesis" not in out.stdout and "strategies" not in out.stdout


def test_without_hypothesis_the_option_says_what_to_install(pytester):
    pytester.makeconftest("import sys\nsys.modules['hypothesis'] = None\n")
    pytester.makepyfile(test_one="def test_one():\n    assert True\n")
    ok = pytester.runpytest_subprocess(
        *PLUGIN, *NO_HYPOTHESIS_PLUGIN, "-q"
    )  # the plugin still loads; ordinary tests run
    ok.assert_outcomes(passed=1)
    result = pytester.runpytest_subprocess(
        *PLUGIN, *NO_HYPOTHESIS_PLUGIN, "--arena-conformance", "--arena-games=kuhn_poker"
    )
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*pip install hypothesis*"])


def test_an_unknown_game_is_one_usage_line(pytester):
    result = pytester.runpytest(*PLUGIN, "--arena-conformance", "--arena-games=kuhn_pokr")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*unknown game(s) kuhn_pokr*"])


def test_the_entry_point_is_declared_in_the_root_and_core_project_files():
    for project in (ROOT / "pyproject.toml", ROOT / "dists" / "core" / "pyproject.toml"):
        if project.exists():
            eps = tomllib.loads(project.read_text())["project"]["entry-points"]
            assert eps["pytest11"] == {"arena": ENTRY}, project


def test_loaded_by_its_entry_point_it_adds_nothing_to_an_ordinary_run(pytester, monkeypatch):
    """As after `pip install`: a dist-info on the path declares the pytest11 entry point."""
    site = pytester.mkdir("site")
    info = site / "arena_entry_probe-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: arena-entry-probe\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[pytest11]\narena = {ENTRY}\n")
    monkeypatch.setenv("PYTHONPATH", str(site))
    pytester.makepyfile(test_one="def test_one():\n    assert True\n")
    ordinary = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--collect-only", "-q")
    assert [line for line in ordinary.stdout.lines if "::" in line] == ["test_one.py::test_one"]
    kit = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--arena-conformance", "--arena-games=kuhn_poker", "--arena-max-examples=3", "-q"
    )
    kit.assert_outcomes(passed=len(CONFORMANCE_CHECKS) + 2)  # the kit's tests (registration too) and test_one
