"""Re-run a recorded episode and verify it line by line."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from .episode import EndReason, EpisodeRecord, Step, read_episodes
from .errors import ConfigError, EpisodeError, ReplayDivergenceError
from .game import Game
from .match import Match
from .policy import IllegalActionPolicy

_STEP_FIELDS = ("ply", "player", "action", "action_id", "substituted", "obs_digest")
_POLICY_FIELDS = ("ply", "player", "verdict", "illegal")
_END_FIELDS = ("reason", "returns", "ply", "offender", "terminated", "truncated")


class IncompleteRecordsError(EpisodeError):
    """A run lists games whose records are missing or unreadable. ``records`` holds the ones that
    could be read (a records reader raises it; :func:`replay_file` verifies those, then says what
    is missing: never "replayed exactly" for a subset)."""

    def __init__(self, message: str, records: list[EpisodeRecord]):
        super().__init__(message)
        self.records = records


def replay(
    record: EpisodeRecord, game: Game[Any, Any] | None = None, *, on_event: Callable[..., None] | None = None
) -> EpisodeRecord:
    """Re-run ``record`` from its seed and inputs; raise ReplayDivergenceError at the first line
    that differs, or when the game changes a state it was given (a record of such a game is never
    called exact). ``on_event(game, header, position, event)`` sees each recorded event with the
    position it was decided at, then the end with the last position (``arena replay --show``).
    Returns the re-run record."""
    from .episode import digest
    from .testing.checks import state_key  # catches a game that changes the state it is given

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
    before = match.position
    for n, event in enumerate(record.events):
        produced = match.record.events
        before = before if n < len(produced) else match.position  # a substitute: its policy event's position
        if on_event is not None:
            on_event(game, header, before, event)
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
            before = match.position
            key = state_key(game, before.state), digest(game.observe(before, event.player))
            match.submit(event.player, action)
            if (state_key(game, before.state), digest(game.observe(before, event.player))) != key:
                raise ReplayDivergenceError(
                    f"event {n} (ply {event.ply}): the game changed its input state while applying {event.action!r} "
                    "(next_state must return a new state): this record cannot be verified"
                )
        else:
            match.fail(event.player, event.detail, attempted=event.attempted, illegal=event.illegal, fault=event.fault)
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
        if on_event is not None:
            on_event(game, header, match.position, record.end)
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


#: entry-point group of records readers: ``name = "module:function"`` where the function takes
#: ``(path, key)`` and returns the episode records at ``path`` (all, or only game ``key``), or None
#: when ``path`` is not its kind of run (the tournament distribution registers its records reader)
RECORDS_GROUP = "arena.records"


def _records_from_readers(path: str | os.PathLike[str], key: str | None) -> list[EpisodeRecord] | None:
    import importlib.metadata as md

    for ep in sorted(md.entry_points(group=RECORDS_GROUP), key=lambda e: e.name):
        reader: Callable[[str | os.PathLike[str], str | None], list[EpisodeRecord] | None] = ep.load()
        records = reader(path, key)
        if records is not None:
            return records
    return None


def replay_file(
    path: str | os.PathLike[str],
    game: Game[Any, Any] | None = None,
    *,
    game_key: str | None = None,
    on_event: Callable[..., None] | None = None,
) -> list[EpisodeRecord]:
    """Replay every episode in a JSON-lines file. An episode without its end line (what a run
    killed mid-game leaves) is refused with :class:`EpisodeError`: there is no recorded result
    to verify."""
    try:
        records = _records_from_readers(path, game_key)
    except IncompleteRecordsError as exc:
        verified = [replay(r, game, on_event=on_event) for r in exc.records]  # a divergence among them says so first
        raise IncompleteRecordsError(
            f"{exc}; the {len(verified)} readable record(s) replayed exactly, the run as a whole is not verified",
            verified,
        ) from None
    if records is None:
        if game_key is not None:
            raise ConfigError(
                f"--game needs a run directory that an installed records reader knows (a tournament's: "
                f"pip install turn-arena-tournament), not {str(path)!r}"
            )
        if os.path.isdir(path):
            raise ConfigError(
                f"{str(path)!r} is a directory that no installed records reader knows; `arena replay` takes an "
                "episode file, or a tournament's output directory with turn-arena-tournament installed"
            )
        records = read_episodes(path)
    for n, record in enumerate(records, 1):
        if record.end is None:
            where = f"episode {n} of {len(records)}" if len(records) > 1 else "the episode"
            raise EpisodeError(
                f"{path}: {where} ({record.header.game}, seed {record.header.seed}) is incomplete: "
                f"{len(record.events)} events and no end line (the run was cut off mid-game); nothing to verify"
            )
    return [replay(record, game, on_event=on_event) for record in records]
