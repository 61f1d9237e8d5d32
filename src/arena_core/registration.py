"""Every Arena game in PettingZoo's and Gymnasium's own registries (``pettingzoo.make("aec",
"arena/kuhn_poker-v0")``, ``gymnasium.make("arena_core:arena/kuhn_poker-v0")``), filled lazily:
a finder waits for either library to be imported. Names and keywords: docs/ecosystem.md.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import re
import sys
import warnings
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .env import ArenaAECEnv, ArenaGymEnv, ArenaParallelEnv
    from .game import Game
    from .players import Player
    from .policy import IllegalActionPolicy

NAMESPACE = "arena"
_TARGETS = ("pettingzoo", "gymnasium")
_VERSIONED = re.compile(r"-v\d+$")


def registry_id(game_id: str) -> str:
    """The name both registries accept for ``game_id``: ``/`` becomes ``.``, ``-v0`` is added
    unless the id ends in ``-vN``, in the ``arena`` namespace (``arena/kuhn_poker-v0``)."""
    name = game_id.replace("/", ".")
    return f"{NAMESPACE}/{name if _VERSIONED.search(name) else name + '-v0'}"


# ------------------------------------------------------------------ factories (the registries' entry points)
def _game(
    game_id: str, params: Mapping[str, Any] | None, num_players: int | None, named: dict[str, Any]
) -> Game[Any, Any]:
    from .registry import make_game

    return make_game(game_id, {**(params or {}), **named} or None, num_players=num_players)


def _policy(policy: IllegalActionPolicy | str | None, default: IllegalActionPolicy) -> IllegalActionPolicy:
    from .policy import IllegalActionPolicy

    if policy is None:
        return default
    return policy if isinstance(policy, IllegalActionPolicy) else IllegalActionPolicy(mode=policy)  # type: ignore[arg-type]  # pydantic validates the mode string


def _turn_cap(turn_cap: int | None, max_cycles: int | None, game: Game[Any, Any]) -> int | None:
    if max_cycles is None or max_cycles == -1:
        return turn_cap
    if max_cycles < 1:
        raise ValueError(f"max_cycles must be >= 1 (or -1 for none), got {max_cycles}")
    cycles = max_cycles * game.num_players
    return cycles if turn_cap is None else min(turn_cap, cycles)


def _env(
    builder_name: str,
    game_id: str,
    params: Mapping[str, Any] | None,
    num_players: int | None,
    policy: IllegalActionPolicy | str | None,
    turn_cap: int | None,
    max_cycles: int | None,
    render_mode: str | None,
    game_params: dict[str, Any],
) -> Any:
    from . import env
    from .policy import RAISE

    game = _game(game_id, params, num_players, game_params)
    cap = _turn_cap(turn_cap, max_cycles, game)
    return getattr(env, builder_name)(game, policy=_policy(policy, RAISE), turn_cap=cap, render_mode=render_mode)


def make_aec(
    game_id: str,
    *,
    params: Mapping[str, Any] | None = None,
    num_players: int | None = None,
    policy: IllegalActionPolicy | str | None = None,
    turn_cap: int | None = None,
    max_cycles: int | None = None,
    render_mode: str | None = None,
    **game_params: Any,
) -> ArenaAECEnv:
    """The AEC env of a registered game (PettingZoo's order-enforcing wrapper around it)."""
    made: ArenaAECEnv = _env(
        "aec_env", game_id, params, num_players, policy, turn_cap, max_cycles, render_mode, game_params
    )
    return made


def make_parallel(
    game_id: str,
    *,
    params: Mapping[str, Any] | None = None,
    num_players: int | None = None,
    policy: IllegalActionPolicy | str | None = None,
    turn_cap: int | None = None,
    max_cycles: int | None = None,
    render_mode: str | None = None,
    **game_params: Any,
) -> ArenaParallelEnv:
    """The parallel env of a registered game whose every decision is simultaneous."""
    made: ArenaParallelEnv = _env(
        "parallel_env", game_id, params, num_players, policy, turn_cap, max_cycles, render_mode, game_params
    )
    return made


def make_gym(
    game_id: str,
    *,
    params: Mapping[str, Any] | None = None,
    num_players: int | None = None,
    seat: int = 0,
    opponents: Sequence[str | Player] | None = None,
    policy: IllegalActionPolicy | str | None = None,
    turn_cap: int | None = None,
    render_mode: str | None = None,
    **game_params: Any,
) -> ArenaGymEnv:
    """The single-agent Gymnasium env of a registered game: ``seat`` learns, ``opponents`` (player
    specs or players, one per other seat; uniform random by default) fill the others."""
    from .env import ArenaGymEnv
    from .env.gym import GYM_POLICY
    from .registry import make_player

    game = _game(game_id, params, num_players, game_params)
    players = None
    if opponents is not None:
        players = [make_player(o, seed=i) if isinstance(o, str) else o for i, o in enumerate(opponents)]
    return ArenaGymEnv(
        game, players, seat=seat, policy=_policy(policy, GYM_POLICY), turn_cap=turn_cap, render_mode=render_mode
    )


# ------------------------------------------------------------------ registering
def game_ids() -> list[str]:
    """Every game id the ``arena.games`` entry points declare (metadata only, nothing imported)."""
    from .registry import list_plugins

    return [p.name for p in list_plugins("games")]


def register_pettingzoo() -> list[str]:
    """Put every game in PettingZoo's AEC and parallel registries (idempotent); the ids added. PettingZoo
    before 1.27 has no registry (the envs work there, from 1.23): nothing is added."""
    import pettingzoo

    added: list[str] = []
    if not hasattr(pettingzoo, "register"):
        return added
    for game_id in game_ids():
        rid = registry_id(game_id)
        for kind, factory in (("aec", "make_aec"), ("parallel", "make_parallel")):
            registry = pettingzoo.aec_registry if kind == "aec" else pettingzoo.parallel_registry
            if rid not in registry:
                pettingzoo.register(kind, rid, entry_point=f"{__name__}:{factory}", kwargs={"game_id": game_id})
                added.append(f"{kind}:{rid}")
    return added


def register_gymnasium() -> list[str]:
    """Put every game in Gymnasium's registry (idempotent); the ids added."""
    import gymnasium

    added = []
    for game_id in game_ids():
        rid = registry_id(game_id)
        if rid not in gymnasium.registry:
            gymnasium.register(rid, entry_point=f"{__name__}:make_gym", kwargs={"game_id": game_id})
            added.append(rid)
    return added


def register_all() -> None:
    """Register into whichever of the two libraries is imported (after installing a plugin in this
    process, call :func:`arena_core.registry.refresh` then this)."""
    for target in _TARGETS:
        if target in sys.modules:
            _register_into(target)


def _register_into(target: str) -> None:
    try:
        register_pettingzoo() if target == "pettingzoo" else register_gymnasium()
    except Exception as exc:  # a broken plugin's metadata must not break importing PettingZoo or Gymnasium
        warnings.warn(f"arena: could not register games with {target}: {exc}", RuntimeWarning, stacklevel=2)


class _RegisterAfterImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: when ``pettingzoo`` or ``gymnasium`` is imported, registers the games
    once that module has run (its registry then exists), and leaves the loader as it found it."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in _TARGETS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return None  # the other finders decide
        spec.loader = _Loader(spec.loader, fullname)
        return spec


class _Loader(importlib.abc.Loader):
    def __init__(self, inner: importlib.abc.Loader, name: str) -> None:
        self._inner, self._name = inner, name

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        module.__loader__ = self._inner  # the module sees its own loader, as without this hook
        if module.__spec__ is not None:
            module.__spec__.loader = self._inner
        self._inner.exec_module(module)
        _register_into(self._name)
        if all(t in sys.modules for t in _TARGETS) and _FINDER in sys.meta_path:
            sys.meta_path.remove(_FINDER)  # both registered: nothing left to wait for


_FINDER = _RegisterAfterImport()


def install() -> None:
    """Called by ``import arena_core``: register now into what is imported, later into the rest."""
    register_all()
    if not all(t in sys.modules for t in _TARGETS) and _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
