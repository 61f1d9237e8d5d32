"""GRPO's session, alone: the built parts of one run (:class:`GRPOSession`: game, view, model,
optimizer, evaluation deals) and what changes as it trains (:class:`GRPOState`), with the
players a session makes (the learner's policy, pool opponents, evaluation anchors).
:mod:`arena_train.grpo` builds and runs them; :mod:`arena_train.grpo_checkpoint` saves and
restores them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import mlx.optimizers as optim
from mlx.nn.layers.base import Module  # not re-exported by mlx.nn for a type checker

from arena_core.game import Game
from arena_core.players import Player
from arena_core.registry import make_player
from arena_core.seeding import derive_seed

from .compiled import CompiledGame, ReachAverage
from .config import GRPOConfig
from .exact import InfoState, PolicyTable
from .grpo_rollout import Baselines, Pool, PoolEntry
from .lm import LMPolicy, PromptCache, SnapshotPlayer, Weights
from .lm_engine import Engine
from .rollout import RewardSpec
from .text_policy import TextPolicy
from .views import CompactView, Tokenizer


@dataclass
class GRPOState:
    """What changes as GRPO trains, besides the weights and the optimizer's moments; a checkpoint
    keeps all of it. ``reference``: the frozen initial weights (the KL term's magnet unless
    ``magnet_every``, and the ``initial`` anchor); ``eval_baseline``: the initial policy's per-deal
    evaluation values; ``policy_tables``: the sampling policy at each evaluation (exploitability)."""

    reference: Weights
    magnet: Weights
    pool: Pool
    baselines: Baselines
    step: int = 0
    episodes_total: int = 0
    eval_baseline: list[float] | None = None
    policy_tables: list[PolicyTable] = field(default_factory=list)
    policy_table_steps: list[int] = field(default_factory=list)
    average: ReachAverage | None = None  # with eval.snapshot_every: the snapshots' average, on the compiled game
    no_signal_steps: int = 0  # steps in a row whose every advantage was zero (the stall guard's count)
    stalled_at: list[int] = field(default_factory=list)  # steps where the stall guard warned


@dataclass
class GRPOSession:
    """The built parts of one run and its state: what every stage function reads."""

    config: GRPOConfig
    game: Game[Any, Any]
    view: CompactView
    model: Module
    tokenizer: Tokenizer
    optimizer: optim.Optimizer
    reward: RewardSpec
    eval_deals: list[int]
    eval_weights: list[float] | None
    infos: list[InfoState] | None
    tree: CompiledGame | None  # the game as arrays, with eval.snapshot_every
    state: GRPOState
    prompts: PromptCache  # token ids of the prompts seen so far, for every policy of the run

    @property
    def engine(self) -> Engine:
        return Engine(self.config.engine)

    def policy(self, *, temperature: float | None = None, weights: Weights | None = None) -> LMPolicy | TextPolicy:
        """The learner (the training temperature unless given; ``weights``: a frozen snapshot's):
        over the view's menu, or with ``view = "text"`` in the title's own action strings."""
        cfg = self.config
        if cfg.view == "text":
            t = cfg.temperature if temperature is None else temperature
            return TextPolicy(self.model, self.tokenizer, temperature=t, weights=weights)
        return LMPolicy(
            self.model,
            self.tokenizer,
            self.view,
            temperature=cfg.temperature if temperature is None else temperature,
            include_illegal=cfg.action_space == "all",
            weights=weights,
            engine=self.engine,
            cache=self.prompts,
        )

    def opponent(self, entry: PoolEntry, seed: int) -> Player:
        """The player of a pool entry: a registered player, or a frozen snapshot of the learner."""
        if isinstance(entry, tuple):
            return SnapshotPlayer(
                self.policy(temperature=self.config.pool.snapshot_temperature, weights=entry[1]), seed=seed
            )
        return make_player(entry, seed=seed)

    def anchor(self, seat: int, learner_seat: int, salt: int = 0) -> Player:
        """An evaluation anchor in ``seat`` (``salt`` 1: reseeded, to test it is deterministic)."""
        anchor = self.config.eval.anchor
        seed = derive_seed(self.config.seed, "anchor", seat, *((salt,) if salt else ()))
        if anchor == "initial":
            return SnapshotPlayer(self.policy(temperature=0.0, weights=self.state.reference), seed=seed)
        return make_player(anchor, seed=seed)
