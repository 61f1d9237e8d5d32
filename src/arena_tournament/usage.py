"""What a tournament's decisions used: tokens, latency and cost, per decision, game and entrant.

Everything comes from each decision's telemetry in the game records (``tokens_in``,
``cached_tokens``, ``tokens_out``, ``latency_s``, ``model``, and ``cached`` for an answer served
from the player's own response cache); cost from a per-model price table in the tournament config
(``[prices."MODEL"]``, USD per million tokens)::

    [prices."gpt-4o-mini"]
    prompt = 0.15          # uncached prompt tokens
    completion = 0.60
    cached_prompt = 0.075  # optional; default: the prompt price

A decision's cost is its tokens at its model's prices; 0 for an answer from the response cache
(nothing was billed); the player's own ``cost`` (its ``price_*`` options) where the table has no
price for the model; otherwise **unknown**, and so is any total it enters: a missing price is
never counted as 0. A decision without token counts (a bot, or a call that failed before the
server answered) made no priced model call.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from arena_core.errors import ConfigError

PRICES_NAME = "prices.json"  # the price table kept beside the results, for `arena report`


class ModelPrice(BaseModel):
    """One model's prices, USD per million tokens."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt: float = Field(ge=0, allow_inf_nan=False, description="uncached prompt tokens")
    completion: float = Field(ge=0, allow_inf_nan=False, description="completion tokens")
    cached_prompt: float | None = Field(
        default=None,
        ge=0,
        allow_inf_nan=False,
        description="prompt tokens read from the server's cache (default: prompt)",
    )

    @model_validator(mode="before")
    @classmethod
    def _no_bool(cls, data: Any) -> Any:
        """``prompt = true`` is a mistake, not a price of 1."""
        if isinstance(data, Mapping):
            for key, value in data.items():
                if isinstance(value, bool):
                    raise ValueError(f"{key} = {str(value).lower()}: a price (a number) is expected here")
        return data

    def cost(self, tokens_in: int, cached: int, tokens_out: int) -> float:
        cached_price = self.prompt if self.cached_prompt is None else self.cached_prompt
        return ((tokens_in - cached) * self.prompt + cached * cached_price + tokens_out * self.completion) / 1e6


def check_prices(table: Mapping[str, ModelPrice]) -> Mapping[str, ModelPrice]:
    """A price table's model names must be non-empty (they are matched to the ``model`` the
    decisions' telemetry names, exactly)."""
    for name in table:
        if not str(name).strip():
            raise ValueError("a price table's model name is empty; write [prices.\"MODEL\"] with the model's name")
    return table


def parse_prices(data: Any, *, source: str) -> dict[str, ModelPrice]:
    """A validated price table from loaded data: ``{model: {prompt, completion, cached_prompt?}}``
    or a mapping (a tournament config) whose ``prices`` key holds one. One line on error."""
    if isinstance(data, Mapping) and isinstance(data.get("prices"), Mapping):
        data = data["prices"]
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: a price table maps model names to {{prompt, completion}} prices")
    out = {}
    for model, price in data.items():
        try:
            out[str(model)] = ModelPrice.model_validate(price)
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            where = ".".join(str(x) for x in err["loc"])
            raise ConfigError(
                f"{source}: price of {model!r}: {where + ': ' if where else ''}{err['msg']} "
                "(prompt, completion and cached_prompt are USD per million tokens, finite and >= 0)"
            ) from None
    try:
        check_prices(out)
    except ValueError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    return out


def load_prices(path: str | os.PathLike[str]) -> dict[str, ModelPrice]:
    """The price table in a JSON, TOML or YAML file (the table itself, or a tournament config)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"no price table at {str(path)!r}")
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix.lower() == ".toml":
            if sys.version_info >= (3, 11):
                import tomllib
            else:  # Python 3.10
                import tomli as tomllib
            data = tomllib.loads(text)
        elif path.suffix.lower() in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except Exception as exc:  # noqa: BLE001 - any parser's error is the file's, said in one line
        raise ConfigError(f"{path}: not a readable price table ({type(exc).__name__}: {exc})") from None
    return parse_prices(data, source=str(path))


def write_prices(table: Mapping[str, ModelPrice], directory: str | os.PathLike[str]) -> Path:
    """Keep the price table beside the results (``prices.json``), where `arena report` finds it."""
    from arena_core.outputs import atomic_write_text

    path = Path(directory) / PRICES_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {k: v.model_dump(exclude_none=True) for k, v in table.items()}
    atomic_write_text(path, json.dumps(data, indent=2, sort_keys=True) + "\n")
    return path


# ---------------------------------------------------------------------- per decision
@dataclass(frozen=True)
class DecisionUsage:
    """One decision's use: ``call`` when the telemetry counts tokens (a model was asked);
    ``cost`` None when unknown (no price for ``model``) or not applicable (no call)."""

    call: bool
    model: str | None
    tokens_in: int
    cached_tokens: int
    tokens_out: int
    latency_s: float | None
    cost: float | None
    cache_hit: bool = False

    @property
    def cost_unknown(self) -> bool:
        return self.call and self.cost is None


def _count(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else 0


def decision_usage(telemetry: Mapping[str, Any], prices: Mapping[str, ModelPrice]) -> DecisionUsage:
    """The usage of one decision from its telemetry (see the module docstring for the cost rule)."""
    latency = telemetry.get("latency_s")
    latency = float(latency) if isinstance(latency, (int, float)) and math.isfinite(latency) else None
    call = "tokens_in" in telemetry or "tokens_out" in telemetry
    model = telemetry.get("model")
    model = str(model) if model is not None else None
    tin, cached, tout = (_count(telemetry.get(k)) for k in ("tokens_in", "cached_tokens", "tokens_out"))
    cost: float | None = None
    hit = call and telemetry.get("cached") is True
    if hit:
        cost = 0.0  # the player's own response cache answered: nothing billed
    elif call and model is not None and model in prices:
        cost = prices[model].cost(tin, min(cached, tin), tout)
    elif call and isinstance(telemetry.get("cost"), (int, float)):
        cost = float(telemetry["cost"])
    return DecisionUsage(call, model, tin, cached, tout, latency, cost, hit)


# ---------------------------------------------------------------------- totals
@dataclass
class UsageTotals:
    """Sums over decisions: counts, tokens, latency, cost (None once any priced call is unknown)."""

    decisions: int = 0
    calls: int = 0
    cache_hits: int = 0
    tokens_in: int = 0
    cached_tokens: int = 0
    tokens_out: int = 0
    latencies: list[float] = field(default_factory=list)
    cost: float | None = 0.0
    unpriced: dict[str, int] = field(default_factory=dict)  # model -> calls without a price
    models: set[str] = field(default_factory=set)

    def add(self, u: DecisionUsage) -> None:
        self.decisions += 1
        if u.latency_s is not None:
            self.latencies.append(u.latency_s)
        if not u.call:
            return
        self.calls += 1
        self.cache_hits += u.cache_hit
        self.tokens_in += u.tokens_in
        self.cached_tokens += u.cached_tokens
        self.tokens_out += u.tokens_out
        if u.model is not None:
            self.models.add(u.model)
        if u.cost is None:
            self.cost = None
            key = u.model or "(no model named)"
            self.unpriced[key] = self.unpriced.get(key, 0) + 1
        elif self.cost is not None:
            self.cost += u.cost

    @property
    def latency_total_s(self) -> float:
        return float(sum(self.latencies))

    @property
    def latency_mean_s(self) -> float | None:
        return self.latency_total_s / len(self.latencies) if self.latencies else None

    def latency_quantile_s(self, q: float) -> float | None:
        """The ``q`` quantile of the decisions' latencies (nearest rank: a latency that occurred)."""
        if not self.latencies:
            return None
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]

    def cost_text(self) -> str:
        """``$0.0123``, ``-`` (no priced model calls), or ``unknown (no price for MODEL)``."""
        if self.calls == 0:
            return "-"
        if self.cost is None:
            return "unknown (no price for " + ", ".join(sorted(self.unpriced)) + ")"
        return dollars(self.cost)


def dollars(x: float) -> str:
    return f"${x:.4f}" if x < 100 else f"${x:,.2f}"


def unused_prices(prices: Mapping[str, ModelPrice], totals: Iterable[UsageTotals]) -> list[str]:
    """Models the price table names that no decision used (a misspelt name, most likely)."""
    used: set[str] = set().union(*(t.models for t in totals))
    return sorted(set(prices) - used)
