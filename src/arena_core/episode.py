"""Episode records as JSON lines, and replay that verifies them step by step."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from enum import Enum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .errors import EpisodeError
from .faults import FaultKind

FORMAT = "arena.episode/1"


class EndReason(str, Enum):
    NATURAL = "natural"  # the rules ended the game (termination)
    TURN_CAP = "turn_cap"  # the harness cut it off after a number of decisions (truncation)
    TIME_CAP = "time_cap"  # the harness cut it off on the wall clock (truncation)
    FORFEIT = "forfeit"  # a player forfeited under the illegal-action policy
    PLAYER_ERROR = "player_error"  # a player crashed, timed out or answered garbage, and forfeited
    GAME_ERROR = "game_error"  # the game engine could not go on (a wrapped engine's dead end): no result

    @property
    def truncated(self) -> bool:
        """True for endings that give no result (the game was cut off, not decided)."""
        return self in (EndReason.TURN_CAP, EndReason.TIME_CAP, EndReason.GAME_ERROR)


class _Line(BaseModel):
    model_config = ConfigDict(extra="forbid")


_JSON_SCALARS = (str, int, float, bool, type(None))
NOT_JSON_KEY = "not_json"  # telemetry keys whose values were not JSON, stored as their repr


def json_safe_telemetry(telemetry: Any) -> Any:
    """Telemetry as JSON data: a value in it that is not (an object, a set, bytes ...) is kept
    as its repr, cut to 200 characters, and its key listed under ``not_json`` -- visible, never
    a crash when the record is written. Lines read from a file hold JSON already."""
    if not isinstance(telemetry, dict):
        return telemetry  # not a mapping at all: the model refuses it
    bad: list[str] = []

    def safe(value: Any, path: str) -> Any:
        if isinstance(value, _JSON_SCALARS):
            return value
        if isinstance(value, (list, tuple)):
            return [safe(v, f"{path}[{i}]") for i, v in enumerate(value)]
        if isinstance(value, dict) and all(isinstance(k, str) for k in value):
            return {k: safe(v, f"{path}.{k}") for k, v in value.items()}
        bad.append(path)
        return repr(value)[:200]

    out = {str(k): safe(v, str(k)) for k, v in telemetry.items()}
    if bad:
        out[NOT_JSON_KEY] = (
            sorted(set(out.get(NOT_JSON_KEY) or []) | set(bad)) if isinstance(out.get(NOT_JSON_KEY), list) else bad
        )
    return out


class Header(_Line):
    type: Literal["header"] = "header"
    format: str = FORMAT
    game: str
    game_version: str
    params: dict[str, Any]
    num_players: int
    seed: int
    players: list[str] = Field(default_factory=list)
    policy: dict[str, Any]
    turn_cap: int | None = None
    time_cap_s: float | None = None


class Step(_Line):
    type: Literal["step"] = "step"
    ply: int
    player: int
    action: str
    action_id: int  # -1: free text outside the game's action-index space (the string is the action)
    substituted: bool = False  # played by the policy in place of an illegal attempt
    obs_digest: str
    telemetry: dict[str, Any] = Field(default_factory=dict)

    _telemetry_json = field_validator("telemetry", mode="before")(json_safe_telemetry)


class PolicyEvent(_Line):
    type: Literal["policy"] = "policy"
    ply: int
    player: int
    attempted: str | None
    verdict: str
    illegal: bool = True  # an illegal action (True) or a player failure such as a crash (False)
    detail: str
    telemetry: dict[str, Any] = Field(default_factory=dict)
    fault: FaultKind | None = None  # decided where the failure happened; read it with faults.fault_of

    _telemetry_json = field_validator("telemetry", mode="before")(json_safe_telemetry)


class End(_Line):
    type: Literal["end"] = "end"
    reason: EndReason
    terminated: bool
    truncated: bool
    returns: list[float] | None
    ply: int
    offender: int | None = None
    detail: str = ""


class EpisodeRecord(BaseModel):
    """A whole episode: header, steps and policy events in order, and the end."""

    header: Header
    events: list[Step | PolicyEvent] = Field(default_factory=list)
    end: End | None = None

    @property
    def steps(self) -> list[Step]:
        return [e for e in self.events if isinstance(e, Step)]

    def lines(self) -> Iterable[str]:
        yield self.header.model_dump_json()
        for e in self.events:
            yield e.model_dump_json()
        if self.end is not None:
            yield self.end.model_dump_json()

    def write(self, path: str | os.PathLike[str]) -> None:
        with open(path, "w", encoding="utf-8") as fh:
            for line in self.lines():
                fh.write(line + "\n")


def digest(obj: Any) -> str:
    """A short stable digest of JSON-able data (used to check observations on replay)."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


class EpisodeWriter:
    """Appends each line as it happens, flushed, so a killed run loses nothing written."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self._fh = open(self.path, "a", encoding="utf-8")

    def __call__(self, line: _Line) -> None:
        self._fh.write(line.model_dump_json() + "\n")
        self._fh.flush()
        if isinstance(line, End):
            os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> EpisodeWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_episodes(path: str | os.PathLike[str]) -> list[EpisodeRecord]:
    """Read every episode in a JSON-lines file (several may follow one another)."""
    episodes: list[EpisodeRecord] = []
    current: EpisodeRecord | None = None
    with open(path, encoding="utf-8") as fh:
        for n, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                data = json.loads(raw)
                if not isinstance(data, dict):
                    raise EpisodeError(
                        f"{path}:{n}: not a JSON object but a JSON {type(data).__name__}; not an episode file"
                    )
                kind = data.get("type")
                if kind == "header":
                    current = EpisodeRecord(header=Header.model_validate(data))
                    episodes.append(current)
                elif current is None:
                    raise EpisodeError(f"{path}:{n}: a {kind!r} line before any header")
                elif kind == "step":
                    current.events.append(Step.model_validate(data))
                elif kind == "policy":
                    current.events.append(PolicyEvent.model_validate(data))
                elif kind == "end":
                    current.end = End.model_validate(data)
                else:
                    raise EpisodeError(f"{path}:{n}: unknown line type {kind!r}")
            except json.JSONDecodeError as exc:
                raise EpisodeError(
                    f"{path}:{n}: not a JSON line ({exc}); cut mid-write, or not an episode file"
                ) from None
            except ValidationError as exc:
                problems = "; ".join(
                    f"{'.'.join(map(str, e['loc'])) or 'line'}: {e['msg']}" for e in exc.errors(include_url=False)
                )
                raise EpisodeError(f"{path}:{n}: not an episode line: {problems}") from None
    if not episodes:
        raise EpisodeError(f"{path}: no episode header found")
    return episodes
