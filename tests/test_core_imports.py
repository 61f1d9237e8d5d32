"""Importing arena_core pulls in none of the plugin packages."""

import subprocess
import sys


def test_arena_core_imports_no_plugin_package():
    code = (
        "import sys\n"
        "import arena_core, arena_core.env, arena_core.testing, arena_core.cli, arena_core.registry, arena_core.replay\n"
        "from arena_core.registry import list_plugins\n"
        "for kind in ('games', 'players', 'trainers'): list_plugins(kind)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('arena_games', 'arena_players', 'arena_train'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"arena_core imported plugin modules: {out.stdout}"


def test_loading_a_plugin_does_import_it():
    """The same probe sees plugin modules once a plugin is loaded (so the check above can fail)."""
    code = (
        "import sys\n"
        "from arena_core.registry import make_game\n"
        "make_game('kuhn_poker')\n"
        "print('arena_games.kuhn' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
