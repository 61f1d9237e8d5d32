"""Any TextArena env id as an arena game, with none of TextArena's defects showing through.

The arena state of a TextArena title is data: TextArena's seed, the action strings played so
far, who played them, who is to move and, at the end, the outcome. Everything else is a view of
that history, derived when first asked for and memoised on the state (never part of its
equality): the messages each player has received in this episode (read from TextArena's
append-only queues, converted once per message) and the legal set of the player to move.

The live TextArena env is a *cache*: the adapter remembers which env is at which state (the
state it last stepped each env to), so forward play costs one TextArena step per action plus a
few dictionary operations; any other state (a branch, a restored position, a deserialised one)
is rebuilt by replaying the history on a fresh ``-raw`` env. A submitted move is checked with
the title's cheap check where it has one (see :mod:`.legal`), so the legal set is built only
when someone asks for it (``legal``, ``mask``, a prompt).

Every TextArena call runs with the env's own ``random`` stream: by default
(:class:`SwappedRandom`) the title's TextArena modules draw from a private generator while the
call runs and the global generator is not touched at all; with
``random_isolation="save_restore"`` (:class:`PrivateRandom`) the global state is saved and
restored around every call. Either way TextArena's ``random.seed`` in ``reset`` reseeds nobody
else, and the stream equals TextArena's own for that seed.

Observations are rebuilt from the messages the player has received *in this episode*,
read without draining TextArena's queues, with an optional length budget. The
``LLMObservationWrapper`` (which keeps transcripts across resets) is never used.
"""
from __future__ import annotations

import copy
import _random
import random
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from enum import Enum
from functools import partial
from operator import itemgetter
from typing import Any, Callable, ClassVar, Literal, Mapping, NamedTuple, Sequence

import numpy as np
from pydantic import Field

from arena_core.episode import EndReason
from arena_core.errors import ArenaError, SerializationError
from arena_core.game import Game
from arena_core.serial import from_jsonable, to_jsonable
from arena_core.spec import GameParams, GameSpec, Information, TurnStructure, Utility

#: the index recorded for free text outside a title's vocabulary (free-text titles only):
#: such text has no place in the fixed action-index space
NO_INDEX = -1
#: the longest action text the adapter passes to TextArena
MAX_ACTION_CHARS = 4000

_INVALID_MOVE = re.compile(r"attempted an invalid move", re.IGNORECASE)
_NOTICE_REASON = re.compile(r"Reason:\s*(.*?)\s*(?:Please resubmit|$)", re.DOTALL)
_TURN_LIMIT = re.compile(r"turn limit|maximum number of turns|move limit", re.IGNORECASE)


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


class Message(NamedTuple):
    """One message a player received: sender (-1 is the game), TextArena's type name, text."""

    sender: int
    kind: str
    text: str

    def render(self) -> str:
        who = "GAME" if self.sender == -1 else f"Player {self.sender}"
        return f"[{who}] {self.text}"


_new_tuple = tuple.__new__  # builds a Message without NamedTuple's Python-level __new__


_END_REASONS = {
    EndKind.NATURAL: EndReason.NATURAL,
    EndKind.TURN_LIMIT: EndReason.TURN_CAP,
    EndKind.DECISION_CAP: EndReason.TURN_CAP,
    EndKind.FORFEIT: EndReason.FORFEIT,
    EndKind.PLAYER_ERROR: EndReason.PLAYER_ERROR,
    EndKind.ENV_ERROR: EndReason.GAME_ERROR,
}


@dataclass(frozen=True, slots=True)
class Outcome:
    """How the episode ended: the kind, TextArena's returns and reason, and any offender."""

    kind: EndKind
    returns: tuple[float, ...]
    reason: str
    offender: int | None = None


class _Transcript:
    """The message queues of one live env, read without draining and converted to
    :class:`Message` once per message, on demand. TextArena only appends to a player's queue
    (the adapter never calls ``get_observation``), so the first ``k`` messages of a queue never
    change and every state on this env's line reads its inbox as a prefix."""

    __slots__ = ("queues", "converted")

    def __init__(self, queues: Sequence[list], converted: list[list[Message]] | None = None):
        self.queues = tuple(queues)
        self.converted = converted if converted is not None else [[] for _ in self.queues]

    @classmethod
    def of(cls, env: Any, num_players: int) -> "_Transcript":
        observations = env.state.observations
        return cls([observations[p] for p in range(num_players)])

    def counts(self) -> tuple[int, ...]:
        return tuple(map(len, self.queues))

    def messages(self, player: int, count: int) -> list[Message]:
        """A fresh list of the first ``count`` messages of ``player``."""
        done = self.converted[player]
        if len(done) < count:
            done.extend([_new_tuple(Message, (s, t._name_, m)) for s, m, t in self.queues[player][len(done):count]])
        return done[:count]

    def fork(self, env: Any) -> "_Transcript":
        """The transcript of a deep copy of this env (same messages so far, its own queues)."""
        observations = env.state.observations
        return _Transcript([observations[p] for p in range(len(self.queues))], [list(c) for c in self.converted])


class TextArenaState(tuple):
    """Everything an arena game needs to know about a TextArena episode, as data: TextArena's
    seed, the action strings played, who played them, who is to move, and the outcome.

    ``inbox`` (per player, every :class:`Message` received this episode) is derived from that
    history: read from the episode's transcript on first use, then memoised, as is the legal set
    of the player to move. The memo is never part of equality, hashing, pickling or JSON; two
    states are equal when their data and inboxes are.

    A tuple underneath (fields by name only, please) so that the adapter builds one per step in
    a single C call; ``TextArenaState(ta_seed, actions, actors, to_move, outcome, inbox)`` builds
    one from plain data.
    """

    __slots__ = ()

    def __new__(cls, ta_seed: int, actions: Sequence[str], actors: Sequence[int], to_move: Sequence[int],
                outcome: Outcome | None = None, inbox: Sequence[Sequence[Message]] = ()) -> "TextArenaState":
        inbox = tuple(tuple(Message._make(m) for m in box) for box in inbox)
        return _new_tuple(cls, (int(ta_seed), tuple(actions), tuple(actors), tuple(to_move), outcome, None, None, [inbox, None]))

    ta_seed: int = property(itemgetter(0), doc="TextArena's seed (derived from the arena seed)")  # type: ignore[assignment]
    actions: tuple[str, ...] = property(itemgetter(1), doc="the action strings played so far")  # type: ignore[assignment]
    actors: tuple[int, ...] = property(itemgetter(2), doc="who played each of them")  # type: ignore[assignment]
    to_move: tuple[int, ...] = property(itemgetter(3), doc="the player to move (empty at the end)")  # type: ignore[assignment]
    outcome: Outcome | None = property(itemgetter(4), doc="how the episode ended (None while it runs)")  # type: ignore[assignment]
    # 5: the transcript the inbox is read from, 6: the message counts per player (None when the
    # inbox is plain data), 7: the memo [inbox, legal set of the player to move]

    @property
    def inbox(self) -> tuple[tuple[Message, ...], ...]:
        memo = self[7]
        if memo[0] is None:
            transcript = self[5]
            memo[0] = tuple(tuple(transcript.messages(p, c)) for p, c in enumerate(self[6]))
        return memo[0]

    def messages(self, player: int) -> list[Message]:
        """A fresh list of the messages ``player`` has received this episode."""
        known = self[7][0]
        if known is not None:
            return list(known[player])
        return self[5].messages(player, self[6][player])

    def _data(self) -> tuple:
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
        return (f"TextArenaState(ta_seed={self[0]!r}, actions={self[1]!r}, actors={self[2]!r}, "
                f"to_move={self[3]!r}, outcome={self[4]!r})")

    def __reduce__(self):
        """Pickle (and copy) as plain data: the inbox materialised, no live references."""
        return (TextArenaState, (*self[:5], self.inbox))

    def __copy__(self) -> "TextArenaState":
        return self

    def __deepcopy__(self, memo: dict) -> "TextArenaState":
        return self


def _state(ta_seed: int, actions: tuple[str, ...], actors: tuple[int, ...], to_move: tuple[int, ...],
           outcome: Outcome | None, transcript: _Transcript, legal: tuple[str, ...] | None) -> TextArenaState:
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


class PrivateRandom:
    """The ``random`` stream of one TextArena env, swapped into the global generator around
    each call: the global state is saved before and restored after every call, whatever the
    call does (``random.seed`` included). Correct for any code; costs two ``getstate`` calls
    (a 625-integer tuple each) per call."""

    __slots__ = ("state",)

    def __init__(self, seed: int):
        outer = random.getstate()
        random.seed(seed)
        self.state = random.getstate()
        random.setstate(outer)

    def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        outer = random.getstate()
        random.setstate(self.state)
        try:
            return fn(*args, **kwargs)
        finally:
            self.state = random.getstate()
            random.setstate(outer)

    def copy(self) -> "PrivateRandom":
        twin = PrivateRandom.__new__(PrivateRandom)
        twin.state = self.state
        return twin


class _ModuleLikeRandom(random.Random):
    """A private generator that also answers the module-level names TextArena uses.

    Seeding with an int is lazy: the seed is kept and the Mersenne Twister set up (about 5 µs)
    only at the first draw or ``getstate``. TextArena seeds ``random`` in every ``reset``; a
    title that never draws (TicTacToe, ConnectFour, ...) never pays for it, and a seed replaced
    before any draw (our seed, then TextArena's own in ``reset``) costs nothing. The stream is
    the one ``random.Random(seed)`` gives."""

    Random = random.Random
    SystemRandom = random.SystemRandom

    def __init__(self, x: int):
        self.seed(x)

    def seed(self, a: Any = None, version: int = 2) -> None:
        if type(a) is int:
            self.gauss_next = None
            self._pending = a
            self.__class__ = _PendingSeed
        else:
            self.__class__ = _ModuleLikeRandom
            super().seed(a, version)


class _PendingSeed(_ModuleLikeRandom):
    """A :class:`_ModuleLikeRandom` whose int seed is not applied yet: anything that reads
    the stream applies it first and turns the generator back into a plain one (whose draws are
    the C methods of ``random.Random``, with no Python-level wrapper). A method bound while the
    seed was pending (``_randbelow`` keeps ``self.getrandbits``) still works afterwards."""

    def _settle(self) -> None:
        if self.__class__ is _PendingSeed:
            self.__class__ = _ModuleLikeRandom
            _random.Random.seed(self, self._pending)

    def random(self) -> float:
        _PendingSeed._settle(self)
        return _random.Random.random(self)

    def getrandbits(self, k: int) -> int:  # randrange, randint, choice, shuffle, sample draw here
        _PendingSeed._settle(self)
        return _random.Random.getrandbits(self, k)

    def randbytes(self, n: int) -> bytes:
        _PendingSeed._settle(self)
        return random.Random.randbytes(self, n)

    def getstate(self) -> tuple:
        _PendingSeed._settle(self)
        return random.Random.getstate(self)

    def setstate(self, state: tuple) -> None:
        self.__class__ = _ModuleLikeRandom
        random.Random.setstate(self, state)


class _Route(threading.local):
    gen: "random.Random | None" = None  # the generator of the adapter call running in this thread


_ROUTE = _Route()


class _RoutedRandom:
    """Stands for the ``random`` module in a title's TextArena modules (installed once, when
    the title is first made): a name resolves on the private generator of the adapter call
    running in this thread, and on the ``random`` module itself anywhere else (raw TextArena
    used directly behaves as before)."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        return getattr(_ROUTE.gen or random, name)

    def __repr__(self) -> str:
        return "<the random module, routed to an arena private generator during adapter calls>"


_ROUTED = _RoutedRandom()


class SwappedRandom:
    """The ``random`` stream of one TextArena env as a private generator: while a call runs,
    the title's TextArena modules draw from it (their name ``random`` is a :class:`_RoutedRandom`
    that resolves on the generator of the call running in this thread), so TextArena's draws
    (and its ``random.seed``) never reach the global generator, which is not touched at all,
    and games in other threads keep their own streams. Used when every module of the title
    calls ``random.<name>`` through the module (checked when the title is first made);
    otherwise the adapter falls back to :class:`PrivateRandom`. Same stream as TextArena alone
    (Mersenne Twister seeded by ``reset(seed)``)."""

    __slots__ = ("gen",)

    def __init__(self, seed: int):
        self.gen = _ModuleLikeRandom(seed)

    def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        route = _ROUTE
        outer = route.gen
        route.gen = self.gen
        try:
            return fn(*args, **kwargs)
        finally:
            route.gen = outer

    def copy(self) -> "SwappedRandom":
        twin = SwappedRandom.__new__(SwappedRandom)
        twin.gen = _ModuleLikeRandom.__new__(_ModuleLikeRandom)  # not seeded: the state is set next
        twin.gen.setstate(self.gen.getstate())
        return twin


_ROUTABLE: dict[str, bool] = {}


def _route_title(env_id: str) -> bool:
    """Point the name ``random`` of the loaded TextArena modules a title's calls can draw
    through (core, state, the title's package, shared env utils) at :data:`_ROUTED`, once per
    title. False (nothing installed) if one of them bound a ``random`` function directly: then
    only saving and restoring the global state isolates the title."""
    known = _ROUTABLE.get(env_id)
    if known is not None:
        return known
    import sys

    ta = _ta()
    entry = ta.envs.registration.ENV_REGISTRY[f"{env_id}-raw"].entry_point
    module_name = entry.split(":")[0] if isinstance(entry, str) else entry.__module__
    _import_quietly(module_name)
    package = module_name.rsplit(".", 1)[0]
    scope = ("textarena.core", "textarena.state", package, "textarena.envs.utils")
    namespaces = []
    for name, mod in list(sys.modules.items()):
        if mod is None or not any(name == s or name.startswith(s + ".") for s in scope):
            continue
        values = vars(mod).values()
        if any(getattr(v, "__self__", None) is random._inst for v in values):  # noqa: SLF001 - a direct binding
            _ROUTABLE[env_id] = False
            return False
        if vars(mod).get("random") in (random, _ROUTED):
            namespaces.append(vars(mod))
    for ns in namespaces:
        ns["random"] = _ROUTED
    _ROUTABLE[env_id] = True
    return True


def _env_factory(raw_id: str, kwargs: Mapping[str, Any]) -> Callable[[], Any]:
    """``ta.make(raw_id, **kwargs)`` with the registry lookup, the import and the kwargs merge
    done once: the same class, arguments and attributes (``env_id``, ``entry_point``) as
    ``make`` gives a ``-raw`` env. Anything unusual (wrappers, an entry point that does not
    import) goes through ``ta.make`` itself, which reports it."""
    registration = _ta().envs.registration
    spec = registration.ENV_REGISTRY.get(raw_id)
    slow = partial(registration.make, raw_id, **kwargs)
    if spec is None or spec.default_wrappers:
        return slow
    entry = spec.entry_point
    try:
        if isinstance(entry, str):
            module_path, class_name = entry.split(":")
            env_class = getattr(_import_quietly(module_path), class_name)
        else:
            env_class = entry
    except (ValueError, ImportError, AttributeError):
        return slow
    all_kwargs = {**spec.kwargs, **kwargs}

    def make() -> Any:
        env = env_class(**all_kwargs)
        env.env_id = raw_id
        env.entry_point = entry
        return env

    return make


class _LiveEnv:
    """A raw TextArena env at some history, with its private ``random`` stream and its transcript."""

    __slots__ = ("env", "rng", "transcript")

    def __init__(self, env: Any, rng: PrivateRandom | SwappedRandom, transcript: _Transcript | None = None):
        self.env = env
        self.rng = rng
        self.transcript = transcript if transcript is not None else _Transcript.of(env, len(env.state.observations))

    def clone(self) -> "_LiveEnv":
        twin = self.rng.copy()
        env = twin.call(copy.deepcopy, self.env)
        return _LiveEnv(env, twin, self.transcript.fork(env))


def _ta():
    """textarena, imported lazily (the extra may be missing) and without touching ``random``:
    importing textarena 0.7.4 advances the global generator."""
    return _import_quietly("textarena")


def _import_quietly(name: str) -> Any:
    """The module ``name``, imported with the global ``random`` state saved and restored around
    the import (TextArena's modules draw from it when first imported). A module already loaded
    is returned as it is: saving and restoring then would rewind draws that other threads
    make meanwhile."""
    import importlib
    import sys

    module = sys.modules.get(name)
    if module is not None:
        return module
    outer = random.getstate()
    try:
        return importlib.import_module(name)
    finally:
        random.setstate(outer)


class TextArenaGame(Game[TextArenaState, str]):
    """Base of every TextArena title; :func:`make_title_class` fills in ``title`` and ``spec``.

    Actions are canonical strings; ``num_actions`` is the size of the title's fixed
    vocabulary. In free-text titles any other text TextArena accepts is admissible too; it has
    no index (:data:`NO_INDEX` in records).
    """

    title: ClassVar[TitleSpec]
    Params = TextArenaParams
    State = TextArenaState
    #: live envs kept per game instance (forward play in that many interleaved episodes is cheap)
    cache_size: ClassVar[int] = 64

    def setup(self) -> None:
        vocab = self.title.vocabulary
        self._index = {a: i for i, a in enumerate(vocab)}
        if len(self._index) != len(vocab):
            raise AdapterError(f"{self.spec.id}: duplicate strings in the vocabulary")
        self._raw_id = f"{self.title.env_id}-raw"
        self._make_env: Callable[[], Any] | None = None  # see _env_factory (made on first use)
        self._env_kwargs = dict(self.title.env_kwargs)
        self._free_text = self.title.free_text
        self._check = None if self._free_text else self.title.check
        self._eager = not self._free_text and self._check is None  # the legal set is derived at every step
        self._decision_cap = self.title.decision_cap
        self._movers = {p: (p,) for p in range(self.num_players)}  # to_move tuples, built once
        self._max_chars = self.params.max_observation_chars
        #: id(state) -> (state, the live env at that state), least recently stepped first; the
        #: entry holds the state, so its id cannot be reused while the entry exists
        self._at: dict[int, tuple[TextArenaState, _LiveEnv]] = {}
        #: free-text titles: envs already stepped by a probe, keyed by (seed, history + text)
        self._probed: OrderedDict[tuple, _LiveEnv] = OrderedDict()
        self.rejections: OrderedDict[tuple, str] = OrderedDict()

    def default_num_players(self) -> int:
        return self.title.players[0]

    def __getstate__(self) -> dict[str, Any]:
        """Pickle without the live envs (a cache: they are rebuilt by replay when needed)."""
        state = dict(self.__dict__)
        state["_at"] = {}
        state["_make_env"] = None
        for cache in ("_probed", "rejections"):
            state[cache] = OrderedDict()
        return state

    # ------------------------------------------------------------------ live envs
    def _new_env(self, ta_seed: int) -> _LiveEnv:
        if self.params.random_isolation == "swap" and _route_title(self.title.env_id):
            rng: PrivateRandom | SwappedRandom = SwappedRandom(ta_seed)  # lazily seeded: free if reset reseeds first
        else:
            rng = PrivateRandom(ta_seed)
        make = self._make_env
        if make is None:
            make = self._make_env = _env_factory(self._raw_id, self._env_kwargs)
        env = rng.call(make)
        rng.call(env.reset, num_players=self.num_players, seed=ta_seed)
        return _LiveEnv(env, rng, _Transcript.of(env, self.num_players))

    def _remember(self, state: TextArenaState, live: _LiveEnv) -> None:
        at = self._at
        at[id(state)] = (state, live)
        if len(at) > self.cache_size:
            del at[next(iter(at))]

    def _live_at(self, state: TextArenaState, *, take: bool) -> _LiveEnv:
        """The live env at ``state``: the one last stepped to it (taken out of the cache when it
        is about to be stepped), else a fresh env that replays the history."""
        entry = self._at.pop(id(state), None) if take else self._at.get(id(state))
        if entry is not None and entry[0] is state:
            return entry[1]
        live = self._new_env(state.ta_seed)
        for text in state.actions:
            live.rng.call(live.env.step, text)
        if not take:
            self._remember(state, live)
        return live

    # ------------------------------------------------------------------ rules hooks
    def initial_state(self, rng: np.random.Generator) -> TextArenaState:
        ta_seed = int(rng.integers(2**31 - 1))  # = integers(0, 2**31 - 1), in 2 µs less
        return self._after_step(self._new_env(ta_seed), ta_seed, (), ())

    def state_to_json(self, state: TextArenaState) -> Any:
        out = {"__type__": "TextArenaState"}
        for name, value in zip(("ta_seed", "actions", "actors", "to_move", "outcome"), state._data()):
            out[name] = to_jsonable(value)
        out["inbox"] = to_jsonable(state.inbox)
        return out

    def state_from_json(self, data: Any) -> TextArenaState:
        try:  # a "legal" entry (records written before the legal set became derived) is not read
            outcome = None if data.get("outcome") is None else from_jsonable(Outcome, data["outcome"])
            return TextArenaState(data["ta_seed"], data["actions"], data["actors"], data["to_move"], outcome, data["inbox"])
        except (KeyError, TypeError, ValueError, SerializationError) as exc:
            raise SerializationError(f"{self.spec.id}: not a TextArena state ({type(exc).__name__}: {exc})") from None

    def to_move(self, state: TextArenaState) -> tuple[int, ...]:
        return state[3]

    def legal_actions(self, state: TextArenaState, player: int) -> tuple[str, ...]:
        if state.outcome is not None or player not in state.to_move:
            return ()
        memo = state[7]
        legal = memo[1]
        if legal is None:  # a title with a check (or free text): derived on first use
            live = self._live_at(state, take=False)
            if self.title.free_text:
                legal = tuple(c for c in self.title.vocabulary if self._probe(state, live, c))
            else:
                legal = tuple(self.title.legal(live.env, player))
                if not legal:
                    raise AdapterError(f"{self.spec.id}: no legal move for player {player} in a running game; "
                                       "a title with a check must never reach this -- please report it with the seed and history")
            memo[1] = legal
        return legal

    def is_legal(self, state: TextArenaState, player: int, action: str) -> bool:
        if state[4] is not None or player not in state[3] or not isinstance(action, str):
            return False
        check = self._check
        if check is not None:
            legal = state[7][1]
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
        if not isinstance(action, str) or state[4] is not None or player not in state[3]:
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

    def next_state(self, state: TextArenaState, joint: Mapping[int, str]) -> TextArenaState:
        ((player, text),) = joint.items()
        actions, actors = state[1] + (text,), state[2] + (player,)
        if self._free_text:
            ahead = self._probed.pop((state[0], actions), None)
            if ahead is not None:  # already stepped by the probe that admitted the text
                return self._after_step(ahead, state[0], actions, actors)
        entry = self._at.pop(id(state), None)  # the env last stepped to this state, if it is still kept
        live = entry[1] if entry is not None and entry[0] is state else self._live_at(state, take=True)
        try:
            live.rng.call(live.env.step, text)
        except Exception as exc:  # TextArena crashed: the episode cannot go on
            detail = f"TextArena raised {type(exc).__name__} on {text!r}: {exc}"
            zero = tuple(0.0 for _ in range(self.num_players))
            return _state(state[0], actions, actors, (), Outcome(EndKind.ENV_ERROR, zero, detail, player), live.transcript, ())
        ta_state = live.env.state
        # TextArena flags a first invalid move in error_count (every title allows one) and a final one by ending
        if getattr(ta_state, "error_count", 0) or ta_state.done:
            reason = _invalid_reason(live.env, player)
            if reason is not None:
                raise AdapterError(
                    f"{self.spec.id}: TextArena rejected {text!r}, which the adapter listed as legal ({reason}); "
                    "this is a bug in arena_games.textarena.legal -- please report it with the seed and history"
                )
        return self._after_step(live, state[0], actions, actors)

    def _after_step(self, live: _LiveEnv, ta_seed: int, actions, actors) -> TextArenaState:
        """The state after a step of ``live`` (remembered as the env at that state while the game runs)."""
        ta_state = live.env.state
        if ta_state.done:
            return _state(ta_seed, actions, actors, (), self._outcome(live), live.transcript, ())
        pid = ta_state.current_player_id
        legal = None
        end = None
        if pid in (getattr(ta_state, "elimination_order", None) or ()):
            detail = f"TextArena asks eliminated player {pid} to move again (livelock); ended by the adapter"
            returns = _rank_returns(self.num_players, pid, self.spec.reward_bounds)
            end = Outcome(EndKind.PLAYER_ERROR, returns, detail, pid)
        elif len(actions) >= self._decision_cap:
            zero = tuple(0.0 for _ in range(self.num_players))
            detail = f"no end after {self._decision_cap} decisions (the adapter's cap for {self.title.env_id})"
            end = Outcome(EndKind.DECISION_CAP, zero, detail)
        elif self._eager:
            legal = tuple(self.title.legal(live.env, pid))
            if not legal:  # TextArena would refuse every move: an upstream dead end
                zero = tuple(0.0 for _ in range(self.num_players))
                detail = f"TextArena accepts no move from player {pid} here (upstream bug); ended by the adapter"
                end = Outcome(EndKind.ENV_ERROR, zero, detail, pid)
        if end is not None:
            return _state(ta_seed, actions, actors, (), end, live.transcript, ())
        state = _state(ta_seed, actions, actors, self._movers.get(pid) or (int(pid),), None, live.transcript, legal)
        self._remember(state, live)
        return state

    def _outcome(self, live: _LiveEnv) -> Outcome:
        rewards, info = live.rng.call(live.env.close)
        rewards, info = rewards or {}, info or {}
        returns, reason, offender = [], "", None
        for p in range(self.num_players):
            returns.append(float(rewards.get(p, 0.0) or 0.0))
            player_info = info.get(p)
            if player_info:
                reason = reason or str(player_info.get("reason", ""))
                if offender is None and player_info.get("invalid_move"):
                    offender = p
        returns = tuple(returns)
        if offender is not None:
            return Outcome(EndKind.FORFEIT, returns, reason, offender)
        ta_state = live.env.state
        max_turns = getattr(ta_state, "max_turns", None)
        at_limit = max_turns is not None and ta_state.turn >= max_turns - 1
        if len(set(returns)) == 1 and (at_limit or _TURN_LIMIT.search(reason)):
            return Outcome(EndKind.TURN_LIMIT, returns, reason or "turn limit")
        return Outcome(EndKind.NATURAL, returns, reason)

    def is_terminal(self, state: TextArenaState) -> bool:
        return state[4] is not None

    def returns(self, state: TextArenaState) -> tuple[float, ...]:
        if state.outcome is None:
            raise AdapterError(f"{self.spec.id}: returns asked before the end")
        return state.outcome.returns

    # ------------------------------------------------------------------ views
    def observation(self, state: TextArenaState, player: int) -> dict[str, Any]:
        messages, omitted = state.messages(player), 0
        if self._max_chars is not None:
            messages, omitted = budget(messages, self._max_chars)
        obs: dict[str, Any] = {
            "title": self.title.env_id,
            "player": player,
            "to_move": list(state[3]),
            "messages": messages,  # a fresh list of (sender, kind, text) tuples (immutable: safe to share)
            "omitted_messages": omitted,
        }
        outcome = state[4]
        if outcome is not None:
            obs["end"] = {"kind": outcome.kind.value, "reason": outcome.reason}
        return obs

    def transcript(self, state: TextArenaState, player: int) -> str:
        """The player's messages as one text (``[GAME] ...`` / ``[Player k] ...`` lines), within budget."""
        messages, omitted = budget(state.messages(player), self.params.max_observation_chars)
        lines = [m.render() for m in messages]
        if omitted:
            lines.insert(1 if messages and messages[0].kind == "PROMPT" else 0, f"[... {omitted} earlier messages omitted ...]")
        return "\n".join(lines)

    def encode_observation(self, state: TextArenaState, player: int) -> np.ndarray:
        """Seat, whether to act, the legal mask and progress: not the game state (the spec says
        ``observation_is_state=False``); the game itself is in the transcript (:meth:`transcript`)."""
        out = np.zeros(self.observation_size, dtype=np.float32)
        out[player] = 1.0
        m = self.spec.max_players
        if player in state.to_move:
            out[m] = 1.0
            for a in self.legal_actions(state, player):
                out[m + 1 + self._index[a]] = 1.0
        out[-1] = min(1.0, len(state.actions) / self.title.decision_cap)
        return out

    def action_id(self, action: str) -> int:
        i = self._index.get(action)
        if i is not None:
            return i
        if self.title.free_text and isinstance(action, str):
            return NO_INDEX
        raise ValueError(f"{self.spec.id}: {action!r} is not in this title's action vocabulary")

    def action_from_id(self, index: int) -> str:
        if not 0 <= index < len(self.title.vocabulary):
            raise ValueError(
                f"{self.spec.id}: action index {index} is not in range(0, {len(self.title.vocabulary)})"
                + ("; free text has no index: submit the string" if self.title.free_text else "")
            )
        return self.title.vocabulary[index]

    def action_to_str(self, action: str) -> str:
        return action

    def default_action(self, state: TextArenaState, player: int) -> str:
        legal = self.legal_actions(state, player)
        if not legal:
            raise AdapterError(f"{self.spec.id}: no candidate action to substitute for player {player}")
        return legal[0]

    def rules_text(self) -> str:
        return self.spec.description

    def end_kind(self, state: TextArenaState) -> EndKind | None:
        """The typed end reason, or None while the game runs."""
        return None if state.outcome is None else state.outcome.kind

    def end_reason(self, state: TextArenaState) -> EndReason:
        """The core's end reason: TextArena's own turn limit and the adapter's cap are
        truncations (no result), a livelock is a player error, an upstream dead end a game error."""
        return _END_REASONS[state.outcome.kind]

    def end_offender(self, state: TextArenaState) -> int | None:
        return state.outcome.offender

    def text_view(self):
        return TranscriptTextView()


def budget(messages: Sequence[Message], max_chars: int | None) -> tuple[list[Message], int]:
    """Keep the first message (the rules prompt) and the most recent ones within ``max_chars``."""
    msgs = list(messages)
    if max_chars is None:
        return msgs, 0
    if sum(len(m.text) + 12 for m in msgs) <= max_chars:
        return msgs, 0
    head = msgs[:1] if msgs and msgs[0].kind == "PROMPT" and len(msgs[0].text) + 12 <= max_chars // 2 else []
    room = max_chars - sum(len(m.text) + 12 for m in head)
    tail: list[Message] = []
    for m in reversed(msgs[len(head):]):
        cost = len(m.text) + 12
        if cost > room:
            break
        tail.append(m)
        room -= cost
    tail.reverse()
    return head + tail, len(msgs) - len(head) - len(tail)


def _invalid_reason(env: Any, player: int) -> str | None:
    """TextArena's reason if the last step was an invalid move by ``player``, else None."""
    st = env.state
    if getattr(st, "error_count", 0) > 0:
        return _last_admin(st, player) or "TextArena flagged an invalid move"
    if st.game_info and st.game_info.get(player, {}).get("invalid_move"):
        return str(st.game_info[player].get("reason", "invalid move"))
    return None


def _last_admin(ta_state: Any, player: int) -> str | None:
    """The reason in TextArena's last invalid-move notice to ``player`` ("... Reason: X Please resubmit ...")."""
    for _, text, kind in reversed(ta_state.observations.get(player, ())):
        if kind.name == "GAME_ADMIN" and _INVALID_MOVE.search(str(text)):
            found = _NOTICE_REASON.search(str(text))
            return found.group(1).strip() if found else str(text)
    return None


def _rank_returns(n: int, offender: int, bounds: tuple[float, float]) -> tuple[float, ...]:
    lo = bounds[0]
    others = 0.0 if n == 1 else -lo / (n - 1)
    return tuple(lo if p == offender else others for p in range(n))


def make_title_class(name: str, title: TitleSpec) -> type[TextArenaGame]:
    """A Game subclass for one TextArena title (what the entry points name)."""
    lo, hi = title.players
    exempt = dict(title.exempt_checks)
    if title.information is Information.IMPERFECT:
        exempt.setdefault(
            "hidden_state_sampling",
            "TextArena keeps the hidden state inside its env; there is no sampler of consistent deals",
        )
        exempt.setdefault("no_private_leak", "checked through sample_hidden_state, which TextArena titles cannot provide")
    kind = {LegalMethod.PRINTED: "exact legal set (printed by the title)", LegalMethod.DERIVED: "exact legal set (derived from the rules)", LegalMethod.FREE_TEXT: "free text (any text TextArena accepts; the vocabulary strings it accepts now are listed as legal)"}[title.method]
    spec = GameSpec(
        id=f"textarena/{title.env_id}",
        version="textarena-0.7.4",
        min_players=lo,
        max_players=hi,
        turn_structure=title.turn_structure,
        chance=title.chance,
        information=title.information,
        utility=title.utility,
        constant_sum=None,
        max_length=title.decision_cap,
        reward_bounds=title.reward_bounds,
        free_text=title.free_text,
        observation_is_state=False,  # the numeric observation is seat, turn, legal mask and progress: no game state
        exempt_checks=exempt,
        description=(
            f"TextArena {title.env_id} through the arena adapter; {kind}. {title.description}".strip()
            + ("" if not title.known_bugs else " Known upstream bugs: " + " ".join(title.known_bugs))
        ),
    )
    num_actions = len(title.vocabulary)
    attrs = {
        "title": title,
        "spec": spec,
        "num_actions": num_actions,
        "observation_size": hi + num_actions + 2,
        "__module__": "arena_games.textarena.titles",
        "__qualname__": name,
        "__doc__": spec.description,
    }
    return type(name, (TextArenaGame,), attrs)


_BRACKET = re.compile(r"\[[^\[\]]{1,200}\]")


@dataclass(frozen=True)
class TranscriptTextView:
    """The language-model view of a TextArena title: the player's own transcript (as
    TextArena's LLM wrapper shows it, but from this episode only and within the budget) plus
    the legal actions; answers are read the TextArena way (bracket tokens)."""

    answer_instruction: str = "Answer with your move; put the action in square brackets as the rules describe."

    def prompt(self, game: TextArenaGame, pos, player: int):
        from arena_core.text import Prompt

        legal = tuple(game.legal(pos, player))
        system = f"You are Player {player} in TextArena's {game.title.env_id}.\n{self.answer_instruction}"
        label = "Some accepted actions" if game.title.free_text else "Legal actions"
        user = game.transcript(pos.state, player) + (f"\n\n{label}: " + ", ".join(legal) if legal else "")
        return Prompt(system=system, user=user, legal=legal)

    def parse(self, game: TextArenaGame, pos, player: int, text: str):
        from arena_core.text import MAX_ANSWER_CHARS, ParseResult, parse_choice, strip_think

        if game.title.free_text:
            ok = isinstance(text, str) and game.is_legal(pos.state, player, text)
            if ok:
                return ParseResult(text, "free_text", True, True, False)
            why = game.rejection_reason(pos.state, text) if isinstance(text, str) else "not text"
            return ParseResult(game.default_action(pos.state, player), "default", False, False, True, why or "rejected")
        legal = {game.action_to_str(a): a for a in game.legal(pos, player)}
        result = parse_choice(text, legal, default=lambda: game.default_action(pos.state, player))
        if not result.default_used or not isinstance(text, str):
            return result
        folded = {" ".join(k.split()).lower(): a for k, a in legal.items()}
        visible = strip_think(text)[-MAX_ANSWER_CHARS:]
        named = {key: folded[key] for key in (" ".join(t.split()).lower() for t in _BRACKET.findall(visible)) if key in folded}
        if len(named) == 1:  # bracket tokens (TextArena's format) that name one legal move only
            return ParseResult(next(iter(named.values())), "bracket", True, True, False)
        if len(named) > 1:
            return ParseResult(result.action, "unparseable", False, False, True, f"the answer names different moves: {', '.join(sorted(named))}")
        return result
