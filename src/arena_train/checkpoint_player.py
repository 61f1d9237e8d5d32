"""A trained checkpoint as an arena player: ``checkpoint:run=RUN_DIR[,step=N][,temperature=T]``.

Loads the trainable weights any language-model trainer wrote (GRPO, expert iteration) from
``RUN_DIR/checkpoints/step_NNNNNN/`` (the latest step unless ``step`` is given; ``run`` may
also name the checkpoint directory itself), rebuilds the model the run's config names, and
answers through the game's own compact view (``Game.views()``; the menu view for a run
trained with ``view = "menu"``; for ``view = "text"`` the game's text view, answered in the title's
own action strings under constrained decoding, as it trained). ``temperature`` 0 (the default) plays the most likely
answer; ``temperature=train`` samples at the run's training temperature (the policy GRPO
optimised), from the decision's seeded generator.

A directory whose ``config.json`` names a ``"kind"`` holds another kind of policy, loaded by the
function an installed distribution registers under that name in the ``arena.checkpoints``
entry-point group (``load(directory) -> chooser(decision, rng)``; the chooser plays greedily when
given no generator). The games distribution registers ``megagem_residual``, a numpy MegaGem student
over the expert's bid (:mod:`arena_games.megagem.residual`, issue 30), which needs no MLX:
``checkpoint:run=models/megagem-student``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from arena_core.errors import ConfigError, PlayerError
from arena_core.game import Game
from arena_core.players import BasePlayer, Decision

if TYPE_CHECKING:
    from mlx.nn.layers.base import Module

    from arena_train.lm import LMPolicy
    from arena_train.text_policy import TextPolicy
    from arena_train.views import Tokenizer


def find_checkpoint(run: str | Path, step: int | None = None) -> Path:
    """The checkpoint directory of ``run`` at ``step`` (latest if None); one clear line otherwise."""
    path = Path(run)
    if (path / "state.json").exists() and step is None:
        return path
    ckpts = path / "checkpoints"
    if not path.exists():
        raise ConfigError(f"checkpoint player: run directory {str(path)!r} does not exist")
    found = sorted(p for p in ckpts.glob("step_*") if (p / "state.json").exists()) if ckpts.exists() else []
    if not found:
        raise ConfigError(
            f"checkpoint player: {str(path)!r} holds no checkpoints/step_*/ (train with checkpoint_every, or name a checkpoint directory)"
        )
    if step is None:
        return found[-1]
    want = ckpts / f"step_{int(step):06d}"
    if want not in found:
        steps = ", ".join(str(int(p.name[5:])) for p in found)
        raise ConfigError(f"checkpoint player: {str(path)!r} has no step {step}; steps saved: {steps}")
    return want


#: entry-point group of checkpoint kinds: ``kind = "module:load"``, ``load(directory)`` returning a
#: chooser ``(decision, rng or None) -> action`` for a directory whose config.json names that kind
CHECKPOINTS_GROUP = "arena.checkpoints"


def checkpoint_kind(directory: str | Path) -> str | None:
    """The ``"kind"`` a checkpoint directory's config.json names, or None (a language-model run)."""
    path = Path(directory) / "config.json"
    if not path.is_file():
        return None
    try:
        kind = json.loads(path.read_text(encoding="utf-8")).get("kind")
    except (OSError, ValueError, AttributeError):
        return None
    return kind if isinstance(kind, str) else None


def load_checkpoint_kind(kind: str, directory: Path) -> Callable[[Decision, np.random.Generator | None], Any]:
    import importlib.metadata as md

    found = {ep.name: ep for ep in md.entry_points(group=CHECKPOINTS_GROUP)}
    if kind not in found:
        known = ", ".join(sorted(found)) or "none"
        raise ConfigError(
            f"checkpoint player: {str(directory)!r} holds a {kind!r} policy, which no installed distribution "
            f"loads (installed kinds: {known})"
        )
    load: Callable[[Path], Callable[[Decision, np.random.Generator | None], Any]] = found[kind].load()
    return load(directory)


class CheckpointPlayer(BasePlayer):
    """Plays a trained language-model checkpoint (see the module docstring)."""

    name = "checkpoint"

    def __init__(self, seed: int = 0, run: str | None = None, step: int | None = None, temperature: Any = 0.0):
        super().__init__(seed)
        if not run:
            raise ConfigError(
                "checkpoint player needs run=RUN_DIR (a training run directory or a checkpoint directory)"
            )
        kind = checkpoint_kind(run)
        self._chooser: Callable[[Decision, np.random.Generator | None], Any] | None = None
        if kind is not None:
            if step is not None:
                raise ConfigError(f"checkpoint player: {str(run)!r} is a single {kind} policy; drop step=")
            self.path = Path(run)
            self.checkpoint = str(self.path)
            self.state = json.loads((self.path / "config.json").read_text(encoding="utf-8"))
            self.game_id, self.step, self.view_name = self.state.get("game"), int(self.state.get("step", 0)), kind
            try:
                self.temperature = 1.0 if temperature == "train" else float(temperature)
            except (TypeError, ValueError):
                raise ConfigError(
                    f"checkpoint player: temperature={temperature!r} must be a number or 'train'"
                ) from None
            self._chooser = load_checkpoint_kind(kind, self.path)
            return
        import importlib.util

        if importlib.util.find_spec("mlx") is None:
            raise ConfigError(
                f"checkpoint player: {str(run)!r} is a language-model run, which needs MLX: "
                "pip install 'turn-arena-train[mlx]'"
            )
        self.path = find_checkpoint(run, step)
        self.checkpoint = str(self.path)  # recorded in a tournament's player identity
        state = json.loads((self.path / "state.json").read_text())
        self.state = state
        cfg = state.get("config", {})
        self.game_id = cfg.get("game")
        self.step = int(state.get("step", 0))
        self.view_name = cfg.get("view", "auto")
        if temperature == "train":
            temperature = float(cfg.get("temperature", 1.0))
        try:
            self.temperature = float(temperature)
        except (TypeError, ValueError):
            raise ConfigError(f"checkpoint player: temperature={temperature!r} must be a number or 'train'") from None
        self._loaded: tuple[Module, Tokenizer] | None = None
        self._policies: dict[int, LMPolicy | TextPolicy] = {}
        self._model_cfg = cfg.get("model", {})

    def _load(self) -> tuple[Module, Tokenizer]:
        if self._loaded is None:
            from arena_train.config import ModelConfig
            from arena_train.lm import load_flat, load_trainables, trainable_model

            model_cfg = ModelConfig(**self._model_cfg)
            model, tok = trainable_model(model_cfg, seed=0)
            load_trainables(model, load_flat(self.path / "trainable.safetensors"))
            self._loaded = model, tok
        return self._loaded

    def policy_for(self, game: Game[Any, Any]) -> LMPolicy | TextPolicy:
        """The policy this player decides with on ``game`` (built once): an
        :class:`arena_train.lm.LMPolicy` over the compact (or menu) view's menu, or for a run trained
        with ``view = "text"`` an :class:`arena_train.text_policy.TextPolicy` answering in the
        title's action strings."""
        if self.game_id and game.spec.id != self.game_id:
            raise PlayerError(f"checkpoint {self.path} was trained on {self.game_id!r}, not {game.spec.id!r}")
        pol = self._policies.get(id(game))
        if pol is None:
            from arena_train.lm import LMPolicy
            from arena_train.views import compact_view, menu_view

            model, tok = self._load()
            if self.view_name == "text":
                from arena_train.text_policy import TextPolicy

                pol = self._policies[id(game)] = TextPolicy(model, tok, temperature=self.temperature)
                return pol
            view = menu_view(game) if self.view_name == "menu" else compact_view(game)
            pol = self._policies[id(game)] = LMPolicy(model, tok, view, temperature=self.temperature)
        return pol

    def act(self, decision: Decision) -> Any:
        if self._chooser is not None:
            if self.game_id and decision.game.spec.id != self.game_id:
                raise PlayerError(
                    f"checkpoint {self.path} was trained on {self.game_id!r}, not {decision.game.spec.id!r}"
                )
            rng = decision.rng("checkpoint", self.seed) if self.temperature > 0 else None
            return self._chooser(decision, rng)
        from arena_train.rollout import Request

        policy = self.policy_for(decision.game)
        key = int(decision.rng("checkpoint", self.seed).integers(0, 2**62))
        choice = decision.view_with(lambda game, pos, seat: policy.decide([Request(game, pos, seat, 0, key)])[0])
        if choice.action is None:
            raise PlayerError(f"checkpoint {self.path} chose a menu entry that is not legal here")
        return choice.action
