"""Views are the game's: ``Game.views()`` supplies them, players and trainers look them up."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

from arena_core.errors import ConfigError
from arena_core.registry import make_game
from arena_core.views import Menu, MenuView, get_view
from arena_games.kuhn.rules import KuhnPoker
from arena_games.kuhn.views import KuhnCompactView
from arena_games.megagem.views import MegaGemCompactView

TRAIN_SRC = Path(__file__).resolve().parents[1] / "src" / "arena_train"


def test_every_game_has_text_and_menu_views():
    for game_id in ("kuhn_poker", "megagem"):
        game = make_game(game_id)
        views = game.views()
        assert {"text", "menu"} <= set(views)
        assert type(views["text"]()) is type(game.text_view())
        assert isinstance(views["menu"](), MenuView)


def test_kuhn_and_megagem_bring_their_compact_views():
    assert isinstance(get_view(make_game("kuhn_poker"), "compact"), KuhnCompactView)
    assert isinstance(get_view(make_game("megagem"), "compact"), MegaGemCompactView)


def test_a_missing_view_names_the_views_the_game_has():
    with pytest.raises(
        ConfigError, match=r"no 'storybook' view; it has \['compact', 'human', 'menu', 'text', 'transcript'\]"
    ):
        get_view(make_game("kuhn_poker"), "storybook")
    assert isinstance(get_view(make_game("kuhn_poker"), "storybook", fallback="menu"), MenuView)


@dataclass(frozen=True)
class ShoutView:
    def menu(self, game, pos, player, *, include_illegal=False):
        actions = tuple(game.legal(pos, player))
        return Menu(f"SHOUT {player}", actions, tuple("xy"[: len(actions)]), (True,) * len(actions))


class ThirdPartyKuhn(KuhnPoker):
    """A game from elsewhere: its compact view comes with it, no table to edit."""

    def views(self):
        return {**super().views(), "compact": ShoutView}


def test_a_third_party_games_own_view_reaches_the_trainer():
    from arena_train.views import compact_view, menu_view

    game = ThirdPartyKuhn()
    assert isinstance(compact_view(game), ShoutView)
    assert isinstance(menu_view(game), MenuView)
    # a game without a compact view gets the menu view
    from arena_core.game import Game

    class Plain(KuhnPoker):
        def views(self):
            return Game.views(self)

    assert isinstance(compact_view(Plain()), MenuView)


def test_arena_train_holds_no_game_code():
    for path in TRAIN_SRC.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                assert not (node.module or "").startswith("arena_games"), f"{path.name} imports {node.module}"
            if isinstance(node, ast.Import):
                assert not any(a.name.startswith("arena_games") for a in node.names), f"{path.name} imports a game"
            if isinstance(node, ast.ClassDef):
                assert "Kuhn" not in node.name and "MegaGem" not in node.name, f"{path.name} defines {node.name}"


def test_grpo_uses_the_games_view(tmp_path):
    pytest.importorskip("mlx.core")
    from arena_train import grpo
    from arena_train.run import RunDir
    from arena_train.trainer import Parts

    def session(run_dir, **over):
        cfg = dict(game="kuhn_poker", steps=1, self_play=True, eval=dict(anchor="kuhn_king_only"), plot=False)
        return grpo.start(grpo.TRAINER.parse({**cfg, **over}), RunDir.claim(run_dir), Parts())

    assert isinstance(session(tmp_path / "r").view, KuhnCompactView)
    assert isinstance(session(tmp_path / "m", view="menu").view, MenuView)


def test_the_registered_class_is_the_rules_class_with_its_views():
    """Views are declared one way: the class an entry point names is a subclass of the rules
    class whose view hooks are ordinary methods; the rules class alone has the generic views."""
    from arena_core.registry import game_class
    from arena_games.matrix import rules as matrix_rules
    from arena_games.megagem import rules as megagem_rules
    from arena_games.textarena import TextArenaGame

    generic = {"menu", "text", "transcript", "human"}  # human: registered for every game by turn-arena-players
    for game_id, rules_class, views in (
        ("kuhn_poker", KuhnPoker, generic | {"compact"}),
        ("megagem", megagem_rules.MegaGem, generic | {"compact", "residual"}),
        ("matrix", matrix_rules.MatrixGame, generic),
        ("textarena/KuhnPoker-v0", TextArenaGame, generic | {"compact"}),
    ):
        cls = game_class(game_id)
        assert issubclass(cls, rules_class) and cls is not rules_class, game_id
        assert set(make_game(game_id).views()) == views, game_id
    assert set(KuhnPoker().views()) == generic  # the rules class alone
    assert type(megagem_rules.MegaGem().text_view()) is not type(make_game("megagem").text_view())
