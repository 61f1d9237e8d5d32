"""Any TextArena env id as an arena game, with none of TextArena's defects showing through.

The adapter is four modules, one seam each, layered in this order (each imports only the ones
before it):

- :mod:`.bridge`: the engine bridge and RNG routing (importing TextArena, making ``-raw`` envs,
  every TextArena call on the env's own ``random`` stream, reading the message queues);
- :mod:`.state`: the state and legality (:class:`TextArenaState` as data with its memoised
  inbox and legal set, :class:`TitleSpec`, the legality hooks);
- :mod:`.text`: the text and outcome (observations, transcript, language-model view, the typed
  end of an episode);
- this module: :class:`TextArenaGame`, which puts them together around the live-env cache,
  and :func:`make_title_class`. Every public name of the other three is re-exported here.

The live TextArena env is a *cache*: the adapter remembers which env is at which state (the
state it last stepped each env to), so forward play costs one TextArena step per action plus a
few dictionary operations; any other state (a branch, a restored position, a deserialised one)
is rebuilt by replaying the history on a fresh ``-raw`` env.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, TypeVar, overload

import numpy as np

from arena_core.errors import SerializationError
from arena_core.game import Game
from arena_core.serial import from_jsonable, to_jsonable
from arena_core.spec import GameSpec, Information

from .bridge import (
    Message,
    PrivateRandom,
    SwappedRandom,
    _env_factory,
    _import_quietly,
    _invalid_reason,
    _last_admin,
    _LiveEnv,
    _ModuleLikeRandom,
    _PendingSeed,
    _route_title,
    _ta,
    _Transcript,
)
from .state import (
    MAX_ACTION_CHARS,
    NO_INDEX,
    AdapterError,
    EndKind,
    LegalityHooks,
    LegalMethod,
    Outcome,
    ProbeKey,
    TextArenaParams,
    TextArenaState,
    TitleSpec,
    _state,
)
from .text import TextAndOutcomeHooks, TextArenaTranscriptView, TranscriptTextView, _rank_returns, budget

__all__ = [
    "MAX_ACTION_CHARS",
    "NO_INDEX",
    "AdapterError",
    "EndKind",
    "LegalMethod",
    "Message",
    "Outcome",
    "PrivateRandom",
    "SwappedRandom",
    "TextArenaGame",
    "TextArenaParams",
    "TextArenaState",
    "TextArenaTranscriptView",
    "TitleSpec",
    "TranscriptTextView",
    "budget",
    "make_title_class",
]
_REEXPORTED = (
    _env_factory,
    _import_quietly,
    _invalid_reason,
    _last_admin,
    _ModuleLikeRandom,
    _PendingSeed,
    _ta,
)  # for old imports


class TextArenaGame(LegalityHooks, TextAndOutcomeHooks, Game[TextArenaState, str]):
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
        self._probed: OrderedDict[ProbeKey, _LiveEnv] = OrderedDict()
        self.rejections: OrderedDict[ProbeKey, str] = OrderedDict()

    def default_num_players(self) -> int:
        return self.title.players[0]

    @classmethod
    def encoding_size(cls, title: TitleSpec) -> int:
        """Length of :meth:`encode_observation`'s vector for ``title``: seat, to act, legal mask and
        progress (a title's own base class that encodes the game overrides both)."""
        return title.players[1] + len(title.vocabulary) + 2

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
        for name, value in zip(("ta_seed", "actions", "actors", "to_move", "outcome"), state._data(), strict=True):
            out[name] = to_jsonable(value)
        out["inbox"] = to_jsonable(state.inbox)
        return out

    def state_from_json(self, data: Any) -> TextArenaState:
        try:  # a "legal" entry (records written before the legal set became derived) is not read
            outcome = None if data.get("outcome") is None else from_jsonable(Outcome, data["outcome"])
            return TextArenaState(
                data["ta_seed"], data["actions"], data["actors"], data["to_move"], outcome, data["inbox"]
            )
        except (KeyError, TypeError, ValueError, SerializationError) as exc:
            raise SerializationError(f"{self.spec.id}: not a TextArena state ({type(exc).__name__}: {exc})") from None

    def to_move(self, state: TextArenaState) -> tuple[int, ...]:
        return state.to_move

    def next_state(self, state: TextArenaState, joint: Mapping[int, str]) -> TextArenaState:
        ((player, text),) = joint.items()
        actions, actors = state.actions + (text,), state.actors + (player,)
        if self._free_text:
            ahead = self._probed.pop((state.ta_seed, actions), None)
            if ahead is not None:  # already stepped by the probe that admitted the text
                return self._after_step(ahead, state.ta_seed, actions, actors)
        entry = self._at.pop(id(state), None)  # the env last stepped to this state, if it is still kept
        live = entry[1] if entry is not None and entry[0] is state else self._live_at(state, take=True)
        try:
            live.rng.call(live.env.step, text)
        except Exception as exc:  # TextArena crashed: the episode cannot go on
            detail = f"TextArena raised {type(exc).__name__} on {text!r}: {exc}"
            zero = tuple(0.0 for _ in range(self.num_players))
            return _state(
                state.ta_seed,
                actions,
                actors,
                (),
                Outcome(EndKind.ENV_ERROR, zero, detail, player),
                live.transcript,
                (),
            )
        ta_state = live.env.state
        # TextArena flags a first invalid move in error_count (every title allows one) and a final one by ending
        if getattr(ta_state, "error_count", 0) or ta_state.done:
            reason = _invalid_reason(live.env, player)
            if reason is not None:
                raise AdapterError(
                    f"{self.spec.id}: TextArena rejected {text!r}, which the adapter listed as legal ({reason}); "
                    "this is a bug in arena_games.textarena.legal -- please report it with the seed and history"
                )
        return self._after_step(live, state.ta_seed, actions, actors)

    def _after_step(
        self, live: _LiveEnv, ta_seed: int, actions: tuple[str, ...], actors: tuple[int, ...]
    ) -> TextArenaState:
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
            legal = tuple(self.title.legal(live.env, pid))  # type: ignore[misc]  # eager titles are not free text: legal is set
            if not legal:  # TextArena would refuse every move: an upstream dead end
                zero = tuple(0.0 for _ in range(self.num_players))
                detail = f"TextArena accepts no move from player {pid} here (upstream bug); ended by the adapter"
                end = Outcome(EndKind.ENV_ERROR, zero, detail, pid)
        if end is not None:
            return _state(ta_seed, actions, actors, (), end, live.transcript, ())
        state = _state(ta_seed, actions, actors, self._movers.get(pid) or (int(pid),), None, live.transcript, legal)
        self._remember(state, live)
        return state

    def is_terminal(self, state: TextArenaState) -> bool:
        return state.outcome is not None

    def returns(self, state: TextArenaState) -> tuple[float, ...]:
        if state.outcome is None:
            raise AdapterError(f"{self.spec.id}: returns asked before the end")
        return state.outcome.returns

    # ------------------------------------------------------------------ views
    def text_view(self) -> TranscriptTextView:
        return TranscriptTextView()

    def views(self) -> Mapping[str, Callable[[], Any]]:
        """The game's views plus ``"transcript"``: :class:`TextArenaTranscriptView` (only the
        messages that arrived since the seat's last turn)."""
        return {**super().views(), "transcript": TextArenaTranscriptView}


G = TypeVar("G", bound=TextArenaGame)


@overload
def make_title_class(name: str, title: TitleSpec) -> type[TextArenaGame]: ...


@overload
def make_title_class(name: str, title: TitleSpec, base: type[G]) -> type[G]: ...


def make_title_class(name: str, title: TitleSpec, base: type[TextArenaGame] = TextArenaGame) -> type[TextArenaGame]:
    """A Game subclass for one TextArena title (what the entry points name), derived from
    ``base`` (:class:`TextArenaGame`, or a subclass of it that declares the title's own views)."""
    lo, hi = title.players
    exempt = dict(title.exempt_checks)
    if title.information is Information.IMPERFECT and base.sample_hidden_state is Game.sample_hidden_state:
        exempt.setdefault(
            "hidden_state_sampling",
            "TextArena keeps the hidden state inside its env; there is no sampler of consistent deals",
        )
        exempt.setdefault(
            "no_private_leak", "checked through sample_hidden_state, which TextArena titles cannot provide"
        )
    if title.information is Information.IMPERFECT and base.encode_observation is TextArenaGame.encode_observation:
        exempt.setdefault(
            "private_encoding",
            "the generic TextArena encoding is seat, turn, legal mask and progress, no game state "
            "(observation_is_state=False); the game, private part included, is in the transcript",
        )
    kind = {
        LegalMethod.PRINTED: "exact legal set (printed by the title)",
        LegalMethod.DERIVED: "exact legal set (derived from the rules)",
        LegalMethod.FREE_TEXT: "free text (any text TextArena accepts; the vocabulary strings it accepts now are listed as legal)",
    }[title.method]
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
        "observation_size": base.encoding_size(title),
        "__module__": "arena_games.textarena.titles",
        "__qualname__": name,
        "__doc__": spec.description,
    }
    return type(name, (base,), attrs)
