"""The player protocol: what a bot, a scripted policy, a human or a language model implements."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from .errors import PlayerError, PlayerOptionsError
from .seeding import make_rng

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from .game import Game, Position
    from .match import Match
    from .text import ParseResult, Prompt, TextView

T = TypeVar("T")


@dataclass(frozen=True)
class Decision:
    """Everything a player may use to decide: never the hidden state (docs/core.md, "Players")."""

    game: Game[Any, Any]
    seat: int
    observation: dict[str, Any]
    legal_actions: tuple[Any, ...]
    ply: int
    episode_seed: int
    _position: Position[Any] = field(repr=False, compare=False)

    @classmethod
    def at(cls, game: Game[Any, Any], pos: Position[Any], seat: int, episode_seed: int) -> Decision:
        """The decision of ``seat`` at ``pos`` (what game loops hand to players)."""
        return cls(game, seat, game.observe(pos, seat), game.legal(pos, seat), pos.ply, episode_seed, pos)

    def view_with(self, fn: Callable[[Game[Any, Any], Position[Any], int], T]) -> T:
        """``fn(game, position, seat)``: this decision through any other view; ``fn`` must read the
        position only through the game's per-seat hooks (it also holds what this seat may not see)."""
        return fn(self.game, self._position, self.seat)

    def render(self, view: TextView) -> Prompt:
        """This decision through another text view (e.g. a compact one for small models)."""
        return self.view_with(view.prompt)

    def parse_with(self, view: TextView, text: str) -> ParseResult:
        return view.parse(self.game, self._position, self.seat, text)

    def prompt(self) -> Prompt:
        return self.render(self.game.text_view())

    def parse(self, text: str) -> ParseResult:
        return self.parse_with(self.game.text_view(), text)

    def encoded_observation(self) -> np.ndarray:
        return self.game.encode_observation(self._position.state, self.seat)

    def rng(self, *keys: int | str) -> np.random.Generator:
        """A generator for this decision, derived from the episode seed, the seat and the ply."""
        return make_rng(self.episode_seed, "player", self.seat, self.ply, *keys)


def begin_episodes(players: Sequence[Any] | Mapping[int, Any], game: Game[Any, Any], seed: int) -> None:
    """Tell each seated player (a sequence by seat, or seat -> player) that an episode of
    ``game`` from ``seed`` begins: ``begin_episode(game, seat, seed)`` where a player has it."""
    for seat, player in players.items() if isinstance(players, Mapping) else enumerate(players):
        hook = getattr(player, "begin_episode", None)
        if hook is not None:
            hook(game, seat, seed)


class PlayerHookWarning(UserWarning):
    """A player's episode hook raised: the episode's result stands, the error is shown."""


@dataclass(frozen=True)
class EpisodeEnd:
    """What a seat learns when an episode ends: its final observation (``game.observe`` of the
    final position: only what this seat may see) and the returns (None when truncated)."""

    game: Game[Any, Any]
    seat: int
    episode_seed: int
    observation: dict[str, Any]
    returns: tuple[float, ...] | None
    reason: str


def end_episodes(players: Sequence[Any] | Mapping[int, Any], match: Match) -> None:
    """Tell each seated player that ``match`` has ended: ``end_episode(EpisodeEnd)`` where a
    player has it (a search player learning its opponents, an LLM player freeing its caches).
    A hook that raises never undoes the result: it becomes a :class:`PlayerHookWarning`."""
    for seat, player in players.items() if isinstance(players, Mapping) else enumerate(players):
        hook = getattr(player, "end_episode", None)
        if hook is None:
            continue
        try:
            hook(episode_end(match, seat))
        except Exception as exc:  # a learning hook's failure is shown, never a crash of the loop
            warn_hook_failed(player, seat, exc)


def episode_end(match: Match, seat: int) -> EpisodeEnd:
    """The :class:`EpisodeEnd` of ``seat`` for an ended ``match``."""
    end = match.end
    if end is None:
        raise ValueError("episode_end: the match has not ended")
    returns = None if end.returns is None else tuple(float(r) for r in end.returns)
    observation = match.game.observe(match.position, seat)
    return EpisodeEnd(match.game, seat, match.seed, observation, returns, end.reason.value)


def warn_hook_failed(player: Any, seat: int, exc: BaseException) -> None:
    name = getattr(player, "name", type(player).__name__)
    warnings.warn(
        f"player {name} (seat {seat}) end_episode raised {type(exc).__name__}: {exc}", PlayerHookWarning, stacklevel=3
    )


@dataclass(frozen=True)
class Move:
    """A player's answer with its telemetry (tokens, latency, parse info, ...)."""

    action: Any
    telemetry: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Player(Protocol):
    """``act`` returns an action, its canonical string, free text (parsed by the text view),
    or a :class:`Move` carrying any of those plus telemetry."""

    name: str

    def act(self, decision: Decision) -> Any: ...


class BasePlayer:
    """Convenience base: a name, a seed, and an episode hook."""

    name = "player"

    def __init__(self, seed: int = 0, **options: Any):
        if options:
            raise PlayerOptionsError(f"{type(self).__name__} takes no options; remove {', '.join(sorted(options))}")
        self.seed = int(seed)

    def begin_episode(self, game: Game[Any, Any], seat: int, episode_seed: int) -> None:
        """Called before an episode; override to reset per-episode state."""

    def end_episode(self, end: EpisodeEnd) -> None:
        """Called after an episode with this seat's final observation and the returns; override
        to learn from the outcome or free per-episode state."""

    def act(self, decision: Decision) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError


def preflight_player(name: str, player: Any) -> None:
    """Run ``player.preflight()`` where it has one (an HTTP player checks its key and that its
    endpoint answers). Any failure becomes one :class:`~arena_core.errors.PlayerError` line
    naming the entrant ``name``, with secrets scrubbed."""
    from .outputs import scrub_and_cut

    check = getattr(player, "preflight", None)
    if check is None:
        return
    try:
        check()
    except Exception as exc:
        detail = " ".join(str(exc).split()) or type(exc).__name__
        raise PlayerError(f"entrant {name!r} failed its preflight: {scrub_and_cut(detail, 300)}") from None
