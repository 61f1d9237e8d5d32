"""Play one episode among players, recording every decision; player failures are data."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from typing import Any

from .episode import EpisodeRecord, EpisodeWriter
from .errors import ConfigError
from .faults import FaultKind, fault_of_exception
from .game import Game
from .match import Match
from .players import Decision, Move, Player, begin_episodes, end_episodes
from .policy import RAISE, IllegalActionPolicy
from .text import ParseResult


def play_episode(
    game: Game[Any, Any],
    players: Sequence[Player],
    seed: int,
    *,
    policy: IllegalActionPolicy = RAISE,
    turn_cap: int | None = None,
    time_cap_s: float | None = None,
    log_path: str | None = None,
) -> EpisodeRecord:
    """Play ``game`` from ``seed`` with ``players[i]`` in seat ``i``; returns the record. A player's
    crash or non-action answer is recorded and handled by ``policy`` (with ``raise``, illegal
    actions raise; crashes forfeit); caps as for :class:`~arena_core.match.Match`."""
    if len(players) != game.num_players:
        raise ConfigError(
            f"{game.spec.id} with {game.num_players} players needs {game.num_players} players, got {len(players)}"
        )
    with EpisodeWriter(log_path) if log_path else contextlib.nullcontext() as writer:
        match = Match(
            game,
            seed,
            policy=policy,
            turn_cap=turn_cap,
            time_cap_s=time_cap_s,
            players=[getattr(p, "name", type(p).__name__) for p in players],
            sink=writer,
        )
        return play_match(match, players)


def play_match(match: Match, players: Sequence[Player]) -> EpisodeRecord:
    """Play ``match`` (already set up: policy, caps, sink) to its end with ``players[i]`` in
    seat ``i``, between their ``begin_episode`` and ``end_episode`` hooks; returns its record."""
    begin_episodes(players, match.game, match.seed)
    while not match.done:
        seat = match.to_act()
        assert seat is not None  # a running match has a player to act
        step_player(match, seat, players[seat])
    end_episodes(players, match)
    return match.record


def step_player(match: Match, seat: int, player: Player) -> None:
    """Ask ``player`` for one decision and submit it; failures go through the policy."""
    game, pos = match.game, match.position
    decision = Decision.at(game, pos, seat, match.seed)
    started = time.perf_counter()
    try:
        answer = player.act(decision)
    except (Exception, SystemExit, GeneratorExit) as exc:  # a player's crash is data, never a crash of the loop
        answer = exc  # (KeyboardInterrupt is left to stop the run: here it is the user's Ctrl-C)
    submit_answer(match, decision, answer, latency_s=time.perf_counter() - started)


def submit_answer(match: Match, decision: Decision, answer: Any, *, latency_s: float | None = None) -> None:
    """Submit what a player answered -- an action, text, a :class:`Move`, or the exception it
    raised -- recording any failure as data under the match's policy. Every game loop
    (this runner, tournaments, batched play) goes through here."""
    seat = decision.seat
    if isinstance(answer, BaseException):
        match.fail(
            seat,
            f"player raised {type(answer).__name__}: {answer}",
            telemetry={"error_type": type(answer).__name__},
            fault=fault_of_exception(answer),
        )
        return
    telemetry: dict[str, Any] = {}
    if isinstance(answer, Move):
        telemetry.update(answer.telemetry)
        answer = answer.action
    if latency_s is not None:
        telemetry.setdefault("latency_s", round(latency_s, 6))
    action = resolve_answer(decision, answer, telemetry)
    if action is NOT_AN_ACTION:
        from .outputs import scrub_and_cut  # scrub before cutting: a cut must not leave part of a key

        shown = scrub_and_cut(repr(answer)[:100_000], 200)
        match.fail(
            seat,
            f"answer is not an action: {shown}",
            attempted=shown,
            telemetry=telemetry,
            illegal=True,
            fault=FaultKind.UNPARSEABLE,
        )
        return
    match.submit(seat, action, telemetry=telemetry)  # an illegal action is recorded as FaultKind.ILLEGAL


def answer_fault(decision: Decision, answer: Any) -> tuple[Any, FaultKind | None]:
    """What a game loop that does not record (training rollouts) makes of a player's answer or
    raised exception: the action, or the kind of fault, decided as :func:`submit_answer` decides it."""
    if isinstance(answer, BaseException):
        return NOT_AN_ACTION, fault_of_exception(answer)
    if isinstance(answer, Move):
        answer = answer.action
    action = resolve_answer(decision, answer, {})
    if action is NOT_AN_ACTION:
        return action, FaultKind.UNPARSEABLE
    if not decision.game.is_legal(decision._position.state, decision.seat, action):
        return action, FaultKind.ILLEGAL
    return action, None


class _NotAnAction:
    """Sentinel: the player's answer could not be read as an action."""

    def __repr__(self) -> str:
        return "NOT_AN_ACTION"


NOT_AN_ACTION = _NotAnAction()


def resolve_answer(decision: Decision, answer: Any, telemetry: dict[str, Any]) -> Any:
    """Turn a player's answer into an action: actions pass through, text is parsed."""
    if isinstance(answer, str):
        parsed: ParseResult = decision.parse(answer)
        telemetry.update(parsed.telemetry())
        if parsed.default_used:
            telemetry["parse_detail"] = parsed.detail
            return NOT_AN_ACTION
        return parsed.action
    if answer is None:
        return NOT_AN_ACTION
    return answer
