"""arena_core: the protocol of Arena -- games, players, trainers, environments and records."""

from . import registration
from .episode import EndReason, EpisodeRecord, read_episodes
from .errors import (
    ArenaError,
    ConfigError,
    DuplicatePluginError,
    GameOverError,
    IllegalActionError,
    InvalidParamsError,
    NotYourTurnError,
    PlayerCountError,
    PlayerError,
    PluginError,
    PluginUnavailableError,
    ReplayDivergenceError,
    UnknownGameError,
    UnknownPlayerError,
)
from .game import Game, Position
from .match import Match
from .players import BasePlayer, Decision, Move, Player
from .policy import IllegalActionPolicy
from .runner import play_episode
from .seeding import derive_seed, make_rng
from .spec import GameParams, GameSpec, Information, NoParams, TurnStructure, Utility
from .text import GenericTextView, ParseResult, Prompt

# PettingZoo's and Gymnasium's registries learn every game's name ("arena/<id>-v0") when those
# libraries are imported; nothing is imported here (arena_core.registration)
registration.install()

__all__ = [
    "ArenaError",
    "BasePlayer",
    "ConfigError",
    "Decision",
    "DuplicatePluginError",
    "EndReason",
    "EpisodeRecord",
    "Game",
    "GameOverError",
    "GameParams",
    "GameSpec",
    "GenericTextView",
    "IllegalActionError",
    "IllegalActionPolicy",
    "Information",
    "InvalidParamsError",
    "Match",
    "Move",
    "NoParams",
    "NotYourTurnError",
    "ParseResult",
    "Player",
    "PlayerCountError",
    "PlayerError",
    "PluginError",
    "PluginUnavailableError",
    "Position",
    "Prompt",
    "ReplayDivergenceError",
    "TurnStructure",
    "UnknownGameError",
    "UnknownPlayerError",
    "Utility",
    "derive_seed",
    "make_rng",
    "play_episode",
    "read_episodes",
]
