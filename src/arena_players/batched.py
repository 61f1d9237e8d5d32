"""Play many episodes concurrently, batching the pending decisions of each player.

Every round, each unfinished game's next decision is collected; decisions that belong to the
same player object go to its ``act_batch(decisions) -> answers`` in one call (an
:class:`~arena_players.mlx_player.MLXPlayer` generates them in one batch; an
:class:`~arena_players.openai_player.OpenAIPlayer` sends them concurrently). Players without
``act_batch`` are asked one decision at a time. Answers go through exactly the same path as
:func:`arena_core.runner.play_episode`: text is parsed by the game's text view, and a crash,
an exception returned in place of an answer, or an unreadable answer is recorded and handled
by the illegal-action policy -- never a crash of the loop. Players are told when an episode
begins (``begin_episode``) and when it ends (``end_episode``; an MLX player frees the seat's kept
KV cache then).

:func:`play_pipelined` instead keeps a window of episodes in flight, each on its own thread, and
hands each back as it ends: one slow decision (a provider's backoff after a 500) holds only its
own episode, not a whole round. It is for players that declare ``concurrent_act = True`` (their
``act`` may run on several threads at once: an HTTP player); :func:`pipelines` says whether a
lineup qualifies.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from arena_core.episode import EpisodeRecord
from arena_core.errors import ConfigError, RulesError
from arena_core.game import Game
from arena_core.match import Match
from arena_core.players import Decision, Player, begin_episodes, end_episodes
from arena_core.policy import RAISE, IllegalActionPolicy
from arena_core.runner import submit_answer

PlayersFor = Callable[[int], Sequence[Player]]


@dataclass
class BatchStats:
    """What a :func:`play_batch` run did: rounds, decisions, and time inside player calls."""

    rounds: int = 0
    decisions: int = 0
    player_calls: int = 0
    player_s: float = 0.0
    wall_s: float = 0.0


def play_batch(
    game: Game[Any, Any] | Sequence[Game[Any, Any]],
    players: Sequence[Player] | PlayersFor,
    seeds: Sequence[int],
    *,
    policy: IllegalActionPolicy = RAISE,
    turn_cap: int | None = None,
    time_cap_s: float | None = None,
    batched: bool = True,
    log_path: str | None = None,
    stats: BatchStats | None = None,
) -> list[EpisodeRecord]:
    """Play one episode of ``game`` per seed, all at once; returns the records in seed order.

    ``players`` is either one list (seat ``i`` is ``players[i]`` in every game, so one object
    sees the decisions of all games) or a function ``game_index -> players``. With
    ``batched=False`` every decision is a separate ``act`` call (the sequential baseline).
    ``log_path``: each finished episode's record is appended there as JSON lines. ``game`` may
    also be a sequence of games, one per seed (e.g. the label rotations of a matrix study).
    """
    if not seeds:
        return []
    games = [game] * len(seeds) if isinstance(game, Game) else list(game)
    if len(games) != len(seeds):
        raise ConfigError(f"play_batch got {len(games)} games for {len(seeds)} seeds; give one game per seed")
    lineups = [list(players(i)) if callable(players) else list(players) for i in range(len(seeds))]
    for g, lineup in zip(games, lineups, strict=True):
        if len(lineup) != g.num_players:
            raise ConfigError(
                f"{g.spec.id} with {g.num_players} players needs {g.num_players} players, got {len(lineup)}"
            )
    stats = stats if stats is not None else BatchStats()
    wall = time.perf_counter()
    matches = [
        Match(g, seed, policy=policy, turn_cap=turn_cap, time_cap_s=time_cap_s, players=[_name(p) for p in lineup])
        for g, seed, lineup in zip(games, seeds, lineups, strict=True)
    ]
    for match, lineup in zip(matches, lineups, strict=True):
        begin_episodes(lineup, match.game, match.seed)
    written = [False] * len(matches)
    try:
        while True:
            _flush(matches, written, log_path, lineups)
            live = [i for i, m in enumerate(matches) if not m.done]
            if not live:
                break
            stats.rounds += 1
            groups: dict[int, tuple[Player, list[tuple[Match, Decision]]]] = {}
            for i in live:
                match = matches[i]
                seat = match.to_act()
                if seat is None:  # pragma: no cover - a live match has a seat to act
                    raise RulesError(
                        f"{match.game.spec.id}: the episode from seed {match.seed} is not done but nobody is to act"
                    )
                player = lineups[i][seat]
                groups.setdefault(id(player), (player, []))[1].append((match, make_decision(match, seat)))
            for player, items in groups.values():
                stats.decisions += len(items)
                _ask(player, items, batched, stats)
    finally:
        _flush(matches, written, log_path)
        stats.wall_s += time.perf_counter() - wall
    return [m.record for m in matches]


def pipelines(players: Iterable[Player]) -> bool:
    """Whether every player declares ``concurrent_act = True`` (its ``act`` may run on several
    threads at once), so :func:`play_pipelined` may play their episodes."""
    return all(getattr(p, "concurrent_act", False) is True for p in players)


Job = tuple[Game[Any, Any], Sequence[Player], int]  # a game, its lineup, the episode seed


def play_pipelined(
    jobs: Iterable[Job], *, window: int, policy: IllegalActionPolicy = RAISE
) -> Iterator[list[tuple[int, EpisodeRecord]]]:
    """Play each job's episode, at most ``window`` at once, each on its own thread; yields the
    ``(job index, record)`` of the episodes that ended since the last yield (at least one), in the
    order they ended. Jobs are read lazily; stopping the iteration waits for the episodes in flight
    and starts no more."""
    if window < 1:
        raise ConfigError(f"window must be at least 1, got {window}")
    pending: dict[Future[EpisodeRecord], int] = {}
    todo = enumerate(jobs)
    with ThreadPoolExecutor(max_workers=window, thread_name_prefix="arena-episode") as pool:
        try:
            while True:
                for index, (game, lineup, seed) in todo:
                    pending[pool.submit(_one_episode, game, lineup, seed, policy)] = index
                    if len(pending) >= window:
                        break
                if not pending:
                    return
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                yield [(pending.pop(f), f.result()) for f in sorted(done, key=pending.__getitem__)]
        finally:
            for f in pending:
                f.cancel()


def _one_episode(
    game: Game[Any, Any], lineup: Sequence[Player], seed: int, policy: IllegalActionPolicy
) -> EpisodeRecord:
    return play_batch(game, lineup, [seed], policy=policy)[0]


def make_decision(match: Match, seat: int) -> Decision:
    game, pos = match.game, match.position
    return Decision.at(game, pos, seat, match.seed)


def _ask(player: Player, items: list[tuple[Match, Decision]], batched: bool, stats: BatchStats) -> None:
    act_batch = getattr(player, "act_batch", None) if batched else None
    if act_batch is not None:
        started = time.perf_counter()
        try:
            answers = list(act_batch([d for _, d in items]))
            if len(answers) != len(items):
                raise TypeError(f"act_batch returned {len(answers)} answers for {len(items)} decisions")
        except Exception as exc:  # the whole batch failed: every decision records the failure
            answers = [exc] * len(items)
        elapsed = time.perf_counter() - started
        stats.player_calls += 1
        stats.player_s += elapsed
        for (match, decision), answer in zip(items, answers, strict=True):
            apply_answer(match, decision, answer, elapsed)
        return
    for match, decision in items:
        started = time.perf_counter()
        try:
            answer = player.act(decision)
        except Exception as exc:
            answer = exc
        elapsed = time.perf_counter() - started
        stats.player_calls += 1
        stats.player_s += elapsed
        apply_answer(match, decision, answer, elapsed)


def apply_answer(match: Match, decision: Decision, answer: Any, elapsed_s: float) -> None:
    """Submit a player's answer (an action, text, a :class:`Move`, or the exception it raised)
    exactly as :func:`arena_core.runner.step_player` does."""
    submit_answer(match, decision, answer, latency_s=elapsed_s)


def _flush(
    matches: list[Match], written: list[bool], log_path: str | None, lineups: list[list[Player]] | None = None
) -> None:
    """Append each newly finished episode's record to ``log_path``; then tell its players it
    ended (``end_episode(EpisodeEnd)`` where they have it: they may learn from it or free what they
    kept for it, e.g. a seat's KV cache; a hook that raises becomes a warning)."""
    for i, match in enumerate(matches):
        if match.done and not written[i]:
            written[i] = True
            if log_path:
                with open(log_path, "a", encoding="utf-8") as fh:
                    for line in match.record.lines():
                        fh.write(line + "\n")
            if lineups is not None:
                end_episodes(lineups[i], match)


def _name(player: Player) -> str:
    return getattr(player, "name", type(player).__name__)
