"""Tournament configuration (TOML or YAML), validated with errors that name the fix."""

from __future__ import annotations

import difflib
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from arena_core.errors import ConfigError
from arena_core.playerspec import as_player_spec
from arena_core.policy import IllegalActionPolicy

from .schedule import Design, Entrant, Rotations, Schedule, make_schedule
from .usage import ModelPrice, check_prices

Backend = Literal["sequential", "process", "ray"]


#: more deals than this are refused before anything is allocated
MAX_DEALS = 1_000_000


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _no_bool_for_numbers(cls, data: Any) -> Any:
        """``seed = true`` is a mistake, not 1 (pydantic would read it as 1)."""
        if isinstance(data, dict):
            for name, field in cls.model_fields.items():
                value = data.get(name)
                if isinstance(value, bool) and not _takes_bool(field.annotation):
                    raise ValueError(f"{name} = {str(value).lower()}: a number is expected here, not true/false")
        return data


def _takes_bool(annotation: Any) -> bool:
    return annotation is bool or annotation is Any or any(_takes_bool(a) for a in getattr(annotation, "__args__", ()))


class RunOptions(_Strict):
    """How games are run: backend, limits and the illegal-action policy."""

    backend: Backend = "sequential"
    workers: int | None = Field(default=None, ge=1, description="process pool / Ray parallelism (default: CPU count)")
    start_method: Literal["auto", "spawn", "forkserver", "fork"] = Field(
        default="auto",
        description="process-pool workers: auto = fork on Linux when this process has no other threads, else spawn",
    )
    ray_address: str | None = Field(
        default=None,
        description="an existing Ray cluster's address (e.g. 10.0.0.5:6379, or 'auto'); None starts one on this machine, bound to 127.0.0.1",
    )
    policy: str = Field(
        default="penalize", description="illegal-action policy: penalize, default, retry:K, retry:K:default"
    )
    turn_cap: int | None = Field(default=None, ge=1, description="decisions after which a game is truncated")
    game_time_limit_s: float | None = Field(
        default=None, gt=0, description="wall clock per game; over it the game is truncated"
    )
    decision_time_limit_s: float | None = Field(
        default=None, gt=0, description="wall clock per decision; over it the player has failed"
    )
    fresh_players: bool = Field(
        default=True,
        description="build new player objects for every game (set false for players that are slow to load)",
    )
    preflight: bool = Field(
        default=True,
        description="before the first game, run each player's preflight check (an HTTP player: key present, endpoint answers)",
    )
    max_fault_rate: float | None = Field(
        default=0.25,
        ge=0,
        le=1,
        description="flag an entrant whose share of faulted decisions is above this; the run then exits non-zero "
        "(1 or None: never)",
    )

    @field_validator("max_fault_rate")
    @classmethod
    def _never_is_one(cls, value: float | None) -> float:
        # "never" is kept as 1.0 (no share exceeds it): a results header's None means "not recorded" (older
        # files) and reads as the default, so None written there would flag at 0.25 after all
        return 1.0 if value is None else value

    stop_at_cap: bool = Field(
        default=True, description="an entrant whose spending cap runs out plays no further games (listed as unplayed)"
    )
    outage_replays: int = Field(
        default=3,
        ge=0,
        description="times a game a provider outage cut short is played again (on later runs) before it is "
        "recorded as an outage, not rated",
    )

    @field_validator("policy")
    @classmethod
    def _policy_parses(cls, text: str) -> str:
        policy = parse_policy(text)
        if policy.mode == "raise":
            raise ValueError(
                "a tournament cannot use policy 'raise' (one bad move would stop it); use penalize, default or retry:K"
            )
        return text

    def illegal_action_policy(self) -> IllegalActionPolicy:
        return parse_policy(self.policy)


def parse_policy(text: str) -> IllegalActionPolicy:
    try:
        return IllegalActionPolicy.parse(text)
    except (ValidationError, ValueError, IndexError):
        raise ValueError(
            f"policy {text!r} is not one of penalize, default, retry:K, retry:K:default (K >= 1)"
        ) from None


class RatingOptions(_Strict):
    """How ratings and intervals are computed."""

    bootstrap: int = Field(default=1000, ge=0, description="cluster-bootstrap resamples (0: no intervals)")
    regularization: float = Field(default=0.1, ge=0, description="virtual win and loss against an anchor of strength 1")
    base: float = Field(default=1000.0, description="the centre of the rating scale")
    seed: int = Field(default=0, ge=0, description="seed of the bootstrap draws")
    min_pair_games: int = Field(
        default=5, ge=1, description="head-to-head pairs with fewer shared games are not resolved"
    )


class TournamentConfig(_Strict):
    """A whole tournament: game, entrants, design, deals, run options and rating options."""

    name: str = "tournament"
    game: str = Field(description="registered game id, e.g. 'megagem'")
    game_factory: str | None = Field(default=None, description="'package.module:Class' for an unregistered game")
    params: dict[str, Any] = Field(default_factory=dict)
    num_players: int | None = Field(default=None, ge=1, description="seats per table (default: the game's default)")
    entrants: list[Entrant] = Field(min_length=2)
    design: Design = "auto"
    tables: int | None = Field(default=None, ge=1, le=MAX_DEALS, description="number of tables for design 'sampled'")
    rotations: Rotations = "cyclic"
    deals: int | list[int] = Field(
        default=8, description="a number of deals (seeds seed, seed+1, ...) or the seeds themselves"
    )
    seed: int = Field(default=0, ge=0)
    output: str = Field(default="runs/tournament", description="directory for results.jsonl and the report")
    run: RunOptions = Field(default_factory=RunOptions)
    ratings: RatingOptions = Field(default_factory=RatingOptions)
    prices: dict[str, ModelPrice] = Field(
        default_factory=dict,
        description="USD per million tokens by model name (as the decisions' telemetry names it); "
        "a model without a price has its cost shown as unknown",
    )

    @field_validator("prices")
    @classmethod
    def _prices_named(cls, value: dict[str, ModelPrice]) -> dict[str, ModelPrice]:
        check_prices(value)
        return value

    @field_validator("entrants", mode="before")
    @classmethod
    def _short_entrants(cls, value: Any) -> Any:
        if isinstance(value, list):  # a short-form entrant is its spec, named after its player
            return [_short_entrant(v) if isinstance(v, str) else v for v in value]
        return value

    @field_validator("deals", mode="before")
    @classmethod
    def _deals_not_bool(cls, value: Any) -> Any:
        if isinstance(value, bool) or (isinstance(value, list) and any(isinstance(v, bool) for v in value)):
            raise ValueError("deals is a number of deals (e.g. 8) or a list of seeds, not true/false")
        return value

    @field_validator("deals")
    @classmethod
    def _deals_ok(cls, value: int | list[int]) -> int | list[int]:
        if isinstance(value, int) and value < 1:
            raise ValueError("deals must be >= 1")
        if isinstance(value, int) and value > MAX_DEALS:
            raise ValueError(
                f"deals = {value} is more than {MAX_DEALS} deals; a tournament that large is a mistake (or split it into several runs)"
            )
        if isinstance(value, list) and (not value or len(set(value)) != len(value) or min(value) < 0):
            raise ValueError("deals must be distinct non-negative seeds")
        return value

    @model_validator(mode="after")
    def _entrant_names_unique(self) -> TournamentConfig:
        names = [e.name for e in self.entrants]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(
                f"entrant names must be unique, repeated: {dup}; give each a 'name' (e.g. name = \"random-2\")"
            )
        return self

    def deal_seeds(self) -> list[int]:
        return list(self.deals) if isinstance(self.deals, list) else [self.seed + i for i in range(self.deals)]

    def schedule(self, num_players: int) -> Schedule:
        """The schedule of this config; a design the entrants cannot fill is a ConfigError."""
        try:
            return self._schedule(num_players)
        except ValueError as exc:  # make_schedule's checks of the design against the entrants
            raise ConfigError(f"tournament {self.name!r}: {exc}") from None

    def _schedule(self, num_players: int) -> Schedule:
        return make_schedule(
            self.game,
            list(self.entrants),
            num_players,
            self.deal_seeds(),
            params=self.params,
            game_factory=self.game_factory,
            design=self.design,
            rotations=self.rotations,
            num_tables=self.tables,
            seed=self.seed,
        )


def _short_entrant(text: str) -> dict[str, Any]:
    try:
        spec = as_player_spec(text)
    except ConfigError as exc:  # pydantic reports ValueErrors with the entrant's place
        raise ValueError(str(exc)) from None
    return {"name": spec.name, "player": spec}


def load_config(path: str | os.PathLike[str]) -> TournamentConfig:
    """Read and validate a TOML (.toml) or YAML (.yaml, .yml) tournament config."""
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"tournament config {str(path)!r} does not exist")
    text = path.read_text(encoding="utf-8")
    suffix = path.suffix.lower()
    if suffix == ".toml":
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # Python 3.10
            import tomli as tomllib

        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    elif suffix in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError:
            raise ConfigError(
                f"{path}: YAML configs need PyYAML; fix: pip install pyyaml (or write the config as TOML)"
            ) from None
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    else:
        raise ConfigError(f"{path}: a tournament config ends in .toml, .yaml or .yml")
    return config_from_dict(expand_env(data, source=str(path)), source=str(path))


_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expand_env(data: Any, *, source: str = "config", environ: Mapping[str, str] | None = None) -> Any:
    """Replace ``${NAME}`` and ``${NAME:-default}`` in every string of a loaded config.

    Secrets (API keys) should not go through here: players read them from the variable named
    by an option such as ``api_key_env``, so they never appear in the saved schedule."""
    env = os.environ if environ is None else environ

    def sub(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        raise ConfigError(f"{source}: the environment variable {name} is not set; set it or write ${{{name}:-default}}")

    if isinstance(data, str):
        return _ENV_REF.sub(sub, data)
    if isinstance(data, list):
        return [expand_env(x, source=source, environ=env) for x in data]
    if isinstance(data, dict):
        return {k: expand_env(v, source=source, environ=env) for k, v in data.items()}
    return data


def config_from_dict(data: Any, *, source: str = "config") -> TournamentConfig:
    """Validate a mapping as a :class:`TournamentConfig`; errors list every bad field."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be a table of settings, got {type(data).__name__}")
    try:
        return TournamentConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(
            f"{source}: invalid tournament config: " + "; ".join(_explain(err) for err in exc.errors(include_url=False))
        ) from None


def _explain(err: Mapping[str, Any]) -> str:
    loc = ".".join(str(x) for x in err["loc"]) or "(top level)"
    if err["type"] == "extra_forbidden":
        key = str(err["loc"][-1])
        model = _model_at(err["loc"][:-1])
        known = list(model.model_fields) if model is not None else []
        close = difflib.get_close_matches(key, known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else (f"; known keys: {', '.join(known)}" if known else "")
        return f"{loc}: unknown key{hint}"
    if err["type"] == "missing":
        return f"{loc}: required, missing"
    return f"{loc}: {err['msg'].removeprefix('Value error, ')}"


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    model: type[BaseModel] = TournamentConfig
    keyed = False  # the last field was a mapping: the next part is one of its keys
    for part in loc:
        if isinstance(part, int) or keyed:
            keyed = False
            continue
        field = model.model_fields.get(str(part))
        if field is None:
            return None
        ann = field.annotation
        keyed = getattr(ann, "__origin__", None) is dict
        nested = next(
            (a for a in (ann, *getattr(ann, "__args__", ())) if isinstance(a, type) and issubclass(a, BaseModel)), None
        )
        if nested is None:
            return None
        model = nested
    return model
