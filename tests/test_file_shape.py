"""A file over 500 lines says why at its top (STYLE.md), in the packages and in bench/; and bench/
drives runs and writes reports (issue 45 point 7) without an import circle (imports inside
functions count: the Leduc bench and its LM method imported each other that way)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"


def bench_imports(root: Path) -> dict[str, set[str]]:
    """Each bench module -> the bench modules it imports, anywhere in it."""
    names = {p.stem for p in root.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in root.glob("*.py"):
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                found.add(node.module.split(".")[0])
        graph[path.stem] = (found & names) - {path.stem}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    found, stack = [], []

    def visit(m: str) -> None:
        if m in stack:
            found.append(stack[stack.index(m) :] + [m])
            return
        stack.append(m)
        for n in sorted(graph.get(m, ())):
            visit(n)
        stack.pop()

    for m in sorted(graph):
        visit(m)
    return found


def test_no_import_circle_in_bench():
    assert not cycles(bench_imports(BENCH)), cycles(bench_imports(BENCH))


def test_the_circle_check_sees_one_made_inside_functions(tmp_path):
    (tmp_path / "a.py").write_text("def f():\n    from b import g\n")
    (tmp_path / "b.py").write_text("def g():\n    import a\n")
    assert cycles(bench_imports(tmp_path))


def unexplained(paths: list[Path]) -> list[str]:
    """Files over 500 lines whose module docstring does not say why near its top."""
    out = []
    for path in paths:
        if len(path.read_text().splitlines()) > 500:
            doc = " ".join((ast.get_docstring(ast.parse(path.read_text())) or "").split())
            if "500 lines" not in doc[:600]:
                out.append(str(path.relative_to(path.parents[1])))
    return out


def test_a_file_over_500_lines_says_why_at_its_top():
    paths = sorted(BENCH.glob("*.py")) + sorted((ROOT / "src").rglob("*.py"))
    assert not unexplained(paths), f"files over 500 lines without their reason at the top: {unexplained(paths)}"


def test_the_reason_check_sees_a_long_file_without_one(tmp_path):
    (tmp_path / "pkg").mkdir()
    long = tmp_path / "pkg" / "long.py"
    long.write_text('"""A module."""\n' + "x = 1\n" * 501)
    assert unexplained([long]) == ["pkg/long.py"]
    long.write_text('"""A module: one file, past 500 lines, because ..."""\n' + "x = 1\n" * 501)
    assert unexplained([long]) == []
