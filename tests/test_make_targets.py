"""Every make target works as the docs name it (issue 46 point 7): each target of the Makefile is run
by CI (``.ci/run``, directly or as a prerequisite), or said in docs/developing.md to run once per
release; every ``make X`` the README and docs/ name is a target; and ``make dists`` builds into the
relative folder a user types (it failed with a traceback: each sdist was written relative to its
distribution's folder, then looked for relative to the root)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAKEFILE = (ROOT / "Makefile").read_text()
DEVELOPING = (ROOT / "docs" / "developing.md").read_text()


def targets() -> set[str]:
    """The Makefile's phony targets (every target a user may type)."""
    names: set[str] = set()
    for line in MAKEFILE.splitlines():
        if line.startswith(".PHONY:"):
            names |= set(line.split(":", 1)[1].split())
    return names


def rule(target: str) -> tuple[list[str], str]:
    """(prerequisites, recipe) of ``target``."""
    m = re.search(rf"^{re.escape(target)}:([^=\n]*)\n((?:\t.*\n)*)", MAKEFILE, re.M)
    assert m, f"no rule for {target}"
    return m.group(1).split(), m.group(2)


def reached_by_ci() -> set[str]:
    """The targets CI runs: those .ci/run names, their prerequisites and the targets their recipes
    run through ``$(MAKE)``, transitively; an alias (no recipe) of targets CI runs counts too."""
    ci = (ROOT / ".ci" / "run").read_text()
    todo = re.findall(r"^\s*(?:setsid .*?)?make (?:--no-print-directory )?([\w-]+)", ci, re.M)
    todo += re.findall(r"make --no-print-directory ([\w-]+)", ci)
    todo += re.findall(r"^background ([\w-]+)", ci, re.M)  # the niced background jobs
    seen: set[str] = set()
    while todo:
        t = todo.pop()
        if t in seen or t not in targets():
            continue
        seen.add(t)
        prereqs, recipe = rule(t)
        todo += [p for p in prereqs if p in targets()]
        todo += re.findall(r"\$\(MAKE\)(?: --no-print-directory)? ([\w-]+)", recipe)
    aliases = {t for t in targets() - seen if not rule(t)[1].strip() and set(rule(t)[0]) <= seen}
    return seen | aliases


def release_targets() -> set[str]:
    """The targets docs/developing.md's make-target table says run once per release."""
    section = DEVELOPING.split("## The make targets", 1)[1].split("\n## ", 1)[0]
    rows = [r for r in section.splitlines() if r.startswith("| `make ")]
    return {re.match(r"\| `make ([\w-]+)", r).group(1) for r in rows if "once per release" in r}


def test_every_target_runs_in_ci_or_is_said_to_run_once_per_release():
    ci, release = reached_by_ci(), release_targets()
    assert "dists" in ci, "CI's check-split must build through `make dists`"
    unplaced = targets() - ci - release
    assert not unplaced, (
        f"make {', '.join(sorted(unplaced))}: neither run by .ci/run nor listed as run once per release "
        "in docs/developing.md's 'The make targets' table"
    )
    assert not ci & release, f"{sorted(ci & release)} run in CI but the table says once per release"


def test_the_table_names_every_target_and_no_other():
    section = DEVELOPING.split("## The make targets", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"^\| `make ([\w-]+)", section, re.M))
    assert named == targets(), f"table only: {sorted(named - targets())}; Makefile only: {sorted(targets() - named)}"


def test_every_make_command_in_the_docs_is_a_target():
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    missing = {
        f"{p.name}: make {t}"
        for p in docs
        for t in re.findall(r"(?:`|^\s*)make ([a-z][\w-]*)", p.read_text(), re.M)  # code, not prose
        if t not in targets()
    }
    assert not missing, sorted(missing)


def test_the_checker_sees_a_target_nobody_runs(monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "MAKEFILE", MAKEFILE + "\n.PHONY: orphan\norphan:\n\techo hi\n")
    assert "orphan" not in reached_by_ci() | release_targets()
    with pytest.raises(AssertionError, match="make orphan: neither run by .ci/run"):
        test_every_target_runs_in_ci_or_is_said_to_run_once_per_release()


@pytest.fixture
def relative_out():
    """A folder under the root's build/ (ignored by git), named relative to the root, removed after."""
    rel = f"build/test-dists-{os.getpid()}"
    yield rel
    shutil.rmtree(ROOT / rel, ignore_errors=True)
    shutil.rmtree(ROOT / "dists" / "core" / rel, ignore_errors=True)  # where the old code wrote the sdist


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_dists_builds_into_a_relative_folder(relative_out):
    """``make dists`` as typed, with the folder relative to the root (here one distribution, the
    core, to keep it cheap; CI's check-split builds all five through the same target)."""
    venv, rel = Path(sys.prefix), relative_out
    out = subprocess.run(
        ["make", "--no-print-directory", "-o", str(venv / ".installed"), "dists"]
        + [f"VENV={venv}", f"DISTS_DIR={rel}", "DISTS=core"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Traceback" not in out.stderr
    wheel = ROOT / rel / "turn_arena_core-0.1.0-py3-none-any.whl"
    assert (ROOT / rel / "turn_arena_core-0.1.0.tar.gz").is_file()
    assert any(n.startswith("arena_core/") for n in zipfile.ZipFile(wheel).namelist())
    assert not (ROOT / "dists" / "core" / rel).exists()  # nothing written beside the distribution's folder


def test_an_unknown_distribution_is_one_line():
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "dists.py"), "build", "unused-out", "nope"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2 and out.stderr.strip().count("\n") == 0, out.stderr
    assert "no distribution named nope" in out.stderr
