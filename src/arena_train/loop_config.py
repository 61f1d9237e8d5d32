"""The arena loop's config: the tournaments, the plumbing check, the frontier seat and the GRPO
training, validated (pydantic) with errors that name the field; the loop itself is
:mod:`arena_train.loop`. A player spec is a :data:`~arena_core.playerspec.PlayerSpecField`; the
game, its opponents and the analysis come from the config (the trainer package names no game).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from arena_core.errors import ConfigError
from arena_core.playerspec import PlayerSpecField

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

if TYPE_CHECKING:
    from arena_core.views import Menu

    from .config import GRPOConfig, RunConfig

#: a game's exact analysis: named values of a policy given its ``distributions(menus)``
Analysis = Callable[[Callable[[Sequence["Menu"]], Sequence[Any]]], Mapping[str, float]]
#: where progress lines go (``print`` by default)
Log = Callable[[str], None]


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class LoopFrontier(_Strict):
    """A real frontier model through the OpenAI-compatible player: evaluation only (it plays the
    tournaments, never the training), every answer cached on disk, calls capped."""

    model: str = Field(description="the model name the endpoint serves, e.g. 'gpt-4o-mini'")
    base_url: str = Field(default="https://api.openai.com/v1", description="the endpoint (when base_url_env is unset)")
    base_url_env: str | None = Field(
        default=None,
        description="an environment variable holding the endpoint; when named and unset, the seat is skipped",
    )
    api_key_env: str = Field(
        default="OPENAI_API_KEY", description="environment variable holding the key ('' sends none); unset: skipped"
    )
    max_calls: int = Field(ge=1, description="spending cap: HTTP calls per tournament (cache hits are free)")
    max_total_tokens: int | None = Field(default=None, ge=1, description="spending cap: tokens per tournament")
    cache_dir: str = Field(default="~/.cache/arena/frontier", description="on-disk response cache")
    temperature: float = Field(default=0.0, ge=0)
    max_tokens: int = Field(default=256, ge=1)
    options: dict[str, Any] = Field(default_factory=dict, description="more options of the openai player")
    required: bool = Field(
        default=False,
        description="fail at the start, in one line, when the key or endpoint variable is not set (instead of "
        "running without the seat)",
    )


class LoopTournament(_Strict):
    deals: int = Field(default=200, ge=2, description="shared deals; each pair plays every deal in both seatings")
    seed: int = Field(default=18002, ge=0, description="tournament seed; a loop seed's deals derive from it")
    opponents: list[PlayerSpecField] = Field(
        min_length=1,
        description="fixed opponents: registered player specs",
    )
    model_temperature: float | str = Field(
        default="train",
        description="the checkpoint entrant's temperature: 'train' (the sampling policy) or a number (0: greedy)",
    )
    bootstrap: int = Field(default=2000, ge=100)
    frontier: LoopFrontier | None = Field(default=None, description="an OpenAI-compatible frontier seat (optional)")
    pages: bool = Field(
        default=True,
        description="write each tournament's own report page (report.html: every game, the drill-down into each "
        "decision), linked from the loop's page",
    )
    generalist: int | None = Field(
        default=None,
        ge=1,
        description="which opponent (1-based) is the zero-shot generalist: named so in the report, and its win rate "
        "against the training's evaluation anchor drawn beside the training curve",
    )


class LoopServer(_Strict):
    enabled: bool = True
    deals: int = Field(default=8, ge=1, description="deals of the plumbing tournament (each opponent, both seatings)")
    max_tokens: int = Field(default=8, ge=1)
    temperature: float = Field(default=1.0, ge=0)
    startup_s: float = Field(default=120.0, gt=0)


class LoopStage(_Strict):
    """One stage of a training recipe: a registered trainer and its config (without ``game``,
    ``seed`` and ``name``, which the loop sets). The text ``{previous}`` anywhere in the config
    stands for the previous stage's run directory (e.g. ``init_from = "{previous}"``, or an expert
    ``numeric_policy{weights = "{previous}/policy.npz"}``)."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$", description="the stage's name (its run directory)")
    trainer: str = Field(description="a registered trainer (arena list trainers)")
    config: dict[str, Any] = Field(default_factory=dict, description="the trainer's config")


class LoopConfig(_Strict):
    name: str = "arena-loop"
    game: str = Field(description="a registered game, e.g. 'textarena/KuhnPoker-v0'")
    seeds: list[int] = Field(default_factory=lambda: [0, 1, 2], min_length=1)
    output: str = "runs/arena-loop"
    tournament: LoopTournament
    server: LoopServer = LoopServer()
    analysis: str | None = Field(
        default=None, description="'package.module:function': exact values of a policy from its distributions(menus)"
    )
    train: dict[str, Any] | None = Field(
        default=None, description="a GRPO config (without trainer, game and seed); or give stages"
    )
    stages: list[LoopStage] | None = Field(
        default=None,
        description="a recipe: trainer stages run in order, each given the previous one's run directory as {previous}; "
        "the last one trains the language model the tournaments seat",
    )

    @model_validator(mode="after")
    def _one_training(self) -> LoopConfig:
        if (self.train is None) == (self.stages is None):
            raise ValueError("give exactly one of [train] (one GRPO run) and [[stages]] (a recipe of trainers)")
        if self.stages is not None:
            names = [s.name for s in self.stages]
            if not names or len(set(names)) != len(names):
                raise ValueError("stages need distinct names (and at least one stage)")
        g = self.tournament.generalist
        if g is not None and g > len(self.tournament.opponents):
            raise ValueError(f"tournament.generalist = {g} but there are {len(self.tournament.opponents)} opponents")
        return self


def load_config(path: str | Path, overrides: Sequence[str] = ()) -> LoopConfig:
    """The loop config in ``path`` (TOML or JSON), with ``overrides`` (``key.sub=value``) applied."""
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"loop config {str(path)!r} does not exist (see examples/textarena_loop.toml)")
    try:
        data = tomllib.loads(path.read_text()) if path.suffix == ".toml" else json.loads(path.read_text())
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML/JSON ({exc})") from None
    return parse_loop_config(apply_overrides(data, overrides))


def apply_overrides(data: Mapping[str, Any], overrides: Sequence[str]) -> dict[str, Any]:
    """``data`` with each ``key.sub=value`` set (a dotted key walks into tables, creating them; the
    value is read as a TOML value -- ``4``, ``true``, ``"x"``, ``["a", "b"]``, ``{a = 1}`` -- else
    kept as the plain string). In a list of tables (``[[stages]]``) a key part names an item by its
    ``name`` (``--set stages.distil.config.steps=10``). A key into a value that is not a table, or
    a name no item has, is refused in one line."""
    out: dict[str, Any] = json.loads(json.dumps(data))  # a deep copy of plain data
    for item in overrides:
        key, eq, raw = item.partition("=")
        if not eq or not key.strip():
            raise ConfigError(f"--set {item!r} must look like key=value (e.g. --set tournament.deals=4)")
        try:
            value: Any = tomllib.loads(f"v = {raw}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw
        *parents, last = [k.strip() for k in key.split(".")]
        node = out
        for n, part in enumerate(parents):
            child = node.setdefault(part, {})
            if isinstance(child, list) and n + 1 < len(parents):
                named = [x for x in child if isinstance(x, dict) and x.get("name") == parents[n + 1]]
                if not named:
                    names = [x.get("name") for x in child if isinstance(x, dict)]
                    raise ConfigError(f"--set {key}: {part} has no item named {parents[n + 1]!r} (it has {names})")
                child = {parents[n + 1]: named[0]}
            if not isinstance(child, dict):
                raise ConfigError(f"--set {key}: {'.'.join(parents[: n + 1])} is not a table")
            node = child
        node[last] = value
    return out


def parse_loop_config(data: Mapping[str, Any]) -> LoopConfig:
    try:
        cfg = LoopConfig.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(x) for x in e['loc']) or 'config'}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"invalid loop config: {problems}") from None
    if cfg.train is not None:
        for key in ("trainer", "game", "seed"):
            if key in cfg.train:
                raise ConfigError(f"loop config: [train] must not set {key!r} (the loop sets it)")
        grpo_config(cfg, cfg.seeds[0])  # validate the trainer part now, naming the field
    else:
        validate_stages(cfg)
    if cfg.analysis:
        if learner_view(cfg) == "text":
            raise ConfigError("loop config: analysis reads the model's menu distributions; drop it with view = 'text'")
        resolve_analysis(cfg.analysis)
    return cfg


def resolve_analysis(ref: str) -> Analysis:
    """The function a ``"package.module:function"`` reference names; one clear line otherwise."""
    import importlib

    module, _, name = ref.partition(":")
    try:
        fn = getattr(importlib.import_module(module), name, None) if name else None
    except ImportError as exc:
        raise ConfigError(f"loop config: analysis {ref!r} cannot be imported ({exc})") from None
    if not callable(fn):
        raise ConfigError(f"loop config: analysis {ref!r} must name a function as 'package.module:function'")
    analysis: Analysis = fn  # imported by name: the documented signature is the contract
    return analysis


def grpo_config(cfg: LoopConfig, seed: int) -> GRPOConfig:
    """The ``[train]`` GRPO run of ``seed`` (a loop with ``[train]``)."""
    from .config import GRPOConfig, parse_config

    if cfg.train is None:
        raise ConfigError("loop config: this loop trains by [[stages]], not one [train] GRPO run")
    out = parse_config(
        {"trainer": "grpo", "name": f"{cfg.name}-seed{seed}", **cfg.train, "game": cfg.game, "seed": seed}
    )
    if not isinstance(out, GRPOConfig):  # parse_config with trainer = "grpo" gives a GRPOConfig
        raise ConfigError("loop config: [train] is not a GRPO config")
    if out.self_play:
        raise ConfigError(
            "loop config: train.self_play = true leaves the snapshot pool unused; use pool.snapshot_every"
        )
    if not out.pool.snapshot_every:
        raise ConfigError("loop config: train.pool.snapshot_every must be > 0 (self-play against a snapshot pool)")
    return out


#: in a stage's config, the previous stage's run directory
PREVIOUS = "{previous}"


def stage_config(cfg: LoopConfig, stage: LoopStage, seed: int, previous: str | None) -> dict[str, Any]:
    """A stage's trainer config for ``seed``: its own, with the game, the seed and its name set and
    ``{previous}`` replaced by the previous stage's run directory."""
    for key in ("trainer", "game", "seed", "name"):
        if key in stage.config:
            raise ConfigError(f"loop config: stage {stage.name!r} must not set {key!r} (the loop sets it)")

    def fill(value: Any) -> Any:
        if isinstance(value, str) and PREVIOUS in value:
            if previous is None:
                raise ConfigError(f"loop config: stage {stage.name!r} is the first; it has no {PREVIOUS}")
            return value.replace(PREVIOUS, previous)
        if isinstance(value, dict):
            return {k: fill(v) for k, v in value.items()}
        if isinstance(value, list):
            return [fill(v) for v in value]
        return value

    config: dict[str, Any] = fill(dict(stage.config))
    return {**config, "name": f"{cfg.name}-seed{seed}-{stage.name}", "game": cfg.game, "seed": seed}


def parsed_stage(cfg: LoopConfig, stage: LoopStage, seed: int, previous: str | None) -> RunConfig | None:
    """The stage's config validated by its trainer (None for a trainer that validates only when
    it runs: one registered without :class:`~arena_train.trainer.TrainerPlugin`)."""
    from arena_core.registry import load

    from .trainer import TrainerPlugin

    trainer = load("trainers", stage.trainer)
    if not isinstance(trainer, TrainerPlugin):
        return None
    try:
        parsed: RunConfig = trainer.parse(stage_config(cfg, stage, seed, previous))
    except ConfigError as exc:
        raise ConfigError(f"loop config: stage {stage.name!r}: {exc}") from None
    return parsed


def validate_stages(cfg: LoopConfig) -> None:
    """Every stage's config through its trainer now (the previous run directory stood in for by a
    placeholder path); the last stage must train a language model (a ``model`` config)."""
    stages = cfg.stages or []
    previous = None
    for stage in stages:
        parsed_stage(cfg, stage, cfg.seeds[0], previous)
        previous = f"runs/{stage.name}"
    if stages and not trains_a_model(stages[-1]):
        raise ConfigError(
            f"loop config: the last stage ({stages[-1].name!r}, {stages[-1].trainer}) must train a language model "
            "(grpo or expert_iteration): the tournaments seat it through the checkpoint player"
        )


def trains_a_model(stage: LoopStage) -> bool:
    """Whether the stage's trainer trains a language model (its config has a ``model``)."""
    from arena_core.registry import load

    from .trainer import TrainerPlugin

    trainer = load("trainers", stage.trainer)
    return "model" in stage.config or (
        isinstance(trainer, TrainerPlugin) and "model" in trainer.config_type.model_fields
    )


def learner_model(cfg: LoopConfig) -> dict[str, Any]:
    """The ``model`` config of the language model the tournaments seat (``[train]``'s or the last stage's)."""
    if cfg.train is not None:
        return dict(cfg.train.get("model", {}))
    return dict((cfg.stages or [])[-1].config.get("model", {}))


def learner_view(cfg: LoopConfig) -> str:
    """How the seated model reads and answers: ``auto`` (compact menu), ``menu`` or ``text``."""
    train = cfg.train if cfg.train is not None else (cfg.stages or [])[-1].config
    return str(train.get("view", "auto"))


def frontier_spec(frontier: LoopFrontier) -> str:
    """The frontier seat's label in the report (its opponent key)."""
    return f"frontier:{frontier.model}"


def frontier_options(cfg: LoopConfig, *, log: Log = print) -> dict[str, Any] | None:
    """The frontier seat's ``openai`` player options, or None: not configured, or its endpoint
    variable or key is not set here (then one line says which, and the loop goes on without it;
    with ``required = true`` that line is a :class:`ConfigError` instead)."""
    f = cfg.tournament.frontier
    if f is None:
        return None
    missing = [v for v in (f.base_url_env, f.api_key_env) if v and not os.environ.get(v)]
    if missing and f.required:
        raise ConfigError(
            f"frontier seat {f.model!r} is required (tournament.frontier.required = true) but "
            f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} not set; set it, or set required = false"
        )
    if missing:
        log(
            f"frontier seat {f.model!r} skipped: {' and '.join(missing)} not set "
            "(set it to seat the model, or remove [tournament.frontier])"
        )
        return None
    options = {
        **f.options,
        "base_url": os.environ[f.base_url_env] if f.base_url_env else f.base_url,
        "model": f.model,
        "api_key_env": f.api_key_env,
        "temperature": f.temperature,
        "max_tokens": f.max_tokens,
        "max_calls": f.max_calls,
        "max_total_tokens": f.max_total_tokens,
        "cache_dir": str(Path(f.cache_dir).expanduser()),
    }
    return {k: v for k, v in options.items() if v is not None}


def loop_identity(cfg: LoopConfig) -> dict[str, Any]:
    """What a loop directory's results depend on: the config without its seeds and output (more
    seeds may join later), the pinned model by name, and the frontier seat as configured but not
    whether it is seated (a seat may join a directory later) nor ``required``; not whether the
    tournaments' pages are written."""
    data = cfg.model_dump(mode="json", exclude={"seeds", "output"}, exclude_none=True)
    if data.get("train") is not None:
        data["train"] = _model_by_name(data["train"])
    for stage in data.get("stages") or []:
        stage["config"] = _model_by_name(stage["config"])
    data["tournament"].pop("pages", None)  # the report's pages, not its results
    frontier = data["tournament"].get("frontier")
    if frontier is not None:
        frontier.pop("required", None)
    return data


def _model_by_name(train: dict[str, Any]) -> dict[str, Any]:
    model = dict(train.get("model", {}))
    if "path" in model:
        model["path"] = Path(model["path"]).name
    return {**train, "model": model} if model else train


def pin_model(cfg: LoopConfig) -> LoopConfig:
    """``model.path = "tiny"`` resolved once to its built directory, used by every seed, stage and
    the server: the tiny model is rebuilt whenever its tokenizer corpus (game text) changes, and
    one loop must not mix two of them."""

    def pinned(train: Mapping[str, Any]) -> dict[str, Any]:
        model = dict(train.get("model", {}))
        if model.get("path", "tiny") != "tiny":
            return dict(train)
        from arena_players.tiny_model import ensure_tiny_model

        model["path"] = str(ensure_tiny_model(game_ids=model.pop("tiny_games", None)))
        return {**train, "model": model}

    if cfg.train is not None:
        return cfg.model_copy(update={"train": pinned(cfg.train)})
    stages = [s.model_copy(update={"config": pinned(s.config)}) if trains_a_model(s) else s for s in cfg.stages or []]
    return cfg.model_copy(update={"stages": stages})
