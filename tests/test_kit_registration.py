"""Issue 27, point 4: `pytest --arena-conformance` fails a broken registration (an entry-point
name that is not the game's spec.id, an import error inside the plugin) and skips only a game
whose extra is missing or that says itself it cannot work here; `arena check` offers no broken
or unavailable game as a known one. The plugins are an outsider's, registered through a
dist-info on the path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena_core.spec import CONFORMANCE_CHECKS

pytest_plugins = ["pytester"]

TESTS = Path(__file__).resolve().parent
PLUGIN = ("-p", "no:arena", "-p", "arena_core.testing.pytest_plugin", "-p", "no:cacheprovider")
ENTRIES = {
    "outsider_misnamed": "outsider_games:HighCard",  # its spec.id is outsider_high_card
    "outsider_broken": "outsider_broken_mod:Game",  # the module imports a library that is not installed
    "outsider_fancy": "outsider_games:HighCard [fancy]",  # the extra's requirement is not installed
    "outsider_declared": "outsider_declared_mod:Game",  # says itself why it cannot work here
}


@pytest.fixture
def site(tmp_path) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    (site / "outsider_broken_mod.py").write_text("import outsider_not_installed_lib_xyz\n\nGame = None\n")
    (site / "outsider_declared_mod.py").write_text('raise ImportError("outsider_declared needs a GPU, none here")\n')
    info = site / "outsider_games-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: outsider-games\nVersion: 0.1\nProvides-Extra: fancy\n"
        "Requires-Dist: outsider-not-installed-xyz ; extra == 'fancy'\n"
    )
    (info / "entry_points.txt").write_text("[arena.games]\n" + "".join(f"{k} = {v}\n" for k, v in ENTRIES.items()))
    return site


def test_a_broken_registration_fails_and_only_an_unavailable_game_is_skipped(pytester, monkeypatch, site):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), str(site)]))
    result = pytester.runpytest_subprocess(
        *PLUGIN, "--arena-conformance", f"--arena-games={','.join(ENTRIES)}", "--arena-max-examples=3", "-rfs"
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed") == 2, result.stdout.str()[-3000:]
    assert outcomes.get("passed", 0) == 0
    result.stdout.fnmatch_lines_random(
        [
            "*outsider_misnamed: the registered game cannot be loaded:*must equal spec.id*'outsider_high_card'*",
            "*outsider_broken: the registered game cannot be loaded:*outsider_not_installed_lib_xyz*",
            "*SKIPPED*outsider_fancy is not available here: missing outsider-not-installed-xyz*",
            "*SKIPPED*outsider_declared is not available here:*needs a GPU*",
        ]
    )
    assert outcomes.get("skipped") == 2 * (1 + len(CONFORMANCE_CHECKS)) + 2 * len(CONFORMANCE_CHECKS)


@pytest.mark.parametrize("name", ["no_such_game", "outsider_misname", "outsider_fanc"])
def test_arena_check_offers_no_broken_or_unavailable_game(site, name, tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), str(site)])}
    out = subprocess.run(
        [sys.executable, "-m", "arena_core.cli", "check", name], capture_output=True, text=True, timeout=300, env=env
    )
    assert out.returncode == 2 and f"no game named {name!r}" in out.stderr, out.stderr
    assert "outsider_" not in out.stderr.replace(name, ""), out.stderr
