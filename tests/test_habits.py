"""The checks CI runs (``make lint``: ruff lint, ruff format, mypy, the layer rules) fail on a
violation, with the project's own configuration; and CI runs them.

Each tool is run as a program on a small file in ``tmp_path`` that breaks one rule, and on a
clean twin of it (the tool must pass that, so a failure means the rule, not a broken set-up).
The layer rules' own hostile cases are in tests/test_architecture.py."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"
BIN = Path(sys.executable).parent

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib


def _tool(name: str) -> str:
    exe = BIN / name
    if exe.exists():
        return str(exe)
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: pip install -e '.[dev]' (the dev extra declares it)")
    return found


def _run(*cmd: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=120)


# ------------------------------------------------------------------ ruff
LINT_BAD = """\
import os


def collect(item, into=[]):
    into.append(item)
    return into
"""
LINT_GOOD = """\
def collect(item, into=None):
    into = [] if into is None else into
    into.append(item)
    return into
"""


def test_ruff_check_fails_on_a_lint_violation(tmp_path):
    ruff = _tool("ruff")
    bad, good = tmp_path / "bad.py", tmp_path / "good.py"
    bad.write_text(LINT_BAD)
    good.write_text(LINT_GOOD)
    res = _run(ruff, "check", "--no-cache", "--config", str(PYPROJECT), str(bad))
    assert res.returncode != 0
    assert "F401" in res.stdout and "B006" in res.stdout  # pyflakes and bugbear are on
    assert _run(ruff, "check", "--no-cache", "--config", str(PYPROJECT), str(good)).returncode == 0


def test_ruff_format_check_fails_on_unformatted_code(tmp_path):
    ruff = _tool("ruff")
    bad = tmp_path / "bad.py"
    bad.write_text("x = {  'a':1,\n 'b' : 2}\n")
    res = _run(ruff, "format", "--check", "--no-cache", "--config", str(PYPROJECT), str(bad))
    assert res.returncode != 0 and "would be reformatted" in res.stdout
    _run(ruff, "format", "--no-cache", "--config", str(PYPROJECT), str(bad))
    assert _run(ruff, "format", "--check", "--no-cache", "--config", str(PYPROJECT), str(bad)).returncode == 0


def test_the_tree_is_ruff_clean():
    ruff = _tool("ruff")
    res = _run(ruff, "check", "--no-cache", "--output-format", "concise", ".")
    assert res.returncode == 0, res.stdout[-3000:]
    res = _run(ruff, "format", "--check", "--no-cache", ".")
    assert res.returncode == 0, res.stdout[-3000:]


# ------------------------------------------------------------------ mypy
TYPE_BAD = """\
from __future__ import annotations


def first_char(text: str | None) -> str:
    return text[0]


def untyped(x):
    return x
"""
TYPE_GOOD = """\
from __future__ import annotations


def first_char(text: str | None) -> str:
    return "" if not text else text[0]


def typed(x: int) -> int:
    return x
"""


def _mypy(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    module = tmp_path / "strict_probe.py"
    module.write_text(source)
    return _run(
        sys.executable,
        "-m",
        "mypy",
        "--config-file",
        str(PYPROJECT),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--no-incremental",
        str(module),
        cwd=tmp_path,
    )


def test_mypy_with_the_project_config_is_strict(tmp_path):
    pytest.importorskip("mypy")
    res = _mypy(tmp_path, TYPE_BAD)
    assert res.returncode != 0
    assert "[index]" in res.stdout  # None not handled
    assert "[no-untyped-def]" in res.stdout  # strict: every function annotated
    assert _mypy(tmp_path, TYPE_GOOD).returncode == 0, res.stdout


def test_the_mypy_config_covers_every_package_strictly():
    cfg = tomllib.loads(PYPROJECT.read_text())["tool"]["mypy"]
    packages = sorted(p.name for p in (ROOT / "src").iterdir() if (p / "__init__.py").is_file())
    assert cfg["strict"] is True and sorted(cfg["packages"]) == packages
    for override in cfg.get("overrides", []):
        modules = override["module"] if isinstance(override["module"], list) else [override["module"]]
        # only untyped third-party packages are named, and only to read them as Any
        assert set(override) == {"module", "ignore_missing_imports"}, override
        assert not [m for m in modules if m.split(".")[0] in packages], modules


IGNORE = re.compile(r"#\s*type:\s*ignore(?P<rest>.*)$")
WELL_FORMED = re.compile(r"^\[[a-z][a-z-]*(,\s*[a-z][a-z-]*)*\]\s+#\s*\S")


def ignores_without_code_or_reason(paths) -> list[str]:
    bad = []
    for path in paths:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            m = IGNORE.search(line)
            if m and not WELL_FORMED.match(m.group("rest")):
                bad.append(f"{path.name}:{n}: {line.strip()}")
    return bad


def test_every_type_ignore_names_its_code_and_says_why(tmp_path):
    assert ignores_without_code_or_reason(sorted((ROOT / "src").rglob("*.py"))) == []
    probe = tmp_path / "probe.py"
    probe.write_text("a = 1  # type: ignore\nb = 2  # type: ignore[misc]\nc = 3  # type: ignore[misc]  # why\n")
    assert [line.split(":")[1] for line in ignores_without_code_or_reason([probe])] == ["1", "2"]


def test_the_public_api_check_catches_a_player_that_breaks_the_protocol(tmp_path):
    """scripts/typecheck_public.py on a fake distribution: a player whose ``act`` takes no
    decision, and a 'game' that is not a Game, both fail; a conforming player next to a real
    game passes."""
    pytest.importorskip("mypy")
    script = ROOT / "scripts" / "typecheck_public.py"

    def check(player_act: str, game: str) -> subprocess.CompletedProcess[str]:
        (tmp_path / "fake_plugin.py").write_text(
            "from __future__ import annotations\n"
            "from typing import Any\n"
            "from arena_core import Decision\n\n"
            "class NotAGame:\n    pass\n\n"
            "class FakePlayer:\n    name: str = 'fake'\n\n"
            f"    def act({player_act}) -> Any:\n        return None\n"
        )
        (tmp_path / "pyproject.toml").write_text(
            f'[project]\nname = "fake"\n[project.entry-points."arena.games"]\nfake = "{game}"\n'
            '[project.entry-points."arena.players"]\nfake = "fake_plugin:FakePlayer"\n'
        )
        return _run(
            sys.executable,
            str(script),
            "--pyproject",
            str(tmp_path / "pyproject.toml"),
            "--keep",
            str(tmp_path),
            "--cache-dir",
            str(tmp_path / "cache"),
        )

    bad = check("self", "fake_plugin:NotAGame")
    assert bad.returncode == 1, bad.stdout
    assert re.search(r'Incompatible types.*"type\[FakePlayer\]".*"Callable\[\.\.\., Player\]"', bad.stdout), bad.stdout
    assert re.search(r'Incompatible types.*"type\[NotAGame\]".*"type\[Game\[Any, Any\]\]"', bad.stdout), bad.stdout
    good = check("self, decision: Decision", "arena_games.kuhn:KuhnPoker")
    assert good.returncode == 0, good.stdout


# ------------------------------------------------------------------ CI runs them
def test_ci_runs_the_checks_and_stops_on_the_first_failure():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "set -euo pipefail" in ci
    steps = [line.split()[1] for line in ci.splitlines() if line.startswith("make ")]
    assert steps[:2] == ["lint", "test"], steps  # `make test` is the README's test command
    make = (ROOT / "Makefile").read_text()
    lint = re.search(r"^lint:.*\n((?:\t.*\n)+)", make, re.M).group(1)
    for needed in ("ruff check", "ruff format --check", "typecheck", "tests/test_architecture.py"):
        assert needed in lint, needed
    typecheck = re.search(r"^typecheck:.*\n((?:\t.*\n)+)", make, re.M).group(1)
    assert "mypy" in typecheck and "scripts/typecheck_public.py" in typecheck
    coverage = re.search(r"^test:.*\n((?:\t.*\n)+)", make, re.M).group(1)
    assert "--cov" in coverage


def test_coverage_has_a_floor_and_measures_branches():
    cfg = tomllib.loads(PYPROJECT.read_text())["tool"]["coverage"]
    assert cfg["run"]["branch"] is True
    assert set(cfg["run"]["source_pkgs"]) == {
        "arena_core",
        "arena_games",
        "arena_players",
        "arena_train",
        "arena_tournament",
    }
    assert cfg["report"]["fail_under"] >= 50  # the floor is a measured level, not a placeholder


def test_the_dev_extra_installs_the_checkers():
    extras = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]
    names = {re.split(r"[<>=\[ ;]", r, maxsplit=1)[0].lower() for r in extras["dev"]}
    assert {"ruff", "mypy", "pytest-cov"} <= names
    assert "dev" in extras["test"][0]  # `make test` installs the test extra, which pulls dev in
