"""Hypothesis strategies for game authors: seeds, playthroughs, positions, actions.

A property test of your own invariant, in a few lines::

    from hypothesis import given
    from arena_core.testing.strategies import playthroughs

    @given(playthroughs(Nim()))
    def test_the_pile_never_grows(pt):
        for before, _, _, after in pt.transitions():
            assert after.state.stones <= before.state.stones

How it shrinks. A playthrough is a seed (shrinks toward 0) and one drawn integer per decision:
0 stops the playthrough there, any other value ``v`` picks legal action ``(v - 1) % n``. Hypothesis
shrinks each integer toward 0, so a failing playthrough is cut right after the decision that
shows the bug, and the choices before it move toward the first legal action. With
``complete=True`` every playthrough runs to the end of the game (for end-of-game properties).

What a failure shows. The falsifying example prints the episode (game, seed, each decision as
``p<seat> <action>``). Set ``ARENA_FAILING_EPISODES=<dir>`` (or pass ``save_failing_to=``) and
the reported, shrunk playthrough is also written as an episode file that ``arena replay`` re-runs
step by step.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    from hypothesis import strategies as st
except ImportError:  # say what to install, not just what is missing
    raise ImportError("arena_core.testing.strategies needs hypothesis: pip install hypothesis") from None
from hypothesis.control import current_build_context, currently_in_test_context, note

from ..episode import EpisodeRecord
from ..game import Game, Position

__all__ = [
    "FAILING_EPISODES_ENV",
    "Playthrough",
    "PlaythroughError",
    "apply_joint",
    "illegal_actions",
    "joint_actions",
    "legal_actions",
    "playthroughs",
    "positions",
    "seeds",
]

#: environment variable naming a folder where reported failing playthroughs are written
FAILING_EPISODES_ENV = "ARENA_FAILING_EPISODES"
_CHOICE_MAX = 2**16 - 1  # one draw per decision: 0 = stop here, v > 0 = legal action (v - 1) % n


class PlaythroughError(AssertionError):
    """The game failed while a playthrough was being generated; ``playthrough`` holds the moves
    up to the decision that failed (the message names that decision)."""

    def __init__(self, message: str, playthrough: Playthrough | None = None):
        super().__init__(message)
        self.playthrough = playthrough


@dataclass(frozen=True, eq=False)
class Playthrough:
    """A seeded game played from its deal: the (seat, action) moves and every position.

    ``complete`` is True when the game reached its end; otherwise the playthrough stopped early
    (shrinking stops it right after the decision that matters).
    """

    game: Game[Any, Any]
    seed: int
    moves: tuple[tuple[int, Any], ...]
    positions: tuple[Position[Any], ...]

    @property
    def final(self) -> Position[Any]:
        return self.positions[-1]

    @property
    def states(self) -> list[Any]:
        return [p.state for p in self.positions]

    @property
    def complete(self) -> bool:
        return self.game.is_over(self.final)

    @property
    def returns(self) -> tuple[float, ...] | None:
        """The final returns, or None for a playthrough that stopped before the end."""
        return self.game.final_returns(self.final) if self.complete else None

    def transitions(self) -> Iterator[tuple[Position[Any], int, Any, Position[Any]]]:
        """``(before, seat, action, after)`` for every decision."""
        for k, (seat, action) in enumerate(self.moves):
            yield self.positions[k], seat, action, self.positions[k + 1]

    def describe(self) -> str:
        """The episode in one line: game, seed, each decision, and how it ended."""
        game = self.game
        moves = ", ".join(f"p{seat} {game.action_to_str(a)}" for seat, a in self.moves) or "no decisions"
        end = f"returns {self.returns}" if self.complete else f"stopped after {len(self.moves)} decision(s)"
        return f"{game.spec.id} seed {self.seed}: {moves} -> {end}"

    def __repr__(self) -> str:
        return f"<Playthrough {self.describe()}>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # how hypothesis prints a falsifying example
        printer.text(repr(self))

    def record(self) -> EpisodeRecord:
        """The playthrough as an episode record (the format ``arena replay`` reads).

        A playthrough that stopped early is recorded as cut off by a turn cap at its length (an
        honest truncation, never a result); one of zero decisions keeps its first decision, since
        an episode needs one to be cut off after."""
        from ..match import Match

        moves = list(self.moves)
        # the harness caps a game at its declared max_length unless told otherwise: a game that
        # runs longer (the length_bound defect) is recorded in full
        cap = len(moves) if len(moves) > self.game.spec.max_length else None
        if not self.complete:
            if not moves:
                player = self.game.current_player(self.final)
                assert player is not None  # not complete: the game is running
                moves = [(player, self.game.legal(self.final, player)[0])]
            cap = len(moves)
        match = Match(self.game, self.seed, turn_cap=cap, players=["playthrough"] * self.game.num_players)
        for seat, action in moves:
            match.submit(seat, action)
        return match.record

    def write(self, path: str | os.PathLike[str]) -> Path:
        """Write the episode file; ``arena replay PATH`` re-runs it and checks every step."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.record().write(path)
        return path


def seeds(max_value: int = 2**31 - 1) -> st.SearchStrategy[int]:
    """Deal seeds in ``0..max_value``; they shrink toward 0.

    Half are drawn below 256, so a failure that only some deals show is usually found, and
    then shrunk, among small seeds (hypothesis shrinks an integer greedily: to 0 when the deal
    does not matter, else to a small local minimum)."""
    return st.one_of(st.integers(0, min(255, max_value)), st.integers(0, max_value))


_seeds = seeds


def _policy_action(policy: Any, game: Game[Any, Any], pos: Position[Any], seat: int, seed: int) -> Any:
    from ..players import Decision, Move

    decision = Decision.at(game, pos, seat, seed)
    answer = policy.act(decision) if hasattr(policy, "act") else policy(decision)
    if isinstance(answer, Move):
        answer = answer.action
    if isinstance(answer, str) and not game.spec.free_text:
        answer = game.action_from_str(pos, seat, answer)
    return answer


def _safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def _report(pt: Playthrough, save_failing_to: str | os.PathLike[str] | None) -> None:
    """On the run hypothesis reports (the shrunk failing example), note the episode and write
    it where asked."""
    if not currently_in_test_context() or not getattr(current_build_context(), "is_final", False):
        return
    note(f"episode: {pt.describe()}")
    where = save_failing_to if save_failing_to is not None else os.environ.get(FAILING_EPISODES_ENV)
    if not where:
        note(f"(set {FAILING_EPISODES_ENV}=<dir> to write it as an episode file for `arena replay`)")
        return
    target = Path(where)
    if target.suffix != ".jsonl":
        target = target / f"{_safe_name(pt.game.spec.id)}-seed{pt.seed}-{len(pt.moves)}decisions.jsonl"
    try:
        pt.write(target)
    except Exception as exc:  # the game itself may be what fails; say so, keep the report
        note(f"could not write the episode file {target}: {type(exc).__name__}: {exc}")
        return
    note(f"episode written to {target}; step through it with `arena replay {target}`")


@st.composite
def _playthroughs(
    draw: st.DrawFn,
    game: Game[Any, Any],
    seed_strategy: st.SearchStrategy[int],
    policies: Mapping[int, Any],
    max_decisions: int | None,
    complete: bool,
    save_failing_to: str | os.PathLike[str] | None,
    report: bool = True,
) -> Playthrough:
    seed = draw(seed_strategy)
    limit = game.spec.max_length if max_decisions is None else max_decisions
    pos = game.start(seed)

    def seat_has_policy(at: Position[Any]) -> bool:
        return game.current_player(at) in policies

    moves: list[tuple[int, Any]] = []
    positions = [pos]
    for hook_seat, policy in policies.items():
        hook = getattr(policy, "begin_episode", None)
        if hook is not None:
            hook(game, hook_seat, seed)
    while not game.is_over(pos) and len(moves) < limit:
        # the draw first, outside the game's own code (hypothesis steers through its exceptions)
        if complete:
            v = 1 if seat_has_policy(pos) else 1 + draw(st.integers(0, _CHOICE_MAX))
        else:
            v = draw(st.integers(0, _CHOICE_MAX))
            if v == 0:
                break
        seat: int | None = None
        try:
            seat = game.current_player(pos)
            if seat is None:
                raise PlaythroughError("the game is not over but no player is to act")
            legal = game.legal(pos, seat)
            if not legal:
                raise PlaythroughError(f"player {seat} is to act but has no legal action")
            action = (
                _policy_action(policies[seat], game, pos, seat, seed)
                if seat in policies
                else legal[(v - 1) % len(legal)]
            )
            pos = game.act(pos, seat, action)
        except PlaythroughError as exc:
            done = Playthrough(game, seed, tuple(moves), tuple(positions))
            _report(done, save_failing_to)
            raise PlaythroughError(f"{exc}; after {done.describe()}", done) from None
        except Exception as exc:
            done = Playthrough(game, seed, tuple(moves), tuple(positions))
            _report(done, save_failing_to)
            raise PlaythroughError(
                f"{game.spec.id} raised {type(exc).__name__}: {exc} at decision {len(moves)} (player {seat}); episode so far: {done.describe()}",
                done,
            ) from exc
        moves.append((seat, action))
        positions.append(pos)
    pt = Playthrough(game, seed, tuple(moves), tuple(positions))
    if complete and not pt.complete:
        _report(pt, save_failing_to)
        what = "length_bound: " if limit >= game.spec.max_length else f"max_decisions={limit}: "
        raise PlaythroughError(
            f"{what}still running after {limit} decisions (declared max_length {game.spec.max_length}): {pt.describe()}",
            pt,
        )
    if report:
        _report(pt, save_failing_to)
    return pt


def playthroughs(
    game: Game[Any, Any],
    *,
    seeds: st.SearchStrategy[int] | None = None,
    policies: Mapping[int, Any] | None = None,
    max_decisions: int | None = None,
    complete: bool = False,
    save_failing_to: str | os.PathLike[str] | None = None,
) -> st.SearchStrategy[Playthrough]:
    """Random legal play of ``game`` from a drawn seed.

    ``policies`` maps a seat to a player (anything with ``act(decision)``, e.g. from
    ``arena_core.registry.make_player``) or a function of a :class:`~arena_core.players.Decision`;
    the other seats play random legal actions. Without ``complete`` a playthrough may stop before
    the end (and shrinks toward the shortest one that fails); with it, it always reaches the end.
    ``max_decisions`` (default ``spec.max_length``) bounds the length. ``save_failing_to`` (a
    folder, or a ``.jsonl`` path) writes the reported failing playthrough as an episode file
    (default: the folder in ``$ARENA_FAILING_EPISODES``, if set).
    """
    return _build(game, seeds, policies, max_decisions, complete, save_failing_to, report=True)


def _build(
    game: Game[Any, Any],
    seeds: st.SearchStrategy[int] | None,
    policies: Mapping[int, Any] | None,
    max_decisions: int | None,
    complete: bool,
    save_failing_to: str | os.PathLike[str] | None,
    *,
    report: bool,
) -> st.SearchStrategy[Playthrough]:
    if not isinstance(game, Game):
        raise TypeError(f"playthroughs() needs a Game instance, got {game!r}")
    policies = dict(policies or {})
    bad = [s for s in policies if not (isinstance(s, int) and 0 <= s < game.num_players)]
    if bad:
        raise ValueError(f"policies name seats {bad}; {game.spec.id} here has seats 0..{game.num_players - 1}")
    return _playthroughs(
        game, _seeds() if seeds is None else seeds, policies, max_decisions, complete, save_failing_to, report
    )


@st.composite
def _positions(
    draw: st.DrawFn,
    game: Game[Any, Any],
    where: Callable[[Game[Any, Any], Position[Any]], bool] | None,
    seeds: st.SearchStrategy[int] | None,
    policies: Mapping[int, Any] | None,
    max_decisions: int | None,
    save_failing_to: str | os.PathLike[str] | None,
) -> Position[Any]:
    pt = draw(_build(game, seeds, policies, max_decisions, False, save_failing_to, report=False))
    candidates = [k for k, pos in enumerate(pt.positions) if where is None or where(game, pos)]
    if not candidates:
        from hypothesis import reject

        reject()
    k = candidates[-1] if where is None else draw(st.sampled_from(candidates))
    _report(Playthrough(game, pt.seed, pt.moves[:k], pt.positions[: k + 1]), save_failing_to)
    found: Position[Any] = pt.positions[k]
    return found


def positions(
    game: Game[Any, Any],
    *,
    where: Callable[[Game[Any, Any], Position[Any]], bool] | None = None,
    seeds: st.SearchStrategy[int] | None = None,
    policies: Mapping[int, Any] | None = None,
    max_decisions: int | None = None,
    save_failing_to: str | os.PathLike[str] | None = None,
) -> st.SearchStrategy[Position[Any]]:
    """Positions reachable by legal play (the end of a playthrough, so terminal ones too).

    ``where(game, position)`` keeps only the positions it accepts (the earliest of a
    playthrough's are preferred when shrinking); the other keywords are those of
    :func:`playthroughs`. The failure report gives (and writes, on request) the moves that
    reach the position."""
    return _positions(game, where, seeds, policies, max_decisions, save_failing_to)


def _seat(game: Game[Any, Any], position: Position[Any], player: int | None) -> int | None:
    return game.current_player(position) if player is None else player


def legal_actions(game: Game[Any, Any], position: Position[Any], player: int | None = None) -> st.SearchStrategy[Any]:
    """The legal actions of ``player`` (default: the one to act) at ``position``; shrinks toward
    the first. Nothing to draw (an unsatisfiable strategy) when the player has none."""
    seat = _seat(game, position, player)
    legal = game.legal(position, seat) if seat is not None else ()
    return st.sampled_from(legal) if legal else st.nothing()


def illegal_actions(game: Game[Any, Any], position: Position[Any], player: int | None = None) -> st.SearchStrategy[Any]:
    """Actions of the game's index space that ``player`` (default: the one to act, or seat 0
    at the end) may not play at ``position``: every action when it is not that player's turn."""
    seat = _seat(game, position, player)
    seat = 0 if seat is None else seat
    legal_ids = {game.action_id(a) for a in game.legal(position, seat)}
    out = []
    for i in range(game.num_actions):
        if i in legal_ids:
            continue
        try:
            out.append(game.action_from_id(i))
        except (ValueError, IndexError, KeyError):
            continue
    return st.sampled_from(out) if out else st.nothing()


def joint_actions(game: Game[Any, Any], position: Position[Any]) -> st.SearchStrategy[dict[int, Any]]:
    """At a decision point, one legal action for each player still to act: ``{seat: action}``
    (several seats at a simultaneous move). Apply it with :func:`apply_joint`."""
    seats = game.players_to_act(position)
    if not seats:
        return st.nothing()
    return st.fixed_dictionaries({p: st.sampled_from(game.legal(position, p)) for p in seats})


def apply_joint(game: Game[Any, Any], position: Position[Any], joint: Mapping[int, Any]) -> Position[Any]:
    """Commit every action of ``joint`` in the order the game asks for them."""
    for seat in game.players_to_act(position):
        if seat in joint:
            position = game.act(position, seat, joint[seat])
    return position
