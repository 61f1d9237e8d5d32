"""A tournament's game and entrants, built: the schedule resolved from a config, the game built once
per process, every entrant checked and preflighted before the first game, players built per game
(or kept per process when ``fresh_players`` is false).

The kept players live here and only here: the runner asks :func:`preflight_entrants` to keep the
players it built (a sequential run with ``fresh_players = false``), and :func:`build_player` hands
them back to the games.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from arena_core.errors import ArenaError, ConfigError
from arena_core.game import Game
from arena_core.outputs import scrub_and_cut

from .identity import check_no_literal_secrets, entrant_identity
from .schedule import Entrant, Schedule, ScheduledGame

if TYPE_CHECKING:
    from .config import TournamentConfig

_GAME_CACHE: dict[tuple[Any, ...], Game[Any, Any]] = {}
_KEPT_PLAYERS: dict[str, Any] = {}


def import_object(path: str) -> Any:
    """The object named by 'package.module:attr'."""
    module, _, attr = path.partition(":")
    try:
        obj = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(
            f"cannot import {path!r}: {exc}; check the module is importable (installed or on PYTHONPATH)"
        ) from None
    return obj


def build_game(schedule: Schedule) -> Game[Any, Any]:
    """The schedule's game, built once per process."""
    key = (schedule.game, schedule.game_factory, json.dumps(schedule.params, sort_keys=True), schedule.num_players)
    if key not in _GAME_CACHE:
        if schedule.game_factory:
            _GAME_CACHE[key] = import_object(schedule.game_factory)(schedule.params, num_players=schedule.num_players)
        else:
            from arena_core.registry import make_game

            _GAME_CACHE[key] = make_game(schedule.game, schedule.params, num_players=schedule.num_players)
    return _GAME_CACHE[key]


def build_player(entrant: Entrant, *, fresh: bool = True) -> Any:
    """A new player for ``entrant``; with ``fresh=False`` the one this process already built for it, if any."""
    if not fresh and entrant.name in _KEPT_PLAYERS:
        return _KEPT_PLAYERS[entrant.name]
    spec = entrant.spec
    if spec is None:  # an unregistered player, by import path
        assert entrant.factory is not None  # an entrant names a factory or a player
        player = import_object(entrant.factory)(seed=entrant.seed, **entrant.options)
    else:
        from arena_core.registry import make_player

        player = make_player(spec, seed=entrant.seed)  # the spec parsed once, where the entrant was read
    if not fresh:
        _KEPT_PLAYERS[entrant.name] = player
    return player


def resolve_schedule(config: TournamentConfig) -> Schedule:
    """The schedule of ``config`` (the game is built here to learn its default player count)."""
    num_players = config.num_players
    if num_players is None:
        if config.game_factory:
            num_players = import_object(config.game_factory)(config.params).num_players
        else:
            from arena_core.registry import make_game

            num_players = make_game(config.game, config.params).num_players
    return config.schedule(num_players)


def check_entrants(schedule: Schedule) -> None:
    """Fail early, in the caller's process, on entrants whose player cannot be found or whose
    config holds a literal secret."""
    from arena_core.registry import load, plugin_info

    for e in schedule.entrants:
        spec = e.spec  # the registered name and options: Entrant parsed the spec
        check_no_literal_secrets(e)
        if spec is None:
            assert e.factory is not None  # an entrant names a factory or a player
            import_object(e.factory)
            continue
        info = plugin_info("players", spec.name)
        if not info.available:
            raise ConfigError(f"entrant {e.name!r}: player {spec.name!r} is not usable here: {info.reason}")
        load("players", spec.name)  # import errors surface here, and forked workers inherit the module


@dataclass(frozen=True)
class Lineup:
    """A tournament ready to play: its schedule, every game of it, and each entrant's resolved identity."""

    schedule: Schedule
    games: list[ScheduledGame]
    identities: dict[str, dict[str, Any]]


def prepare(config: TournamentConfig, *, preflight: bool = True, keep: bool = False) -> Lineup:
    """The schedule of ``config``, its game built, its entrants checked, built and (``preflight``)
    preflighted before any game: a bad game id, parameter or entrant fails here in one line.
    ``keep``: reuse the built players in this process's games (see :func:`preflight_entrants`)."""
    schedule = resolve_schedule(config)
    games = schedule.games()
    build_game(schedule)
    check_entrants(schedule)
    return Lineup(schedule, games, preflight_entrants(schedule, preflight=preflight, keep=keep))


def preflight_entrants(schedule: Schedule, *, preflight: bool = True, keep: bool = False) -> dict[str, dict[str, Any]]:
    """Build every entrant (and run its ``preflight()`` unless ``preflight`` is False) before
    the first game; a failure is one :class:`ConfigError` line naming the entrant. Returns each
    entrant's resolved identity. ``keep``: reuse the built players in this process's games."""
    from arena_core.players import preflight_player

    identities: dict[str, dict[str, Any]] = {}
    for e in schedule.entrants:
        try:
            player = build_player(e, fresh=True)
        except ArenaError as exc:
            raise ConfigError(f"entrant {e.name!r} cannot be built: {_one_line(str(exc))}") from None
        except Exception as exc:
            raise ConfigError(
                f"entrant {e.name!r} cannot be built: {type(exc).__name__}: {_one_line(str(exc))}"
            ) from None
        if preflight:
            try:
                preflight_player(e.name, player)
            except ArenaError as exc:
                raise ConfigError(f"{exc}; skip the check with run.preflight = false or --no-preflight") from None
        identities[e.name] = entrant_identity(e, player)
        if keep:
            _KEPT_PLAYERS[e.name] = player
    return identities


def _one_line(text: str, limit: int = 300) -> str:
    return scrub_and_cut(" ".join(text.split()), limit)
