"""The checks of hidden information: ``no_private_leak`` (nothing a seat receives, views' text
included, changes when what is hidden from it is resampled), ``hidden_state_sampling`` (every
sampled world is one the seat could be in, with the deals' probabilities) and ``private_encoding``
(what only a seat sees reaches its numeric observation). Their reach: docs/testing.md.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import math
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..episode import digest
from ..game import Game, Position
from ..seeding import make_rng
from ..spec import Information
from ..stats import binomial_two_sided, holm
from .failure import CheckFailure

if TYPE_CHECKING:
    from .checks import Playthrough

#: worlds drawn per (ply, seat) when comparing the sampler with the enumerated deals
WORLD_DRAWS = 48
#: a class of worlds whose count is this many standard deviations off its expected count fails (seeded draws)
MAX_Z = 4.5
#: games listing more deals than this are not enumerated per playthrough (the cost is deals x plies)
MAX_DEALS = 2000
#: a game listing no deals: at most this many deals from fresh seeds that reproduce a seat's view (and
#: as many worlds), of up to SEED_TRIES seeds (24 or 96 when fewer than 1 in 12 do); sign tests' Holm level
SEED_DEALS, SEED_TRIES, SEED_ALPHA = 96, 384, 1e-4


# ---------------------------------------------------------------------- describing a difference
def observation_digest(game: Game[Any, Any], pos: Position[Any]) -> str:
    """Every seat's observation at ``pos`` as one digest (what tells two worlds apart)."""
    return digest([game.observe(pos, q) for q in range(game.num_players)])


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, sort_keys=True, default=repr) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def changed_keys(before: Mapping[str, Any], after: Mapping[str, Any]) -> str:
    """``key 'k' ('old' then 'new')`` for each key that differs (at most three named)."""
    keys = sorted(k for k in set(before) | set(after) if before.get(k, _GONE) != after.get(k, _GONE))
    parts = [f"key {k!r} ({_short(before.get(k, '(absent)'))} then {_short(after.get(k, '(absent)'))})" for k in keys]
    more = f" and {len(parts) - 3} more" if len(parts) > 3 else ""
    return ", ".join(parts[:3]) + more


_GONE = object()


def text_span(real: str, other: str, context: int = 24) -> str:
    """The first stretch where two texts differ, with a little context either side."""
    ops = [op for op in difflib.SequenceMatcher(None, real, other, autojunk=False).get_opcodes() if op[0] != "equal"]
    if not ops:
        return "the same text"
    _, i1, i2, j1, j2 = ops[0]
    a = real[max(0, i1 - context) : i2 + context]
    b = other[max(0, j1 - context) : j2 + context]
    return f"{a!r} in the real world, {b!r} in a resampled one"


# ---------------------------------------------------------------------- what a seat reads
Rendered = list[tuple[str, str]]  # (part, text): e.g. ("user message", "..."), ("legal", "a, b")


def render(view: Any, game: Game[Any, Any], pos: Position[Any], player: int, marker: Any) -> tuple[Rendered, Any]:
    """What ``view`` shows ``player`` at ``pos`` as text parts, and the transcript marker for the
    seat's next turn (transcript views only); nothing for a view of an unknown kind."""
    if callable(getattr(view, "turn", None)):
        turn = view.turn(game, pos, player, marker)
        parts = [
            (f"message {i} ({m.get('role', '?')})", str(m.get("content", ""))) for i, m in enumerate(turn.messages)
        ]
        return [*parts, ("legal list", ", ".join(turn.legal))], turn.marker
    if callable(getattr(view, "menu", None)):
        menu = view.menu(game, pos, player)
        return [("menu text", menu.text), ("menu labels", " ".join(menu.labels))], None
    if callable(getattr(view, "prompt", None)):
        shown = view.prompt(game, pos, player)
        return [
            ("system prompt", shown.system),
            ("user prompt", shown.user),
            ("legal list", ", ".join(shown.legal)),
        ], None
    return [], None


def _views(game: Game[Any, Any]) -> list[tuple[str, Any]]:
    out = []
    factories: Mapping[str, Callable[[], Any]] = game.views()
    # the text view first: the menu and transcript views of most games are built on it
    for name in sorted(factories, key=lambda n: (n != "text", n)):
        with contextlib.suppress(Exception):  # a view that cannot be built for this game (e.g. a menu too long)
            out.append((name, factories[name]()))
    return out


def _markers(game: Game[Any, Any], pt: Playthrough, upto: int, player: int, view: Any) -> tuple[Any, bool]:
    """The transcript marker ``player`` holds at ply ``upto``, and whether every earlier turn rendered."""
    marker = None
    for pos in pt.positions[:upto]:
        if pos.pending or player not in game.players_to_act(pos):
            continue
        try:
            _, marker = render(view, game, pos, player, marker)
        except Exception:
            return None, False
    return marker, True


# ---------------------------------------------------------------------- no_private_leak
def check_no_private_leak(game: Game[Any, Any], pt: Playthrough, rng: np.random.Generator) -> None:
    """Nothing a seat receives changes when what is hidden from it is resampled (at a random
    decision point and the last one)."""
    if not game.has_hidden_state_sampler:
        raise CheckFailure(
            f"no_private_leak: {game.spec.id} has imperfect information but no sample_hidden_state; implement it, "
            "or declare the check in spec.exempt_checks with the reason"
        )
    candidates = [k for k, pos in enumerate(pt.positions) if not pos.pending]
    if not candidates:
        return
    picked = sorted({candidates[int(rng.integers(len(candidates)))], candidates[-1]})
    views: list[tuple[str, Any]] | None = None
    for k in picked:
        pos = pt.positions[k]
        for p in range(game.num_players):
            worlds = [
                game.sample_hidden_state(pos.state, p, make_rng(int(rng.integers(2**31)), "kit", draw))
                for draw in range(3)
            ]
            worlds = [w for w in worlds if w is not pos.state]  # the state itself: nothing was resampled
            if not worlds:
                continue
            _same_input(game, pt.seed, pos, p, worlds)
            if game.is_over(pos) or p not in game.players_to_act(pos):
                continue  # a seat reads its views only when it is asked to act
            if views is None:
                views = _views(game)
            for name, view in views:
                _same_view(game, pt, k, p, name, view, worlds)


def _same_input(game: Game[Any, Any], seed: int, pos: Position[Any], p: int, worlds: list[Any]) -> None:
    where = f"no_private_leak: seed {seed} ply {pos.ply}: player {p}'s"
    why = f"when only what is hidden from player {p} is resampled (sample_hidden_state)"
    obs = game.observe(pos, p)
    enc = np.asarray(game.encode_observation(pos.state, p), dtype=np.float32).ravel()
    legal = [game.action_to_str(a) for a in game.legal(pos, p)]
    for state in worlds:
        sampled = Position(state, (), pos.ply)
        other = game.observe(sampled, p)
        if digest(other) != digest(obs):
            raise CheckFailure(
                f"{where} observation changes {why}: {changed_keys(obs, other)}; the observation shows hidden "
                f"information: take it out of observation() (if player {p} may see it, sample_hidden_state must keep it)"
            )
        vec = np.asarray(game.encode_observation(state, p), dtype=np.float32).ravel()
        if vec.shape != enc.shape or not np.array_equal(vec, enc):
            at = f"in shape {enc.shape} then {vec.shape}"
            if vec.shape == enc.shape:
                idx = int(np.flatnonzero(vec != enc)[0])
                at = f"at index {idx} ({enc[idx]:g} then {vec[idx]:g})"
            raise CheckFailure(
                f"{where} numeric observation (encode_observation, what PettingZoo and Gym agents receive) changes {at} "
                f"{why}; build encode_observation from what observation(state, {p}) shows, nothing else"
            )
        other_legal = [game.action_to_str(a) for a in game.legal(sampled, p)]
        if other_legal != legal:
            gained = sorted(set(other_legal) - set(legal))[:3]
            lost = sorted(set(legal) - set(other_legal))[:3]
            raise CheckFailure(
                f"{where} legal actions change {why} (gained {gained}, lost {lost}); a seat's legal actions may "
                "depend only on what it observes"
            )


def _same_view(game: Game[Any, Any], pt: Playthrough, k: int, p: int, name: str, view: Any, worlds: list[Any]) -> None:
    pos = pt.positions[k]
    marker, ok = _markers(game, pt, k, p, view) if callable(getattr(view, "turn", None)) else (None, True)
    if not ok:
        return
    try:
        real, _ = render(view, game, pos, p, marker)
    except Exception:  # the view cannot render this decision at all: not a leak
        return
    where = f"no_private_leak: seed {pt.seed} ply {pos.ply}: the {name!r} view shows player {p}"
    for state in worlds:
        try:
            other, _ = render(view, game, Position(state, (), pos.ply), p, marker)
        except Exception as exc:
            raise CheckFailure(
                f"{where} its turn, but raises {type(exc).__name__}: {exc} in a world resampled by sample_hidden_state "
                "(the view reads more of the state than the seat observes)"
            ) from None
        for (part, a), (_, b) in zip(real, other):
            if a != b:
                raise CheckFailure(
                    f"{where} a different {part} when only what is hidden from player {p} is resampled: "
                    f"{text_span(a, b)}; the view reads hidden state: build it from game.observe(pos, {p}) "
                    f"and game.legal(pos, {p}) only"
                )


# ---------------------------------------------------------------------- hidden_state_sampling
def check_hidden_state_sampling(game: Game[Any, Any], pt: Playthrough, rng: np.random.Generator) -> None:
    """Every sampled world keeps the seat's observation (every ply); it is possible given the seat's
    observation history, with the deals' probabilities (one random ply: every seat against
    ``enumerate_deals``, else one random seat against deals from fresh seeds)."""
    if game.spec.information is Information.PERFECT or not game.has_hidden_state_sampler:
        return
    for k, pos in enumerate(pt.positions):
        if pos.pending:
            continue
        for p in range(game.num_players):
            sampled = game.sample_hidden_state(pos.state, p, make_rng(pt.seed, "history", k, p))
            before, after = game.observe(pos, p), game.observe(Position(sampled, (), pos.ply), p)
            if digest(after) != digest(before):
                raise CheckFailure(
                    f"hidden_state_sampling: seed {pt.seed} ply {k}: a sampled state changes player {p}'s observation: "
                    f"{changed_keys(before, after)}; sample_hidden_state must keep everything player {p} observes"
                )
    deals = game.enumerate_deals()
    candidates = [k for k, pos in enumerate(pt.positions) if not pos.pending]
    k = candidates[int(rng.integers(len(candidates)))]
    if deals and len(deals) <= MAX_DEALS:
        for p in range(game.num_players):
            _possible_worlds(game, pt, k, p, list(deals), rng)
    elif live := [j for j in candidates[: candidates.index(k) + 1] if not game.is_over(pt.positions[j])]:
        # the last ply before the end: a sampler may return a finished game as it is
        _possible_worlds(game, pt, live[-1], int(rng.integers(game.num_players)), None, rng)


def _possible_worlds(
    game: Game[Any, Any], pt: Playthrough, k: int, p: int, deals: Any, rng: np.random.Generator
) -> None:
    """Worlds sampled for ``p`` at ply ``k`` against the deals that reproduce its observations: the
    listed ``deals`` (z-tests), or (None) those of :data:`SEED_TRIES` fresh seeds (sign tests, Holm)."""
    history = [digest(game.observe(pos, p)) for pos in pt.positions[: k + 1]]
    if _replayed(game, pt.seed, pt.moves[:k], p, history) is None:
        return  # the same seed and moves give another game: determinism (or no_global_rng) names that
    found: Counter[str] = Counter()  # class -> probability (listed deals) or number of deals
    example: dict[str, Position[Any]] = {}
    for tries, (seed, prob) in enumerate(deals or [(int(rng.integers(2**31)), 1) for _ in range(SEED_TRIES)]):
        if deals is None and (found.total() == SEED_DEALS or (tries in (24, 96) and found.total() < tries / 12)):
            break
        if (pos := _replayed(game, seed, pt.moves[:k], p, history)) is not None:
            found[key := observation_digest(game, pos)] += prob
            example.setdefault(key, pos)
    total = found.total()
    draws = WORLD_DRAWS if deals else int(total)
    if total <= 0 or (deals is None and total < SEED_DEALS // 3):
        return  # no deal reaches this history: nothing to compare with
    counts: Counter[str] = Counter()
    worlds: dict[str, Position[Any]] = {}
    for draw in range(draws):
        state = game.sample_hidden_state(pt.positions[k].state, p, make_rng(int(rng.integers(2**31)), "worlds", draw))
        counts[key := observation_digest(game, world := Position(state, (), pt.positions[k].ply))] += 1
        worlds.setdefault(key, world)
    keys = sorted(set(found) | set(counts), key=lambda c: (c in found, found[c] - counts[c]))
    sd = {c: math.sqrt(draws * found[c] / total * (1 - found[c] / total)) for c in keys}
    z = [c not in found or (sd[c] > 0 and abs(counts[c] - draws * found[c] / total) / sd[c] > MAX_Z) for c in keys]
    off = z if deals else holm([binomial_two_sided(counts[c], counts[c] + found[c]) for c in keys], alpha=SEED_ALPHA)
    where = f"hidden_state_sampling: seed {pt.seed} ply {k}: "
    source = "deal (enumerate_deals)" if deals else f"deal of {draws} from fresh seeds"
    for c in (c for c, bad in zip(keys, off) if bad):
        if c not in found:
            raise CheckFailure(
                where
                + f"{sum(counts[x] for x in counts if x not in found)} of {draws} worlds sampled for player {p} are "
                f"impossible: no {source} that reproduces player {p}'s observations up to ply {k} gives them "
                f"({_impossible(game, p, worlds[c], example)}); sample only worlds that reproduce every observation "
                f"player {p} has had"
            )
        raise CheckFailure(
            where + f"the distribution of worlds sampled for player {p} is off: a world the consistent deals give "
            f"with probability {found[c] / total:.3f} came {counts[c]} times in {draws} draws (expected about "
            f"{draws * found[c] / total:.1f}); sample hidden information with the probabilities of the deals "
            f"consistent with player {p}'s observations"
        )


def _replayed(game: Game[Any, Any], seed: int, moves: Any, p: int, history: list[str]) -> Position[Any] | None:
    """Where ``moves`` lead from ``seed`` if player ``p`` sees ``history`` on the way (else None)."""
    try:
        pos = game.start(seed)
        for ply, (seat, action) in enumerate(moves):
            if digest(game.observe(pos, p)) != history[ply]:
                return None
            pos = game.act(pos, seat, action)
    except Exception:  # a move of the playthrough is not legal after this deal: not consistent
        return None
    return pos if digest(game.observe(pos, p)) == history[len(moves)] else None


def _impossible(game: Game[Any, Any], p: int, bad: Position[Any], possible: dict[str, Position[Any]]) -> str:
    """What sets an impossible world apart: a seat's observation key with a value no possible world gives."""
    for q in (q for q in range(game.num_players) if q != p):
        seen = game.observe(bad, q)
        allowed: dict[str, list[str]] = {}
        for pos in possible.values():
            for key, value in game.observe(pos, q).items():
                text = _short(value)
                if text not in allowed.setdefault(key, []):
                    allowed[key].append(text)
        for key, value in sorted(seen.items()):
            if _short(value) not in allowed.get(key, []):
                return (
                    f"in one, player {q}'s observation key {key!r} is {_short(value)}, where the possible worlds "
                    f"give {' or '.join(sorted(allowed.get(key, ['(no such key)'])))}"
                )
    return "the seats' observations together match no possible world"


# ---------------------------------------------------------------------- what each seat gets
@dataclass(frozen=True)
class View:
    """What every player gets at one position: observation digest, numeric encoding, legal set."""

    obs: tuple[str, ...]
    enc: tuple[bytes, ...]
    legal: tuple[tuple[str, ...], ...]
    observed: tuple[dict[str, Any], ...] = field(compare=False)  # the observations themselves


def view_of(game: Game[Any, Any], pos: Position[Any]) -> View:
    n = range(game.num_players)
    observed = tuple(game.observe(pos, p) for p in n)
    return View(
        tuple(digest(o) for o in observed),
        tuple(np.asarray(game.encode_observation(pos.state, p), dtype=np.float32).tobytes() for p in n),
        tuple(tuple(game.action_to_str(a) for a in game.legal(pos, p)) for p in n),
        observed,
    )


# ---------------------------------------------------------------------- private_encoding
def check_private_encoding(game: Game[Any, Any], pt: Playthrough, rng: np.random.Generator) -> None:
    """Where a seat's observation differs and another's does not (the playthrough and its twin; worlds
    sampled for each other seat at a random ply), the first seat's numeric observation differs."""
    if game.spec.information is Information.PERFECT:
        return
    pairs = [(ply, a, b) for twin in pt.twins(game) for ply, (a, b) in enumerate(zip(pt.views(game), twin.views))]
    k = int(rng.integers(len(pt.positions)))
    if game.has_hidden_state_sampler and not pt.positions[k].pending:
        for q in range(game.num_players):
            world = game.sample_hidden_state(pt.positions[k].state, q, make_rng(pt.seed, "private", q))
            pairs.append((k, pt.views(game)[k], view_of(game, Position(world, (), k))))
    for ply, a, b in pairs:
        for p in range(game.num_players):
            same = [q for q in range(game.num_players) if q != p and a.obs[q] == b.obs[q]]
            if same and a.obs[p] != b.obs[p] and a.enc[p] == b.enc[p]:
                raise CheckFailure(
                    f"private_encoding: seed {pt.seed} ply {ply}: player {p}'s observation differs "
                    f"({changed_keys(a.observed[p], b.observed[p])}) where player {same[0]}'s is the same (so the "
                    f"difference is what only player {p} sees), but its numeric observation (encode_observation) is "
                    "the same: encode what the seat sees privately (its cards, its dice), or exempt the check in "
                    "spec.exempt_checks with the reason"
                )
