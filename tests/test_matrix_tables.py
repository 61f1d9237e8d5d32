"""The shipped equilibrium table: complete, checksummed, used without pygambit, and never used
when damaged (recomputed where pygambit is installed, otherwise refused naming the extra)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from arena_games.matrix import equilibria as eq
from arena_games.matrix.payoffs import ARCHETYPE_NAMES, K_VALUES


@pytest.fixture
def table(tmp_path, monkeypatch):
    """A private copy of the shipped table and manifest that a test may damage."""
    t, m = tmp_path / "equilibria.json", tmp_path / "equilibria.sha256.json"
    shutil.copy(eq.TABLE_PATH, t)
    shutil.copy(eq.MANIFEST_PATH, m)
    monkeypatch.setattr(eq, "TABLE_PATH", t)
    monkeypatch.setattr(eq, "MANIFEST_PATH", m)
    monkeypatch.setenv(eq.CACHE_ENV, str(tmp_path / "cache"))
    eq.clear_memory_cache()
    yield t, m
    eq.clear_memory_cache()


def test_the_shipped_table_is_complete_and_verified(table):
    manifest = json.loads(table[1].read_text())
    assert set(manifest["cells"]) == {f"{a}-{k}" for a in ARCHETYPE_NAMES for k in K_VALUES}  # all 72 cells
    for a in ARCHETYPE_NAMES:
        for k in K_VALUES:
            eqs, problem = eq.shipped_cell(a, k)
            assert problem == "" and len(eqs) == manifest["cells"][f"{a}-{k}"]["count"], (a, k)
    assert manifest["cells"]["coordination-10"]["count"] == 1023 and manifest["cells"]["stag_hunt-4"]["count"] == 10


def _no_solver(monkeypatch):
    def refuse(archetype, k):
        raise eq.SolverUnavailableError(f"computing equilibria needs pygambit; fix: pip install '{eq.SOLVER_EXTRA}'")

    monkeypatch.setattr(eq, "solve_extreme_equilibria", refuse)


def test_no_solver_needed_with_an_intact_table(table, monkeypatch):
    _no_solver(monkeypatch)
    assert eq.reference_points("battle_of_sexes", 5).num_extreme_equilibria == 31


@pytest.mark.parametrize("damage", ["truncate", "drop_profiles", "flip_digit", "drop_cell", "manifest_gone"])
def test_a_damaged_table_is_refused_without_the_solver(table, monkeypatch, damage):
    t, m = table
    data = json.loads(t.read_text())
    if damage == "truncate":
        t.write_bytes(t.read_bytes()[: len(t.read_bytes()) // 2])
    elif damage == "drop_profiles":  # the case: 4 equilibria instead of 15
        cell = data["cells"]["stag_hunt-5"]
        cell["row"], cell["col"] = cell["row"][:4], cell["col"][:4]
        t.write_text(json.dumps(data))
    elif damage == "flip_digit":
        cell = data["cells"]["stag_hunt-5"]
        cell["row"][0][0] = cell["row"][0][0] + 1e-3
        t.write_text(json.dumps(data))
    elif damage == "drop_cell":
        del data["cells"]["stag_hunt-5"]
        t.write_text(json.dumps(data))
    else:
        m.unlink()
    eq.clear_memory_cache()
    _no_solver(monkeypatch)
    assert eq.shipped_cell("stag_hunt", 5)[0] is None
    with pytest.raises(eq.SolverUnavailableError) as info:
        eq.extreme_equilibria("stag_hunt", 5)
    message = str(info.value)
    assert "\n" not in message and eq.SOLVER_EXTRA in message and "damaged" in message


def test_a_damaged_cell_is_recomputed_where_pygambit_is_installed(table):
    pytest.importorskip("pygambit")
    t, _ = table
    data = json.loads(t.read_text())
    cell = data["cells"]["stag_hunt-5"]
    cell["row"], cell["col"] = cell["row"][:4], cell["col"][:4]
    t.write_text(json.dumps(data))
    eq.clear_memory_cache()
    assert len(eq.extreme_equilibria("stag_hunt", 5)) == 15  # not the 4 left in the file
    # the other cells still come from the table (their own checksums hold)
    assert eq.shipped_cell("stag_hunt", 4)[1] == ""


def test_the_study_refuses_in_one_line_without_the_solver(table, tmp_path):
    """End to end in a fresh process without pygambit: a damaged table stops the CLI with one line."""
    t, _ = table
    data = json.loads(t.read_text())
    del data["cells"]["chicken-3"]
    t.write_text(json.dumps(data))
    code = (
        "import sys; sys.modules['pygambit'] = None\n"
        "from arena_games.matrix import equilibria as eq\n"
        "from pathlib import Path\n"
        f"eq.TABLE_PATH = Path({str(t)!r}); eq.MANIFEST_PATH = Path({str(table[1])!r})\n"
        "from arena_games.matrix.study import main\n"
        f"sys.exit(main(['--player', 'matrix_uniform', '--archetypes', 'chicken', '--k', '3', '--trials', '3', '--out', {str(tmp_path / 'o')!r}, '--quiet']))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env={**__import__("os").environ, eq.CACHE_ENV: str(tmp_path / "empty-cache")},
    )
    assert out.returncode == 2, out.stderr
    lines = [ln for ln in out.stderr.splitlines() if ln.strip() and not ln.startswith("note:")]
    assert len(lines) == 1 and eq.SOLVER_EXTRA in lines[0] and "Traceback" not in out.stderr
