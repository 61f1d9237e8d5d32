"""Every package ships its ``py.typed`` marker (PEP 561), so users' type checkers read Arena's
annotations: the file is in the source tree and every distribution's package data names it."""

from __future__ import annotations

from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("arena_core", "arena_games", "arena_players", "arena_train", "arena_tournament")
PROJECTS = [ROOT / "pyproject.toml", *sorted((ROOT / "dists").glob("*/pyproject.toml"))]


@pytest.mark.parametrize("package", PACKAGES)
def test_the_marker_is_in_the_package(package):
    assert (ROOT / "src" / package / "py.typed").is_file()


@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_distribution_ships_the_marker(project):
    data = tomllib.loads(project.read_text())["tool"]["setuptools"]["package-data"]
    assert any("py.typed" in globs for globs in data.values()), f"{project}: package-data does not name py.typed"
