"""Plugins through entry points (``arena.games``, ``arena.players``, ``arena.trainers``): listing
reads package metadata only; loading is lazy and validates the loaded object."""

from __future__ import annotations

import difflib
import importlib
import importlib.metadata as md
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .errors import (
    DuplicatePluginError,
    PlayerOptionsError,
    PluginProtocolError,
    PluginUnavailableError,
    UnknownGameError,
    UnknownPlayerError,
    UnknownPluginError,
)

if TYPE_CHECKING:
    from .game import Game
    from .players import Player
    from .playerspec import PlayerSpec

#: a trainer's progress callback: ``(step, that step's metrics row)``
Progress = Callable[[int, Mapping[str, Any]], None]


@runtime_checkable
class Trainer(Protocol):
    """What an ``arena.trainers`` entry point names, as ``arena train CONFIG`` runs it: ``run`` gets
    the config (without its ``trainer`` key), the run directory and a progress callback; it
    validates the config (a ``ConfigError`` naming the field), trains into ``run_dir`` and returns
    the run's summary as JSON data (docs/developing.md, "Adding a trainer")."""

    @property
    def name(self) -> str: ...

    def run(
        self, config: Mapping[str, Any], run_dir: Path, *, progress: Progress | None = None
    ) -> Mapping[str, Any]: ...


GROUPS: dict[str, str] = {"games": "arena.games", "players": "arena.players", "trainers": "arena.trainers"}
_UNKNOWN = {"games": UnknownGameError, "players": UnknownPlayerError, "trainers": UnknownPluginError}


@dataclass(frozen=True)
class PluginInfo:
    """One registered plugin, as read from package metadata (nothing imported)."""

    kind: str
    name: str
    value: str  # "module:attr"
    distribution: str
    extras: tuple[str, ...]
    missing: tuple[str, ...]  # requirements of those extras that are not installed

    @property
    def available(self) -> bool:
        return not self.missing

    @property
    def install_hint(self) -> str:
        extras = ",".join(self.extras)
        return f"pip install '{self.distribution}[{extras}]'" if extras else f"pip install '{self.distribution}'"

    @property
    def reason(self) -> str:
        return "" if self.available else f"missing {', '.join(self.missing)}; fix: {self.install_hint}"


_MISSING: dict[tuple[str, tuple[str, ...]], tuple[str, ...]] = {}


def _missing_requirements(dist: md.Distribution, extras: tuple[str, ...]) -> tuple[str, ...]:
    """The requirements of ``dist``'s ``extras`` not installed, once per distribution and extras
    (``refresh`` forgets)."""
    key = (str(dist.metadata["Name"]), extras)
    if not extras or key in _MISSING:
        return _MISSING.get(key, ())
    from packaging.requirements import Requirement  # a declared dependency of turn-arena-core

    missing = []
    for raw in dist.requires or ():
        req = Requirement(raw)
        if req.marker is None:
            continue
        if not any(req.marker.evaluate({"extra": e}) for e in extras):
            continue
        try:
            md.version(req.name)
        except md.PackageNotFoundError:
            missing.append(req.name)
    _MISSING[key] = tuple(sorted(set(missing)))
    return _MISSING[key]


@cache
def _index(kind: str) -> dict[str, list[tuple[md.EntryPoint, md.Distribution]]]:
    if kind not in GROUPS:
        raise ValueError(f"unknown plugin kind {kind!r}; use one of {sorted(GROUPS)}")
    group = GROUPS[kind]
    found: dict[str, list[tuple[md.EntryPoint, md.Distribution]]] = {}
    names: set[str] = set()
    for dist in md.distributions():
        # A distribution found twice on sys.path (an editable install's metadata and the
        # egg-info a build left in its source tree) counts once: the first copy, as for
        # importlib.metadata.version() and pip; a later copy is shadowed, whatever it says.
        name = re.sub(r"[-_.]+", "-", (dist.metadata["Name"] or "")).lower()
        if name in names:
            continue
        names.add(name)
        for ep in dist.entry_points:
            if ep.group == group:
                found.setdefault(ep.name, []).append((ep, dist))
    return found


def refresh() -> None:
    """Forget cached metadata (after installing or removing a plugin in this process)."""
    _index.cache_clear()
    load.cache_clear()
    _MISSING.clear()
    importlib.invalidate_caches()


def _info(kind: str, name: str, entries: Sequence[tuple[md.EntryPoint, md.Distribution]]) -> PluginInfo:
    if len(entries) > 1:
        who = " and ".join(f"{d.metadata['Name']} ({ep.value})" for ep, d in entries)
        raise DuplicatePluginError(
            f"{kind[:-1]} {name!r} is registered by more than one distribution: {who}; uninstall one of them"
        )
    ep, dist = entries[0]
    m = re.search(r"\[([^\]]*)\]\s*$", ep.value)  # the extra the entry point names: "pkg.mod:Cls [extra]"
    extras = tuple(x.strip() for x in m.group(1).split(",") if x.strip()) if m else ()
    return PluginInfo(kind, name, ep.value, dist.metadata["Name"], extras, _missing_requirements(dist, extras))


def list_plugins(kind: str) -> list[PluginInfo]:
    """Every plugin of ``kind`` from package metadata, sorted by name; duplicates raise."""
    return [_info(kind, name, entries) for name, entries in sorted(_index(kind).items())]


@cache
def _providers() -> dict[str, dict[str, str]]:
    """What to install for a name one of Arena's own distributions registers, so an unknown name
    says where it comes from: data generated from dists/*/pyproject.toml by ``scripts/dists.py
    sync`` (no table of names is kept by hand here)."""
    import json
    from importlib.resources import files

    data: dict[str, dict[str, str]] = json.loads(files(__package__).joinpath("providers.json").read_text())
    return data


#: what `arena list` suggests when nothing of a kind is installed
_FIRST_INSTALL = {"games": "turn-arena-games", "players": "turn-arena-players", "trainers": "turn-arena-train"}


def provider(kind: str, name: str) -> str | None:
    """The distribution (with its extra) of Arena's that registers ``name``, or None."""
    table = _providers()
    found = table.get(kind, {}).get(name)
    if found is None and kind == "games" and "/" in name:
        found = table["namespaces"].get(name.split("/", 1)[0] + "/")
    return found


def _unknown_message(kind: str, name: str, index: dict[str, Any]) -> str:
    what = kind[:-1]
    dist = provider(kind, name)
    if dist is not None:
        return f"no {what} named {name!r} here: it comes with {dist}, which is not installed; fix: pip install '{dist}'"
    close = difflib.get_close_matches(name, list(index), n=5, cutoff=0.5)
    if close:
        return f"no {what} named {name!r}; did you mean {', '.join(close)}? `arena list {kind}` shows them all"
    if not index:
        return f"no {what} named {name!r}: no {kind} are installed; fix: pip install {_FIRST_INSTALL[kind]}"
    known = f"{', '.join(sorted(index)[:20])}{', ...' if len(index) > 20 else ''}"
    return f"no {what} named {name!r} (known: {known}); `arena list {kind}` shows them all"


def plugin_info(kind: str, name: str) -> PluginInfo:
    index = _index(kind)
    if name not in index:
        raise _UNKNOWN[kind](_unknown_message(kind, name, index))
    return _info(kind, name, index[name])


@cache
def load(kind: str, name: str) -> Any:
    """Import and validate the plugin object (cached)."""
    info = plugin_info(kind, name)
    if info.missing:  # a plugin may import its extra lazily (TextArena's titles do): its module loads without it
        raise PluginUnavailableError(
            f"{kind[:-1]} {name!r} from {info.distribution} needs {', '.join(info.missing)}, not installed; "
            f"fix: {info.install_hint}"
        )
    ep, _ = _index(kind)[name][0]
    try:
        obj = ep.load()
    except ImportError as exc:
        fix = f"; fix: {info.install_hint}" if info.missing else ""
        raise PluginUnavailableError(
            f"{kind[:-1]} {name!r} from {info.distribution} cannot be imported: {exc}{fix}"
        ) from exc
    _VALIDATORS[kind](name, obj)
    return obj


def availability(kind: str, name: str) -> tuple[bool, str]:
    """Import the plugin to see whether it really works here; never raises."""
    try:
        load(kind, name)
    except PluginUnavailableError as exc:  # the import's own reason: the caller names the plugin already
        return False, str(exc.__cause__ or exc)
    except Exception as exc:  # listing must survive any broken plugin
        return False, f"{type(exc).__name__}: {exc}"
    return True, ""


# ------------------------------------------------------------------ validation
def _validate_game(name: str, obj: Any) -> None:
    from .game import Game
    from .spec import GameSpec

    if not (isinstance(obj, type) and issubclass(obj, Game)):
        raise PluginProtocolError(f"game {name!r} must be a subclass of arena_core.Game, got {obj!r}")
    if not isinstance(getattr(obj, "spec", None), GameSpec):
        raise PluginProtocolError(f"game {name!r} ({obj.__qualname__}) must declare spec = GameSpec(...)")
    if obj.__abstractmethods__:
        raise PluginProtocolError(f"game {name!r} leaves rules hooks unimplemented: {sorted(obj.__abstractmethods__)}")
    if obj.spec.id != name:  # records name the game by spec.id: `arena replay` finds it by that name
        raise PluginProtocolError(
            f"game entry point {name!r} loads {obj.__qualname__}, whose spec.id is {obj.spec.id!r}; the entry-point name "
            f"must equal spec.id (rename the entry point to {obj.spec.id!r} or change the spec)"
        )


def _validate_player(name: str, obj: Any) -> None:
    if not callable(obj):
        raise PluginProtocolError(f"player {name!r} must be a class or factory returning a Player, got {obj!r}")
    if isinstance(obj, type) and not callable(getattr(obj, "act", None)):
        raise PluginProtocolError(f"player {name!r} ({obj.__qualname__}) has no act(decision) method")


def _validate_trainer(name: str, obj: Any) -> None:
    if isinstance(obj, type) or not isinstance(obj, Trainer):
        raise PluginProtocolError(
            f"trainer {name!r} must be an object with name and run(config, run_dir, progress=...) "
            f"(arena_core.registry.Trainer), got {obj!r}"
        )


_VALIDATORS: dict[str, Callable[[str, Any], None]] = {
    "games": _validate_game,
    "players": _validate_player,
    "trainers": _validate_trainer,
}


# ------------------------------------------------------------------ conveniences
def game_class(game_id: str) -> type[Game[Any, Any]]:
    cls: type[Game[Any, Any]] = load("games", game_id)  # checked by _validate_game
    return cls


def make_game(game_id: str, params: dict[str, Any] | None = None, *, num_players: int | None = None) -> Game[Any, Any]:
    """Instantiate a registered game by id."""
    return game_class(game_id)(params, num_players=num_players)


def _check_options(name: str, factory: Any, seed: int, options: dict[str, Any]) -> None:
    """Options the factory's signature cannot take are the user's error, said in one line."""
    import inspect

    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):  # builtins and odd callables: let the call decide
        return
    try:
        sig.bind(seed=seed, **options)
    except TypeError:
        known = [
            p
            for p, prm in sig.parameters.items()
            if p not in ("self", "seed") and prm.kind is not inspect.Parameter.VAR_KEYWORD
        ]
        unknown = sorted(set(options) - set(known))
        raise PlayerOptionsError(
            f"player {name!r} does not take option(s) {', '.join(unknown) or ', '.join(sorted(options))}; "
            f"its options: {', '.join(known) or 'none'}"
        ) from None
    _check_option_types(name, factory, options)


#: an option annotated with one of these must hold a value of that type (an int passes as a float)
_SCALARS: dict[Any, tuple[type, ...]] = {float: (int, float), int: (int,), bool: (bool,), str: (str,)}
_EXAMPLES: dict[Any, str] = {float: "0.5", int: "1", bool: "true", str: '"text"'}


def _check_option_types(name: str, factory: Any, options: dict[str, Any]) -> None:
    """An option whose annotation is a plain float/int/bool/str and whose value is not one is
    the user's error (``shade="abc"`` for a float), said in one line before the factory runs."""
    import typing

    target = factory.__init__ if isinstance(factory, type) else factory  # type: ignore[misc]  # the class's own __init__, read for its annotations only
    try:
        hints = typing.get_type_hints(target)
    except Exception:  # noqa: BLE001 - unresolvable annotations: let the call decide
        return
    for key, value in options.items():
        allowed = _SCALARS.get(hints.get(key))
        if allowed is None:
            continue
        if isinstance(value, bool) and bool not in allowed or not isinstance(value, allowed):
            kind = hints[key]
            raise PlayerOptionsError(
                f"player {name!r} option {key}={value!r} is not a {kind.__name__}; write e.g. {key}={_EXAMPLES[kind]}"
            )


def make_player(spec: PlayerSpec | str, *, seed: int = 0, **extra: Any) -> Player:
    """The registered player a parsed :class:`~arena_core.playerspec.PlayerSpec` names, with its
    options (a string spelling, as scripts write, is parsed here by ``as_player_spec``). ``extra``:
    options the caller adds that a spec cannot carry; one given in both is refused."""
    from .playerspec import as_player_spec

    parsed = as_player_spec(spec)
    both = sorted(set(parsed.options) & set(extra))
    if both:
        raise PlayerOptionsError(f"player {parsed.name!r}: option {both[0]!r} is in the spec and given again")
    factory = load("players", parsed.name)
    options = {**parsed.options, **extra}
    _check_options(parsed.name, factory, seed, options)
    player: Player = factory(seed=seed, **options)
    if not callable(getattr(player, "act", None)):
        raise PluginProtocolError(f"player {parsed.name!r} factory returned {player!r}, which has no act(decision)")
    return player
