"""The tournament package imports its heavy helpers (choix, openskill, rich, matplotlib, Ray,
PyYAML) only when a function needs them."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ["choix", "openskill", "rich", "matplotlib", "ray", "yaml", "scipy"]


def test_tournament_modules_import_no_heavy_dependency():
    code = (
        "import sys, json\n"
        "import arena_tournament.schedule, arena_tournament.config, arena_tournament.runner\n"
        "import arena_tournament.ratings, arena_tournament.report, arena_tournament.cli\n"
        f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == []


def test_arena_core_does_not_import_the_tournament_package():
    code = "import sys, arena_core; print(any(m.startswith('arena_tournament') for m in sys.modules))"
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
        == "False"
    )
