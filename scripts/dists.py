"""The five distributions built from this tree, and the root development install that holds them all.

Each distribution has its own project file, ``dists/<name>/pyproject.toml`` (``core``, ``games``,
``players``, ``train``, ``tournament``); its ``src/<package>`` is a link to the shared ``src/<package>``. Those four
files are the one place where dependencies, extras and entry points are declared. The root
``pyproject.toml`` is the editable development install of all five packages at once: its
entry-point tables are generated from the five files (``sync``), and ``tests/test_packaging.py``
checks that they agree and that every extra the root needs is there.

    python scripts/dists.py sync             # rewrite the root's generated entry-point block
    python scripts/dists.py check            # exit 1 (with the fix) when the root has drifted
    python scripts/dists.py build OUTDIR [NAME ...]  # a wheel and an sdist of each distribution (or of those named)
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
DISTS = ("core", "games", "players", "train", "tournament")
PACKAGE_OF = {
    "core": "arena_core",
    "games": "arena_games",
    "players": "arena_players",
    "train": "arena_train",
    "tournament": "arena_tournament",
}
BEGIN = "# >>> entry points: generated from dists/*/pyproject.toml by `python scripts/dists.py sync`; edit those files, not this block"
END = "# <<< end of generated entry points"


def project(name: str) -> dict:
    """The ``[project]`` table of ``dists/<name>/pyproject.toml``."""
    return tomllib.loads((ROOT / "dists" / name / "pyproject.toml").read_text())["project"]


def root_project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def entry_points(proj: dict) -> dict[str, dict[str, str]]:
    """Every entry point of a project table as {group: {name: value}}, console scripts included."""
    out = {group: dict(eps) for group, eps in proj.get("entry-points", {}).items()}
    if proj.get("scripts"):
        out["console_scripts"] = dict(proj["scripts"])
    return out


def merged_entry_points() -> dict[str, dict[str, str]]:
    """The union of the five distributions' entry points; one name declared twice in a group raises."""
    merged: dict[str, dict[str, str]] = {}
    owner: dict[tuple[str, str], str] = {}
    for dist in DISTS:
        for group, eps in entry_points(project(dist)).items():
            for name, value in eps.items():
                if (group, name) in owner:
                    raise SystemExit(
                        f"{group} {name!r} is declared by both dists/{owner[group, name]} and dists/{dist}"
                    )
                owner[group, name] = dist
                merged.setdefault(group, {})[name] = value
    return merged


# distribution names whose import name is not the name itself (lower-cased, "-" -> "_")
IMPORT_NAME = {"pyyaml": "yaml", "open-spiel": "pyspiel", "pygame": "pygame"}
IMPORT_NAME.update({f"turn-arena-{d}": pkg for d, pkg in PACKAGE_OF.items()})
#: further top-level packages a distribution installs (open-spiel: pyspiel and the open_spiel package)
ALSO_PROVIDES = {"open-spiel": ("open_spiel",)}
#: calls whose first (string) argument names a module that gets imported
IMPORT_CALLS = {"import_module", "_import_quietly", "importorskip", "__import__"}


def requirement_name(req: str) -> str:
    """``"mlx[cpu]>=0.29; sys_platform == 'linux'"`` -> ``"mlx"`` (normalised)."""
    return re.split(r"[\s\[<>=!~;@]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")


def import_name(req: str) -> str:
    name = requirement_name(req)
    return IMPORT_NAME.get(name, name.replace("-", "_"))


def declared_imports(dist: str) -> dict[str, str]:
    """Top-level import names ``dists/<dist>`` may use, each with where it is declared."""
    proj = project(dist)
    out = {PACKAGE_OF[dist]: "the distribution itself"}
    for req in proj.get("dependencies", []):
        for name in (import_name(req), *ALSO_PROVIDES.get(requirement_name(req), ())):
            out.setdefault(name, "dependencies")
    for extra, reqs in proj.get("optional-dependencies", {}).items():
        for req in reqs:
            for name in (import_name(req), *ALSO_PROVIDES.get(requirement_name(req), ())):
                out.setdefault(name, f"extra {extra!r}")
    return out


def imports_in(path: Path) -> list[tuple[int, str]]:
    """(line, top-level module) of every absolute import in a file, including
    ``importlib.import_module("literal")``-style calls."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name.split(".")[0]) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module.split(".")[0]))
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
            if name in IMPORT_CALLS:
                found.append((node.lineno, node.args[0].value.split(".")[0]))
    return found


def undeclared_imports(dist: str, files: list[Path] | None = None) -> list[str]:
    """Every import in the distribution's package of a module that is neither the standard
    library nor declared by the distribution (dependencies or an extra)."""
    allowed = declared_imports(dist)
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    pkg_dir = ROOT / "src" / PACKAGE_OF[dist]
    problems = []
    for path in files if files is not None else sorted(pkg_dir.rglob("*.py")):
        for line, mod in imports_in(path):
            if mod not in stdlib and mod not in allowed:
                where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
                problems.append(
                    f"{where}:{line} imports {mod!r}, which turn-arena-{dist} does not declare; "
                    f"add it to dists/{dist}/pyproject.toml (dependencies, or the extra that needs it)"
                )
    return problems


def unused_declarations(dist: str) -> list[str]:
    """Declared requirements that no module of the distribution imports."""
    used = {mod for path in (ROOT / "src" / PACKAGE_OF[dist]).rglob("*.py") for _, mod in imports_in(path)}
    return [
        f"dists/{dist}/pyproject.toml declares {name!r} ({where}) but nothing in src/{PACKAGE_OF[dist]} imports it"
        for name, where in declared_imports(dist).items()
        if name != PACKAGE_OF[dist] and name not in used
    ]


def owner_of(value: str) -> str | None:
    """The distribution whose package holds ``module:attr``."""
    top = value.split(":")[0].split(".")[0]
    return next((d for d, pkg in PACKAGE_OF.items() if pkg == top), None)


def _quote(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else f'"{key}"'


def render_block() -> str:
    eps = merged_entry_points()
    lines = [BEGIN]
    if "console_scripts" in eps:
        lines.append("[project.scripts]")
        lines += [f'{_quote(k)} = "{v}"' for k, v in eps["console_scripts"].items()]
        lines.append("")
    for group in sorted(g for g in eps if g != "console_scripts"):
        lines.append(f'[project.entry-points."{group}"]')
        lines += [f'{_quote(k)} = "{v}"' for k, v in eps[group].items()]
        lines.append("")
    lines.append(END)
    return "\n".join(lines)


def _split_root() -> tuple[str, str, str]:
    text = (ROOT / "pyproject.toml").read_text()
    if BEGIN not in text or END not in text:
        raise SystemExit("pyproject.toml has lost its generated entry-point markers; restore them from git")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head, BEGIN + rest.split(END, 1)[0] + END, tail


def drift() -> list[str]:
    """What the root declares that the distributions do not, and the reverse (empty: in agreement)."""
    want = merged_entry_points()
    have = entry_points(root_project())
    problems = []
    for group in sorted(set(want) | set(have)):
        w, h = want.get(group, {}), have.get(group, {})
        for name in sorted(set(h) - set(w)):
            dist = owner_of(h[name])
            where = f"dists/{dist}/pyproject.toml" if dist else "the dists/<name>/pyproject.toml that owns it"
            problems.append(
                f"{group} {name!r} = {h[name]!r} is in the root pyproject.toml only; move it to {where}, then run `python scripts/dists.py sync`"
            )
        for name in sorted(set(w) - set(h)):
            problems.append(
                f"{group} {name!r} is declared in dists/ but missing from the root; run `python scripts/dists.py sync`"
            )
        for name in sorted(set(w) & set(h)):
            if w[name] != h[name]:
                problems.append(
                    f"{group} {name!r}: root says {h[name]!r}, dists say {w[name]!r}; run `python scripts/dists.py sync`"
                )
    return problems


PROVIDERS = ROOT / "src" / "arena_core" / "providers.json"


def providers() -> dict[str, dict[str, str]]:
    """What the core says to install for a name one of the distributions registers: {kind: {name:
    "turn-arena-DIST[extra]"}}, and a namespace ("textarena/") for every name under it when all of
    them come from the same place (the data of ``registry.provider``; ``sync`` writes it)."""
    out: dict[str, dict[str, str]] = {"games": {}, "players": {}, "trainers": {}, "commands": {}, "namespaces": {}}
    for dist in DISTS:
        for group, eps in entry_points(project(dist)).items():
            kind = group.removeprefix("arena.")
            if kind not in ("games", "players", "trainers", "commands"):
                continue
            for name, value in eps.items():
                extra = re.search(r"\[([^\]]*)\]\s*$", value)
                out[kind][name] = f"turn-arena-{dist}" + (f"[{extra.group(1).strip()}]" if extra else "")
    spaces: dict[str, set[str]] = {}
    for name, dist in out["games"].items():
        if "/" in name:
            spaces.setdefault(name.split("/", 1)[0] + "/", set()).add(dist)
    out["namespaces"] = {space: dists.pop() for space, dists in sorted(spaces.items()) if len(dists) == 1}
    out["games"] = {
        n: d for n, d in out["games"].items() if "/" not in n or n.split("/", 1)[0] + "/" not in out["namespaces"]
    }
    return {kind: dict(sorted(names.items())) for kind, names in out.items()}


def _providers_text() -> str:
    import json

    return json.dumps(providers(), indent=1) + "\n"


def sync() -> int:
    PROVIDERS.write_text(_providers_text())
    head, _, tail = _split_root()
    only_root = [p for p in drift() if "in the root pyproject.toml only" in p]
    if only_root:  # never drop a declaration someone added to the root: it must move first
        print("\n".join(only_root), file=sys.stderr)
        return 1
    (ROOT / "pyproject.toml").write_text(head + render_block() + tail)
    print("root pyproject.toml entry points regenerated from dists/*/pyproject.toml")
    return 0


def check() -> int:
    problems = drift()
    if not PROVIDERS.exists() or PROVIDERS.read_text() != _providers_text():
        problems.append(f"{PROVIDERS.relative_to(ROOT)} is stale; run `python scripts/dists.py sync`")
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


def _pip_wheel(source: Path, outdir: Path) -> None:
    """A wheel of ``source`` (a project directory or an sdist) into ``outdir``, no dependencies."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(outdir),
            str(source),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def build(outdir: Path, names: tuple[str, ...] = DISTS) -> int:
    """A wheel (``pip wheel --no-deps --no-build-isolation``) and an sdist of each distribution; the
    sdist must rebuild the same wheel (nothing left out of it). A relative ``outdir`` is read from the
    working directory (``make dists``: ``build/dists``), never from a distribution's folder, where
    the sdist is built."""
    unknown = sorted(set(names) - set(DISTS))
    if unknown:
        print(f"no distribution named {', '.join(unknown)}; the distributions: {', '.join(DISTS)}", file=sys.stderr)
        return 2
    outdir = outdir.resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    for dist in names:
        src = ROOT / "dists" / dist
        for stale in [
            src / "build",
            *(src / "src").glob("*.egg-info"),
        ]:  # a module deleted since the last build stays there
            shutil.rmtree(stale, ignore_errors=True)
        _pip_wheel(src, outdir)
        code = f"from setuptools import build_meta as b; print(b.build_sdist({str(outdir)!r}))"
        subprocess.run(
            [sys.executable, "-c", code], cwd=src, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
    for dist in names:
        name = f"turn_arena_{dist}-{project(dist)['version']}"
        wheel = outdir / f"{name}-py3-none-any.whl"
        sdist = outdir / f"{name}.tar.gz"
        pkg = PACKAGE_OF[dist]
        with zipfile.ZipFile(wheel) as z:
            n_wheel = sum(1 for f in z.namelist() if f.startswith(pkg + "/"))
        with tarfile.open(sdist) as t:
            n_sdist = sum(1 for f in t.getnames() if f"/src/{pkg}/" in f)
        if not n_wheel or not n_sdist:
            raise SystemExit(f"{dist}: the wheel or the sdist holds no {pkg} files")
        again = outdir / "from-sdist"  # the sdist is complete: a wheel built from it holds the same files
        _pip_wheel(sdist, again)
        files = [
            {f for f in zipfile.ZipFile(w).namelist() if ".dist-info/" not in f} for w in (wheel, again / wheel.name)
        ]
        if files[0] != files[1]:
            raise SystemExit(f"{dist}: the wheel built from the sdist differs: {sorted(files[0] ^ files[1])[:10]}")
        print(f"built {wheel.name} ({n_wheel} files of {pkg}) and {sdist.name} ({n_sdist}; rebuilds the same wheel)")
    shutil.rmtree(outdir / "from-sdist", ignore_errors=True)
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["sync"]:
        return sync()
    if argv[:1] == ["check"]:
        return check()
    if argv[:1] == ["build"] and len(argv) >= 2:
        return build(Path(argv[1]), tuple(argv[2:]) or DISTS)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
