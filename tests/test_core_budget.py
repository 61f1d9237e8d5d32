"""Issue 26's budget: the core (``src/arena_core``) stays at most 7,500 lines (``wc -l`` over its
Python files), so a game author who installs it alone gets the protocol, harness, adapters, text
views, registry, conformance kit, statistics and the CLI skeleton, not what only a plugin uses."""

from __future__ import annotations

from pathlib import Path

CORE = Path(__file__).resolve().parents[1] / "src" / "arena_core"
BUDGET = 7_500


def core_lines(root: Path = CORE) -> int:
    return sum(len(p.read_bytes().splitlines()) for p in root.rglob("*.py"))


def test_the_core_stays_within_its_line_budget():
    lines = core_lines()
    assert lines <= BUDGET, f"src/arena_core is {lines} lines, over the budget of {BUDGET} (docs/developing.md)"


def test_the_count_is_wc_l_and_sees_a_new_file(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\ny = 2\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.py").write_text("z = 3\n\n\n")
    assert core_lines(tmp_path) == 5
