"""Hypothesis strategies for game authors: seeds, playthroughs, positions, actions. How a playthrough
shrinks and the episode file a failure can write (``$ARENA_FAILING_EPISODES``): docs/testing.md.
"""

from __future__ import annotations

import contextlib
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
from ..players import begin_episodes

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
    """The game failed while a playthrough was generated; ``playthrough`` holds the moves before."""

    def __init__(self, message: str, playthrough: Playthrough | None = None):
        super().__init__(message)
        self.playthrough = playthrough


@dataclass(frozen=True, eq=False)
class Playthrough:
    """A seeded game played from its deal: the (seat, action) moves and every position."""

    game: Game[Any, Any]
    seed: int
    moves: tuple[tuple[int, Any], ...]
    positions: tuple[Position[Any], ...]

    @classmethod
    def replayed(cls, game: Game[Any, Any], seed: int, moves: tuple[tuple[int, Any], ...]) -> Playthrough:
        """``moves`` played afresh from ``seed`` (raises where one is not legal)."""
        positions = [game.start(seed)]
        for seat, action in moves:
            positions.append(game.act(positions[-1], seat, action))
        return cls(game, seed, moves, tuple(positions))

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
        """The episode record ``arena replay`` reads; a playthrough that stopped early is cut off by
        a turn cap at its length (one of zero decisions keeps its first decision to be cut after)."""
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
        """Write the episode file that ``arena replay PATH`` re-runs."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.record().write(path)
        return path


def seeds(max_value: int = 2**31 - 1) -> st.SearchStrategy[int]:
    """Deal seeds in ``0..max_value``, half of them below 256 (where a failure that only some deals
    show is then found and shrunk); they shrink toward 0."""
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


def _report(pt: Playthrough, save_failing_to: str | os.PathLike[str] | None) -> None:
    """On the run hypothesis reports (the shrunk failing one), note the episode; write it if asked."""
    if not currently_in_test_context() or not getattr(current_build_context(), "is_final", False):
        return
    note(f"episode: {pt.describe()}")
    where = save_failing_to if save_failing_to is not None else os.environ.get(FAILING_EPISODES_ENV)
    if not where:
        note(f"(set {FAILING_EPISODES_ENV}=<dir> to write it as an episode file for `arena replay`)")
        return
    target = Path(where)
    if target.suffix != ".jsonl":
        safe_id = re.sub(r"[^A-Za-z0-9_.-]+", "_", pt.game.spec.id)
        target = target / f"{safe_id}-seed{pt.seed}-{len(pt.moves)}decisions.jsonl"
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
    moves: list[tuple[int, Any]] = []
    positions = [pos]
    begin_episodes(policies, game, seed)
    while not game.is_over(pos) and len(moves) < limit:
        # the draw first, outside the game's own code (hypothesis steers through its exceptions)
        if complete:
            v = 1 if game.current_player(pos) in policies else 1 + draw(st.integers(0, _CHOICE_MAX))
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
        except Exception as exc:
            done = Playthrough(game, seed, tuple(moves), tuple(positions))
            _report(done, save_failing_to)
            if isinstance(exc, PlaythroughError):
                raise PlaythroughError(f"{exc}; after {done.describe()}", done) from None
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
    """Random legal play of ``game`` from a drawn seed; ``policies`` plays some seats with a player
    (``act(decision)``) or a function of the ``Decision``. Without ``complete`` a playthrough may
    stop before the end (so a failure shrinks to a short one). The keywords: docs/testing.md."""
    seed_strategy = _seeds() if seeds is None else seeds
    return _playthroughs(game, seed_strategy, _seated(game, policies), max_decisions, complete, save_failing_to)


def _seated(game: Game[Any, Any], policies: Mapping[int, Any] | None) -> dict[int, Any]:
    """``policies`` by seat, the seats checked against ``game``'s."""
    if not isinstance(game, Game):
        raise TypeError(f"playthroughs() needs a Game instance, got {game!r}")
    seated = dict(policies or {})
    bad = [s for s in seated if not (isinstance(s, int) and 0 <= s < game.num_players)]
    if bad:
        raise ValueError(f"policies name seats {bad}; {game.spec.id} here has seats 0..{game.num_players - 1}")
    return seated


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
    seed_strategy = _seeds() if seeds is None else seeds
    seated = _seated(game, policies)
    pt = draw(_playthroughs(game, seed_strategy, seated, max_decisions, False, save_failing_to, report=False))
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
    """Positions reachable by legal play, terminal ones too; ``where(game, position)`` keeps some.
    The other keywords are as for :func:`playthroughs`; a failure reports the moves to the position."""
    return _positions(game, where, seeds, policies, max_decisions, save_failing_to)


def legal_actions(game: Game[Any, Any], position: Position[Any], player: int | None = None) -> st.SearchStrategy[Any]:
    """The legal actions of ``player`` (default: the one to act) at ``position``; shrinks toward
    the first. Nothing to draw (an unsatisfiable strategy) when the player has none."""
    seat = game.current_player(position) if player is None else player
    legal = game.legal(position, seat) if seat is not None else ()
    return st.sampled_from(legal) if legal else st.nothing()


def illegal_actions(game: Game[Any, Any], position: Position[Any], player: int | None = None) -> st.SearchStrategy[Any]:
    """Actions of the game's index space that ``player`` (default: the one to act, or seat 0
    at the end) may not play at ``position``: every action when it is not that player's turn."""
    seat = game.current_player(position) if player is None else player
    legal_ids = {game.action_id(a) for a in game.legal(position, 0 if seat is None else seat)}
    out = []
    for i in range(game.num_actions):
        if i not in legal_ids:
            with contextlib.suppress(ValueError, IndexError, KeyError):
                out.append(game.action_from_id(i))
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
