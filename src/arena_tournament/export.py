"""``arena export``: game records as a training dataset, one row per decision.

    arena export runs/demo --format jsonl --out demo.jsonl        # the base install
    arena export runs/demo --format parquet --out demo.parquet    # pip install 'turn-arena-tournament[export]'

The input is a tournament's output directory (its ``records.jsonl.gz``), its ``results.jsonl`` or
``records.jsonl.gz``, or an episode file (``arena play --record``). Each game is replayed from its
seed and inputs (a record that does not replay is refused), and each decision a player made
becomes one row (:data:`COLUMNS`): a move that the illegal-action policy replaced is one row with
its fault, not two. ``prompt`` is the messages the player was sent: as recorded when the record
holds them (``prompt_source = "recorded"``); rebuilt from the replayed position by the game's text
view when it holds only their hash and the rebuild hashes the same (``"rebuilt"``; a different
hash leaves the prompt empty, ``"mismatch"``, as for a transcript-view player, whose prompt
depends on the conversation); the text view's prompt for a player that was sent none, a bot
(``"view"``, what a language model in that seat would have been asked: a distillation target).

Load with ``datasets.load_dataset("parquet", data_files=...)`` or ``("json", data_files=...)``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from arena_core.episode import EpisodeRecord, Step, read_episodes
from arena_core.errors import ConfigError
from arena_core.faults import fault_of
from arena_core.game import Game, Position
from arena_core.match import Match
from arena_core.policy import IllegalActionPolicy
from arena_core.registry import make_game
from arena_core.replay import replay

from .records import RECORDS_NAME, read_game_records

#: the columns of every row, in order
COLUMNS = (
    "game",  # game id
    "game_version",
    "params",  # the game's parameters, as JSON text
    "game_key",  # the tournament's game key, or the episode's index in its file
    "deal_seed",  # the episode seed: the same deal is dealt again from it
    "seat",
    "turn",  # the ply of the decision (the position's count of decisions before it)
    "entrant",  # the seat's player identity as recorded ("" when the record names none)
    "prompt",  # [{"role", "content"}, ...] as sent (see prompt_source)
    "prompt_source",  # recorded | rebuilt | mismatch | view | none
    "answer",  # the player's raw answer text, when recorded
    "legal",  # the legal actions at the decision, as the game writes them
    "action",  # the action played, or the illegal attempt
    "action_id",  # its index in the game's action space (-1: free text or none)
    "fault",  # the fault kind of an illegal or failed decision ("" for a legal move)
    "verdict",  # the policy's verdict for that fault ("" for a legal move)
    "returns",  # every seat's final return (empty when the game was cut off without returns)
    "reward",  # this seat's final return (null as above)
    "end_reason",
)


def load_records(path: str | os.PathLike[str]) -> list[tuple[str, EpisodeRecord]]:
    """``(key, record)`` for every game at ``path`` (a tournament's or an episode file)."""
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"no such file or directory: {str(path)!r}")
    if p.is_dir() or p.name in ("results.jsonl", RECORDS_NAME):
        directory = p if p.is_dir() else p.parent
        if not (directory / RECORDS_NAME).exists():
            raise ConfigError(f"no game records in {str(directory)!r}: tournaments write {RECORDS_NAME} there")
        return sorted(read_game_records(directory).items())
    return [(str(i), record) for i, record in enumerate(read_episodes(p))]


def _sha256(messages: Any) -> str:
    return hashlib.sha256(json.dumps(messages, ensure_ascii=False).encode("utf-8")).hexdigest()


def decision_prompt(
    game: Game[Any, Any], position: Position[Any], seat: int, telemetry: Mapping[str, Any]
) -> tuple[list[Any], str]:
    """The prompt of one decision at ``position`` and where it came from (the module docstring)."""
    recorded = telemetry.get("prompt")
    if isinstance(recorded, str):
        try:
            messages = json.loads(recorded)
        except json.JSONDecodeError:
            messages = [{"role": "user", "content": recorded}]
        return (messages if isinstance(messages, list) else [{"role": "user", "content": recorded}]), "recorded"
    try:
        rebuilt = game.text_view().prompt(game, position, seat).messages()
    except Exception:  # noqa: BLE001 - a game without a working text view still exports its moves
        return [], "none"
    want = telemetry.get("prompt_sha256")
    if want is None:
        return rebuilt, "view"
    return (rebuilt, "rebuilt") if _sha256(rebuilt) == want else ([], "mismatch")


def decision_rows(key: str, record: EpisodeRecord) -> Iterator[dict[str, Any]]:
    """The rows of one game, in play order; the game is replayed from its seed first."""
    header = record.header
    game = make_game(header.game, header.params, num_players=header.num_players)
    replay(record, game)  # a record that does not replay raises ReplayDivergenceError
    match = Match(
        game,
        header.seed,
        policy=IllegalActionPolicy.model_validate(header.policy),
        turn_cap=header.turn_cap,
        players=header.players,
    )
    end = record.end
    returns = [float(r) for r in end.returns] if end is not None and end.returns is not None else []
    for n, event in enumerate(record.events):
        if n < len(match.record.events):  # the policy's substitute for the attempt just exported
            continue
        seat = event.player
        prompt, source = decision_prompt(game, match.position, seat, event.telemetry)
        legal = [game.action_to_str(a) for a in match.legal_actions(seat)]
        row: dict[str, Any] = {
            "game": header.game,
            "game_version": header.game_version,
            "params": json.dumps(header.params, sort_keys=True),
            "game_key": key,
            "deal_seed": header.seed,
            "seat": seat,
            "turn": event.ply,
            "entrant": header.players[seat] if seat < len(header.players) else "",
            "prompt": prompt,
            "prompt_source": source,
            "answer": str(event.telemetry.get("response", "")),
            "legal": legal,
            "returns": returns,
            "reward": returns[seat] if returns else None,
            "end_reason": end.reason.value if end is not None else "",
        }
        if isinstance(event, Step):
            action = game.action_from_id(event.action_id) if event.action_id >= 0 else event.action
            row.update(action=event.action, action_id=event.action_id, fault="", verdict="")
            match.submit(event.player, action)
        else:
            fault = fault_of(event)
            row.update(
                action=event.attempted or "",
                action_id=-1,
                fault=fault.value if fault is not None else "",
                verdict=event.verdict,
            )
            match.fail(event.player, event.detail, attempted=event.attempted, illegal=event.illegal, fault=fault)
        yield {c: row[c] for c in COLUMNS}


def export_rows(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    return [row for key, record in load_records(path) for row in decision_rows(key, record)]


def write_jsonl(rows: Sequence[dict[str, Any]], out: str | os.PathLike[str]) -> None:
    with open(out, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def write_parquet(rows: Sequence[dict[str, Any]], out: str | os.PathLike[str]) -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ConfigError("--format parquet needs pyarrow: pip install 'turn-arena-tournament[export]'") from None
    message = pa.struct([("role", pa.string()), ("content", pa.string())])
    schema = pa.schema(
        [
            ("game", pa.string()),
            ("game_version", pa.string()),
            ("params", pa.string()),
            ("game_key", pa.string()),
            ("deal_seed", pa.int64()),
            ("seat", pa.int64()),
            ("turn", pa.int64()),
            ("entrant", pa.string()),
            ("prompt", pa.list_(message)),
            ("prompt_source", pa.string()),
            ("answer", pa.string()),
            ("legal", pa.list_(pa.string())),
            ("action", pa.string()),
            ("action_id", pa.int64()),
            ("fault", pa.string()),
            ("verdict", pa.string()),
            ("returns", pa.list_(pa.float64())),
            ("reward", pa.float64()),
            ("end_reason", pa.string()),
        ]
    )
    pq.write_table(pa.Table.from_pylist(list(rows), schema=schema), out)


def to_dataset(path: str | os.PathLike[str]) -> Any:
    """The rows of the records at ``path`` as a ``datasets.Dataset`` (the export extra)."""
    try:
        import datasets
    except ImportError:
        raise ConfigError("a datasets.Dataset needs datasets: pip install 'turn-arena-tournament[export]'") from None
    return datasets.Dataset.from_list(export_rows(path))


def export_body(argv: Sequence[str] | None) -> int:
    """Export a run's game records as one row per decision (jsonl, or parquet with the export extra)."""
    from arena_core.clierrors import OneLineArgumentParser

    p = OneLineArgumentParser(prog="arena export", description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument(
        "records", help="a tournament's output directory, its results.jsonl or records.jsonl.gz, or an episode file"
    )
    p.add_argument("--format", choices=["jsonl", "parquet"], default="jsonl")
    p.add_argument("--out", required=True, help="the file to write")
    args = p.parse_args(argv)
    rows = export_rows(args.records)
    (write_parquet if args.format == "parquet" else write_jsonl)(rows, args.out)
    sources: dict[str, int] = {}
    for row in rows:
        sources[row["prompt_source"]] = sources.get(row["prompt_source"], 0) + 1
    games = len({(r["game_key"]) for r in rows})
    said = ", ".join(f"{k} {v}" for k, v in sorted(sources.items()))
    print(f"{len(rows)} decisions from {games} games -> {args.out} (prompts: {said or 'none'})")
    return 0
