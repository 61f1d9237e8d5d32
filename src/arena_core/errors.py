"""Errors, typed by the boundary that failed; each names what went wrong and, where there is one, the fix."""

from __future__ import annotations


class ArenaError(Exception):
    """Base class of every error raised by arena_core."""


# --- rules boundary -------------------------------------------------------------------
class RulesError(ArenaError):
    """A move was submitted that the rules do not allow at this point."""


class IllegalActionError(RulesError):
    """The action is not in the acting player's legal set."""

    def __init__(self, message: str, *, player: int | None = None, action: object = None):
        super().__init__(message)
        self.player = player
        self.action = action


class NotYourTurnError(RulesError):
    """A player acted while it was not one of the players to act."""


class GameOverError(RulesError):
    """An action was submitted after the episode ended."""


# --- configuration boundary ----------------------------------------------------------
class ConfigError(ArenaError):
    """User-supplied configuration is invalid (parameters, player count, options)."""


class InvalidParamsError(ConfigError):
    """Game parameters failed validation."""


class PlayerCountError(ConfigError):
    """The number of players is outside the game's declared range."""


class PlayerOptionsError(ConfigError, TypeError):
    """A player was given options it does not take (a TypeError too, for older callers)."""


# --- plugin boundary -----------------------------------------------------------------
class PluginError(ArenaError):
    """A plugin could not be found, loaded or validated."""


class UnknownPluginError(PluginError, KeyError):
    """No plugin of that kind has that name."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class UnknownGameError(UnknownPluginError):
    """No registered game has that id."""


class UnknownPlayerError(UnknownPluginError):
    """No registered player has that name."""


class DuplicatePluginError(PluginError):
    """Two distributions register the same name in one entry-point group."""


class PluginUnavailableError(PluginError):
    """A plugin is registered but cannot be imported here (usually a missing extra)."""


class PluginProtocolError(PluginError):
    """A loaded plugin object does not satisfy the protocol of its group."""


# --- player boundary -----------------------------------------------------------------
class PlayerError(ArenaError):
    """A player crashed, timed out or answered with something that is not an action."""


# --- record boundary -----------------------------------------------------------------
class EpisodeError(ArenaError):
    """An episode record is malformed."""


class ReplayDivergenceError(EpisodeError):
    """Re-running a recorded episode did not reproduce it."""


class SerializationError(ArenaError):
    """A state could not be written or read back."""
