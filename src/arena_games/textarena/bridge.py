"""The engine bridge of the TextArena adapter: importing TextArena, making its ``-raw`` envs,
routing every TextArena call to the env's own ``random`` stream, reading an env's message
queues, and reading TextArena's complaint about an invalid move.

Every TextArena call runs with the env's own ``random`` stream: by default
(:class:`SwappedRandom`) the title's TextArena modules draw from a private generator while the
call runs and the global generator is not touched at all; with
``random_isolation="save_restore"`` (:class:`PrivateRandom`) the global state is saved and
restored around every call. Either way TextArena's ``random.seed`` in ``reset`` reseeds nobody
else, and the stream equals TextArena's own for that seed.
"""

from __future__ import annotations

import _random
import copy
import random
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, NamedTuple

_INVALID_MOVE = re.compile(r"attempted an invalid move", re.IGNORECASE)
_NOTICE_REASON = re.compile(r"Reason:\s*(.*?)\s*(?:Please resubmit|$)", re.DOTALL)


class Message(NamedTuple):
    """One message a player received: sender (-1 is the game), TextArena's type name, text."""

    sender: int
    kind: str
    text: str

    def render(self) -> str:
        who = "GAME" if self.sender == -1 else f"Player {self.sender}"
        return f"[{who}] {self.text}"


_new_tuple = tuple.__new__  # builds a Message without NamedTuple's Python-level __new__


class _Transcript:
    """The message queues of one live env, read without draining and converted to
    :class:`Message` once per message, on demand. TextArena only appends to a player's queue
    (the adapter never calls ``get_observation``), so the first ``k`` messages of a queue never
    change and every state on this env's line reads its inbox as a prefix."""

    __slots__ = ("queues", "converted")

    def __init__(self, queues: Sequence[list[Any]], converted: list[list[Message]] | None = None):
        self.queues = tuple(queues)
        self.converted = converted if converted is not None else [[] for _ in self.queues]

    @classmethod
    def of(cls, env: Any, num_players: int) -> _Transcript:
        observations = env.state.observations
        return cls([observations[p] for p in range(num_players)])

    def counts(self) -> tuple[int, ...]:
        return tuple(map(len, self.queues))

    def messages(self, player: int, count: int) -> list[Message]:
        """A fresh list of the first ``count`` messages of ``player``."""
        done = self.converted[player]
        if len(done) < count:
            done.extend([_new_tuple(Message, (s, t._name_, m)) for s, m, t in self.queues[player][len(done) : count]])
        return done[:count]

    def fork(self, env: Any) -> _Transcript:
        """The transcript of a deep copy of this env (same messages so far, its own queues)."""
        observations = env.state.observations
        return _Transcript([observations[p] for p in range(len(self.queues))], [list(c) for c in self.converted])


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

    def copy(self) -> PrivateRandom:
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
            self.__class__ = _ModuleLikeRandom  # type: ignore[assignment]  # the seed applied: the documented class swap
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

    def getstate(self) -> tuple[Any, ...]:
        _PendingSeed._settle(self)
        return random.Random.getstate(self)

    def setstate(self, state: tuple[Any, ...]) -> None:
        self.__class__ = _ModuleLikeRandom  # type: ignore[assignment]  # the seed applied: the documented class swap
        random.Random.setstate(self, state)


class _Route(threading.local):
    gen: random.Random | None = None  # the generator of the adapter call running in this thread


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

    def copy(self) -> SwappedRandom:
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

    def clone(self) -> _LiveEnv:
        twin = self.rng.copy()
        env = twin.call(copy.deepcopy, self.env)
        return _LiveEnv(env, twin, self.transcript.fork(env))


def _ta() -> Any:
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
