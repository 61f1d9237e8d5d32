"""Tournament results as JSON lines: the schedule line, then one line per game.

Lines are appended, flushed and fsynced one at a time; a kill can leave at most a torn last
line, which :meth:`ResultsFile.drop_torn_tail` cuts before a resumed run appends.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ConfigError
from .schedule import Schedule

FORMAT = "arena.tournament/1"


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


class PlayerFault(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seat: int
    player: str
    verdict: str
    detail: str


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
    duration_s: float = 0.0

    def outcome(self) -> dict:
        """Everything but the timing: equal across backends for the same schedule and seeds."""
        return self.model_dump(exclude={"duration_s"})


# ---------------------------------------------------------------------- results file
class ResultsFile:
    """The append-only JSON-lines results of one tournament."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)

    def read(self) -> tuple[ScheduleLine | None, list[GameResult]]:
        """The saved schedule line and every complete game line (a torn last line is ignored)."""
        if not self.path.exists():
            return None, []
        header: ScheduleLine | None = None
        games: list[GameResult] = []
        with open(self.path, encoding="utf-8") as fh:
            lines = fh.read().split("\n")
        for n, raw in enumerate(lines[:-1], 1):  # the text after the last newline is torn or empty
            if not raw.strip():
                continue
            try:
                data = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{self.path}:{n}: not a JSON line ({exc}); the file is damaged") from None
            kind = data.get("type")
            if kind == "schedule":
                if header is not None:
                    raise ConfigError(f"{self.path}:{n}: a second schedule line; one results file holds one tournament")
                header = ScheduleLine.model_validate(data)
            elif kind == "game":
                games.append(GameResult.model_validate(data))
            else:
                raise ConfigError(f"{self.path}:{n}: unknown line type {kind!r}")
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

    def open_for_append(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return open(self.path, "a", encoding="utf-8")


def append_line(fh, model: BaseModel) -> None:
    """Write one line, flush it and fsync it."""
    fh.write(model.model_dump_json() + "\n")
    fh.flush()
    os.fsync(fh.fileno())


def load_results(path: str | os.PathLike) -> tuple[ScheduleLine, list[GameResult]]:
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
