"""Validated trainer configs (pydantic): every field typed and bounded, unknown keys rejected,
so a typo in a config file fails with the field's name instead of being ignored. A player spec
is a :data:`~arena_core.playerspec.PlayerSpecField` (parsed once, here, from any spelling); an
evaluation anchor is the word ``"initial"`` or a spec (:data:`Anchor`). No config names a game
by default: the game, its expert and its opponents come from the config."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)

from arena_core.errors import ConfigError
from arena_core.playerspec import PlayerSpecField

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    #: fields added after runs were recorded: written only when they differ from their default, so a
    #: config that does not use them keeps the run id (a hash of the written config) it had before
    LATER_FIELDS: ClassVar[frozenset[str]] = frozenset()

    @model_serializer(mode="wrap")
    def _later_fields_only_when_set(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        fields = type(self).model_fields
        return {
            k: v
            for k, v in data.items()
            if k not in self.LATER_FIELDS or getattr(self, k) != fields[k].get_default(call_default_factory=True)
        }


#: an evaluation anchor: the learner's own frozen initial weights, or a registered player
Anchor = Literal["initial"] | PlayerSpecField


class RunConfig(_Strict):
    """The base of every trainer's config (its ``trainer`` key names the registered trainer)."""

    def resume_checkpoint(self) -> str | None:
        """The checkpoint (or run directory) this run continues, if any."""
        return None


class ModelConfig(_Strict):
    LATER_FIELDS: ClassVar[frozenset[str]] = frozenset({"tiny_games"})
    path: str = Field(default="tiny", description="'tiny' (offline test model) or a local mlx-lm model directory")
    tiny_games: list[str] | None = Field(
        default=None,
        description="with path 'tiny': the games whose text trains its tokenizer (None: the tiny model's own "
        "default corpus, arena_players.tiny_model)",
    )
    finetune: Literal["full", "lora"] = Field(
        default="full", description="full fine-tuning (right for the tiny model) or LoRA (real models)"
    )
    lora_layers: int = Field(default=4, ge=1)
    lora_rank: int = Field(default=8, ge=1)
    lora_scale: float = Field(default=20.0, gt=0)


class OptimConfig(_Strict):
    optimizer: Literal["adamw", "sgd"] = Field(
        default="adamw", description="GRPO: AdamW, or plain SGD (step = learning rate x gradient; no momentum)"
    )
    learning_rate: float = Field(default=1e-3, gt=0)
    beta1: float = Field(
        default=0.9,
        ge=0,
        lt=1,
        description="GRPO: AdamW's first-moment decay (0: no momentum, RMSprop-like steps; momentum feeds the cycling "
        "of self-play in a zero-sum game)",
    )
    warmup_steps: int = Field(
        default=0,
        ge=0,
        description="GRPO: raise the learning rate linearly from 0 over this many updates first, then follow "
        "the schedule over the rest (AdamW's first steps move every weight by about the learning rate)",
    )
    weight_decay: float = Field(default=0.0, ge=0)
    grad_accum: int = Field(default=1, ge=1, description="micro-batches whose gradients are summed per update")
    max_grad_norm: float = Field(default=1.0, gt=0)
    schedule: Literal["constant", "linear"] = Field(
        default="constant", description="'linear': decay the learning rate to 0 over the run's updates"
    )


class RewardConfig(_Strict):
    kind: Literal["outcome", "win", "margin", "round"] = Field(
        default="outcome",
        description="the game's outcome (own return), +1/-1/0 for a win, the squashed margin, or 'round': the "
        "rewards of the rounds the game settles (Game.round_rewards, e.g. a Liar's dice call), per decision its "
        "own round's with advantage = 'per_decision' (the evaluation still judges by the outcome)",
    )
    margin_scale: float = Field(default=10.0, gt=0)
    first_bonus: float = Field(default=0.1, ge=0)
    illegal_penalty: float = Field(
        default=1.0, ge=0, description="subtracted per illegal or unparseable learner action"
    )


class PoolConfig(_Strict):
    players: list[PlayerSpecField] = Field(
        default_factory=list, description="registered player specs (scripted bots, any player)"
    )
    snapshot_every: int = Field(
        default=0, ge=0, description="add a frozen copy of the learner every N steps (0: never)"
    )
    max_snapshots: int = Field(default=4, ge=1)
    snapshot_temperature: float = Field(default=0.0, ge=0)


class EvalConfig(_Strict):
    LATER_FIELDS: ClassVar[frozenset[str]] = frozenset({"snapshot_every", "at", "games"})
    anchor: Anchor = Field(
        ..., description="a registered player spec, or 'initial' (the learner's frozen initial weights)"
    )
    every: int = Field(default=0, ge=0, description="evaluate every N steps (0: only at the start and the end)")
    deals: int = Field(default=64, ge=1, description="held-out deals; each is played once per learner seat")
    bootstrap: int = Field(default=2000, ge=100)
    silent_threshold: float = Field(
        default=0.2,
        ge=0,
        le=1,
        description="refuse to report a run whose learner answers are illegal/unparseable above this rate",
    )
    exploitability: bool = Field(
        default=False,
        description="also compute the exact exploitability of the learner's (sampling) policy and of its "
        "average over the evaluations so far (two-player games that enumerate their deals, e.g. Kuhn poker)",
    )
    average: Literal["uniform", "linear"] = Field(
        default="uniform",
        description="how the average policy weighs its evaluation snapshots (each also by its own reach): "
        "equally, or in proportion to the step it was taken at (the initial policy then weighs nothing)",
    )
    snapshot_every: int = Field(
        default=0,
        ge=0,
        description="with exploitability: 0 takes the average's snapshots at the evaluations (exact tables); N takes "
        "one every N steps (and the initial policy), summed on the game compiled to arrays (arena_train.compiled: "
        "fast enough for Leduc poker), where both exploitabilities are then computed",
    )
    at: list[int] = Field(
        default_factory=list, description="steps to evaluate at besides every N and the last (e.g. log-spaced marks)"
    )
    games: bool = Field(
        default=True,
        description="play the anchor games at each evaluation (false: only the exact exploitability, which needs "
        "exploitability = true; the silent-player guard then has no answers to count)",
    )

    @model_validator(mode="after")
    def _snapshots_need_exploitability(self) -> EvalConfig:
        if not self.games and not self.exploitability:
            raise ValueError("eval.games = false leaves nothing to evaluate; set exploitability = true")
        if self.snapshot_every and not self.exploitability:
            raise ValueError(
                "eval.snapshot_every keeps the average policy for the exploitability; set exploitability = true"
            )
        return self


class GRPOConfig(RunConfig):
    LATER_FIELDS: ClassVar[frozenset[str]] = frozenset({"resample_flat", "stall_steps", "on_stall"})
    trainer: Literal["grpo"] = "grpo"
    name: str = "grpo"
    game: str
    game_params: dict[str, Any] = Field(default_factory=dict)
    num_players: int | None = None
    view: Literal["auto", "menu", "text"] = Field(
        default="auto",
        description="'auto': the game's compact view when we have one; 'text': the game's text view answered in the "
        "title's own action strings under constrained decoding (what an OpenAI-compatible player reads and answers)",
    )
    seed: int = Field(default=0, ge=0)
    steps: int = Field(..., ge=1)
    deals_per_step: int = Field(default=4, ge=1)
    seats: Literal["all", "rotate"] = Field(
        default="all", description="each deal with the learner in every seat, or one seat rotating"
    )
    self_play: bool = Field(
        default=False, description="the learner sits in every seat at once (no opponents); the pool is then unused"
    )
    baseline: Literal["group", "role", "infostate"] = Field(
        default="group",
        description="advantage baseline: the group's mean return (per seat in self-play), a running mean per seat "
        "(role-conditioned, SPIRAL's RAE) with decay baseline_decay, or a running mean per decision prompt "
        "('infostate': per seat and information state; each decision is centred on its own prompt's mean)",
    )
    baseline_decay: float = Field(default=0.95, ge=0, lt=1)
    group_size: int = Field(
        default=8, ge=2, description="plays per group: one seat and opponent table (see group_draws)"
    )
    group_draws: Literal["distinct", "opponents", "shared"] = Field(
        default="distinct",
        description="what differs between a group's plays besides the learner's own samples: 'distinct' (each play "
        "its own deal and its own opponents' draws), 'opponents' (one deal, each play its own opponents' draws) or "
        "'shared' (one deal and one set of opponents' draws: a peaked learner against a peaked pool then plays one "
        "game group_size times and its advantages are zero; the only scheme before issue 42)",
    )
    resample_flat: int = Field(
        default=0,
        ge=0,
        description="dynamic sampling (DAPO): a group whose learner returns are all equal is played again with fresh "
        "deals and draws (same seat and table), up to N times; every play counts in episodes",
    )
    stall_steps: int = Field(
        default=10,
        ge=0,
        description="a run whose every advantage was zero for this many steps in a row (no signal from the game) "
        "is warned about or refused, as on_stall says (0: never)",
    )
    on_stall: Literal["warn", "refuse"] = Field(
        default="warn",
        description="'warn': a StalledRunWarning and the manifest's 'stalled_at'; 'refuse': checkpoint, then stop "
        "the run with StalledRunError (status 'rejected: ...')",
    )
    temperature: float = Field(default=1.0, gt=0)
    engine: Literal["fast", "reference"] = Field(
        default="fast",
        description="how the model runs over a batch of menus (arena_train.lm.Engine): 'fast' pads prompts only to "
        "the batch's longest, computes the last layer at the answer position alone and draws each decision from a "
        "hash of its key; 'reference' is the engine before issue 42 (16-token padding, every position, a generator "
        "per decision). The same distributions; another float rounding and random stream",
    )
    ppo_epochs: int = Field(default=1, ge=1)
    clip_eps: float = Field(default=0.2, gt=0)
    kl_beta: float = Field(
        default=0.01,
        ge=0,
        description="weight of the exact KL divergence over the menu from the magnet (the frozen initial weights, "
        "or a moving copy of the learner with magnet_every)",
    )
    magnet_every: int = Field(
        default=0,
        ge=0,
        description="magnetic mirror descent with a moving magnet: every N steps the KL term's reference becomes a copy "
        "of the learner's current weights (0: the initial weights throughout)",
    )
    entropy_beta: float = Field(
        default=0.0, ge=0, description="bonus on the entropy of the (tempered) menu distribution; keeps groups varied"
    )
    entropy_final: float | None = Field(
        default=None,
        ge=0,
        description="decay the entropy bonus linearly from entropy_beta at the first step "
        "to this value at the last (None: entropy_beta throughout)",
    )
    entropy_decay_steps: int | None = Field(
        default=None,
        ge=1,
        description="with entropy_final: reach entropy_final at this step and hold it there (None: at the last step)",
    )
    advantage: Literal["group", "per_decision"] = Field(
        default="group", description="one return per episode, or per-decision returns (penalties after the decision)"
    )
    advantage_scale: Literal["batch_std", "group_std", "none"] = Field(
        default="batch_std",
        description="advantages are centred on the group mean, then divided by the std of the whole step's centred returns "
        "(keeps stakes comparable across deals), each group's own std (classic GRPO), or nothing",
    )
    action_space: Literal["legal", "all"] = Field(
        default="legal", description="'all' lets the learner name illegal actions (penalised)"
    )
    model: ModelConfig = ModelConfig()
    optim: OptimConfig = OptimConfig()
    reward: RewardConfig = RewardConfig()
    pool: PoolConfig = PoolConfig()
    eval: EvalConfig
    init_from: str | None = Field(
        default=None,
        description="start from another run's weights: a checkpoint directory or a run directory "
        "(its latest checkpoint); that run becomes the parent in the manifest",
    )
    checkpoint_every: int = Field(default=0, ge=0, description="0: only at the end")
    resume_from: str | None = Field(
        default=None, description="a checkpoint directory (or a run directory: its latest checkpoint)"
    )
    parent_run: str | None = Field(
        default=None, description="run directory this run derives from (recorded in the manifest)"
    )
    plot: bool = Field(default=True, description="write metrics.png at the end (needs matplotlib)")

    def resume_checkpoint(self) -> str | None:
        return self.resume_from

    @model_validator(mode="after")
    def _pool_non_empty(self) -> GRPOConfig:
        if not self.self_play and not self.pool.players and not self.pool.snapshot_every:
            raise ValueError(
                "the opponent pool is empty: list pool.players (e.g. 'kuhn_king_only'), set pool.snapshot_every, or self_play = true"
            )
        if self.baseline in ("role", "infostate") and self.advantage_scale == "group_std":
            raise ValueError(
                f"baseline = '{self.baseline}' centres on a running mean per "
                f"{'seat' if self.baseline == 'role' else 'prompt'}, not on groups; use advantage_scale 'batch_std' or 'none'"
            )
        if self.entropy_decay_steps is not None and self.entropy_final is None:
            raise ValueError("entropy_decay_steps sets when entropy_final is reached; set entropy_final too")
        if self.magnet_every and self.kl_beta == 0:
            raise ValueError("magnet_every moves the KL term's reference; it needs kl_beta > 0")
        if self.init_from and self.resume_from:
            raise ValueError(
                "init_from (new run from another run's weights) and resume_from (continue a run) exclude each other"
            )
        if self.view == "text" and (self.eval.exploitability or self.action_space == "all"):
            raise ValueError(
                "view = 'text' answers in legal action strings: it has no menu tables for eval.exploitability and "
                "no illegal answers for action_space = 'all'; use view = 'auto' for those"
            )
        return self


class ExpertIterationConfig(RunConfig):
    trainer: Literal["expert_iteration"] = "expert_iteration"
    name: str = "expert_iteration"
    game: str
    game_params: dict[str, Any] = Field(default_factory=dict)
    num_players: int | None = None
    seed: int = Field(default=0, ge=0)
    expert: PlayerSpecField = Field(description="registered player that labels decisions, e.g. the game's expert bot")
    opponents: list[PlayerSpecField] = Field(min_length=1, description="registered players in the other seats")
    rounds: int = Field(default=2, ge=1)
    deals_per_round: int = Field(default=8, ge=1)
    epochs: int = Field(default=3, ge=1)
    batch_size: int = Field(default=64, ge=1)
    label_all: bool = Field(
        default=True, description="train on every decision (True) or only those the expert would change"
    )
    model: ModelConfig = ModelConfig()
    optim: OptimConfig = OptimConfig(learning_rate=3e-3)
    eval_deals: int = Field(default=16, ge=1)
    bootstrap: int = Field(default=2000, ge=100)
    parent_run: str | None = None
    init_from: str | None = Field(
        default=None,
        description="start from another run's weights (checkpoint or run directory); recorded as the parent",
    )
    restrict_expert: bool = Field(
        default=False,
        description="the expert chooses among the student's legal menu entries (e.g. search over the bid grid) "
        "instead of being mapped to the nearest entry",
    )
    steps: int = Field(
        default=0,
        ge=0,
        description="0: each round fine-tunes `epochs` passes on its own data; N: collect `rounds` rounds with the "
        "starting student first (the last round held out when rounds >= 2), then N updates on minibatches",
    )
    eval_every: int = Field(
        default=0, ge=0, description="steps mode: evaluate every N steps (0: only at the start and end)"
    )
    checkpoint_every: int = Field(default=0, ge=0, description="steps mode: save every N steps (0: only at the end)")
    eval_expert: bool = Field(
        default=True, description="also evaluate the expert and the grid expert (costly for search)"
    )
    data_cache: str | None = Field(
        default=None,
        description="steps mode: a JSON-lines file of labelled decisions, read when it exists (no collection), "
        "else written after collection; seeds can share one teacher's labels",
    )
    behaviour: Literal["student", "expert"] = Field(
        default="student",
        description="who moves in the student's seat while decisions are collected: the student (sampled: DAgger's "
        "states) or the expert (its own states: behaviour cloning); the student's answer is recorded either way",
    )


class PolicyGradientConfig(RunConfig):
    trainer: Literal["policy_gradient"] = "policy_gradient"
    name: str = "policy_gradient"
    game: str
    game_params: dict[str, Any] = Field(default_factory=dict)
    num_players: int | None = None
    seed: int = Field(default=0, ge=0)
    steps: int = Field(..., ge=1)
    episodes_per_step: int = Field(default=64, ge=1)
    hidden: int = Field(default=0, ge=0, description="0: a linear softmax policy; else one tanh hidden layer")
    learning_rate: float = Field(default=0.1, gt=0)
    entropy: float = Field(default=0.0, ge=0)
    opponents: list[PlayerSpecField] = Field(..., min_length=1)
    eval_anchor: PlayerSpecField | None = None
    eval_deals: int = Field(default=64, ge=1)
    eval_every: int = Field(default=0, ge=0)
    bootstrap: int = Field(default=2000, ge=100)
    parent_run: str | None = None


AnyTrainConfig = GRPOConfig | ExpertIterationConfig | PolicyGradientConfig
TrainConfig = Annotated[AnyTrainConfig, Field(discriminator="trainer")]


class _Envelope(_Strict):
    config: TrainConfig


def parse_config(data: Mapping[str, Any] | str | Path) -> AnyTrainConfig:
    """A validated config from a dict, a JSON/TOML file path, or JSON text."""
    loaded: object = data
    if isinstance(data, (str, Path)) and Path(data).suffix in {".json", ".toml"} and Path(data).exists():
        path = Path(data)
        loaded = tomllib.loads(path.read_text()) if path.suffix == ".toml" else json.loads(path.read_text())
    elif isinstance(data, (str, Path)):
        try:
            loaded = json.loads(str(data))
        except json.JSONDecodeError:
            raise ConfigError(
                f"config {str(data)[:80]!r} is neither an existing .json/.toml file nor JSON text"
            ) from None
    if not isinstance(loaded, Mapping) or "trainer" not in loaded:
        raise ConfigError("a training config needs a 'trainer' key: 'grpo', 'expert_iteration' or 'policy_gradient'")
    try:
        return _Envelope.model_validate({"config": loaded}).config
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(x) for x in e['loc'][2:]) or 'config'}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"invalid {loaded.get('trainer')} config: {problems}") from None


_Config = TypeVar("_Config", bound=RunConfig)


def trainer_config(kind: type[_Config], config: _Config | Mapping[str, Any]) -> _Config:
    """``config`` as a ``kind`` config: a ``kind`` config as it is, or a dict validated with
    ``kind``'s trainer key (a dict or a config of another trainer is refused, naming both)."""
    name = kind.model_fields["trainer"].default
    if isinstance(config, kind):
        return config
    if not isinstance(config, Mapping):
        raise ConfigError(f"the {name} trainer needs a {kind.__name__}, not a {type(config).__name__}")
    if config.get("trainer", name) != name:
        raise ConfigError(f"the {name} trainer was given a config for the {config['trainer']!r} trainer")
    try:
        return kind.model_validate({**config, "trainer": name})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(x) for x in e['loc']) or 'config'}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"invalid {name} config: {problems}") from None
