"""The conformance checks. Each check plays seeded random-legal games and verifies one claim."""
from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..episode import digest
from ..errors import GameOverError, IllegalActionError, NotYourTurnError, ReplayDivergenceError
from ..game import Game, Position
from ..match import Match
from ..seeding import make_rng
from ..spec import Information


class CheckFailure(AssertionError):
    """One conformance claim does not hold."""


@dataclass
class Playthrough:
    """A random-legal game: the positions, the (player, action) moves, and per-ply digests."""

    seed: int
    positions: list[Position] = field(default_factory=list)
    moves: list[tuple[int, Any]] = field(default_factory=list)
    obs_digests: list[str] = field(default_factory=list)
    returns: tuple[float, ...] | None = None

    @property
    def final(self) -> Position:
        return self.positions[-1]


def observation_digest(game: Game, pos: Position) -> str:
    return digest([game.observe(pos, p) for p in range(game.num_players)])


def play_random(game: Game, seed: int, choose: Callable[[int], int], *, max_steps: int | None = None) -> Playthrough:
    """Play from ``seed``; ``choose(n)`` picks an index in range(n) for each decision."""
    limit = max_steps if max_steps is not None else game.spec.max_length
    pt = Playthrough(seed)
    pos = game.start(seed)
    pt.positions.append(pos)
    pt.obs_digests.append(observation_digest(game, pos))
    while not game.is_over(pos):
        if len(pt.moves) >= limit:
            raise CheckFailure(f"length_bound: seed {seed} is still running after {limit} decisions (declared max_length {game.spec.max_length})")
        player = game.current_player(pos)
        legal = game.legal(pos, player)
        if not legal:
            raise CheckFailure(f"mask_matches_legal: seed {seed} ply {pos.ply}: player {player} is to act but has no legal action")
        action = legal[choose(len(legal))]
        pos = game.act(pos, player, action)
        pt.moves.append((player, action))
        pt.positions.append(pos)
        pt.obs_digests.append(observation_digest(game, pos))
    pt.returns = game.final_returns(pos)
    return pt


def replay_moves(game: Game, seed: int, moves: list[tuple[int, Any]]) -> Playthrough:
    pt = Playthrough(seed)
    pos = game.start(seed)
    pt.positions.append(pos)
    pt.obs_digests.append(observation_digest(game, pos))
    for player, action in moves:
        pos = game.act(pos, player, action)
        pt.moves.append((player, action))
        pt.positions.append(pos)
        pt.obs_digests.append(observation_digest(game, pos))
    pt.returns = game.final_returns(pos) if game.is_over(pos) else None
    return pt


# ---------------------------------------------------------------------- per-playthrough checks
def check_determinism(game: Game, pt: Playthrough, rng: np.random.Generator) -> None:
    again = replay_moves(game, pt.seed, pt.moves)
    for ply, (a, b) in enumerate(zip(pt.obs_digests, again.obs_digests)):
        if a != b:
            raise CheckFailure(f"determinism: seed {pt.seed}: observations differ at ply {ply} when the same seed and actions are replayed")
    if pt.returns != again.returns:
        raise CheckFailure(f"determinism: seed {pt.seed}: returns {pt.returns} then {again.returns} for the same seed and actions")


def check_mask_matches_legal(game: Game, pt: Playthrough, rng: np.random.Generator) -> None:
    for pos in pt.positions:
        for p in range(game.num_players):
            legal = game.legal(pos, p)
            ids = [game.action_id(a) for a in legal]
            if len(set(ids)) != len(ids):
                raise CheckFailure(f"mask_matches_legal: ply {pos.ply} player {p}: two legal actions share an index")
            strings = [game.action_to_str(a) for a in legal]
            if len(set(strings)) != len(strings):
                raise CheckFailure(f"mask_matches_legal: ply {pos.ply} player {p}: two legal actions share a canonical string")
            mask = game.mask(pos, p)
            if mask.shape != (game.num_actions,) or set(np.flatnonzero(mask).tolist()) != set(ids):
                raise CheckFailure(f"mask_matches_legal: ply {pos.ply} player {p}: the mask does not equal the legal set")
            for a, i in zip(legal, ids):
                if game.action_from_id(i) != a:
                    raise CheckFailure(f"mask_matches_legal: index {i} decodes to {game.action_from_id(i)!r}, not the legal action {a!r}")
            if p in game.players_to_act(pos):
                legal_set = set(ids)
                for i in range(game.num_actions):
                    try:
                        decoded = game.action_from_id(i)
                    except (ValueError, IndexError, KeyError):
                        continue
                    if game.is_legal(pos.state, p, decoded) != (i in legal_set):
                        raise CheckFailure(f"mask_matches_legal: ply {pos.ply} player {p}: is_legal disagrees with legal_actions on index {i}")


def check_illegal_rejected(game: Game, pt: Playthrough, rng: np.random.Generator) -> None:
    for pos in pt.positions:
        if game.is_over(pos):
            continue
        waiting = game.players_to_act(pos)
        player = waiting[0]
        illegal = np.flatnonzero(game.mask(pos, player) == 0)
        for i in illegal[: 8]:
            try:
                game.act_id(pos, player, int(i))
            except IllegalActionError:
                continue
            raise CheckFailure(f"illegal_rejected: ply {pos.ply}: player {player}'s illegal action index {int(i)} was accepted")
        others = [p for p in range(game.num_players) if p not in waiting]
        if others:
            legal = game.legal(pos, player)
            try:
                game.act(pos, others[0], legal[0])
            except (NotYourTurnError, IllegalActionError):
                pass
            else:
                raise CheckFailure(f"illegal_rejected: ply {pos.ply}: player {others[0]} acted out of turn")


def check_no_step_after_end(game: Game, pt: Playthrough, rng: np.random.Generator) -> None:
    end = pt.final
    for p in range(game.num_players):
        if game.legal(end, p):
            raise CheckFailure(f"no_step_after_end: player {p} has legal actions after the end")
        for i in range(min(game.num_actions, 4)):
            try:
                game.act_id(end, p, i)
            except GameOverError:
                continue
            except (IllegalActionError, NotYourTurnError) as exc:
                raise CheckFailure(f"no_step_after_end: acting after the end raised {type(exc).__name__}, not GameOverError") from None
            raise CheckFailure(f"no_step_after_end: player {p}'s action index {i} was accepted after the end")


def check_returns_bounds(game: Game, pt: Playthrough, rng: np.random.Generator) -> None:
    lo, hi = game.spec.reward_bounds
    if len(pt.returns) != game.num_players:
        raise CheckFailure(f"returns_bounds: {len(pt.returns)} returns for {game.num_players} players")
    for p, r in enumerate(pt.returns):
        if not (math.isfinite(r) and lo - 1e-9 <= r <= hi + 1e-9):
            raise CheckFailure(f"returns_bounds: seed {pt.seed}: player {p} returned {r}, outside the declared {game.spec.reward_bounds}")


def check_returns_sum(game: Game, pt: Playthrough, rng: np.random.Generator) -> None:
    total = game.spec.declared_sum
    if total is not None and abs(sum(pt.returns) - total) > 1e-6:
        raise CheckFailure(f"returns_sum: seed {pt.seed}: returns {pt.returns} sum to {sum(pt.returns)}, declared {game.spec.utility.value} {total}")


def check_length_bound(game: Game, pt: Playthrough, rng: np.random.Generator) -> None:
    if len(pt.moves) > game.spec.max_length:
        raise CheckFailure(f"length_bound: seed {pt.seed}: {len(pt.moves)} decisions > declared max_length {game.spec.max_length}")


def check_serialization(game: Game, pt: Playthrough, rng: np.random.Generator) -> None:
    k = int(rng.integers(len(pt.positions)))
    pos = pt.positions[k]
    text = json.dumps(game.position_to_json(pos))
    restored = game.position_from_json(json.loads(text))
    if observation_digest(game, restored) != pt.obs_digests[k]:
        raise CheckFailure(f"serialization: ply {k}: observations differ after a JSON round trip")
    for p in range(game.num_players):
        if [game.action_to_str(a) for a in game.legal(restored, p)] != [game.action_to_str(a) for a in game.legal(pos, p)]:
            raise CheckFailure(f"serialization: ply {k}: player {p}'s legal actions differ after a JSON round trip")
    for player, action in pt.moves[k:]:
        restored = game.act(restored, player, action)
    if not game.is_over(restored) or game.final_returns(restored) != pt.returns:
        raise CheckFailure(f"serialization: ply {k}: playing on from the restored position does not give returns {pt.returns}")


def check_replay(game: Game, pt: Playthrough, rng: np.random.Generator) -> None:
    from ..replay import replay

    match = Match(game, pt.seed)
    for player, action in pt.moves:
        match.submit(player, action)
    try:
        replay(match.record, game)
    except ReplayDivergenceError as exc:
        raise CheckFailure(f"replay: seed {pt.seed}: {exc}") from None


def check_no_private_leak(game: Game, pt: Playthrough, rng: np.random.Generator) -> None:
    """Resample everything hidden from a player; that player's view must not change."""
    if not game.has_hidden_state_sampler:
        raise CheckFailure(
            f"no_private_leak: {game.spec.id} has imperfect information but no sample_hidden_state; implement it, "
            "or declare the check in spec.exempt_checks with the reason"
        )
    candidates = [pos for pos in pt.positions if not pos.pending]
    pos = candidates[int(rng.integers(len(candidates)))]
    for p in range(game.num_players):
        before = digest(game.observe(pos, p))
        legal = [game.action_to_str(a) for a in game.legal(pos, p)]
        for draw in range(3):
            sampled = Position(game.sample_hidden_state(pos.state, p, make_rng(int(rng.integers(2**31)), "kit", draw)), (), pos.ply)
            if digest(game.observe(sampled, p)) != before:
                raise CheckFailure(f"no_private_leak: ply {pos.ply}: player {p}'s observation changes when only what is hidden from it is resampled")
            if [game.action_to_str(a) for a in game.legal(sampled, p)] != legal:
                raise CheckFailure(f"no_private_leak: ply {pos.ply}: player {p}'s legal actions change when only what is hidden from it is resampled")


def check_hidden_state_sampling(game: Game, pt: Playthrough, rng: np.random.Generator) -> None:
    """The sampler must keep every earlier observation of the player (its observation history)."""
    if game.spec.information is Information.PERFECT or not game.has_hidden_state_sampler:
        return
    for k, pos in enumerate(pt.positions):
        if pos.pending:
            continue
        for p in range(game.num_players):
            sampled = game.sample_hidden_state(pos.state, p, make_rng(pt.seed, "history", k, p))
            restored = Position(sampled, (), pos.ply)
            if digest(game.observe(restored, p)) != digest(game.observe(pos, p)):
                raise CheckFailure(f"hidden_state_sampling: ply {k}: a sampled state changes player {p}'s observation")


def check_commit_reveal(game: Game, pt: Playthrough, rng: np.random.Generator) -> None:
    for before, after in zip(pt.positions, pt.positions[1:]):
        if not after.pending:
            continue
        for p in game.players_to_act(after):
            if digest(game.observe(after, p)) != digest(game.observe(before, p)):
                raise CheckFailure(f"commit_reveal: ply {after.ply}: player {p} can see another player's commitment before the reveal")


def check_no_global_rng(game: Game, pt: Playthrough, rng: np.random.Generator) -> None:
    """Runs the whole playthrough again with the global RNG states captured before and after."""
    py_state, np_state = random.getstate(), np.random.get_state()
    replay_moves(game, pt.seed, pt.moves)
    for pos in pt.positions[:: max(1, len(pt.positions) // 4)]:
        for p in range(game.num_players):
            game.observe(pos, p)
            game.encode_observation(pos.state, p)
            game.legal(pos, p)
            if game.has_hidden_state_sampler and not pos.pending:
                game.sample_hidden_state(pos.state, p, make_rng(0))
    np_after = np.random.get_state()
    if random.getstate() != py_state:
        raise CheckFailure("no_global_rng: the game changed the state of Python's global `random`; draw from the Generator passed in")
    if np_after[0] != np_state[0] or not np.array_equal(np_after[1], np_state[1]) or np_after[2:] != np_state[2:]:
        raise CheckFailure("no_global_rng: the game changed numpy's global random state; draw from the Generator passed in")


PLAYTHROUGH_CHECKS: dict[str, Callable[[Game, Playthrough, np.random.Generator], None]] = {
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
}


# ---------------------------------------------------------------------- cross-process determinism
def game_reference(game: Game) -> dict[str, Any]:
    cls = type(game)
    return {
        "module": cls.__module__,
        "qualname": cls.__qualname__,
        "params": game.params.model_dump(mode="json"),
        "num_players": game.num_players,
    }


def fingerprint(game: Game, seeds: list[int]) -> str:
    """Digest of seeded random-legal playthroughs (choices from a seeded generator)."""
    parts = []
    for seed in seeds:
        choice_rng = make_rng(seed, "kit-choices")
        pt = play_random(game, seed, lambda n: int(choice_rng.integers(n)))
        parts.append([pt.obs_digests, list(pt.returns), [[p, game.action_to_str(a)] for p, a in pt.moves]])
    return digest(parts)


def _subprocess_fingerprint(ref: dict[str, Any], seeds: list[int], hashseed: str) -> str:
    code = (
        "import importlib, json, sys\n"
        "ref = json.loads(sys.argv[1]); seeds = json.loads(sys.argv[2])\n"
        "obj = importlib.import_module(ref['module'])\n"
        "for part in ref['qualname'].split('.'): obj = getattr(obj, part)\n"
        "game = obj(ref['params'], num_players=ref['num_players'])\n"
        "from arena_core.testing.checks import fingerprint\n"
        "print(fingerprint(game, seeds))\n"
    )
    env = dict(os.environ, PYTHONHASHSEED=hashseed, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(ref), json.dumps(seeds)],
        capture_output=True, text=True, env=env, timeout=600, cwd=tempfile.gettempdir(),
    )
    if out.returncode != 0:
        raise CheckFailure(f"cross_process_determinism: the game could not be rebuilt in a subprocess: {out.stderr.strip()[-800:]}")
    return out.stdout.strip().splitlines()[-1]


def check_cross_process_determinism(game: Game, seeds: list[int]) -> None:
    here = fingerprint(game, seeds)
    ref = game_reference(game)
    for hashseed in ("1", "4242"):
        there = _subprocess_fingerprint(ref, seeds, hashseed)
        if there != here:
            raise CheckFailure(
                f"cross_process_determinism: seeds {seeds} give different games in a process with PYTHONHASHSEED={hashseed} "
                "(iteration over a set or dict of strings, or id()-based ordering, are the usual causes)"
            )
