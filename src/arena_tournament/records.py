"""Game records of a tournament: every game's full episode, compressed, beside the results.

``records.jsonl.gz`` holds one gzip member per game, appended (flushed and fsynced) just before
the game's line in ``results.jsonl``. Each member is one JSON object::

    {"key": "<game key>", "format": "arena.records/1",
     "header": {...},              # the episode header (game, version, params, seed, seats' entrants, policy, caps)
     "events": [...],              # in order, each an episode line without defaults:
                                   #   {"type": "step", "ply", "player", "action", "action_id",
                                   #    "obs_digest", "telemetry": {...}, "substituted": true?}
                                   #   {"type": "policy", "ply", "player", "attempted", "verdict",
                                   #    "illegal", "detail", "telemetry": {"fault": kind, ...}}
     "end": {...}}                 # reason, returns, ply, offender, detail

``telemetry`` is whatever the player reported: a language-model player puts its prompt (or the
prompt's hash, ``prompt_sha256``), its raw answer (``response``), tokens and latency there, and
the parser its verdict. Secrets are scrubbed before writing.

:func:`read_game_records` returns ``{game key: EpisodeRecord}`` (:class:`arena_core.episode.EpisodeRecord`,
replayable with :func:`arena_core.replay.replay`) for the games recorded in ``results.jsonl``
only: a torn last member (a kill during a write) is discarded, and a record whose game has no
results line (a kill between the two writes; the game is played again on resume) is ignored;
when a key has two records the last one counts. A damaged stretch inside the file (bytes
overwritten) loses only the members it touches: reading resumes at the next member.

For ``arena replay`` (:func:`episodes_at`), every game that ``results.jsonl`` lists as played
must have a readable record; the games that have none are reported by key with the damaged byte
ranges (:class:`arena_core.replay.IncompleteRecordsError`), and the replay exits non-zero. A
line that promises no record: an unplayed game, or a game whose worker died before anything was
recorded (0 plies, no decisions asked).
"""

from __future__ import annotations

import gzip
import json
import os
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from arena_core.episode import End, EpisodeRecord, Header, PolicyEvent, Step
from arena_core.errors import ConfigError
from arena_core.outputs import scrub_secrets
from arena_core.replay import IncompleteRecordsError

FORMAT = "arena.records/1"
RECORDS_NAME = "records.jsonl.gz"

__all__ = [
    "FORMAT",
    "RECORDS_NAME",
    "RecordsFile",
    "decode_record",
    "encode_record",
    "game_record",
    "read_game_records",
]


def _compact(line: Any) -> dict[str, Any]:
    data: dict[str, Any] = line.model_dump(mode="json", exclude_defaults=True)
    data["type"] = line.type
    return data


def encode_record(key: str, record: EpisodeRecord) -> str:
    """One game's record as the compact JSON text stored in a records file."""
    data = {
        "key": key,
        "format": FORMAT,
        "header": _compact(record.header),
        "events": [_compact(e) for e in record.events],
        "end": None if record.end is None else _compact(record.end),
    }
    return scrub_secrets(json.dumps(data, separators=(",", ":"), ensure_ascii=False))


def decode_record(data: dict[str, Any]) -> EpisodeRecord:
    """The :class:`EpisodeRecord` of one stored member."""
    events = [
        Step.model_validate(e) if e.get("type") == "step" else PolicyEvent.model_validate(e) for e in data["events"]
    ]
    end = None if data.get("end") is None else End.model_validate(data["end"])
    return EpisodeRecord(header=Header.model_validate(data["header"]), events=events, end=end)


class RecordsFile:
    """The append-only, gzip-member-per-game records of one tournament."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self.damaged: list[tuple[int, int]] = []  # (start, end) byte stretches the last read skipped

    def members(self) -> Iterator[tuple[int, bytes]]:
        """(end offset, decompressed bytes) of every complete member; a damaged stretch is
        skipped to the next member that reads whole (:attr:`damaged` lists the stretches), and a
        torn tail (no complete member after it) ends the file."""
        self.damaged = []
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        pos = 0
        while pos < len(data):
            out, end = _member_at(data, pos)
            if out is None:
                nxt = _next_member(data, pos + 1)
                if nxt is None:
                    if pos != len(data):
                        self.damaged.append((pos, len(data)))
                    return  # damaged or torn from here to the end
                self.damaged.append((pos, nxt))
                pos = nxt
                continue
            pos = end
            yield pos, out

    def drop_torn_tail(self) -> None:
        """Cut what follows the last complete member (left by a kill during a write)."""
        if not self.path.exists():
            return
        end = max((offset for offset, _ in self.members()), default=0)  # offsets only grow
        if end != self.path.stat().st_size:
            with open(self.path, "rb+") as fh:
                fh.truncate(end)
                fh.flush()
                os.fsync(fh.fileno())

    def open_for_append(self) -> IO[bytes]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return open(self.path, "ab")

    @staticmethod
    def append(fh: IO[bytes], text: str) -> None:
        """Append one game's record as its own gzip member; flush and fsync."""
        fh.write(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))
        fh.flush()
        os.fsync(fh.fileno())

    def read(self) -> dict[str, dict[str, Any]]:
        """Every complete member as ``{key: data}`` (the last one of a key counts)."""
        out: dict[str, dict[str, Any]] = {}
        for _, raw in self.members():
            try:
                data = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise ConfigError(f"{self.path}: a record that is not JSON ({exc}); the file is damaged") from None
            out[data["key"]] = data
        return out


_MAGIC = b"\x1f\x8b\x08"  # the start of a gzip member (deflate)


def _member_at(data: bytes, pos: int) -> tuple[bytes | None, int]:
    """The decompressed member starting at ``pos`` and where it ends, or (None, pos) when no
    whole, intact member starts there (gzip checks each member's CRC and length)."""
    d = zlib.decompressobj(wbits=31)
    try:
        out = d.decompress(data[pos:])
    except zlib.error:
        return None, pos
    if not d.eof:
        return None, pos
    return out, len(data) - len(d.unused_data)


def _next_member(data: bytes, start: int) -> int | None:
    """The offset of the next intact member at or after ``start`` (None if there is none)."""
    at = data.find(_MAGIC, start)
    while at != -1:
        if _member_at(data, at)[0] is not None:
            return at
        at = data.find(_MAGIC, at + 1)
    return None


def _records_path(results: str | os.PathLike[str]) -> tuple[Path, Path]:
    p = Path(results)
    directory = p if p.is_dir() else p.parent
    results_path = p if not p.is_dir() else p / "results.jsonl"
    return directory / RECORDS_NAME, results_path


def read_game_records(results_dir: str | os.PathLike[str]) -> dict[str, EpisodeRecord]:
    """``{game key: EpisodeRecord}`` of every game recorded in ``results.jsonl`` that has a
    record (``results_dir`` is the tournament's output directory or its results file)."""
    return _read_checked(results_dir)[0]


def _promises_a_record(game: Any) -> bool:
    """Whether a results line stands for a game whose record was written before it."""
    from .results import UNPLAYED

    if game.reason == UNPLAYED:
        return False
    return not (game.plies == 0 and not any(game.decisions or ()))  # a worker that died before any step


def _read_checked(results_dir: str | os.PathLike[str]) -> tuple[dict[str, EpisodeRecord], list[str], str]:
    """The records of the games in ``results.jsonl``, the keys of the played games listed there
    that have no readable record (in results order), and where the records file is damaged."""
    from .results import ResultsFile

    path, results_path = _records_path(results_dir)
    _, games = ResultsFile(results_path).read()
    keep = {g.key for g in games}
    file = RecordsFile(path)
    stored = file.read()
    records = {k: decode_record(v) for k, v in stored.items() if k in keep}
    missing = [g.key for g in games if g.key not in records and _promises_a_record(g)]
    damaged = ", ".join(f"{a}-{b}" for a, b in file.damaged)
    return records, missing, (f"unreadable bytes {damaged} of {path.name}" if damaged else "")


def game_record(results_dir: str | os.PathLike[str], key: str) -> EpisodeRecord:
    """The record of one game (for ``arena replay --game KEY``); a one-line ConfigError when absent."""
    records, missing, damaged = _read_checked(results_dir)
    if key in missing:
        raise ConfigError(
            f"game {key!r} is listed in results.jsonl, but {_records_path(results_dir)[0]} holds no readable record of it"
            + (f" ({damaged})" if damaged else "")
        )
    if key not in records:
        close = sorted(records)[:3]
        raise ConfigError(
            f"no record of game {key!r} in {_records_path(results_dir)[0]}"
            + (f" (e.g. {', '.join(close)})" if close else "")
        )
    return records[key]


def episodes_at(path: str | os.PathLike[str], key: str | None = None) -> list[EpisodeRecord] | None:
    """For ``arena replay``: the game records at ``path`` (a tournament's output directory, its
    ``results.jsonl`` or its ``records.jsonl.gz``), all of them in schedule order or only game
    ``key``; None when ``path`` is not a tournament's (an ordinary episode file)."""
    p = Path(path)
    if p.is_dir():
        p = p / RECORDS_NAME
    elif p.name == "results.jsonl":
        p = p.parent / RECORDS_NAME
    if p.name != RECORDS_NAME and not p.name.endswith(".gz"):
        if key is not None:
            raise ConfigError(f"--game needs a tournament's output directory or its {RECORDS_NAME}, not {str(path)!r}")
        return None
    if not p.exists():
        raise ConfigError(f"no game records at {str(p)!r}; tournaments write {RECORDS_NAME} beside results.jsonl")
    if key is not None:
        return [game_record(p.parent, key)]
    records, missing, damaged = _read_checked(p.parent)
    if missing:
        listed = len(records) + len(missing)
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise IncompleteRecordsError(
            f"{len(missing)} of the {listed} played games listed in {p.parent / 'results.jsonl'} have no readable "
            f"record in {p.name}" + (f" ({damaged})" if damaged else "") + f": {shown}",
            list(records.values()),
        )
    return list(records.values())
