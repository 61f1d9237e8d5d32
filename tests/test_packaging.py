"""The five distributions: each declares what it imports, the root development install agrees
with them, and the core-only CI step runs test files that need nothing but the core.

Building the wheels and sdists, and installing the core alone, is CI's job
(scripts/check_split.sh, run by .ci/run); these checks are the static half."""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from pathlib import Path

import pytest
import tomllib
from packaging.markers import Marker

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("dists_script", ROOT / "scripts" / "dists.py")
dists = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(dists)


@pytest.mark.parametrize("dist", dists.DISTS)
def test_every_import_is_declared_by_its_distribution(dist):
    assert dists.undeclared_imports(dist) == []


@pytest.mark.parametrize("dist", dists.DISTS)
def test_every_declared_requirement_is_imported(dist):
    assert dists.unused_declarations(dist) == []


def test_the_scan_catches_an_undeclared_import(tmp_path):
    """The hostile case: a module of the core that imports a package the core does not declare,
    directly, from a sub-module, and through importlib."""
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import json\nimport numpy\nimport scipy.stats\nfrom requests import get\n"
        "def later():\n    import importlib\n    return importlib.import_module('torch.nn')\n"
        "from arena_games import kuhn\n"
    )
    found = dists.undeclared_imports("core", files=[bad])
    named = sorted(re.search(r"imports '(\w+)'", p).group(1) for p in found)
    assert named == ["arena_games", "requests", "scipy", "torch"]
    assert all("add it to dists/core/pyproject.toml" in p for p in found)


def test_the_root_entry_points_are_generated_from_the_distributions():
    assert dists.drift() == [], "run `python scripts/dists.py sync`"
    text = (ROOT / "pyproject.toml").read_text()
    head, block, tail = dists._split_root()
    assert block == dists.render_block() and head + block + tail == text


def test_an_entry_point_added_to_the_root_only_is_reported_with_its_owner(monkeypatch):
    real = dists.root_project()
    fake = {
        **real,
        "entry-points": {
            **real["entry-points"],
            "arena.players": {
                **real["entry-points"]["arena.players"],
                "root_only_bot": "arena_players.random_player:RandomPlayer",
            },
        },
    }
    monkeypatch.setattr(dists, "root_project", lambda: fake)
    (problem,) = dists.drift()
    assert "'root_only_bot'" in problem and "dists/players/pyproject.toml" in problem


def test_each_entry_point_lives_in_the_distribution_that_owns_its_module():
    for dist in dists.DISTS:
        for group, eps in dists.entry_points(dists.project(dist)).items():
            for name, value in eps.items():
                assert dists.owner_of(value) == dist, f"{group} {name!r} = {value!r} is declared in dists/{dist}"


def _extras_used(value: str) -> set[str]:
    m = re.search(r"\[([^\]]*)\]\s*$", value)
    return {e.strip() for e in m.group(1).split(",")} if m else set()


def test_the_root_install_holds_everything_each_distribution_declares():
    """`pip install -e .[extra]` at the root gives what `pip install turn-arena-X[extra]` gives."""
    root = dists.root_project()
    norm = lambda reqs: {re.sub(r"\s+", "", r) for r in reqs}  # noqa: E731
    root_extras = root["optional-dependencies"]
    internal = re.compile(r"turn-arena-(\w+)(\[([^\]]*)\])?")
    for dist in dists.DISTS:
        proj = dists.project(dist)
        assert proj["requires-python"] == root["requires-python"], dist
        assert proj["version"] == root["version"], dist
        base = {r for r in norm(proj["dependencies"]) if not r.startswith("turn-arena-")}
        assert base <= norm(root["dependencies"]), (
            f"dists/{dist} dependencies missing from the root: {base - norm(root['dependencies'])}"
        )
        for extra, reqs in proj.get("optional-dependencies", {}).items():
            assert extra in root_extras, f"the root has no extra {extra!r} (dists/{dist})"
            for req in norm(reqs):
                m = internal.match(req)
                if m:  # another distribution's extras: the root must have those extras too
                    assert all(e in root_extras for e in filter(None, (m.group(3) or "").split(","))), req
                else:
                    assert req in norm(root_extras[extra]), f"root extra {extra!r} lacks {req} (dists/{dist})"
        for eps in dists.entry_points(proj).values():
            for value in eps.values():
                assert _extras_used(value) <= set(proj.get("optional-dependencies", {})), value


def test_pygambit_and_bench_tools_stay_out_of_the_test_install():
    """pygambit compiles for minutes and pygame is a bench tool; OpenSpiel comes in through the
    games' `openspiel` extra, which CI installs so that its interop tests run (issue 31)."""
    root = dists.root_project()
    test_extras = re.search(r"\[(.*)\]", root["optional-dependencies"]["test"][0]).group(1).split(",")
    pulled = {r for e in test_extras if e != "test" for r in root["optional-dependencies"][e]} | set(
        root["dependencies"]
    )
    assert not any(dists.requirement_name(r) in {"pygambit", "pygame"} for r in pulled)
    assert "openspiel" in test_extras
    assert "solver" in dists.project("games")["optional-dependencies"]


def test_license_and_readmes_ship_with_every_distribution():
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    for dist in dists.DISTS:
        here = ROOT / "dists" / dist
        assert (here / "LICENSE").resolve() == (ROOT / "LICENSE").resolve()
        assert (here / "src" / dists.PACKAGE_OF[dist]).resolve() == (ROOT / "src" / dists.PACKAGE_OF[dist]).resolve()
        assert (here / "README.md").exists()
        # an SPDX string (PEP 639; the table form is deprecated), with the setuptools that reads it
        assert dists.project(dist)["license"] == "MIT"
        assert "setuptools>=77" in tomllib.loads((here / "pyproject.toml").read_text())["build-system"]["requires"]
    for other in (ROOT / "pyproject.toml", ROOT / "examples" / "plugin_example" / "pyproject.toml"):
        data = tomllib.loads(other.read_text())
        assert data["project"]["license"] == "MIT" and "setuptools>=77" in data["build-system"]["requires"][0]


def test_the_core_only_test_files_import_nothing_but_the_core():
    """CI runs these in a venv holding turn-arena-core alone (scripts/check_split.sh)."""
    script = (ROOT / "scripts" / "check_split.sh").read_text()
    files = re.search(r"CORE_TESTS=\"([^\"]+)\"", script).group(1).split()
    assert files
    core = dists.project("core")
    installed = core["dependencies"] + core["optional-dependencies"]["testing"]  # what CI installs there
    allowed = (
        {dists.import_name(r) for r in installed}
        | {"arena_core", "__future__", "toy_games", "tournament_toys"}
        | set(sys.stdlib_module_names)
    )
    for name in files:
        mods = {mod for _, mod in dists.imports_in(ROOT / name)}
        assert mods <= allowed, f"{name} imports {sorted(mods - allowed)}, which the core-only venv lacks"


def test_the_python_floor_is_the_version_ci_runs_the_core_on():
    floor = re.fullmatch(r">=3\.(\d+)", dists.root_project()["requires-python"]).group(1)
    script = (ROOT / "scripts" / "check_split.sh").read_text()
    assert f"LOW_PYTHON:-python3.{floor}" in script


def _imports_tomli(nodes) -> bool:
    return any(
        isinstance(h, ast.Import) and any(a.name == "tomli" for a in h.names) for n in nodes for h in ast.walk(n)
    )


def _is_311_check(test: ast.expr) -> bool:
    """``sys.version_info >= (3, 11)`` (the form mypy understands)."""
    return (
        isinstance(test, ast.Compare)
        and ast.unparse(test.left) == "sys.version_info"
        and isinstance(test.ops[0], ast.GtE)
        and ast.unparse(test.comparators[0]) == "(3, 11)"
    )


def unguarded_tomllib(source: str) -> list[int]:
    """Lines that import tomllib without a fallback to tomli (Python 3.10): outside a ``try``
    whose handler imports tomli, and outside ``if sys.version_info >= (3, 11):`` whose ``else``
    imports tomli."""
    tree = ast.parse(source)
    guarded = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and _imports_tomli(node.handlers):
            guarded |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
        if isinstance(node, ast.If) and _is_311_check(node.test) and _imports_tomli(node.orelse):
            guarded |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return [
        n.lineno
        for n in ast.walk(tree)
        if isinstance(n, ast.Import) and any(a.name == "tomllib" for a in n.names) and id(n) not in guarded
    ]


def test_tomllib_always_falls_back_to_tomli():
    assert unguarded_tomllib("def f():\n    import tomllib\n") == [2]  # the hostile case
    assert (
        unguarded_tomllib("try:\n    import tomllib\nexcept ModuleNotFoundError:\n    import tomli as tomllib\n") == []
    )
    checked = "import sys\nif sys.version_info >= (3, 11):\n    import tomllib\nelse:\n    import tomli as tomllib\n"
    assert unguarded_tomllib(checked) == []
    assert unguarded_tomllib(checked.replace("(3, 11)", "(3, 12)")) == [3]  # 3.11 would take the branch without it
    assert unguarded_tomllib(checked.replace("import tomli as tomllib", "pass")) == [3]  # no fallback
    found = {
        str(p.relative_to(ROOT)): lines
        for p in sorted((ROOT / "src").rglob("*.py"))
        if (lines := unguarded_tomllib(p.read_text()))
    }
    assert found == {}, (
        "Python 3.10 has no tomllib: wrap it as `try: import tomllib / except ModuleNotFoundError: import tomli as tomllib` "
        "or `if sys.version_info >= (3, 11): import tomllib / else: import tomli as tomllib`"
    )


# ---------------------------------------------------------------------- the lock (constraints.txt)
_lock_spec = importlib.util.spec_from_file_location("lock_script", ROOT / "scripts" / "lock.py")
lock = importlib.util.module_from_spec(_lock_spec)
_lock_spec.loader.exec_module(lock)


def _declared_requirements() -> list[str]:
    """Every third-party requirement of the development install (dependencies and the extras
    `make venv` installs), as written in the root pyproject.toml."""
    root = dists.root_project()
    extras = root["optional-dependencies"]
    wanted = re.search(r"\[(.*)\]", extras["test"][0]).group(1).split(",")
    reqs = list(root["dependencies"]) + [r for e in wanted for r in extras[e]]
    return [r for r in reqs if not dists.requirement_name(r).startswith("turn-arena")]


def test_the_lock_pins_every_requirement_inside_its_range():
    """constraints.txt is what the dev install and CI get: each requirement the dev install names
    is pinned (for the dev Python), and the pin satisfies the distribution's own range, so a
    refreshed lock can never step outside what users are promised."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    pins: dict[str, list[tuple[str, str | None]]] = {}
    for name, version, marker in lock.parse((ROOT / "constraints.txt").read_text()):
        pins.setdefault(canonicalize_name(name), []).append((version, marker))
    env = {"python_version": "3.11", "sys_platform": "linux", "platform_system": "Linux", "extra": ""}
    for text in _declared_requirements():
        req = Requirement(text)
        if req.marker is not None and not req.marker.evaluate(env):
            continue
        pinned = [v for v, m in pins.get(canonicalize_name(req.name), []) if m is None or Marker(m).evaluate(env)]
        assert pinned, f"constraints.txt pins no version of {req.name} for Python 3.11; run `make lock`"
        assert req.specifier.contains(pinned[0], prereleases=True), (
            f"constraints.txt pins {req.name}=={pinned[0]}, outside the declared {req}; run `make lock`"
        )


def test_the_lock_reader_refuses_a_line_that_is_not_a_pin():
    assert lock.parse('numpy==2.4.6\nscipy==1.17.1; python_version >= "3.11"\n# note\n') == [
        ("numpy", "2.4.6", None),
        ("scipy", "1.17.1", 'python_version >= "3.11"'),
    ]
    with pytest.raises(ValueError, match="make lock"):
        lock.parse("numpy>=2\n")


def test_the_lock_merges_two_pythons_with_markers():
    lines = lock.merge({"numpy": "2.4.6", "rich": "15.0.0", "mlx": "0.32.4"}, {"numpy": "2.2.6", "rich": "15.0.0"})
    assert lines == [
        'mlx==0.32.4; python_version >= "3.11"',
        'numpy==2.4.6; python_version >= "3.11"',
        'numpy==2.2.6; python_version < "3.11"',
        "rich==15.0.0",
    ]


def test_every_install_of_the_development_tree_and_ci_follows_the_lock():
    make = (ROOT / "Makefile").read_text()
    venv_recipe = make.split("$(STAMP):", 1)[1].split("\n\n", 1)[0]
    assert "$(LOCK)" in venv_recipe.split("\n", 1)[0], "the venv must be rebuilt when the lock changes"
    installs = [line for line in venv_recipe.splitlines() if "pip install" in line]
    assert installs and all("-c $(LOCK)" in line for line in installs)
    split = (ROOT / "scripts" / "check_split.sh").read_text()
    assert 'install -c $LOCK"' in split and "LOCK=$(LOCK)" in make
