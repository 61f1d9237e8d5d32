"""Plugins through entry points: a third-party package, duplicates, unavailable plugins, typos."""

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from arena_core import UnknownGameError, UnknownPlayerError
from arena_core.errors import PluginProtocolError
from arena_core.registry import list_plugins, load, make_game, make_player

ROOT = Path(__file__).resolve().parents[1]


def pip_install_target(source: Path, target: Path) -> None:
    build = target.parent / f"build-{source.name}"
    shutil.copytree(source, build, ignore=shutil.ignore_patterns("build", "*.egg-info"))
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
            str(build),
        ],
        check=True,
        capture_output=True,
        text=True,
    )


def make_dist(root: Path, name: str, module: str, entry_points: str, code: str, extras: str = "") -> Path:
    pkg = root / name
    (pkg / module).mkdir(parents=True)
    (pkg / module / "__init__.py").write_text(textwrap.dedent(code))
    (pkg / "pyproject.toml").write_text(
        textwrap.dedent(f"""
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "{name}"
        version = "0.0.1"
        {extras}
        [tool.setuptools]
        packages = ["{module}"]
        {entry_points}
    """)
    )
    return pkg


def arena(target: Path, *args: str, extra_code: str | None = None):
    env = dict(os.environ, PYTHONPATH=str(target))
    cmd = [sys.executable, "-c", extra_code] if extra_code else [sys.executable, "-m", "arena_core.cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture(scope="module")
def example_plugin(tmp_path_factory):
    target = tmp_path_factory.mktemp("site")
    pip_install_target(ROOT / "examples" / "plugin_example", target)
    return target


def test_listing_finds_the_third_party_game_and_player(example_plugin):
    out = arena(example_plugin, "list")
    assert out.returncode == 0, out.stderr
    assert "example_nim" in out.stdout and "example_last_legal" in out.stdout
    assert "arena-example-plugin" in out.stdout


def test_conformance_kit_passes_on_the_third_party_game(example_plugin):
    code = (
        "from arena_core.registry import make_game\n"
        "from arena_core.testing import assert_conformance\n"
        "results = assert_conformance(make_game('example_nim'), max_examples=10)\n"
        "print(sorted({r.status for r in results}))\n"
    )
    out = arena(example_plugin, extra_code=code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['passed']"


def test_third_party_player_plays_our_games(example_plugin):
    out = arena(example_plugin, "play", "kuhn_poker", "--players", "example_last_legal,random", "--seed", "3")
    assert out.returncode == 0, out.stderr
    assert "player 0 (example_last_legal): bet" in out.stdout  # 'bet' is the last legal action
    out = arena(example_plugin, "play", "example_nim", "--players", "random,example_last_legal", "--seed", "3")
    assert out.returncode == 0 and "result (natural)" in out.stdout


def test_listing_does_not_import_plugin_code(example_plugin):
    code = (
        "import sys\n"
        "from arena_core.registry import list_plugins\n"
        "names = [p.name for p in list_plugins('games')] + [p.name for p in list_plugins('players')]\n"
        "assert 'example_nim' in names\n"
        "print([m for m in sys.modules if m.startswith(('arena_example_plugin', 'arena_games', 'arena_players'))])\n"
    )
    out = arena(example_plugin, extra_code=code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_two_distributions_registering_one_name_is_an_error_naming_both(tmp_path, example_plugin):
    target = tmp_path / "site"
    shutil.copytree(example_plugin, target)
    dist = make_dist(
        tmp_path / "src",
        "rival-plugin",
        "rival_plugin",
        '[project.entry-points."arena.games"]\nexample_nim = "rival_plugin:Nim"',
        "from arena_example_plugin.nim import Nim\n",
    )
    pip_install_target(dist, target)
    out = arena(target, "play", "example_nim", "--players", "random,random")
    assert out.returncode == 2
    assert "registered by more than one distribution" in out.stderr
    assert "arena-example-plugin" in out.stderr and "rival-plugin" in out.stderr


def test_a_plugin_with_a_missing_extra_is_listed_unavailable_and_others_still_work(tmp_path):
    target = tmp_path / "site"
    dist = make_dist(
        tmp_path / "src",
        "needs-extra",
        "needs_extra",
        '[project.entry-points."arena.games"]\nfancy_game = "needs_extra:FancyGame [fancy]"',
        # the dependency imported lazily, as TextArena's titles import textarena: the module loads without it, and
        # only the declared extra says the game cannot run (it was listed available, then failed when made)
        "class FancyGame:\n    def __init__(self):\n        import arena_no_such_dependency\n",
        extras='[project.optional-dependencies]\nfancy = ["arena-no-such-dependency>=1"]',
    )
    pip_install_target(dist, target)
    out = arena(target, "list", "games")
    assert out.returncode == 0, out.stderr
    line = next(ln for ln in out.stdout.splitlines() if "fancy_game" in ln)
    assert "unavailable" in line and "arena-no-such-dependency" in line and "pip install 'needs-extra[fancy]'" in line
    assert any("kuhn_poker" in ln and "available" in ln and "unavailable" not in ln for ln in out.stdout.splitlines())
    out = arena(target, "play", "fancy_game", "--players", "random,random")
    assert (
        out.returncode == 2
        and "needs arena-no-such-dependency" in out.stderr
        and "pip install 'needs-extra[fancy]'" in out.stderr
    )
    out = arena(target, "play", "kuhn_poker", "--players", "random,random")
    assert out.returncode == 0


def test_a_plugin_whose_import_fails_is_reported_by_list_check(tmp_path):
    target = tmp_path / "site"
    dist = make_dist(
        tmp_path / "src",
        "broken-plugin",
        "broken_plugin",
        '[project.entry-points."arena.games"]\nbroken_game = "broken_plugin:Game"\n'
        '[project.entry-points."arena.players"]\nnot_a_player = "broken_plugin:VALUE"',
        "VALUE = 3\nraise ImportError('needs data that is not installed')\n",
    )
    pip_install_target(dist, target)
    out = arena(target, "list", "--check")
    assert out.returncode == 0, out.stderr
    line = next(ln for ln in out.stdout.splitlines() if "broken_game" in ln)
    assert "unavailable" in line and "needs data that is not installed" in line


def test_unknown_names_list_close_matches():
    with pytest.raises(UnknownGameError, match="did you mean kuhn_poker"):
        make_game("kuhn-poker")
    with pytest.raises(UnknownPlayerError, match="did you mean random"):
        make_player("randon")


def test_loaded_objects_are_validated():
    from arena_core.registry import _validate_game, _validate_player

    with pytest.raises(PluginProtocolError, match="subclass of arena_core.Game"):
        _validate_game("x", object)
    with pytest.raises(PluginProtocolError, match="act"):
        _validate_player("x", type("NoAct", (), {}))


def test_our_plugins_are_registered_like_anyone_elses():
    games = {p.name: p for p in list_plugins("games")}
    assert games["kuhn_poker"].distribution == "turn-arena"
    assert games["kuhn_poker"].value == "arena_games.kuhn:KuhnPoker"
    assert load("games", "kuhn_poker").spec.id == "kuhn_poker"


def test_player_options_from_the_spec_string():
    with pytest.raises(TypeError, match="takes no options"):
        make_player("random:temperature=0.5")


def test_a_distribution_found_twice_on_the_path_counts_once_first_copy_wins(tmp_path, example_plugin):
    """An editable install plus the egg-info a build leaves in the source tree: two copies of one
    distribution whose entry points differ. The first on sys.path is the installed one."""
    newer = tmp_path / "newer"
    dist = make_dist(
        tmp_path / "src",
        "arena-example-plugin",
        "arena_example_plugin_v2",
        '[project.entry-points."arena.games"]\nexample_nim = "arena_example_plugin.nim:Nim [other]"\n'
        '[project.entry-points."arena.players"]\nonly_in_the_later_copy = "arena_example_plugin.players:LastLegalPlayer"',
        "",
    )
    pip_install_target(dist, newer)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(example_plugin), str(newer)]))
    out = subprocess.run(
        [sys.executable, "-m", "arena_core.cli", "list", "--no-check"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert "example_nim" in out.stdout and "only_in_the_later_copy" not in out.stdout
    # the rival distribution of another name still clashes (see the test above); this one does not
    assert "more than one distribution" not in out.stderr
