"""The conformance checks: small functions over the same seeded random-legal :class:`Playthrough`
(and its cached twins, its moves replayed from other seeds). Each failure message starts with the
check's name, which the kit, ``arena check`` and the pytest plugin rely on. One file, past 500
lines, because every check reads the same playthrough and its helpers (the hidden-information
checks, which need their own machinery, are in ``hidden.py``).
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import math
import os
import pickle
import random
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..episode import digest
from ..errors import GameOverError, IllegalActionError, NotYourTurnError, ReplayDivergenceError
from ..game import Game, Position
from ..match import Match
from ..seeding import derive_seed, make_rng
from ..spec import Information, TurnStructure
from .failure import CheckFailure as CheckFailure  # re-exported: callers import it from here
from .hidden import (
    View,
    changed_keys,
    check_hidden_state_sampling,
    check_no_private_leak,
    check_private_encoding,
    observation_digest,
    view_of,
)


@dataclass
class Playthrough:
    """A random-legal game: the positions, the (player, action) moves, and per-ply digests."""

    seed: int
    positions: list[Position[Any]] = field(default_factory=list)
    moves: list[tuple[int, Any]] = field(default_factory=list)
    obs_digests: list[str] = field(default_factory=list)
    returns: tuple[float, ...] | None = None
    _views: list[View] | None = field(default=None, repr=False, compare=False)
    _twins: list[Twin] | None = field(default=None, repr=False, compare=False)

    @property
    def final(self) -> Position[Any]:
        return self.positions[-1]

    @property
    def finished_returns(self) -> tuple[float, ...]:
        """The returns of a playthrough played to its end (:func:`play_random` sets them)."""
        if self.returns is None:
            raise CheckFailure(f"legal_play: seed {self.seed}: the playthrough has no returns (it did not end)")
        return self.returns

    def views(self, game: Game[Any, Any]) -> list[View]:
        """Every player's view at every position (computed once)."""
        if self._views is None:
            self._views = [view_of(game, pos) for pos in self.positions]
        return self._views

    def twins(self, game: Game[Any, Any]) -> list[Twin]:
        """The same moves replayed from another seed, as far as they stay legal (computed once)."""
        if self._twins is None:
            self._twins = [replay_twin(game, derive_seed(self.seed, "kit-twin") % 2**31, self.moves)]
        return self._twins


@dataclass
class Twin:
    """A replay of a playthrough's moves from another seed (cut where a move is not legal there)."""

    seed: int
    views: list[View]
    complete: bool  # every move was legal and the game ended where the original did
    returns: tuple[float, ...] | None


def replay_twin(game: Game[Any, Any], seed: int, moves: list[tuple[int, Any]]) -> Twin:
    pos = game.start(seed)
    views = [view_of(game, pos)]
    for player, action in moves:
        if game.is_over(pos) or player not in game.players_to_act(pos) or action not in game.legal(pos, player):
            return Twin(seed, views, False, None)
        pos = game.act(pos, player, action)
        views.append(view_of(game, pos))
    over = game.is_over(pos)
    return Twin(seed, views, over, game.final_returns(pos) if over else None)


def state_key(game: Game[Any, Any], state: Any) -> str:
    """A digest of a state's content (its pickle, else its JSON form, else its repr), to see
    whether a hook changed a state it was given."""
    try:
        return "pickle:" + hashlib.sha256(pickle.dumps(state, protocol=4)).hexdigest()
    except Exception:
        try:
            return "json:" + digest(game.state_to_json(state))
        except Exception:
            return "repr:" + repr(state)


def _same_np_state(a: Any, b: Any) -> bool:
    """Two legacy ``np.random.get_state()`` tuples are equal (the key array compared by value)."""
    return bool(a[0] == b[0] and np.array_equal(a[1], b[1]) and a[2:] == b[2:])


def _kit_chooser(seed: int) -> Callable[[int], int]:
    """The kit's random choices for the episode of ``seed``: ``choose(n)`` is an index in range(n)."""
    rng = make_rng(seed, "kit-choices")
    return lambda n: int(rng.integers(n))


def play_random(game: Game[Any, Any], seed: int, choose: Callable[[int], int]) -> Playthrough:
    """Play from ``seed``; ``choose(n)`` picks an index in range(n) for each decision."""
    limit = game.spec.max_length
    pos = game.start(seed)
    pt = Playthrough(seed, [pos], [], [observation_digest(game, pos)])
    while not game.is_over(pos):
        if len(pt.moves) >= limit:
            raise CheckFailure(
                f"length_bound: seed {seed} is still running after {limit} decisions (declared max_length {game.spec.max_length})"
            )
        player = game.current_player(pos)
        if player is None:
            raise CheckFailure(f"legal_play: seed {seed} ply {pos.ply}: the game is not over but no player is to act")
        legal = game.legal(pos, player)
        if not legal:
            raise CheckFailure(
                f"mask_matches_legal: seed {seed} ply {pos.ply}: player {player} is to act but has no legal action"
            )
        action = legal[choose(len(legal))]
        pos = game.act(pos, player, action)
        pt.moves.append((player, action))
        pt.positions.append(pos)
        pt.obs_digests.append(observation_digest(game, pos))
    pt.returns = game.final_returns(pos)
    probe = {0, len(pt.positions) // 2}  # where aliasing by a state-mutating game shows first
    if any(observation_digest(game, pt.positions[k]) != pt.obs_digests[k] for k in probe):
        # a hook changed states after the fact (no_state_mutation names it): the other checks
        # get positions copied before each move, so they still see the game as it was played
        pt.positions = _copied_positions(game, seed, pt.moves)
    return pt


def _copied_positions(game: Game[Any, Any], seed: int, moves: list[tuple[int, Any]]) -> list[Position[Any]]:
    pos = game.start(seed)
    out = []
    for player, action in moves:
        out.append(copy.deepcopy(pos))
        pos = game.act(pos, player, action)
    out.append(pos)
    return out


def replay_moves(game: Game[Any, Any], seed: int, moves: list[tuple[int, Any]]) -> Playthrough:
    pos = game.start(seed)
    pt = Playthrough(seed, [pos], list(moves), [observation_digest(game, pos)])
    for player, action in moves:
        pos = game.act(pos, player, action)
        pt.positions.append(pos)
        pt.obs_digests.append(observation_digest(game, pos))
    pt.returns = game.final_returns(pos) if game.is_over(pos) else None
    return pt


# ---------------------------------------------------------------------- per-playthrough checks
def check_determinism(game: Game[Any, Any], pt: Playthrough, rng: np.random.Generator) -> None:
    try:
        again = replay_moves(game, pt.seed, pt.moves)
    except Exception as exc:
        problem = f"replaying the same seed and actions raised {type(exc).__name__}: {exc}"
    else:
        plies = [ply for ply, (a, b) in enumerate(zip(pt.obs_digests, again.obs_digests)) if a != b]
        if plies:
            problem = f"observations differ at ply {plies[0]} when the same seed and actions are replayed"
        elif pt.returns != again.returns:
            problem = f"returns {pt.returns} then {again.returns} for the same seed and actions"
        else:
            return
    raise CheckFailure(f"determinism: seed {pt.seed}: {problem}" + global_rng_hint(game, pt))


def check_mask_matches_legal(game: Game[Any, Any], pt: Playthrough, rng: np.random.Generator) -> None:
    for pos in pt.positions:
        for p in range(game.num_players):
            where = f"mask_matches_legal: seed {pt.seed} ply {pos.ply} player {p}"
            legal = game.legal(pos, p)
            ids = [game.action_id(a) for a in legal]
            if len(set(ids)) != len(ids):
                raise CheckFailure(f"{where}: two legal actions share an index")
            strings = [game.action_to_str(a) for a in legal]
            if len(set(strings)) != len(strings):
                raise CheckFailure(f"{where}: two legal actions share a canonical string")
            mask = game.mask(pos, p)
            if mask.shape != (game.num_actions,) or set(np.flatnonzero(mask).tolist()) != set(ids):
                raise CheckFailure(f"{where}: the mask does not equal the legal set")
            for a, i in zip(legal, ids):
                if game.action_from_id(i) != a:
                    raise CheckFailure(
                        f"mask_matches_legal: seed {pt.seed}: index {i} decodes to {game.action_from_id(i)!r}, not the legal action {a!r}"
                    )
            if p in game.players_to_act(pos):
                legal_set = set(ids)
                for i in range(game.num_actions):
                    try:
                        decoded = game.action_from_id(i)
                    except (ValueError, IndexError, KeyError):
                        continue
                    if game.is_legal(pos.state, p, decoded) != (i in legal_set):
                        raise CheckFailure(f"{where}: is_legal disagrees with legal_actions on index {i}")


def check_illegal_rejected(game: Game[Any, Any], pt: Playthrough, rng: np.random.Generator) -> None:
    for pos in pt.positions:
        if game.is_over(pos):
            continue
        waiting = game.players_to_act(pos)
        player = waiting[0]
        illegal = np.flatnonzero(game.mask(pos, player) == 0)
        for i in illegal[:8]:
            try:
                game.act_id(pos, player, int(i))
            except IllegalActionError:
                continue
            raise CheckFailure(
                f"illegal_rejected: seed {pt.seed} ply {pos.ply}: player {player}'s illegal action index {int(i)} was accepted"
            )
        others = [p for p in range(game.num_players) if p not in waiting]
        if others:
            with contextlib.suppress(NotYourTurnError, IllegalActionError):
                game.act(pos, others[0], game.legal(pos, player)[0])
                raise CheckFailure(
                    f"illegal_rejected: seed {pt.seed} ply {pos.ply}: player {others[0]} acted out of turn"
                )


def check_no_step_after_end(game: Game[Any, Any], pt: Playthrough, rng: np.random.Generator) -> None:
    end = pt.final
    where = f"no_step_after_end: seed {pt.seed}"
    for p in range(game.num_players):
        if game.legal(end, p):
            raise CheckFailure(f"{where}: player {p} has legal actions after the end")
        for i in range(min(game.num_actions, 4)):
            try:
                game.act_id(end, p, i)
            except GameOverError:
                continue
            except (IllegalActionError, NotYourTurnError) as exc:
                raise CheckFailure(
                    f"{where}: acting after the end raised {type(exc).__name__}, not GameOverError"
                ) from None
            raise CheckFailure(f"{where}: player {p}'s action index {i} was accepted after the end")


def check_returns_bounds(game: Game[Any, Any], pt: Playthrough, rng: np.random.Generator) -> None:
    lo, hi = game.spec.reward_bounds
    returns = pt.finished_returns
    where = f"returns_bounds: seed {pt.seed}"
    if len(returns) != game.num_players:
        raise CheckFailure(f"{where}: {len(returns)} returns for {game.num_players} players")
    for p, r in enumerate(returns):
        if not (math.isfinite(r) and lo - 1e-9 <= r <= hi + 1e-9):
            raise CheckFailure(f"{where}: player {p} returned {r}, outside the declared {game.spec.reward_bounds}")


def check_returns_sum(game: Game[Any, Any], pt: Playthrough, rng: np.random.Generator) -> None:
    total = game.spec.declared_sum
    returns = pt.finished_returns
    if total is not None and abs(sum(returns) - total) > 1e-6:
        raise CheckFailure(
            f"returns_sum: seed {pt.seed}: returns {returns} sum to {sum(returns)}, declared {game.spec.utility.value} {total}"
        )


def check_length_bound(game: Game[Any, Any], pt: Playthrough, rng: np.random.Generator) -> None:
    if len(pt.moves) > game.spec.max_length:
        raise CheckFailure(
            f"length_bound: seed {pt.seed}: {len(pt.moves)} decisions > declared max_length {game.spec.max_length}"
        )


def check_serialization(game: Game[Any, Any], pt: Playthrough, rng: np.random.Generator) -> None:
    k = int(rng.integers(len(pt.positions)))
    pos = pt.positions[k]
    where = f"serialization: seed {pt.seed} ply {k}"
    restored = game.position_from_json(json.loads(json.dumps(game.position_to_json(pos))))
    if observation_digest(game, restored) != pt.obs_digests[k]:
        raise CheckFailure(f"{where}: observations differ after a JSON round trip")
    for p in range(game.num_players):
        if [*map(game.action_to_str, game.legal(restored, p))] != [*map(game.action_to_str, game.legal(pos, p))]:
            raise CheckFailure(f"{where}: player {p}'s legal actions differ after a JSON round trip")
    for player, action in pt.moves[k:]:
        restored = game.act(restored, player, action)
    if not game.is_over(restored) or game.final_returns(restored) != pt.returns:
        raise CheckFailure(f"{where}: playing on from the restored position does not give returns {pt.returns}")


def check_replay(game: Game[Any, Any], pt: Playthrough, rng: np.random.Generator) -> None:
    from ..replay import replay

    try:
        match = Match(game, pt.seed)
        for player, action in pt.moves:
            match.submit(player, action)
        replay(match.record, game)
    except Exception as exc:
        diverged = isinstance(exc, ReplayDivergenceError)
        what = str(exc) if diverged else f"recording the playthrough raised {type(exc).__name__}: {exc}"
        raise CheckFailure(f"replay: seed {pt.seed}: {what}" + global_rng_hint(game, pt)) from None


def check_commit_reveal(game: Game[Any, Any], pt: Playthrough, rng: np.random.Generator) -> None:
    for before, after in zip(pt.positions, pt.positions[1:]):
        if not after.pending:
            continue
        for p in game.players_to_act(after):
            if digest(game.observe(after, p)) != digest(game.observe(before, p)):
                raise CheckFailure(
                    f"commit_reveal: seed {pt.seed} ply {after.ply}: player {p} can see another player's commitment before the reveal"
                )


def _played_under(game: Game[Any, Any], pt: Playthrough, py_seed: int, np_seed: int) -> tuple[list[str] | str, bool]:
    """``pt``'s moves replayed with the global generators reseeded first: the observation
    digests and returns (or the exception), and whether the game moved either generator."""
    random.seed(py_seed)
    np.random.seed(np_seed)
    py_state, np_state = random.getstate(), np.random.get_state()
    try:
        again = replay_moves(game, pt.seed, pt.moves)
        seen: list[str] | str = [*again.obs_digests, repr(again.returns)]
    except Exception as exc:  # a crash is a difference too
        seen = f"raised {type(exc).__name__}"
    np_after = np.random.get_state()
    moved = random.getstate() != py_state or not _same_np_state(np_after, np_state)
    return seen, moved


def global_rng_reader(
    game: Game[Any, Any], pt: Playthrough, *, salts: tuple[int, ...] = (987654321, 2**31 - 1, 20261201)
) -> str | None:
    """``"Python's global `random`"`` or ``"numpy's global random state"`` if reseeding it
    changes the playthrough from ``pt.seed``; None if no salt does. The global states are restored."""
    py_state, np_state = random.getstate(), np.random.get_state()
    try:
        base, _ = _played_under(game, pt, 1, 1)
        if _played_under(game, pt, 1, 1)[0] != base:  # nondeterministic anyway: not the global RNG's doing
            return None
        for salt in salts:  # one salt can deal the same by chance
            if _played_under(game, pt, salt, salt)[0] != base:
                return (
                    "Python's global `random`"
                    if _played_under(game, pt, salt, 1)[0] != base
                    else "numpy's global random state"
                )
        return None
    finally:
        random.setstate(py_state)
        np.random.set_state(np_state)


def global_rng_hint(game: Game[Any, Any], pt: Playthrough) -> str:
    who = global_rng_reader(game, pt)
    return "" if who is None else f" (the game reads {who}, the global RNG: see no_global_rng)"


def check_no_global_rng(game: Game[Any, Any], pt: Playthrough, rng: np.random.Generator) -> None:
    """The same seed plays the same game whatever the global generators hold (one replay with them
    reseeded by a salt of this example), and the game leaves their states as it found them."""
    py_state, np_state = random.getstate(), np.random.get_state()
    salt = int(rng.integers(2**31))
    try:
        seen, moved = _played_under(game, pt, salt, salt)
        random.seed(salt)
        np.random.seed(salt)
        py_mark, np_mark = random.getstate(), np.random.get_state()
        for pos in pt.positions[:: max(1, len(pt.positions) // 4)]:
            for p in range(game.num_players):
                game.observe(pos, p)
                game.encode_observation(pos.state, p)
                game.legal(pos, p)
                if game.has_hidden_state_sampler and not pos.pending:
                    game.sample_hidden_state(pos.state, p, make_rng(0))
        np_after = np.random.get_state()
        moved = moved or random.getstate() != py_mark or not _same_np_state(np_after, np_mark)
    finally:
        random.setstate(py_state)
        np.random.set_state(np_state)
    who = None
    if seen != [*pt.obs_digests, repr(pt.returns)]:  # else determinism's business, if not the global RNG's
        who = global_rng_reader(game, pt, salts=(salt, 987654321, 2**31 - 1))
    if who is not None:
        raise CheckFailure(
            f"no_global_rng: seed {pt.seed} plays differently when {who} is reseeded: the game draws from the global RNG; "
            "draw every chance event from the Generator passed to initial_state (and keep it in the state)"
        )
    if moved:
        raise CheckFailure(
            f"no_global_rng: seed {pt.seed}: the game changed the state of Python's `random` or numpy's global random state (the global RNG); "
            "draw from the Generator passed in, and never seed the global generators"
        )


def check_no_state_mutation(game: Game[Any, Any], pt: Playthrough, rng: np.random.Generator) -> None:
    """Replays the moves; every transition must leave the state it was given unchanged: what
    the acting player observes of it (every ply) and its content (:func:`state_key`, sampled plies)."""
    pos = game.start(pt.seed)
    for ply, (player, action) in enumerate(pt.moves):
        deep = ply < 4 or ply % 16 == 0  # a content digest can cost as much as the move: sampled plies
        before, obs = state_key(game, pos.state) if deep else None, digest(game.observe(pos, player))
        new = game.act(pos, player, action)
        if digest(game.observe(pos, player)) != obs or (deep and state_key(game, pos.state) != before):
            raise CheckFailure(
                f"no_state_mutation: seed {pt.seed} ply {ply}: next_state changed its input state while applying player "
                f"{player}'s {game.action_to_str(action)!r}{_mutated_fields(game, pt.seed, pt.moves[: ply + 1])}; return "
                "a new state and leave the old one untouched (copy lists, dicts and arrays before changing them)"
            )
        pos = new


def _mutated_fields(game: Game[Any, Any], seed: int, moves: list[tuple[int, Any]]) -> str:
    """`` (field 'x': ... then ...)``: what the last move changed in the state it was given (the
    state's JSON form compared with a deep copy taken before the move); empty if it cannot say."""
    try:
        pos = game.start(seed)
        for player, action in moves[:-1]:
            pos = game.act(pos, player, action)
        kept = copy.deepcopy(pos.state)
        game.act(pos, *moves[-1])
        old, new = game.state_to_json(kept), game.state_to_json(pos.state)
    except Exception:
        return ""
    if isinstance(old, dict) and isinstance(new, dict):
        return f" ({changed_keys(old, new).replace('key ', 'field ')})"
    return ""


def check_chance(game: Game[Any, Any], pt: Playthrough, rng: np.random.Generator) -> None:
    """``chance=False``: another seed must give the same game for the same moves (the
    ``chance=True`` half needs several playthroughs: :func:`check_chance_observed`)."""
    if game.spec.chance:
        return
    for twin in pt.twins(game):
        where = _first_difference(game, pt, twin)
        if where is not None:
            raise CheckFailure(
                f"chance: declared chance=False, but seeds {pt.seed} and {twin.seed} differ for the same moves ({where}); "
                "the seed changes the game: declare chance=True"
            )


def seed_matters(game: Game[Any, Any], pt: Playthrough) -> bool:
    """Whether replaying ``pt``'s moves from another seed changes any view or the returns."""
    return any(_first_difference(game, pt, twin) is not None for twin in pt.twins(game))


def check_chance_observed(game: Game[Any, Any], pairs: int, seen: bool) -> None:
    """``chance=True``: over ``pairs`` seed pairs, some seed must change something."""
    if game.spec.chance and pairs and not seen:
        raise CheckFailure(
            f"chance: declared chance=True, but {pairs} pairs of seeds played the same moves to the same observations, "
            "legal actions and returns; declare chance=False (or draw the chance events from the rng given to initial_state)"
        )


def _first_difference(game: Game[Any, Any], pt: Playthrough, twin: Twin) -> str | None:
    for ply, (a, b) in enumerate(zip(pt.views(game), twin.views)):
        for p in range(game.num_players):
            if a.obs[p] != b.obs[p]:
                return f"player {p}'s observation at ply {ply}"
            if a.legal[p] != b.legal[p]:
                return f"player {p}'s legal actions at ply {ply}"
    if not twin.complete:
        return f"a move of the playthrough is not legal from seed {twin.seed} at ply {len(twin.views) - 1}"
    if twin.returns != pt.returns:
        return f"returns {pt.returns} then {twin.returns}"
    return None


def check_turn_structure(game: Game[Any, Any], pt: Playthrough, rng: np.random.Generator) -> None:
    """Sequential: one player at every decision; simultaneous: several at every decision."""
    declared = game.spec.turn_structure
    if game.num_players < 2 or declared is TurnStructure.MIXED:
        return
    for pos in pt.positions:
        if pos.pending or game.is_over(pos):
            continue
        acting = list(game.to_move(pos.state))
        if declared is TurnStructure.SEQUENTIAL and len(acting) != 1:
            raise CheckFailure(
                f"turn_structure: declared sequential, but at seed {pt.seed} ply {pos.ply} players {acting} are to act together; "
                "declare TurnStructure.SIMULTANEOUS or MIXED"
            )
        if declared is TurnStructure.SIMULTANEOUS and len(acting) < 2:
            raise CheckFailure(
                f"turn_structure: declared simultaneous (parallel_env relies on it), but at seed {pt.seed} ply {pos.ply} only players "
                f"{acting} are to act; declare TurnStructure.MIXED (or SEQUENTIAL)"
            )


def turn_shapes(game: Game[Any, Any], pt: Playthrough) -> set[str]:
    """``"single"`` and/or ``"several"``: the kinds of decision points seen in ``pt``."""
    return {
        "several" if len(game.to_move(pos.state)) > 1 else "single"
        for pos in pt.positions
        if not pos.pending and not game.is_over(pos)
    }


def check_turn_structure_observed(game: Game[Any, Any], shapes: set[str]) -> None:
    """``mixed``: over all playthroughs, both kinds of decision point must occur."""
    if game.spec.turn_structure is not TurnStructure.MIXED or game.num_players < 2 or not shapes:
        return
    if shapes == {"single"}:
        raise CheckFailure(
            "turn_structure: declared mixed, but every decision point seen had one player to act; declare TurnStructure.SEQUENTIAL"
        )
    if shapes == {"several"}:
        raise CheckFailure(
            "turn_structure: declared mixed, but every decision point seen had several players to act; declare TurnStructure.SIMULTANEOUS"
        )


def check_information(game: Game[Any, Any], pt: Playthrough, rng: np.random.Generator) -> None:
    """Perfect information: no player may see something another does not."""
    if game.spec.information is not Information.PERFECT:
        return
    if game.spec.turn_structure is not TurnStructure.SEQUENTIAL:
        raise CheckFailure(
            f"information: declared perfect, but turn_structure is {game.spec.turn_structure.value}: each commitment "
            "of a simultaneous move is hidden until the reveal; declare Information.IMPERFECT"
        )
    mine = pt.views(game)
    for twin in pt.twins(game):
        for ply, (a, b) in enumerate(zip(mine, twin.views)):
            same = [p for p in range(game.num_players) if a.obs[p] == b.obs[p]]
            differ = [p for p in range(game.num_players) if a.obs[p] != b.obs[p]]
            if same and differ:
                raise CheckFailure(
                    f"information: declared perfect, but at ply {ply} of seeds {pt.seed} and {twin.seed} player {differ[0]}'s "
                    f"observation differs while player {same[0]}'s is the same: player {differ[0]} sees something player "
                    f"{same[0]} does not; declare Information.IMPERFECT"
                )


def check_encoding(game: Game[Any, Any], pt: Playthrough, rng: np.random.Generator) -> None:
    """The numeric observation is a function of ``observe`` (nothing hidden leaks into it), of
    the declared size and bounds; with ``spec.observation_is_state`` it also tells apart every
    two different observations."""
    lo, hi = game.observation_bounds
    views = [*pt.views(game), *(v for twin in pt.twins(game) for v in twin.views)]
    shape = np.shape(game.encode_observation(pt.positions[0].state, 0))
    if shape != (game.observation_size,):
        raise CheckFailure(
            f"encoding: seed {pt.seed}: encode_observation gives shape {shape}, not (observation_size,) = ({game.observation_size},)"
        )
    for ply, view in enumerate(pt.views(game)):
        for p in range(game.num_players):
            vec = np.frombuffer(view.enc[p], dtype=np.float32)
            if vec.size != game.observation_size:
                raise CheckFailure(
                    f"encoding: seed {pt.seed} ply {ply}: player {p}'s numeric observation has {vec.size} values, not observation_size {game.observation_size}"
                )
            if not np.all(np.isfinite(vec)) or np.any(vec < lo) or np.any(vec > hi):
                raise CheckFailure(
                    f"encoding: seed {pt.seed} ply {ply}: player {p}'s numeric observation has values in "
                    f"[{vec.min()}, {vec.max()}], outside observation_bounds ({lo}, {hi}) (or not finite)"
                )
    by_obs: dict[tuple[int, str], bytes] = {}
    by_enc: dict[tuple[int, bytes], str] = {}
    first: dict[tuple[int, str], View] = {}
    for view in views:
        for p in range(game.num_players):
            known = by_obs.setdefault((p, view.obs[p]), view.enc[p])
            if known != view.enc[p]:
                a, b = np.frombuffer(known, dtype=np.float32), np.frombuffer(view.enc[p], dtype=np.float32)
                idx = int(np.flatnonzero(a != b)[0]) if a.shape == b.shape else 0
                raise CheckFailure(
                    f"encoding: seed {pt.seed}: player {p}'s numeric observation (encode_observation) differs at index {idx} "
                    f"({a[idx]:g} then {b[idx]:g}) for two positions with the same observation: it carries something "
                    "observe() does not show (hidden information leaks to PettingZoo and Gym agents); build "
                    f"encode_observation from what observation(state, {p}) shows, nothing else"
                )
            first.setdefault((p, view.obs[p]), view)
            if game.spec.observation_is_state:
                other = by_enc.setdefault((p, view.enc[p]), view.obs[p])
                if other != view.obs[p]:
                    keys = changed_keys(first[(p, other)].observed[p], view.observed[p])
                    raise CheckFailure(
                        f"encoding: seed {pt.seed}: two observations of player {p} that differ in {keys} have the same "
                        "numeric observation. If that is hidden information (no_private_leak names it), take it out of "
                        "observation(), do not encode it; if the player may see it, encode it in encode_observation; "
                        "or declare observation_is_state=False in the spec"
                    )


PLAYTHROUGH_CHECKS: dict[str, Callable[[Game[Any, Any], Playthrough, np.random.Generator], None]] = {
    "determinism": check_determinism,
    "mask_matches_legal": check_mask_matches_legal,
    "illegal_rejected": check_illegal_rejected,
    "no_step_after_end": check_no_step_after_end,
    "returns_bounds": check_returns_bounds,
    "returns_sum": check_returns_sum,
    "length_bound": check_length_bound,
    "serialization": check_serialization,
    "replay": check_replay,
    "no_private_leak": check_no_private_leak,
    "hidden_state_sampling": check_hidden_state_sampling,
    "commit_reveal": check_commit_reveal,
    "no_global_rng": check_no_global_rng,
    "no_state_mutation": check_no_state_mutation,
    "chance": check_chance,
    "turn_structure": check_turn_structure,
    "information": check_information,
    "encoding": check_encoding,
    "private_encoding": check_private_encoding,
}


# ---------------------------------------------------------------------- cross-process determinism
#: set in the subprocess that rebuilds a game: the kit does not start another one from there
CHILD_ENV = "ARENA_KIT_CHILD"


class CannotRebuild(Exception):
    """The game's class cannot be imported by another process (the reason is the message)."""


def game_reference(game: Game[Any, Any]) -> dict[str, Any]:
    """How another process finds ``type(game)``: its module, or for a class defined in the
    script being run (``__main__``), that script's file."""
    cls = type(game)
    ref = {
        "module": cls.__module__,
        "qualname": cls.__qualname__,
        "params": game.params.model_dump(mode="json"),
        "num_players": game.num_players,
    }
    if "<locals>" in cls.__qualname__:
        raise CannotRebuild(f"{cls.__qualname__} is defined inside a function; define the game class at module level")
    if cls.__module__ == "__main__":
        main = sys.modules.get("__main__")
        run_as = getattr(getattr(main, "__spec__", None), "name", None)
        if run_as and run_as != "__main__":  # `python -m pkg.mod`: import it by that name
            ref["module"] = run_as
            return ref
        path = getattr(main, "__file__", None)
        if not path or not os.path.isfile(path):
            raise CannotRebuild(
                f"{cls.__qualname__} is defined in an interactive __main__ with no file to import it from"
            )
        ref["path"] = os.path.abspath(path)
    return ref


def fingerprint(game: Game[Any, Any], seeds: list[int]) -> str:
    """Digest of seeded random-legal playthroughs (choices from a seeded generator)."""
    parts = []
    for seed in seeds:
        pt = play_random(game, seed, _kit_chooser(seed))
        parts.append([pt.obs_digests, list(pt.finished_returns), [[p, game.action_to_str(a)] for p, a in pt.moves]])
    return digest(parts)


def _subprocess_fingerprint(ref: dict[str, Any], seeds: list[int], hashseed: str) -> str:
    code = (
        "import importlib, importlib.util, json, os, sys\n"
        "ref = json.loads(sys.argv[1]); seeds = json.loads(sys.argv[2])\n"
        "if 'path' in ref:\n"  # the script that defined the game, imported under another name
        "    sys.path.insert(0, os.path.dirname(ref['path']))\n"
        "    spec = importlib.util.spec_from_file_location('__arena_kit_main__', ref['path'])\n"
        "    obj = importlib.util.module_from_spec(spec); sys.modules['__arena_kit_main__'] = obj\n"
        "    spec.loader.exec_module(obj)\n"
        "else:\n"
        "    obj = importlib.import_module(ref['module'])\n"
        "for part in ref['qualname'].split('.'): obj = getattr(obj, part)\n"
        "game = obj(ref['params'], num_players=ref['num_players'])\n"
        "from arena_core.testing.checks import fingerprint\n"
        "print('ARENA-FINGERPRINT', fingerprint(game, seeds))\n"
    )
    path = os.pathsep.join(os.path.abspath(p) if p else os.getcwd() for p in sys.path)  # "" is the working directory
    env = dict(os.environ, PYTHONHASHSEED=hashseed, PYTHONPATH=path, **{CHILD_ENV: "1"})
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(ref), json.dumps(seeds)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        cwd=tempfile.gettempdir(),
    )
    where = "cross_process_determinism: "
    if out.returncode != 0:
        raise CheckFailure(f"{where}the game could not be rebuilt in a subprocess: {out.stderr.strip()[-800:]}")
    marked = [ln for ln in out.stdout.splitlines() if ln.startswith("ARENA-FINGERPRINT ")]
    if not marked:
        raise CheckFailure(f"{where}the subprocess printed no fingerprint: {out.stdout.strip()[-400:]}")
    return marked[-1].split(" ", 1)[1]


_HASH_CAUSES = "(iteration over a set or dict of strings, or id()-based ordering, are the usual causes)"


def check_cross_process_determinism(game: Game[Any, Any], seeds: list[int]) -> None:
    """The same seeds give the same games in fresh processes (other string-hash seeds).
    Raises :class:`CannotRebuild` when no other process can import the game's class."""
    here = fingerprint(game, seeds)
    ref = game_reference(game)
    for hashseed in ("1", "4242"):
        there = _subprocess_fingerprint(ref, seeds, hashseed)
        if there != here:
            hint = global_rng_hint(game, play_random(game, seeds[0], _kit_chooser(seeds[0])))
            where = f"another process{hint}" if hint else f"a process with PYTHONHASHSEED={hashseed} " + _HASH_CAUSES
            raise CheckFailure(f"cross_process_determinism: seeds {seeds} give different games in {where}")
