"""Re-run a recorded episode and verify it line by line."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from .episode import EndReason, EpisodeRecord, Step, read_episodes
from .errors import EpisodeError, ReplayDivergenceError
from .game import Game
from .match import Match
from .policy import IllegalActionPolicy

_STEP_FIELDS = ("ply", "player", "action", "action_id", "substituted", "obs_digest")
_POLICY_FIELDS = ("ply", "player", "verdict", "illegal")
_END_FIELDS = ("reason", "returns", "ply", "offender", "terminated", "truncated")


def replay(record: EpisodeRecord, game: Game[Any, Any] | None = None) -> EpisodeRecord:
    """Re-run ``record`` from its seed and inputs; raise ReplayDivergenceError at the first
    line that differs. Returns the re-run record."""
    from .testing.checks import sampled_ply, state_key  # catches a game that changes the state it is given

    header = record.header
    if game is None:
        from .registry import make_game

        game = make_game(header.game, header.params, num_players=header.num_players)
    if game.spec.id != header.game or game.spec.version != header.game_version:
        raise ReplayDivergenceError(
            f"the record is for {header.game} v{header.game_version}, the game given is {game.spec.id} v{game.spec.version}"
        )
    match = Match(
        game,
        header.seed,
        policy=IllegalActionPolicy.model_validate(header.policy),
        turn_cap=header.turn_cap,
        players=header.players,
        record_observations=any(isinstance(e, Step) and e.obs_digest for e in record.events),
    )
    for n, event in enumerate(record.events):
        produced = match.record.events
        if n < len(produced):  # produced already (a substituted step follows its policy event)
            _compare(n, event, produced[n])
            continue
        if match.end is not None:
            raise ReplayDivergenceError(
                f"event {n}: the re-run ended ({match.end.reason.value}) but the record goes on with {event.type} at ply {event.ply}"
            )
        if isinstance(event, Step):
            if event.player != match.to_act():
                raise ReplayDivergenceError(
                    f"event {n} (ply {event.ply}): recorded player {event.player} acts, re-run expects player {match.to_act()}"
                )
            if event.action_id < 0:  # free text outside the game's index space: the string is the action
                action = event.action
            else:
                try:
                    action = game.action_from_id(event.action_id)
                except Exception as exc:
                    raise ReplayDivergenceError(
                        f"event {n}: recorded action id {event.action_id} is not an action: {exc}"
                    ) from None
            before = match.position.state
            key = state_key(game, before) if sampled_ply(n) else None
            match.submit(event.player, action)
            if key is not None and state_key(game, before) != key:
                raise ReplayDivergenceError(
                    f"event {n} (ply {event.ply}): the game changed its input state while applying {event.action!r} "
                    "(next_state must return a new state): this record cannot be verified"
                )
        else:
            match.fail(event.player, event.detail, attempted=event.attempted, illegal=event.illegal)
        produced = match.record.events
        if len(produced) <= n:
            raise ReplayDivergenceError(
                f"event {n}: the re-run produced no event for recorded {event.type} at ply {event.ply}"
            )
        _compare(n, event, produced[n])
    produced = match.record.events
    if len(produced) > len(record.events):
        extra = produced[len(record.events)]
        raise ReplayDivergenceError(f"the re-run produced an extra {extra.type} at ply {extra.ply}")
    if record.end is not None:
        if not match.done and record.end.reason is EndReason.TIME_CAP:
            match.truncate(EndReason.TIME_CAP, record.end.detail)
        if not match.done:
            raise ReplayDivergenceError(
                f"the record ends ({record.end.reason.value}) at ply {record.end.ply}; the re-run is still going"
            )
        _compare("end", record.end, match.end, _END_FIELDS)
    return match.record


def _compare(where: Any, recorded: Any, rerun: Any, fields: Sequence[str] | None = None) -> None:
    if fields is None:
        if type(recorded) is not type(rerun):
            raise ReplayDivergenceError(f"event {where}: recorded {recorded.type}, re-run produced {rerun.type}")
        fields = _STEP_FIELDS if isinstance(recorded, Step) else _POLICY_FIELDS
    for f in fields:
        a, b = getattr(recorded, f), getattr(rerun, f)
        if isinstance(recorded, Step) and f == "obs_digest" and not a:
            continue
        if a != b:
            raise ReplayDivergenceError(
                f"event {where} (ply {getattr(recorded, 'ply', '?')}): {f} recorded {a!r}, re-run {b!r}"
            )


def replay_file(
    path: str | os.PathLike[str],
    game: Game[Any, Any] | None = None,
    *,
    allow_incomplete: bool = False,
    game_key: str | None = None,
) -> list[EpisodeRecord]:
    """Replay every episode in a JSON-lines file. An episode without its end line (what a run
    killed mid-game leaves) is refused with :class:`EpisodeError` unless ``allow_incomplete``:
    there is no recorded result to verify."""
    from .tournament.records import episodes_at  # a tournament's records (output dir or records.jsonl.gz), or None

    records = episodes_at(path, game_key)
    records = read_episodes(path) if records is None else records
    if not allow_incomplete:
        for n, record in enumerate(records, 1):
            if record.end is None:
                where = f"episode {n} of {len(records)}" if len(records) > 1 else "the episode"
                raise EpisodeError(
                    f"{path}: {where} ({record.header.game}, seed {record.header.seed}) is incomplete: "
                    f"{len(record.events)} events and no end line (the run was cut off mid-game); nothing to verify"
                )
    return [replay(record, game) for record in records]
