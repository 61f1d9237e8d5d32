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

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from arena_core.errors import ConfigError
from arena_core.playerspec import PlayerSpecField

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

if TYPE_CHECKING:
    from arena_core.views import Menu

    from .config import GRPOConfig

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


class LoopServer(_Strict):
    enabled: bool = True
    deals: int = Field(default=8, ge=1, description="deals of the plumbing tournament (each opponent, both seatings)")
    max_tokens: int = Field(default=8, ge=1)
    temperature: float = Field(default=1.0, ge=0)
    startup_s: float = Field(default=120.0, gt=0)


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
    train: dict[str, Any] = Field(..., description="a GRPO config (without trainer, game and seed)")


def load_config(path: str | Path) -> LoopConfig:
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"loop config {str(path)!r} does not exist (see examples/textarena_loop.toml)")
    try:
        data = tomllib.loads(path.read_text()) if path.suffix == ".toml" else json.loads(path.read_text())
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML/JSON ({exc})") from None
    return parse_loop_config(data)


def parse_loop_config(data: Mapping[str, Any]) -> LoopConfig:
    try:
        cfg = LoopConfig.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(x) for x in e['loc']) or 'config'}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"invalid loop config: {problems}") from None
    for key in ("trainer", "game", "seed"):
        if key in cfg.train:
            raise ConfigError(f"loop config: [train] must not set {key!r} (the loop sets it)")
    grpo_config(cfg, cfg.seeds[0])  # validate the trainer part now, naming the field
    if cfg.analysis:
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
    from .config import GRPOConfig, parse_config

    out = parse_config(
        {"trainer": "grpo", "name": f"{cfg.name}-seed{seed}", **cfg.train, "game": cfg.game, "seed": seed}
    )
    assert isinstance(out, GRPOConfig)
    if out.self_play:
        raise ConfigError(
            "loop config: train.self_play = true leaves the snapshot pool unused; use pool.snapshot_every"
        )
    if not out.pool.snapshot_every:
        raise ConfigError("loop config: train.pool.snapshot_every must be > 0 (self-play against a snapshot pool)")
    return out


def frontier_spec(frontier: LoopFrontier) -> str:
    """The frontier seat's label in the report (its opponent key)."""
    return f"frontier:{frontier.model}"


def frontier_options(cfg: LoopConfig, *, log: Log = print) -> dict[str, Any] | None:
    """The frontier seat's ``openai`` player options, or None: not configured, or its endpoint
    variable or key is not set here (then one line says which, and the loop goes on without it)."""
    f = cfg.tournament.frontier
    if f is None:
        return None
    missing = [v for v in (f.base_url_env, f.api_key_env) if v and not os.environ.get(v)]
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


def loop_identity(cfg: LoopConfig, frontier: Mapping[str, Any] | None) -> dict[str, Any]:
    """What a loop directory's results depend on: the config without its seeds and output (more
    seeds may join later), the pinned model by name, and the frontier seat as seated."""
    data = cfg.model_dump(mode="json", exclude={"seeds", "output"})
    model = dict(data["train"].get("model", {}))
    if "path" in model:
        model["path"] = Path(model["path"]).name
    data["train"] = {**data["train"], "model": model}
    data["tournament"]["frontier"] = None if frontier is None else {k: frontier[k] for k in ("base_url", "model")}
    return data


def pin_model(cfg: LoopConfig) -> LoopConfig:
    """``model.path = "tiny"`` resolved once to its built directory, used by every seed and the
    server: the tiny model is rebuilt whenever its tokenizer corpus (game text) changes, and one
    loop must not mix two of them."""
    model = dict(cfg.train.get("model", {}))
    if model.get("path", "tiny") != "tiny":
        return cfg
    from arena_players.tiny_model import ensure_tiny_model

    model["path"] = str(ensure_tiny_model(game_ids=model.pop("tiny_games", None)))
    return cfg.model_copy(update={"train": {**cfg.train, "model": model}})
