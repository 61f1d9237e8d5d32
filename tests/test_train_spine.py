"""The trainer spine (issue 45 point 1): every registered trainer is the core's declared
``Trainer`` (the registry refuses anything else, naming the protocol), the run directory is
claimed once, and ``arena_train``'s functions stay short (measured with ``ast``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from arena_core.cli import summary
from arena_core.errors import ConfigError, PluginProtocolError
from arena_core.registry import Trainer, _validate_trainer, list_plugins, load
from arena_train.run import RunDir

SRC = Path(__file__).resolve().parents[1] / "src" / "arena_train"
#: the longest function arena_train may hold (issue 45's done-when: under 80 lines)
MAX_FUNCTION_LINES = 79


def test_every_registered_trainer_is_the_declared_protocol():
    names = {p.name for p in list_plugins("trainers")}
    assert {"grpo", "expert_iteration", "policy_gradient", "selfplay_pg"} <= names
    lines = set()
    for name in sorted(names):
        trainer = load("trainers", name)
        assert isinstance(trainer, Trainer) and trainer.name == name
        lines.add(summary(trainer))  # what `arena list trainers` says of it: its train function's docstring
    assert len(lines) == len(names) and not any(line.startswith("A trainer function") for line in lines)


class OldStyle:  # a trainer class whose constructor did the work (the shape issue 45 removed)
    def __init__(self, config, run_dir, progress=None): ...

    def run(self): ...


@pytest.mark.parametrize("obj", [OldStyle, lambda config, run_dir: None, "grpo"], ids=["class", "function", "text"])
def test_the_registry_refuses_what_is_not_a_trainer_naming_the_protocol(obj):
    with pytest.raises(PluginProtocolError, match=r"arena_core\.registry\.Trainer"):
        _validate_trainer("mine", obj)


def test_a_run_directory_is_claimed_once(tmp_path):
    run = RunDir.claim(tmp_path / "r")
    run.metrics.append({"step": 0})
    with pytest.raises(ConfigError, match="already holds a run"):
        RunDir.claim(tmp_path / "r")
    run.save_state(1, {"step": 1})
    again = RunDir.claim(tmp_path / "r", resume=tmp_path / "r")  # its own latest checkpoint
    assert again.resume == tmp_path / "r" / "checkpoints" / "step_000001"
    assert again.resumed_metrics(1) == [{"step": 0}]
    with pytest.raises(ConfigError, match="neither a checkpoint"):
        RunDir.claim(tmp_path / "new", resume=tmp_path / "nothing")


def function_lengths(root: Path = SRC) -> dict[str, int]:
    """``module:function`` -> lines from its ``def`` to its last line, for every function and method."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out[f"{path.stem}:{node.name}@{node.lineno}"] = (node.end_lineno or node.lineno) - node.lineno + 1
    return out


def test_arena_train_functions_are_under_80_lines():
    longest = sorted(function_lengths().items(), key=lambda kv: -kv[1])[:3]
    assert longest[0][1] <= MAX_FUNCTION_LINES, f"arena_train's longest functions: {longest}"


def test_the_length_count_sees_a_long_function(tmp_path):
    (tmp_path / "m.py").write_text("def f():\n" + "    x = 1\n" * 90 + "\n\nclass C:\n    def g(self):\n        pass\n")
    assert function_lengths(tmp_path) == {"m:f@1": 91, "m:g@95": 2}


def game_names() -> set[str]:
    """Every registered game id and every player a game package ships (its bots)."""
    games = {p.name for p in list_plugins("games")}
    bots = {p.name for p in list_plugins("players") if p.value.startswith("arena_games.")}
    return games | bots


def named_games(root: Path, names: set[str]) -> list[str]:
    """String constants of the code (docstrings left out) that are a game id or a game's bot."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text())
        docstrings = {
            id(n.body[0].value)
            for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and n.body
            and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                if node.value in names:
                    found.append(f"{path.name}:{node.lineno}: {node.value!r}")
    return found


def test_arena_train_names_no_game():
    """Issue 45 point 6: the game, its expert, the opponents and the tiny model's corpus come from the
    config (or the games' own plugins), never from a table of ids in the trainer package."""
    names = game_names()
    assert {"kuhn_poker", "megagem", "megagem_expert", "textarena/KuhnPoker-v0"} <= names
    assert not named_games(SRC, names), named_games(SRC, names)


def test_the_game_name_scan_catches_a_default_game(tmp_path):
    (tmp_path / "m.py").write_text('"""Trains megagem."""\nGAME = "megagem"\nTINY = ("kuhn_poker",)\n')
    assert named_games(tmp_path, game_names()) == ["m.py:2: 'megagem'", "m.py:3: 'kuhn_poker'"]
