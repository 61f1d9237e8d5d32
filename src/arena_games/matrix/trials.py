"""The matrix study's trials: how each is classified from its episode record (fault kinds of
:mod:`arena_core.faults`), what the players say about their sampling, and the durable,
resumable trial log (``trials.jsonl`` and ``episodes.jsonl``, fsynced per batch)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypedDict

from arena_core.episode import EpisodeRecord, PolicyEvent, Step
from arena_core.errors import ConfigError
from arena_core.faults import FaultKind, fault_of
from arena_core.outputs import append_jsonl_many, atomic_write_text

from .payoffs import ARCHETYPES
from .rules import MatrixGame, MatrixState

FORMAT = "arena.matrix-study/2"
ERROR_KINDS = (FaultKind.ERROR, FaultKind.UNAVAILABLE, FaultKind.TIMEOUT, FaultKind.CAP_EXHAUSTED, FaultKind.CRASH)

TRIAL_FIELDS = (
    "listing",
    "archetype",
    "k",
    "trial",
    "episode_seed",
    "rotation",
    "seat_of_player",
    "label_0",
    "label_1",
    "position_0",
    "position_1",
    "action_0",
    "action_1",
    "return_0",
    "return_1",
    "metric",
    "outcome",
    "fault_kind",
    "fault_seat",
    "end",
    "detail",
    "model_0",
    "model_1",
    "mode_0",
    "mode_1",
    "temperature_0",
    "temperature_1",
    "top_p_0",
    "top_p_1",
    "seed_0",
    "seed_1",
)
#: outcome of a trial: "scored" enters the verdicts; the others are counted and excluded
OUTCOMES = ("scored", "unparseable", "illegal", "error", "defaulted")
#: one trial's fields (:data:`TRIAL_FIELDS`), as :func:`trial_row` builds them and ``trials.jsonl`` holds them
TrialRow = dict[str, Any]


#: request-body keys that change sampling besides temperature and top_p (set through ``extra_body``)
SAMPLING_KEYS = (
    "top_k",
    "min_p",
    "typical_p",
    "do_sample",
    "seed",
    "n",
    "best_of",
    "logit_bias",
    "repetition_penalty",
    "frequency_penalty",
    "presence_penalty",
    "temperature_schedule",
    "guided_choice",
    "guided_regex",
    "use_beam_search",
)


class SamplingInfo(TypedDict):
    """What a player says about how it samples (:func:`sampling_info`): the values its
    requests carry (``extra_body`` overrides included), and the other sampling keys
    ``extra_body`` sets."""

    player: str
    model: str
    mode: str
    temperature: float | None
    top_p: float | None
    seed: int
    overrides: dict[str, Any]


def sampling_info(player: Any, seed: int) -> SamplingInfo:
    """What a player says about how it samples: model id, mode (constrained/free/scripted),
    temperature and top-p as its requests send them (an ``extra_body`` value replaces the
    setting, as the request body is merged), the other sampling keys ``extra_body`` sets, and
    its seed (the per-copy seed)."""
    s = getattr(player, "settings", None)
    extra = getattr(s, "extra_body", None)
    extra = dict(extra) if isinstance(extra, dict) else {}
    temperature = extra.get("temperature", getattr(s, "temperature", None))
    top_p = extra.get("top_p", getattr(s, "top_p", None))
    name = getattr(player, "name", type(player).__name__)
    return {
        "player": name,
        "model": getattr(s, "model", None) or name,
        "mode": getattr(s, "mode", None) or ("free" if temperature is not None else "scripted"),
        "temperature": temperature,
        "top_p": top_p,
        "seed": int(seed),
        "overrides": {k: extra[k] for k in sorted(extra) if k in SAMPLING_KEYS},
    }


def trial_row(
    game: MatrixGame,
    record: EpisodeRecord,
    listing: str,
    archetype: str,
    k: int,
    t: int,
    seed: int,
    swap: bool,
    infos: list[SamplingInfo],
) -> TrialRow:
    """One trial, classified: the labels and listing positions chosen, underlying actions,
    returns, metric (scored trials only), outcome and fault."""
    steps = {e.player: e for e in record.events if isinstance(e, Step)}
    events = [e for e in record.events if isinstance(e, PolicyEvent)]
    end = record.end
    listings = game.start(seed).state.listings
    seat_info = [infos[1], infos[0]] if swap else infos
    row: dict[str, Any] = {
        "listing": listing,
        "archetype": archetype,
        "k": k,
        "trial": t,
        "episode_seed": seed,
        "rotation": game.params.rotation,
        "seat_of_player": 1 if swap else 0,
        "label_0": "",
        "label_1": "",
        "position_0": "",
        "position_1": "",
        "action_0": "",
        "action_1": "",
        "return_0": "",
        "return_1": "",
        "metric": "",
        "outcome": "scored",
        "fault_kind": "",
        "fault_seat": "",
        "end": end.reason.value if end else "",
        "detail": "",
    }
    for seat in (0, 1):
        info = seat_info[seat]
        row.update(
            {
                f"model_{seat}": info["model"],
                f"mode_{seat}": info["mode"],
                f"temperature_{seat}": info["temperature"],
                f"top_p_{seat}": info["top_p"],
                f"seed_{seat}": info["seed"],
            }
        )
        if seat in steps:
            label = steps[seat].action_id
            row[f"label_{seat}"] = steps[seat].action
            row[f"position_{seat}"] = listings[seat].index(label)
    if end is not None and end.returns is not None:
        row.update(return_0=end.returns[0], return_1=end.returns[1])
    natural = end is not None and end.returns is not None and end.reason.value == "natural" and len(steps) == 2
    if natural:
        i, j = game.underlying_actions(MatrixState(listings, (steps[0].action_id, steps[1].action_id)))
        row.update(action_0=i, action_1=j)
        substituted = [e for e in events if e.verdict == "default"]
        if substituted:  # the policy played a default move: counted, never scored
            kind = fault_of(substituted[0])
            row.update(
                outcome="defaulted",
                fault_seat=substituted[0].player,
                detail=" ".join(substituted[0].detail.split())[:200],
                fault_kind=FaultKind.DEFAULT_APPLIED.value if kind is FaultKind.ILLEGAL else kind.value,
            )
        else:  # answered (after retries, if any): scored
            assert end is not None and end.returns is not None  # a natural end has returns
            r0, r1 = end.returns
            row["metric"] = r0 if ARCHETYPES[archetype].zero_sum else r0 + r1
            if events:
                row["detail"] = f"{len(events)} retried answer(s); first: " + " ".join(events[0].detail.split())[:150]
    else:
        last = events[-1] if events else None
        kind = fault_of(last) if last is not None else FaultKind.ERROR
        row.update(
            fault_kind=kind.value,
            fault_seat="" if last is None else last.player,
            detail="" if last is None else " ".join(last.detail.split())[:200],
            outcome="error" if kind in ERROR_KINDS else kind.value,
        )
    return row


def config_key(config: Any) -> dict[str, Any]:
    """What must match for a directory to be resumed (not how it is computed or written)."""
    skip = {"batch", "level", "alpha", "correction", "max_error_share"}
    return {k: v for k, v in config.model_dump(mode="json").items() if k not in skip}


class TrialLog:
    """``trials.jsonl`` and ``episodes.jsonl`` in an output directory, appended and fsynced one
    batch of trials at a time (episodes first, then the trial rows with the episode file's
    length), so a resumed run keeps exactly the finished trials."""

    def __init__(self, out: Path, config: Any, write_episodes: bool):
        self.out = out
        self.trials_path = out / "trials.jsonl"
        self.episodes_path = out / "episodes.jsonl" if write_episodes else None
        self.done: dict[tuple[str, str, int, int], TrialRow] = {}
        study = out / "study.json"
        if study.exists():
            try:
                saved = json.loads(study.read_text(encoding="utf-8"))
            except ValueError:
                saved = None
            if not isinstance(saved, dict) or saved.get("config_key") != config_key(config):
                raise ConfigError(f"{out} holds a different study (config differs); choose another --out or delete it")
            self._load()
        else:
            atomic_write_text(study, json.dumps({"format": FORMAT, "config_key": config_key(config)}, indent=1))
            for p in (self.trials_path, self.episodes_path):
                if p is not None and p.exists():
                    p.unlink()
        self.trials_fh = open(self.trials_path, "a", encoding="utf-8")
        self.episodes_fh = open(self.episodes_path, "a", encoding="utf-8") if self.episodes_path else None

    def _load(self) -> None:
        if not self.trials_path.exists():
            return
        raw = self.trials_path.read_bytes()
        good = raw[: raw.rfind(b"\n") + 1]  # a torn last line is dropped
        offset = 0
        for line in good.decode("utf-8").splitlines():
            row = json.loads(line)
            self.done[row["listing"], row["archetype"], row["k"], row["trial"]] = row
            offset = max(offset, int(row.pop("_episodes_end", 0)))
        if len(good) != len(raw):
            with open(self.trials_path, "r+b") as fh:
                fh.truncate(len(good))
        if (
            self.episodes_path is not None
            and self.episodes_path.exists()
            and self.episodes_path.stat().st_size > offset
        ):
            with open(self.episodes_path, "r+b") as fh:  # episodes of trials whose row never landed
                fh.truncate(offset)

    def append(self, items: Sequence[tuple[TrialRow, EpisodeRecord]]) -> None:
        """A batch of finished trials: their episodes (one fsync), then their rows (one fsync),
        each row carrying the episode file's length after its own episode."""
        ends = []
        if self.episodes_fh is not None:
            for _, record in items:
                for line in record.lines():
                    self.episodes_fh.write(line + "\n")
                ends.append(self.episodes_fh.tell())
            self.episodes_fh.flush()
            os.fsync(self.episodes_fh.fileno())
        else:
            ends = [0] * len(items)
        append_jsonl_many(self.trials_fh, [{**row, "_episodes_end": end} for (row, _), end in zip(items, ends)])

    def close(self) -> None:
        for fh in (self.trials_fh, self.episodes_fh):
            if fh is not None:
                fh.close()
