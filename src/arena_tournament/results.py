"""Tournament results as JSON lines: the schedule line, then one line per game.

Lines are appended, flushed and fsynced one at a time; a kill can leave at most a torn last
line, which :meth:`ResultsFile.drop_torn_tail` cuts before a resumed run appends.

Format ``arena.tournament/2`` (files of format 1 still read): the schedule line also holds each
entrant's resolved identity (a resumed run whose identities changed is refused); every fault
carries its :class:`~arena_core.faults.FaultKind` as a field; each game line says how many
decisions each seat made and how each answered (``modes``); a scheduled game that was not
played (its entrant's spending cap ran out) is a game line with reason ``unplayed``, no
returns and the reason in ``detail``. A game key appears at most once: readers refuse a file
with a repeated key (two runs wrote it).

Infrastructure is nobody's move: a game that a provider outage cut short (reason ``incomplete``)
is never a line here but an attempt in ``attempts.jsonl`` (:mod:`.store`), played again on resume;
past ``run.outage_replays`` attempts it is recorded with reason ``outage`` (no returns, not rated).
A game played again after a dead worker or an outage lists the lost attempts, each with its
evidence, in ``retried`` (absent when there were none).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, ValidationError, model_serializer

from arena_core.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from .schedule import ScheduledGame
from arena_core.faults import FaultKind
from arena_core.outputs import append_jsonl

from .schedule import Schedule

FORMAT = "arena.tournament/2"
READABLE_FORMATS = ("arena.tournament/1", FORMAT)
UNPLAYED = "unplayed"  # the reason of a scheduled game that was never played
INCOMPLETE = "incomplete"  # an attempt a provider outage cut short: logged as an attempt, played again
OUTAGE = "outage"  # a game every attempt of which an outage cut short (run.outage_replays): not rated


class Settings(BaseModel):
    """What decides a game's outcome besides the schedule (must match on resume)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    policy: str
    turn_cap: int | None = None
    game_time_limit_s: float | None = None
    decision_time_limit_s: float | None = None


class ScheduleLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["schedule"] = "schedule"
    format: str = FORMAT
    name: str = "tournament"
    schedule: Schedule
    settings: Settings
    identities: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="entrant -> resolved identity (format 2)"
    )
    max_fault_rate: float | None = Field(
        default=None, description="entrants above this share of faulted decisions are flagged"
    )


class PlayerFault(BaseModel):
    """One failed decision: ``kind`` says why (a field, never the start of ``detail``),
    ``verdict`` what the illegal-action policy did about it (retry, default, forfeit)."""

    model_config = ConfigDict(extra="forbid")

    seat: int
    player: str
    verdict: str
    detail: str
    kind: FaultKind | None = None  # None only in format-1 files
    ply: int | None = None


class GameResult(BaseModel):
    """One finished (or truncated) game; ``returns`` is None for a truncated game."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["game"] = "game"
    key: str
    cluster: str
    table: int
    deal: int
    seed: int
    rotation: int
    seats: list[str]
    reason: str
    returns: list[float] | None
    offender: int | None = None
    plies: int
    faults: list[PlayerFault] = Field(default_factory=list)
    decisions: list[int] | None = None  # decisions asked of each seat (format 2)
    modes: list[str | None] | None = None  # per seat: "free" (text parsed by the game) or "constrained" (an action)
    detail: str = ""  # why a game ended as it did when no fault says it (an unplayed game's reason)
    duration_s: float = 0.0
    retried: list[str] = Field(default_factory=list)  # attempts lost to infrastructure, each with its evidence

    @classmethod
    def of(cls, sg: ScheduledGame, *, reason: str, returns: list[float] | None, **fields: Any) -> GameResult:
        """The result line of scheduled game ``sg``: its schedule fields, then ``fields``
        (no plies and no decisions asked unless given)."""
        fields.setdefault("plies", 0)
        fields.setdefault("decisions", [0] * len(sg.seats))
        return cls(
            key=sg.key,
            cluster=sg.cluster,
            table=sg.table,
            deal=sg.deal,
            seed=sg.seed,
            rotation=sg.rotation,
            seats=list(sg.seats),
            reason=reason,
            returns=returns,
            **fields,
        )

    @property
    def unplayed(self) -> bool:
        return self.reason == UNPLAYED

    def outcome(self) -> dict[str, Any]:
        """Everything but the timing and the lost attempts: equal across backends for the same
        schedule and seeds, however often infrastructure failed on the way."""
        return self.model_dump(exclude={"duration_s", "retried"})

    @model_serializer(mode="wrap")
    def _without_empty_retried(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """``retried`` only where an attempt was lost: the other lines read as before."""
        data: dict[str, Any] = handler(self)
        if not self.retried:
            data.pop("retried", None)
        return data


# ---------------------------------------------------------------------- results file
class ResultsFile:
    """The append-only JSON-lines results of one tournament."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)

    def read(self) -> tuple[ScheduleLine | None, list[GameResult]]:
        """The saved schedule line and every complete game line (a torn last line is ignored)."""
        if not self.path.exists():
            return None, []
        header: ScheduleLine | None = None
        games: list[GameResult] = []
        seen: dict[str, int] = {}
        with open(self.path, encoding="utf-8") as fh:
            lines = fh.read().split("\n")
        for n, raw in enumerate(lines[:-1], 1):  # the text after the last newline is torn or empty
            if not raw.strip():
                continue
            try:
                data = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{self.path}:{n}: not a JSON line ({exc}); the file is damaged") from None
            kind = data.get("type") if isinstance(data, dict) else None
            try:
                if kind == "schedule":
                    if header is not None:
                        raise ConfigError(
                            f"{self.path}:{n}: a second schedule line; one results file holds one tournament (two runs wrote it?)"
                        )
                    if data.get("format", FORMAT) not in READABLE_FORMATS:
                        raise ConfigError(
                            f"{self.path}:{n}: results format {data.get('format')!r} is not one this arena reads ({', '.join(READABLE_FORMATS)}); upgrade arena"
                        )
                    header = ScheduleLine.model_validate(data)
                elif kind == "game":
                    game = GameResult.model_validate(data)
                    if game.key in seen:
                        raise ConfigError(
                            f"{self.path}:{n}: game {game.key!r} is recorded twice (first on line {seen[game.key]}); "
                            "two runs wrote this file: keep one line per game or rerun into a fresh directory"
                        )
                    seen[game.key] = n
                    games.append(game)
                else:
                    raise ConfigError(f"{self.path}:{n}: unknown line type {kind!r}")
            except ValidationError as exc:
                err = exc.errors(include_url=False)[0]
                where = ".".join(str(x) for x in err["loc"]) or "(line)"
                raise ConfigError(
                    f"{self.path}:{n}: not a valid {kind} line: {where}: {err['msg']}; the file is damaged"
                ) from None
        return header, games

    def drop_torn_tail(self) -> None:
        """Cut a half-written last line (left by a kill during a write)."""
        if not self.path.exists():
            return
        with open(self.path, "rb+") as fh:
            data = fh.read()
            end = data.rfind(b"\n") + 1
            if end != len(data):
                fh.truncate(end)
                fh.flush()
                os.fsync(fh.fileno())

    def open_for_append(self) -> IO[str]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return open(self.path, "a", encoding="utf-8")


def append_line(fh: IO[str], model: BaseModel) -> None:
    """Write one line, flush it and fsync it."""
    append_jsonl(fh, model)


def load_results(path: str | os.PathLike[str]) -> tuple[ScheduleLine, list[GameResult]]:
    """The schedule line and games of a results file (or of ``<dir>/results.jsonl``)."""
    path = Path(path)
    if path.is_dir():
        path = path / "results.jsonl"
    if not path.exists():
        raise ConfigError(f"no results file at {str(path)!r}; run `arena tournament CONFIG` first")
    header, games = ResultsFile(path).read()
    if header is None:
        raise ConfigError(f"{path}: no schedule line; this is not a tournament results file")
    return header, games
