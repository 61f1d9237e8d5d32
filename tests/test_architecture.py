"""The layering of Arena's packages, as a rule (read from the source with ``ast``; no import runs).

Layers, lowest first: ``arena_core`` <- ``arena_games``, ``arena_players``, ``arena_tournament``
<- ``arena_train``.

- ``arena_core`` imports no plugin package (``arena_games``, ``arena_players``, ``arena_train``,
  ``arena_tournament``);
- ``arena_games`` and ``arena_players`` do not import ``arena_train`` or ``arena_tournament``;
- ``arena_tournament`` imports only the core: it plays whatever games and players are registered;
- ``arena_train`` imports no game package (``arena_games``): a game's views live with the game;
- no import cycle inside any package;
- a game's rules (``arena_games.<game>.rules``) import none of its views (``text``, ``views``):
  the game's package declares the registered class, a subclass of the rules class whose
  ``text_view``/``views``/``rules_text`` are ordinary method overrides (see ``arena_games/megagem``);
- views are attached that one way: no module assigns a view hook onto a class or object from
  outside (``Game.views = ...``, ``setattr(cls, "text_view", ...)``).

Which imports count:

- layer rules: every import statement, at module level or inside a function (a deferred import
  is still a dependency: it runs the first time the function does) and under
  ``if TYPE_CHECKING:`` (the annotations still name the other layer);
- cycles: imports that run when the module is imported, i.e. at module level (inside ``try``,
  ``if``, ``with`` too), not under ``if TYPE_CHECKING:`` and not inside a function or method.
  A cycle among those is what breaks on a fresh import (a partially initialised module) and
  forces an order on the files; an import inside a function runs after every module is
  loaded, so it cannot fail that way. Function-local imports are therefore the sanctioned
  way to defer a dependency. A cycle that closes only through them (``deferred_cycles``) is
  still a tangle a reader must hold in mind, so each one is listed in :data:`DEFERRED_CYCLES`
  with its reason: a new one fails, and so does an entry that no longer occurs (the list only
  shrinks).

Run on the real tree, and on synthetic trees in ``tmp_path`` that break each rule (the checker
must fail on them).
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGES = ("arena_core", "arena_games", "arena_players", "arena_train", "arena_tournament")
#: (importer, imported) top-level packages that must not be imported
FORBIDDEN = {
    "arena_core": {"arena_games", "arena_players", "arena_train", "arena_tournament"},
    "arena_games": {"arena_train", "arena_tournament"},
    "arena_players": {"arena_train", "arena_tournament"},
    "arena_tournament": {"arena_games", "arena_players", "arena_train"},
    "arena_train": {"arena_games"},
}

#: imports across layers allowed for now, each with its reason (an entry that no longer occurs fails)
KNOWN_LAYER_EXCEPTIONS: dict[tuple[str, str], str] = {}
#: cycles that close only through imports inside functions, each with its reason
DEFERRED_CYCLES = {
    ("arena_core.check_cli", "arena_core.cli"): "`arena check` is registered in the CLI's command table lazily and "
    "reuses the CLI's error handling lazily",
    ("arena_core.replay", "arena_core.testing.checks"): "replay verification reuses the kit's checks and the kit "
    "replays records, each on demand",
}

#: rules modules that still reach their views (inside a method), each with its reason
RULES_REACHING_VIEWS: dict[tuple[str, str], str] = {}
VIEW_MODULES = ("text", "views")
#: a game's view hooks: declared by ordinary method definitions in the registered class, never assigned
VIEW_HOOKS = ("text_view", "views", "rules_text")


@dataclass(frozen=True)
class Import:
    importer: str  # dotted module name
    target: str  # dotted module name (a submodule where ``from x import y`` names one)
    line: int
    module_level: bool  # runs when the importer is imported
    type_only: bool  # under ``if TYPE_CHECKING:``


def modules(root: Path, packages=PACKAGES) -> dict[str, Path]:
    """Dotted name -> file, for every ``.py`` file of ``packages`` under ``root``."""
    out = {}
    for pkg in packages:
        for path in sorted((root / pkg).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(name: str, path: Path, known: set[str]) -> list[Import]:
    """Every import in one module, resolved to dotted names (relative ones too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    base = name.split(".") if is_package else name.split(".")[:-1]
    found: list[Import] = []

    def visit(node: ast.AST, module_level: bool, type_only: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child, False, type_only)
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                for stmt in child.body:
                    visit(ast.Module(body=[stmt], type_ignores=[]), module_level, True)
                for stmt in child.orelse:
                    visit(ast.Module(body=[stmt], type_ignores=[]), module_level, type_only)
            elif isinstance(child, ast.Import):
                for alias in child.names:
                    found.append(Import(name, alias.name, child.lineno, module_level, type_only))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    anchor = base[: len(base) - (child.level - 1)] if child.level > 1 else base
                    module = ".".join(anchor + ([child.module] if child.module else []))
                else:
                    module = child.module or ""
                for alias in child.names:
                    sub = f"{module}.{alias.name}"
                    target = sub if sub in known else module
                    found.append(Import(name, target, child.lineno, module_level, type_only))
            else:
                visit(child, module_level, type_only)

    visit(tree, True, False)
    return found


def all_imports(root: Path, packages=PACKAGES) -> list[Import]:
    mods = modules(root, packages)
    known = set(mods)
    return [imp for name, path in mods.items() for imp in imports(name, path, known)]


def layer_violations(found: list[Import], allowed=()) -> list[str]:
    out = []
    for imp in found:
        src, dst = imp.importer.split(".")[0], imp.target.split(".")[0]
        if dst in FORBIDDEN.get(src, ()) and (imp.importer, dst) not in allowed:
            how = "type-only" if imp.type_only else ("module level" if imp.module_level else "inside a function")
            out.append(f"{imp.importer}:{imp.line} imports {imp.target} ({how}): {src} must not import {dst}")
    return out


def rules_importing_views(found: list[Import], allowed=()) -> list[str]:
    out = []
    for imp in found:
        parts, target = imp.importer.split("."), imp.target.split(".")
        if (
            len(parts) == 3
            and parts[0] == "arena_games"
            and parts[2] == "rules"
            and not imp.type_only
            and target[:2] == parts[:2]
            and len(target) == 3
            and target[2] in VIEW_MODULES
            and (imp.importer, imp.target) not in allowed
        ):
            out.append(f"{imp.importer}:{imp.line} imports its view {imp.target}: attach views in the game's package")
    return out


def view_hooks_assigned(root: Path, packages=PACKAGES) -> list[str]:
    """Every assignment of a view hook onto an object (``X.views = f``, ``setattr(X, "views", f)``),
    the old way of attaching views from a package ``__init__``."""
    out = []
    for name, path in modules(root, packages).items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                targets = [node.target]
            hooks = [t.attr for t in targets if isinstance(t, ast.Attribute) and t.attr in VIEW_HOOKS]
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "setattr"
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and node.args[1].value in VIEW_HOOKS
            ):
                hooks.append(node.args[1].value)
            out.extend(
                f"{name}:{node.lineno} assigns {hook}: declare it as a method of the registered game class"
                for hook in hooks
            )
    return out


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (or a self-import), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    comps: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in edges.get(v, ()):
                comps.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            strong(v)
    return sorted(comps)


def cycles(found: list[Import], *, include_deferred: bool = False) -> list[list[str]]:
    """Import cycles inside each package (edges between modules of the same top-level package)."""
    edges: dict[str, set[str]] = {}
    for imp in found:
        if imp.type_only or not (imp.module_level or include_deferred):
            continue
        if imp.importer.split(".")[0] != imp.target.split(".")[0] or imp.importer == imp.target:
            continue
        edges.setdefault(imp.importer, set()).add(imp.target)
    return _cycles(edges)


def deferred_cycles(found: list[Import]) -> list[list[str]]:
    """Cycles that close only through imports inside functions (allowed; see the module docstring)."""
    strict = cycles(found)
    return [c for c in cycles(found, include_deferred=True) if not any(set(c) <= set(s) for s in strict)]


# ---------------------------------------------------------------------------------- the real tree


@pytest.fixture(scope="module")
def real() -> list[Import]:
    return all_imports(SRC)


def test_the_checker_sees_the_real_tree(real):
    importers = {imp.importer.split(".")[0] for imp in real}
    assert set(PACKAGES) <= importers
    assert any(imp.target == "arena_core.game" for imp in real)  # relative and absolute imports resolved


def test_layers_hold(real):
    bad = layer_violations(real, KNOWN_LAYER_EXCEPTIONS)
    assert not bad, "layer rule broken:\n" + "\n".join(bad)


def test_known_layer_exceptions_still_occur(real):
    seen = {(imp.importer, imp.target.split(".")[0]) for imp in real}
    stale = [k for k in KNOWN_LAYER_EXCEPTIONS if k not in seen]
    assert not stale, f"no longer occur, remove from KNOWN_LAYER_EXCEPTIONS: {stale}"


def test_rules_import_none_of_their_views(real):
    bad = rules_importing_views(real, RULES_REACHING_VIEWS)
    assert not bad, "\n".join(bad)
    seen = {(imp.importer, imp.target) for imp in real}
    stale = [k for k in RULES_REACHING_VIEWS if k not in seen]
    assert not stale, f"no longer occur, remove from RULES_REACHING_VIEWS: {stale}"


def test_views_are_declared_not_assigned():
    bad = view_hooks_assigned(SRC)
    assert not bad, "\n".join(bad)


def test_no_import_cycles_inside_a_package(real):
    found = cycles(real)
    assert not found, "import cycles (module-level imports):\n" + "\n".join(" <-> ".join(c) for c in found)


def test_cycles_through_deferred_imports_are_the_listed_ones(real):
    found = {tuple(c) for c in deferred_cycles(real)}
    new = sorted(found - set(DEFERRED_CYCLES))
    stale = sorted(set(DEFERRED_CYCLES) - found)
    assert not new, (
        "new import cycles through imports inside functions (untangle, or list with a reason):\n"
        + "\n".join(" <-> ".join(c) for c in new)
    )
    assert not stale, f"no longer cycles, remove from DEFERRED_CYCLES: {stale}"


# ------------------------------------------------------------------- the checker fails on violations


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for pkg in PACKAGES:
        (root / pkg).mkdir(exist_ok=True)
        (root / pkg / "__init__.py").touch()
    return root


def test_a_core_module_importing_a_plugin_fails(tmp_path):
    root = _tree(
        tmp_path,
        {
            "arena_core/game.py": "import os\n",
            "arena_core/registry.py": "def load():\n    from arena_games.kuhn import rules\n",
            "arena_games/kuhn/__init__.py": "",
            "arena_games/kuhn/rules.py": "from arena_core.game import Game\n",
        },
    )
    bad = layer_violations(all_imports(root))
    assert bad == [
        "arena_core.registry:2 imports arena_games.kuhn.rules (inside a function): "
        "arena_core must not import arena_games"
    ]


@pytest.mark.parametrize(
    "importer, line, forbidden",
    [
        ("arena_games/x.py", "from arena_train import grpo\n", "arena_train"),
        ("arena_players/x.py", "import arena_train.rollout as r\n", "arena_train"),
        ("arena_train/x.py", "from arena_games.megagem.rules import Action\n", "arena_games"),
        (
            "arena_train/y.py",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from arena_games.kuhn import rules\n",
            "arena_games",
        ),
        ("arena_core/x.py", "from arena_players import random_player\n", "arena_players"),
    ],
)
def test_each_layer_rule_fails_on_a_violation(tmp_path, importer, line, forbidden):
    root = _tree(tmp_path, {importer: line})
    bad = layer_violations(all_imports(root))
    assert len(bad) == 1 and bad[0].endswith(f"must not import {forbidden}"), bad


def test_allowed_directions_pass(tmp_path):
    root = _tree(
        tmp_path,
        {
            "arena_train/x.py": "from arena_players import random_player\nimport arena_core.game\n",
            "arena_games/x.py": "from arena_core import game\n",
            "arena_players/x.py": "from arena_core.game import Game\n",
        },
    )
    assert layer_violations(all_imports(root)) == []


def test_a_module_level_cycle_fails_and_a_relative_one_is_resolved(tmp_path):
    root = _tree(
        tmp_path,
        {
            "arena_games/mg/__init__.py": "",
            "arena_games/mg/rules.py": "from .observe import view\n",
            "arena_games/mg/observe.py": "from . import text\n",
            "arena_games/mg/text.py": "from arena_games.mg.rules import Action\n",
            "arena_core/game.py": "try:\n    from arena_core.text import Prompt\nexcept ImportError:\n    pass\n",
            "arena_core/text.py": "import arena_core.game\n",
        },
    )
    assert cycles(all_imports(root)) == [
        ["arena_core.game", "arena_core.text"],
        ["arena_games.mg.observe", "arena_games.mg.rules", "arena_games.mg.text"],
    ]


def test_deferred_and_type_only_imports_close_no_cycle(tmp_path):
    root = _tree(
        tmp_path,
        {
            "arena_core/game.py": "from arena_core.text import Prompt\n",
            "arena_core/text.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from arena_core.game import Game\n"
                "def f():\n    from arena_core import game\n"
            ),
        },
    )
    found = all_imports(root)
    assert cycles(found) == []
    assert deferred_cycles(found) == [["arena_core.game", "arena_core.text"]]


def test_a_listed_exception_covers_only_its_own_module(tmp_path):
    root = _tree(
        tmp_path,
        {
            "arena_players/checkpoint.py": "def load():\n    import arena_train.lm\n",
            "arena_players/other.py": "def load():\n    import arena_train.lm\n",
        },
    )
    listed = {("arena_players.checkpoint", "arena_train"): "a listed exception, for this test"}
    bad = layer_violations(all_imports(root), listed)
    assert len(bad) == 1 and bad[0].startswith("arena_players.other:2"), bad


def test_rules_reaching_a_view_fail_even_inside_a_method(tmp_path):
    root = _tree(
        tmp_path,
        {
            "arena_games/g/__init__.py": "",
            "arena_games/g/rules.py": "class G:\n    def text_view(self):\n        from .text import V\n        return V()\n",
            "arena_games/g/text.py": "from .rules import G\n",
            "arena_games/g/views.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .rules import G\n",
        },
    )
    assert rules_importing_views(all_imports(root)) == [
        "arena_games.g.rules:3 imports its view arena_games.g.text: attach views in the game's package"
    ]


def test_assigning_a_view_hook_fails(tmp_path):
    root = _tree(
        tmp_path,
        {
            "arena_games/g/__init__.py": (
                "from .rules import G\nfrom .text import V, rules_text\n"
                "G.text_view = lambda self: V()\nsetattr(G, 'rules_text', rules_text)\n"
            ),
            "arena_games/g/rules.py": "class G:\n    pass\n",
            "arena_games/h/__init__.py": (
                "from . import rules\nfrom .text import V\n\n"
                "class H(rules.H):\n    def text_view(self):\n        return V()\n"
            ),
        },
    )
    assert view_hooks_assigned(root) == [
        "arena_games.g:3 assigns text_view: declare it as a method of the registered game class",
        "arena_games.g:4 assigns rules_text: declare it as a method of the registered game class",
    ]
