"""The state and legality seam of the TextArena adapter: the episode as data
(:class:`TextArenaState`, its :class:`Outcome`, a title's :class:`TitleSpec` and the options)
and the legality hooks of a title (:class:`LegalityHooks`).

A :class:`TextArenaState` is data: TextArena's seed, the action strings played so far, who
played them, who is to move and, at the end, the outcome. Everything else is a view of that
history, derived when first asked for and memoised on the state (never part of its equality):
the messages each player has received in this episode (read from TextArena's append-only
queues, converted once per message) and the legal set of the player to move. A submitted move
is checked with the title's cheap check where it has one (see :mod:`.legal`), so the legal set
is built only when someone asks for it (``legal``, ``mask``, a prompt).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NamedTuple

from pydantic import Field

from arena_core.errors import ArenaError
from arena_core.spec import GameParams, Information, TurnStructure, Utility

from .bridge import Message, _invalid_reason, _new_tuple, _Transcript

if TYPE_CHECKING:
    from collections import OrderedDict

    from .bridge import _LiveEnv

#: the index recorded for free text outside a title's vocabulary (free-text titles only):
#: such text has no place in the fixed action-index space
NO_INDEX = -1
#: the longest action text the adapter passes to TextArena
MAX_ACTION_CHARS = 4000
#: a probed text's key: (TextArena's seed, the action strings with the text appended)
ProbeKey = tuple[int, tuple[str, ...]]


class AdapterError(ArenaError):
    """The adapter and TextArena disagree (a bug in a legal-set derivation or in TextArena)."""


class LegalMethod(str, Enum):
    """How a title's legal set is known."""

    PRINTED = "printed"  # the title prints the legal moves; the adapter reads them from its state
    DERIVED = "derived"  # derived from the rules and the visible state (board, hand, current bid)
    FREE_TEXT = "free_text"  # any text is admissible; TextArena judges it; candidates are offered


class EndKind(str, Enum):
    """Why a TextArena episode ended, typed."""

    NATURAL = "natural"  # the title's rules ended the game (win, loss or real draw)
    TURN_LIMIT = "turn_limit"  # TextArena's own turn limit ended it undecided: a truncation, not a draw
    DECISION_CAP = "decision_cap"  # the adapter's cap on decisions (titles with no end in TextArena)
    FORFEIT = "forfeit"  # TextArena ended it because of invalid moves (never on the canonical line)
    PLAYER_ERROR = "player_error"  # a livelock (e.g. an eliminated player asked forever) ended by the adapter
    ENV_ERROR = "env_error"  # TextArena raised while applying a move

    @property
    def truncated(self) -> bool:
        return self in (EndKind.TURN_LIMIT, EndKind.DECISION_CAP, EndKind.ENV_ERROR)


@dataclass(frozen=True, slots=True)
class Outcome:
    """How the episode ended: the kind, TextArena's returns and reason, and any offender."""

    kind: EndKind
    returns: tuple[float, ...]
    reason: str
    offender: int | None = None


#: the source of a state built from plain data (its inbox is given, so the source is never read)
_NO_SOURCE = _Transcript([], [])


class _StateFields(NamedTuple):
    """The fields of :class:`TextArenaState`, by name (a tuple underneath)."""

    ta_seed: int  # TextArena's seed (derived from the arena seed)
    actions: tuple[str, ...]  # the action strings played so far
    actors: tuple[int, ...]  # who played each of them
    to_move: tuple[int, ...]  # the player to move (empty at the end)
    outcome: Outcome | None  # how the episode ended (None while it runs)
    # not data (never compared, hashed, pickled or serialised):
    source: _Transcript  # the transcript the inbox is read from (unread when the inbox is given)
    counts: tuple[int, ...]  # the message counts per player at this state (idem)
    memo: list[tuple[Any, ...] | None]  # [inbox, legal set of the player to move], each None until first use


class TextArenaState(_StateFields):
    """Everything an arena game needs to know about a TextArena episode, as data: TextArena's
    seed, the action strings played, who played them, who is to move, and the outcome.

    ``inbox`` (per player, every :class:`Message` received this episode) is derived from that
    history: read from the episode's transcript on first use, then memoised, as is the legal set
    of the player to move. The memo is never part of equality, hashing, pickling or JSON; two
    states are equal when their data and inboxes are.

    A named tuple (read its fields by name) so that the adapter builds one per step in a single
    C call; ``TextArenaState(ta_seed, actions, actors, to_move, outcome, inbox)`` builds one from
    plain data.
    """

    __slots__ = ()

    def __new__(
        cls,
        ta_seed: int,
        actions: Sequence[str],
        actors: Sequence[int],
        to_move: Sequence[int],
        outcome: Outcome | None = None,
        inbox: Sequence[Sequence[Message]] = (),
    ) -> TextArenaState:
        plain = tuple(tuple(Message._make(m) for m in box) for box in inbox)
        state: TextArenaState = _new_tuple(
            cls, (int(ta_seed), tuple(actions), tuple(actors), tuple(to_move), outcome, _NO_SOURCE, (), [plain, None])
        )
        return state

    @property
    def inbox(self) -> tuple[tuple[Message, ...], ...]:
        memo = self.memo
        inbox = memo[0]
        if inbox is None:
            source = self.source
            inbox = memo[0] = tuple(tuple(source.messages(p, c)) for p, c in enumerate(self.counts))
        return inbox

    def messages(self, player: int) -> list[Message]:
        """A fresh list of the messages ``player`` has received this episode."""
        known = self.memo[0]
        if known is not None:
            return list(known[player])
        return self.source.messages(player, self.counts[player])

    def _data(self) -> tuple[int, tuple[str, ...], tuple[int, ...], tuple[int, ...], Outcome | None]:
        return self[:5]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TextArenaState):
            return NotImplemented
        return self is other or (self[:5] == other[:5] and self.inbox == other.inbox)

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(self[:4])

    def __repr__(self) -> str:
        return (
            f"TextArenaState(ta_seed={self.ta_seed!r}, actions={self.actions!r}, actors={self.actors!r}, "
            f"to_move={self.to_move!r}, outcome={self.outcome!r})"
        )

    def __reduce__(self) -> tuple[type[TextArenaState], tuple[Any, ...]]:
        """Pickle (and copy) as plain data: the inbox materialised, no live references."""
        return (TextArenaState, (*self[:5], self.inbox))

    def __copy__(self) -> TextArenaState:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> TextArenaState:
        return self


def _state(
    ta_seed: int,
    actions: tuple[str, ...],
    actors: tuple[int, ...],
    to_move: tuple[int, ...],
    outcome: Outcome | None,
    transcript: _Transcript,
    legal: tuple[str, ...] | None,
) -> TextArenaState:
    """A state on a live env's line: the inbox is read from ``transcript`` at today's counts."""
    counts = tuple(map(len, transcript.queues))
    return _new_tuple(TextArenaState, (ta_seed, actions, actors, to_move, outcome, transcript, counts, [None, legal]))


@dataclass(frozen=True)
class TitleSpec:
    """One TextArena title as the adapter runs it: properties as data plus its legal-set method."""

    env_id: str
    players: tuple[int, int]
    method: LegalMethod
    vocabulary: tuple[str, ...]  # the fixed action-index space (canonical strings)
    legal: Callable[[Any, int], tuple[str, ...]] | None  # exact legal set (None for free-text titles)
    decision_cap: int  # upper bound on decisions at max players (the adapter ends the game there)
    #: ``(env, player, action) -> bool``: is the vocabulary string ``action`` in the legal set? With a
    #: check the legal set is built only when asked for; only for titles whose set is never empty in play
    check: Callable[[Any, int, str], bool] | None = None
    reward_bounds: tuple[float, float] = (-1.0, 1.0)
    utility: Utility = Utility.ZERO_SUM
    chance: bool = True
    information: Information = Information.IMPERFECT
    turn_structure: TurnStructure = TurnStructure.SEQUENTIAL
    description: str = ""
    known_bugs: tuple[str, ...] = ()
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    exempt_checks: Mapping[str, str] = field(default_factory=dict)

    @property
    def free_text(self) -> bool:
        return self.method is LegalMethod.FREE_TEXT


class TextArenaParams(GameParams):
    """Options of every TextArena title."""

    random_isolation: Literal["swap", "save_restore"] = Field(
        default="swap",
        description="how TextArena's draws are kept off the global `random`: the title's modules draw from a private "
        "generator during each call ('swap', fast, thread-safe), or the global state saved and restored around each call",
    )
    max_observation_chars: int | None = Field(
        default=None, ge=200, description="length budget of the rendered transcript (None: unlimited)"
    )


class LegalityHooks:
    """The legality hooks of :class:`~.adapter.TextArenaGame` (a mixin: it reads the game's
    live-env cache, ``_live_at``, and the attributes ``setup`` fills in)."""

    if TYPE_CHECKING:  # what the mixin reads from TextArenaGame (declared for type checkers only)
        from arena_core.spec import GameSpec

        title: ClassVar[TitleSpec]
        spec: ClassVar[GameSpec]
        cache_size: ClassVar[int]
        _index: dict[str, int]
        _check: Callable[[Any, int, str], bool] | None
        _free_text: bool
        _at: dict[int, tuple[TextArenaState, _LiveEnv]]
        _probed: OrderedDict[ProbeKey, _LiveEnv]
        rejections: OrderedDict[ProbeKey, str]

        def _live_at(self, state: TextArenaState, *, take: bool) -> _LiveEnv: ...

    def legal_actions(self, state: TextArenaState, player: int) -> tuple[str, ...]:
        if state.outcome is not None or player not in state.to_move:
            return ()
        memo = state.memo
        legal = memo[1]
        if legal is None:  # a title with a check (or free text): derived on first use
            live = self._live_at(state, take=False)
            if self.title.free_text:
                legal = tuple(c for c in self.title.vocabulary if self._probe(state, live, c))
            else:
                legal = tuple(self.title.legal(live.env, player))  # type: ignore[misc]  # set for every title that is not free text
                if not legal:
                    raise AdapterError(
                        f"{self.spec.id}: no legal move for player {player} in a running game; "
                        "a title with a check must never reach this -- please report it with the seed and history"
                    )
            memo[1] = legal
        return legal

    def is_legal(self, state: TextArenaState, player: int, action: str) -> bool:
        if state.outcome is not None or player not in state.to_move or not isinstance(action, str):
            return False
        check = self._check
        if check is not None:
            legal = state.memo[1]
            if legal is not None:
                return action in legal
            if action not in self._index:
                return False
            entry = self._at.get(id(state))
            live = entry[1] if entry is not None and entry[0] is state else self._live_at(state, take=False)
            return check(live.env, player, action)
        if not self.title.free_text:
            return action in self.legal_actions(state, player)
        if not action.strip() or len(action) > MAX_ACTION_CHARS:
            return False
        if action in self._index:  # the vocabulary's legal subset is computed once per position
            return action in self.legal_actions(state, player)
        return self._probe(state, self._live_at(state, take=False), action)

    def _probe(self, state: TextArenaState, live: _LiveEnv, text: str) -> bool:
        """Would TextArena accept ``text`` here? Steps a copy; keeps it for the forward step."""
        new_key = (state.ta_seed, state.actions + (text,))
        if new_key in self._probed:
            return True
        if new_key in self.rejections:
            return False
        clone = live.clone()
        try:
            clone.rng.call(clone.env.step, text)
            reason = _invalid_reason(clone.env, state.to_move[0])
        except Exception as exc:  # TextArena crashed on this text: it is not an admissible move
            reason = f"TextArena raised {type(exc).__name__}: {exc}"
        if reason is not None:
            self.rejections[new_key] = reason
            while len(self.rejections) > 64:
                self.rejections.popitem(last=False)
            return False
        self._probed[new_key] = clone
        while len(self._probed) > self.cache_size:
            self._probed.popitem(last=False)
        return True

    def rejection_reason(self, state: TextArenaState, text: str) -> str | None:
        """TextArena's reason for rejecting ``text`` at ``state`` (free-text titles), if probed."""
        return self.rejections.get((state.ta_seed, state.actions + (text,)))

    def illegal_reason(self, state: TextArenaState, player: int, action: Any) -> str | None:
        """What TextArena itself says is wrong with a rejected ``action`` (recorded with the policy
        event): the probe's reason on free-text titles; on exact titles the text is stepped on a
        copy of the env (only on this rejection path) and TextArena's complaint, if any, returned."""
        if not isinstance(action, str) or state.outcome is not None or player not in state.to_move:
            return None
        if self._free_text:
            why = self.rejection_reason(state, action)
        else:
            clone = self._live_at(state, take=False).clone()
            try:
                clone.rng.call(clone.env.step, action[:MAX_ACTION_CHARS])
                why = _invalid_reason(clone.env, player)
            except Exception as exc:  # TextArena crashed on the text: that is its answer
                why = f"TextArena raised {type(exc).__name__}: {exc}"
            if why is None:
                return "TextArena would accept this text, but it is not one of the title's canonical legal actions"
        return None if why is None else f"TextArena: {why}"
