"""The one-shot self-play (or cross-play) study: seeded trials per (listing, archetype, k) cell.

One file (over 500 lines) because the study's configuration, runs and tables are one experiment; the games, scoring and equilibria live in their own modules.

Trial t of a cell uses label rotation t mod k (shared by both players), a fresh episode seed
and two separately seeded player instances, so the copies sample independently. By default
every cell runs under both listings: ``shared`` (both copies see the same order) and
``independent`` (each copy its own random order; position-based matching falls to chance).

Honesty rules (see docs/matrix.md):
- greedy self-play (temperature 0: two copies that answer identically by construction) is
  refused unless ``allow_greedy``; then ``summary.json`` says so;
- every trial is classified (scored, unparseable, illegal, error, defaulted) from its episode
  record and the fault kinds of :mod:`arena_core.faults`; only scored trials enter verdicts;
  more than ``max_error_share`` player errors in a cell stops the study (non-zero exit);
- trials are appended to ``trials.jsonl`` (fsynced) under a :class:`~arena_core.outputs.RunLock`;
  an interrupted study resumes without replaying finished trials;
- trials run concurrently: pipelined (:func:`arena_players.batched.play_pipelined`: ``batch``
  trials in flight, each written as it ends, so a provider's backoff holds only its own trial) for
  players that may act on several threads at once (an HTTP player), else ``batch`` trials at a
  time through :func:`arena_players.batched.play_batch` (an MLX player generates them together).

    arena study --player matrix_uniform --trials 60
    arena study --player 'openai:model=...,temperature=1' --archetypes paper --k 2-6 --out runs/llm
    arena study --merge runs/a runs/b --out figures        # one figure per archetype

(One file of ~500 lines: the configuration, the run loop, the outputs and the CLI of one
command; trial classification and the trial log live in ``trials.py``, verdicts in
``scoring.py``, figures in ``figures.py``.)
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import math
import re
import sys
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from arena_core.episode import EpisodeRecord
from arena_core.errors import ArenaError, ConfigError, PlayerError
from arena_core.outputs import RunLock, atomic_write_text
from arena_core.players import preflight_player
from arena_core.policy import IllegalActionPolicy
from arena_core.registry import make_player
from arena_core.seeding import derive_seed
from arena_players.batched import pipelines, play_batch, play_pipelined

from . import MatrixGame  # the registered game: the rules with their text view
from .behaviour import (
    CONCENTRATION_P,
    behaviour_flags,
    behaviour_summary,
    copy_behaviour,
    detection_limits,
    limit_flags,
    listing_contrast,
    shared_listing_flag,
)
from .equilibria import reference_points
from .payoffs import ARCHETYPE_NAMES, ARCHETYPES, K_VALUES
from .scoring import NEAR_WORST, CellScore, control, score_cell
from .trials import FORMAT, OUTCOMES, TRIAL_FIELDS, SamplingInfo, TrialLog, TrialRow, sampling_info, trial_row

__all__ = [
    "FORMAT",
    "OUTCOMES",
    "PAPER_ARCHETYPES",
    "TRIAL_FIELDS",
    "StudyAbortedError",
    "StudyConfig",
    "StudyResult",
    "build_parser",
    "check_sampling",
    "main",
    "run_study",
    "sampling_info",
    "score_rows",
    "trial_row",
    "trial_seeds",
]

#: the paper's seven archetypes (hide-and-seek is the optional zero-sum eighth)
PAPER_ARCHETYPES = tuple(a for a in ARCHETYPE_NAMES if a != "hide_and_seek")
Listing = Literal["shared", "independent"]
LISTINGS: tuple[Listing, ...] = ("shared", "independent")


class StudyAbortedError(PlayerError):
    """Too many player errors (transport, timeouts) in a cell: the study's data would be thin
    or biased, so it stops (one line, non-zero exit) instead of reporting it."""


class StudyConfig(BaseModel):
    """What to run; recorded verbatim in the summary (and checked again on resume)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    player: str = Field(description="registered player spec, e.g. 'matrix_uniform' or 'openai:model=...'")
    opponent: str | None = Field(None, description="a second player spec for cross-play; None: self-play")
    archetypes: tuple[str, ...] = ARCHETYPE_NAMES
    ks: tuple[int, ...] = K_VALUES
    trials: int = Field(
        100, ge=1, description="trials per cell (rounded up to a multiple of k unless round_trials=False)"
    )
    round_trials: bool = True
    seed: int = Field(0, ge=0)
    listings: tuple[Listing, ...] = LISTINGS
    prompt_variant: Literal["symmetric", "asymmetric_cue"] = "symmetric"
    counterpart: Literal["copy", "other"] | None = Field(
        None, description="None: 'copy' in self-play, 'other' in cross-play"
    )
    labels: Literal["letters", "numbers"] | tuple[str, ...] = "letters"
    policy: str = Field(
        "penalize", description="illegal-answer policy; forfeited and defaulted trials are counted and excluded"
    )
    share_instance: bool = Field(False, description="self-play with ONE player instance in both seats (heavy models)")
    allow_greedy: bool = Field(
        False, description="run greedy (temperature 0) self-play although the copies are identical by construction"
    )
    level: float = Field(0.95, gt=0, lt=1)
    alpha: float = Field(0.05, gt=0, lt=1, description="error rate of the multiple-comparison control")
    correction: Literal["holm", "bh"] = "holm"
    max_error_share: float = Field(
        0.1, ge=0, le=1, description="stop when player errors exceed this share of a cell's trials"
    )
    batch: int = Field(64, ge=1, description="trials in flight at once (a batch of them for a batching player)")

    @field_validator("archetypes")
    @classmethod
    def _known_archetypes(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [a for a in value if a not in ARCHETYPES]
        if unknown or not value:
            raise ValueError(
                f"unknown archetypes {unknown}; choose from {', '.join(ARCHETYPE_NAMES)} (or 'paper', 'all')"
            )
        if len(set(value)) != len(value):
            raise ValueError(f"archetypes {list(value)} name one twice")
        return tuple(value)

    @field_validator("ks")
    @classmethod
    def _known_ks(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        bad = [k for k in value if k not in K_VALUES]
        if bad or not value:
            raise ValueError(f"k values {bad} outside {K_VALUES[0]}..{K_VALUES[-1]}")
        if len(set(value)) != len(value):
            raise ValueError(f"k values {list(value)} name a k twice")
        return tuple(value)

    @field_validator("listings")
    @classmethod
    def _some_listing(cls, value: tuple[Listing, ...]) -> tuple[Listing, ...]:
        if not value or len(set(value)) != len(value):
            raise ValueError("listings: one or both of 'shared', 'independent', each once")
        return tuple(value)

    @model_validator(mode="after")
    def _policy_parses(self) -> StudyConfig:
        IllegalActionPolicy.parse(self.policy)
        return self

    @property
    def self_play(self) -> bool:
        return self.opponent is None

    @property
    def resolved_counterpart(self) -> str:
        return self.counterpart or ("copy" if self.self_play else "other")

    @property
    def cell_player(self) -> str:
        return self.player if self.self_play else f"{self.player} vs {self.opponent}"

    def trials_for(self, k: int) -> int:
        """Trials of a cell with k actions: a multiple of k (every rotation equally often)."""
        return math.ceil(self.trials / k) * k if self.round_trials else self.trials

    def warnings(self) -> list[str]:
        """Why the rotation is unbalanced, where it is."""
        out = []
        if not self.round_trials:
            bad = [k for k in self.ks if self.trials % k]
            if bad:
                out.append(
                    f"warning: {self.trials} trials is not a multiple of k = {', '.join(map(str, bad))}: some label "
                    "rotations get one trial more (round_trials=False was asked for)"
                )
        elif any(self.trials % k for k in self.ks):
            out.append(
                f"note: trials rounded up to a multiple of k per cell ({', '.join(f'k={k}: {self.trials_for(k)}' for k in self.ks if self.trials % k)})"
            )
        return out


@dataclass
class StudyResult:
    config: StudyConfig
    cells: list[CellScore]
    out_dir: Path | None
    seconds: float
    sampling: dict[str, Any] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    resumed: int = 0  # trials found done in the output directory and not replayed
    notes: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------- players
def _make_players(config: StudyConfig, factory: Callable[[str, int], Any]) -> tuple[list[Any], list[int]]:
    """Two instances, separately seeded: the copies never share a random stream."""
    seeds = [derive_seed(config.seed, "player", copy) for copy in range(2)]
    if config.share_instance and config.self_play:
        one = factory(config.player, seeds[0])
        return [one, one], seeds
    specs = (config.player, config.player if config.opponent is None else config.opponent)  # None: self-play
    return [factory(spec, seed) for spec, seed in zip(specs, seeds)], seeds


#: below these the copies are all but greedy: independent sampling is not claimed
TEMPERATURE_FLOOR = 0.1
TOP_P_FLOOR = 0.1


def _not_independent(info: SamplingInfo) -> str | None:
    """Why a copy's sampling is (near) greedy or unknown, or None."""
    t, top_p = info["temperature"], info["top_p"]
    if info.get("overrides"):
        keys = ", ".join(f"{k}={v!r}" for k, v in info["overrides"].items())
        return f"extra_body sets sampling ({keys}), so the study cannot tell whether its copies sample independently"
    if isinstance(t, bool) or (t is not None and not isinstance(t, (int, float))):
        return f"temperature {t!r} is not a number"
    if t is not None and t < TEMPERATURE_FLOOR:
        return f"samples at temperature {t:g} (below the floor {TEMPERATURE_FLOOR:g}: all but greedy)"
    if isinstance(top_p, (int, float)) and not isinstance(top_p, bool) and top_p < TOP_P_FLOOR:
        return f"samples at top_p {top_p:g} (below the floor {TOP_P_FLOOR:g}: all but greedy)"
    return None


def check_sampling(config: StudyConfig, infos: list[SamplingInfo]) -> dict[str, Any]:
    """Refuse greedy self-play unless asked for; describe the copies' sampling for the summary.
    Greedy here also means a temperature or top_p below its floor, and sampling set through
    ``extra_body`` (the recorded settings are the ones the requests send)."""
    reasons = [r for r in map(_not_independent, infos) if r]
    greedy = [i for i in infos if i["temperature"] == 0] or reasons
    identical = bool(config.self_play and greedy)
    if identical and not config.allow_greedy:
        why = reasons[0] if reasons else "samples at temperature 0"
        raise ConfigError(
            f"greedy self-play: {infos[0]['model']} {why}, so its two copies may answer identically by "
            "construction; give the player a temperature >= 0.1 (e.g. temperature=1) and top_p >= 0.1 without "
            "sampling keys in extra_body, or pass --allow-greedy to run it anyway"
        )
    note = (
        (
            "the copies decode greedily (temperature 0): they are identical by construction, so matching says nothing "
            "about coordination between independent samples"
        )
        if identical
        else (
            "scripted players are deterministic functions of their own listing"
            if all(i["mode"] == "scripted" for i in infos)
            else "the copies sample independently (separate seeds)"
        )
    )
    return {
        "copies": infos,
        "identical_by_construction": identical,
        "independent_sampling": not identical and not reasons and any(i["temperature"] not in (None, 0) for i in infos),
        "not_independent": reasons,
        "note": note,
    }


# ---------------------------------------------------------------------------- trials
def _game(config: StudyConfig, listing: str, archetype: str, k: int, rotation: int) -> MatrixGame:
    return MatrixGame(
        {
            "archetype": archetype,
            "k": k,
            "rotation": rotation,
            "labels": config.labels,
            "independent_order": listing == "independent",
            "prompt_variant": config.prompt_variant,
            "counterpart": config.resolved_counterpart,
        }
    )


def trial_seeds(seed: int, archetype: str, k: int, trials: int, listing: str = "shared") -> list[int]:
    """The episode seeds of one cell: 63-bit values from one SeedSequence per (seed, listing, archetype, k)."""
    keys = (seed, "trial", archetype, k) if listing == "shared" else (seed, "trial", listing, archetype, k)
    cell = np.random.SeedSequence(derive_seed(*keys))
    return [int(v) for v in cell.generate_state(trials, np.uint64) >> np.uint64(1)]


def run_study(
    config: StudyConfig,
    out_dir: str | Path | None = None,
    *,
    player_factory: Callable[[str, int], Any] | None = None,
    write_episodes: bool = True,
    plot: bool = True,
    progress: Callable[[str], None] | None = None,
) -> StudyResult:
    """Run (or resume) every cell; write trials.jsonl/csv, episodes.jsonl, cells.csv,
    summary.json, study.png and choices.png. Raises ConfigError (greedy self-play, another
    study in ``out_dir``), PlayerError (a failed preflight) or StudyAbortedError."""
    started = time.perf_counter()
    for archetype in config.archetypes:  # the reference points first: a damaged table stops the study before any trial
        for k in config.ks:
            reference_points(archetype, k)
    factory = player_factory or (lambda spec, seed: make_player(spec, seed=seed))
    policy = IllegalActionPolicy.parse(config.policy)
    players, seeds = _make_players(config, factory)
    infos = [sampling_info(p, s) for p, s in zip(players, seeds)]
    sampling = check_sampling(config, infos)
    for n, p in enumerate(dict((id(p), p) for p in players).values()):
        preflight_player(config.player if n == 0 else (config.opponent or config.player), p)
    out = Path(out_dir) if out_dir is not None else None
    notes = config.warnings()
    for note in notes:
        print(note, file=sys.stderr)
    rows: list[TrialRow] = []
    resumed = 0
    lock = RunLock(out) if out is not None else None
    if lock is not None:
        lock.acquire()
    aborted: StudyAbortedError | None = None
    try:  # the lock is released however the run ends (an interrupt included)
        log = TrialLog(out, config, write_episodes) if out is not None else None
        try:
            resumed = _run_cells(config, players, infos, policy, log, rows, progress)
        except StudyAbortedError as exc:
            aborted = exc
        finally:
            if log is not None:
                log.close()
        cells = score_rows(config, rows, infos, sampling)
        result = StudyResult(config, cells, out, time.perf_counter() - started, sampling, resumed=resumed, notes=notes)
        if out is not None:
            result.files = write_outputs(result, rows, plot=plot and aborted is None)
    finally:
        if lock is not None:
            lock.release()
    if aborted is not None:
        raise aborted
    return result


@dataclass(eq=False)
class _Cell:
    """One (listing, archetype, k) cell's games (one per label rotation), trial seeds, and rows so far."""

    listing: str
    archetype: str
    k: int
    games: list[MatrixGame]
    seeds: list[int]
    rows: dict[int, TrialRow]
    todo: list[int]

    @property
    def complete(self) -> bool:
        return len(self.rows) == len(self.seeds)


def _cells(config: StudyConfig, log: TrialLog | None) -> list[_Cell]:
    """Every cell in order, with the trials found finished in ``log`` (errored ones are asked again)."""
    out = []
    for listing in config.listings:
        for archetype in config.archetypes:
            for k in config.ks:
                n = config.trials_for(k)
                cell = _Cell(
                    listing,
                    archetype,
                    k,
                    [_game(config, listing, archetype, k, r) for r in range(k)],
                    trial_seeds(config.seed, archetype, k, n, listing),
                    {},
                    [],
                )
                for t in range(n):
                    row = log.done.get((listing, archetype, k, t)) if log is not None else None
                    if row is not None and row["outcome"] != "error":
                        cell.rows[t] = row
                    else:
                        cell.todo.append(t)
                out.append(cell)
    return out


Played = list[tuple[_Cell, int, EpisodeRecord]]  # trials that ended: their cell, trial index and episode


def _batched(
    config: StudyConfig, cells: list[_Cell], players: list[Any], policy: IllegalActionPolicy
) -> Generator[Played, None, None]:
    """Cell by cell, ``config.batch`` trials at a time through :func:`play_batch` (an MLX player
    generates a batch's decisions together); each batch ends with its slowest trial."""
    for cell in cells:
        for start in range(0, len(cell.todo), config.batch):
            chunk = cell.todo[start : start + config.batch]
            lineups = [_lineup(config, players, cell.k, t) for t in chunk]
            records = play_batch(
                [cell.games[t % cell.k] for t in chunk],
                lineups.__getitem__,
                [cell.seeds[t] for t in chunk],
                policy=policy,
            )
            yield [(cell, t, record) for t, record in zip(chunk, records)]


def _pipelined(
    config: StudyConfig, cells: list[_Cell], players: list[Any], policy: IllegalActionPolicy
) -> Generator[Played, None, None]:
    """Every cell's trials, ``config.batch`` in flight at once across cells, each written as it
    ends (players that may act on several threads at once: an HTTP player)."""
    work = [(cell, t) for cell in cells for t in cell.todo]
    jobs = ((cell.games[t % cell.k], _lineup(config, players, cell.k, t), cell.seeds[t]) for cell, t in work)
    for ended in play_pipelined(jobs, window=config.batch, policy=policy):
        yield [(work[i][0], work[i][1], record) for i, record in ended]


def _swapped(config: StudyConfig, k: int, t: int) -> bool:
    """Cross-play swaps the seats every k trials; self-play never does."""
    return (not config.self_play) and (t // k) % 2 == 1


def _lineup(config: StudyConfig, players: list[Any], k: int, t: int) -> list[Any]:
    return players[::-1] if _swapped(config, k, t) else players


def _run_cells(
    config: StudyConfig,
    players: list[Any],
    infos: list[SamplingInfo],
    policy: IllegalActionPolicy,
    log: TrialLog | None,
    rows: list[TrialRow],
    progress: Callable[[str], None] | None,
) -> int:
    """Play every cell's missing trials (pipelined when every player allows it, else in batches),
    appending each to ``log``; extend ``rows`` with every finished cell, in order. Returns how many
    trials were found done. Raises StudyAbortedError."""
    cells = _cells(config, log)
    resumed = sum(len(c.rows) for c in cells)
    play = _pipelined if pipelines(players) else _batched
    try:
        for cell in cells:
            if cell.complete:  # a resumed cell: nothing to ask
                _finish_cell(config, cell, progress)
        with contextlib.closing(play(config, cells, players, policy)) as played:
            for ended in played:
                finished = []
                for cell, t, record in ended:
                    swap = _swapped(config, cell.k, t)
                    row = trial_row(
                        cell.games[t % cell.k],
                        record,
                        cell.listing,
                        cell.archetype,
                        cell.k,
                        t,
                        cell.seeds[t],
                        swap,
                        infos,
                    )
                    cell.rows[t] = row
                    finished.append((row, record))
                if log is not None:
                    log.append(finished)
                for cell in dict.fromkeys(c for c, _, _ in ended):
                    if cell.complete:
                        _finish_cell(config, cell, progress)
    finally:
        for cell in cells:
            if cell.complete:
                rows.extend(cell.rows[t] for t in range(len(cell.seeds)))
    return resumed


def _finish_cell(config: StudyConfig, cell: _Cell, progress: Callable[[str], None] | None) -> None:
    """A cell's last trial ended: stop the study if too many of its trials ended in player errors."""
    cell_list = [cell.rows[t] for t in range(len(cell.seeds))]
    n = len(cell_list)
    errors = sum(r["outcome"] == "error" for r in cell_list)
    where = f"{cell.listing}/{cell.archetype}/k={cell.k}"
    if errors > config.max_error_share * n:
        kinds = sorted({r["fault_kind"] for r in cell_list if r["outcome"] == "error"})
        sample = next(r["detail"] for r in cell_list if r["outcome"] == "error")
        raise StudyAbortedError(
            f"{errors} of {n} trials in {where} ended in player errors ({', '.join(kinds)}), "
            f"over the {config.max_error_share:.0%} limit; first: {sample[:120]}"
        )
    if progress:
        progress(
            f"{cell.listing:11s} {cell.archetype:18s} k={cell.k:2d}  {n} trials, {sum(r['outcome'] == 'scored' for r in cell_list)} scored"
        )


def score_rows(
    config: StudyConfig, rows: Sequence[TrialRow], infos: list[SamplingInfo], sampling: dict[str, Any]
) -> list[CellScore]:
    """Score every cell present in ``rows`` and apply the study-wide error control. Each cell
    is flagged for its copies' behaviour (position-driven, deterministic), for the verdicts its
    scored trials are too few to show, and, once a copy was position-driven under independent
    listings, every shared-listing cell too (:mod:`.behaviour`)."""
    by_cell: dict[tuple[str, str, int], list[TrialRow]] = {}
    for r in rows:
        by_cell.setdefault((r["listing"], r["archetype"], int(r["k"])), []).append(r)
    independent = [key for key in by_cell if key[0] == "independent"]
    threshold = CONCENTRATION_P / max(1, 2 * len(independent))  # Bonferroni over the copies and cells tested
    copies = {
        key: [copy_behaviour(cell_rows, key[2], key[0], c, threshold=threshold) for c in (0, 1)]
        for key, cell_rows in by_cell.items()
    }
    driven = [key for key in independent if any(c.position_driven for c in copies[key])]
    cells = []
    for (listing, archetype, k), cell_rows in by_cell.items():
        count = {o: sum(r["outcome"] == o for r in cell_rows) for o in OUTCOMES}
        values = [float(r["metric"]) for r in cell_rows if r["outcome"] == "scored"]
        flags = []
        if sampling.get("identical_by_construction"):
            flags.append("greedy copies: identical by construction")
        bad = count["unparseable"] + count["illegal"]
        if bad > 0.2 * len(cell_rows):
            flags.append(
                f"{bad} of {len(cell_rows)} trials ended on an unreadable or illegal answer (the other copy may not have "
                "been asked): verdict rests on the readable rest"
            )
        if count["defaulted"]:
            flags.append(f"{count['defaulted']} defaulted trials excluded")
        behaviour = copies[listing, archetype, k]
        flags.extend(behaviour_flags(behaviour))
        if listing == "shared" and driven:
            flags.append(shared_listing_flag(len(independent), len(driven)))
        limits = detection_limits(archetype, k, config.level)
        flags.extend(limit_flags(limits, len(values)))
        cells.append(
            score_cell(
                config.cell_player,
                reference_points(archetype, k),
                values,
                listing=listing,
                trials=len(cell_rows),
                unparseable=count["unparseable"],
                illegal=count["illegal"],
                errors=count["error"],
                defaulted=count["defaulted"],
                level=config.level,
                flags=flags,
                behaviour=[b.to_json() for b in behaviour],
                limits=limits,
            )
        )
    return control(cells, alpha=config.alpha, correction=config.correction)


# ---------------------------------------------------------------------------- outputs
CELL_FIELDS = (
    "player",
    "listing",
    "archetype",
    "k",
    "metric",
    "trials",
    "scored",
    "unparseable",
    "illegal",
    "errors",
    "defaulted",
    "mean",
    "low",
    "high",
    "score",
    "score_low",
    "score_high",
    "worst_cell",
    "best_cell",
    "baseline",
    "uniform",
    "symmetric_ceiling",
    "vs_nash",
    "p_nash",
    "vs_uniform",
    "p_uniform",
    "vs_ceiling",
    "p_ceiling",
    "verdict",
    "near_worst",
    "min_trials_above",
    "min_trials_below",
    "min_trials_near_worst",
    "position_driven",
    "deterministic",
    "flags",
)


def finite_json(obj: Any) -> Any:
    """``obj`` with every non-finite float replaced by None (so the JSON has no bare NaN)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): finite_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite_json(v) for v in obj]
    if isinstance(obj, np.generic):
        return finite_json(obj.item())
    return obj


def write_outputs(result: StudyResult, rows: Sequence[TrialRow], *, plot: bool = True) -> dict[str, str]:
    out = result.out_dir
    if out is None:
        raise ValueError("write_outputs needs a result with an output directory")
    files = {
        "cells": str(out / "cells.csv"),
        "summary": str(out / "summary.json"),
        "trials": str(out / "trials.csv"),
        "trials_log": str(out / "trials.jsonl"),
    }
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(TRIAL_FIELDS)
    for r in rows:
        writer.writerow(["" if r.get(f) is None else r.get(f, "") for f in TRIAL_FIELDS])
    atomic_write_text(out / "trials.csv", buf.getvalue())
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(CELL_FIELDS)
    for c in result.cells:
        d = c.to_json()
        writer.writerow(["; ".join(d[f]) if f == "flags" else ("" if d[f] is None else d[f]) for f in CELL_FIELDS])
    atomic_write_text(out / "cells.csv", buf.getvalue())
    outcomes = {o: sum(r["outcome"] == o for r in rows) for o in OUTCOMES}
    summary = {
        "format": FORMAT,
        "config": result.config.model_dump(mode="json"),
        "self_play": result.config.self_play,
        "counterpart": result.config.resolved_counterpart,
        "sampling": result.sampling,
        "seconds": round(result.seconds, 3),
        "resumed_trials": result.resumed,
        "notes": result.notes,
        "outcomes": outcomes,
        "error_control": {
            "procedure": "Holm (family-wise error rate)"
            if result.config.correction == "holm"
            else "Benjamini-Hochberg (false discovery rate)",
            "alpha": result.config.alpha,
            "family": f"{sum(len(c.comparisons) for c in result.cells)} comparisons: every cell against the Nash baseline, uniform play and the symmetric-play ceiling",
            "headline": "'above' = above both the Nash baseline and uniform play; 'below' = below both; interval and p-values from arena_core.stats.cluster_mean (one cluster per trial, metric range as bounds)",
        },
        "near_worst_threshold": NEAR_WORST,
        "behaviour": behaviour_summary(result.cells),
        "listing_contrast": listing_contrast(result.cells),
        "readable": {
            "scored": sum(c.scored for c in result.cells),
            "trials": sum(c.trials for c in result.cells),
        },
        "cells": [c.to_json() for c in result.cells],
        "reference_points": [
            reference_points(a, k).to_json() for a, k in dict.fromkeys((c.archetype, c.k) for c in result.cells)
        ],
    }
    atomic_write_text(out / "summary.json", json.dumps(finite_json(summary), indent=1, allow_nan=False))
    if plot and result.cells:
        from .figures import plot_choices, plot_study

        files["plot"] = str(
            plot_study([c.to_json() for c in result.cells], out / "study.png", title=result.config.cell_player)
        )
        files["choices"] = str(plot_choices(rows, out / "choices.png", title=result.config.cell_player))
    if (out / "episodes.jsonl").exists():
        files["episodes"] = str(out / "episodes.jsonl")
    return files


# ---------------------------------------------------------------------------- CLI
def _parse_ks(text: str) -> tuple[int, ...]:
    ks: list[int] = []
    for part in _entries("--k", text):
        lo, dash, hi = part.strip().partition("-")
        try:
            ks.extend(range(int(lo), int(hi) + 1) if dash else [int(lo)])
        except ValueError:
            raise ValueError(f"--k {text!r}: use '2-10', '2,3,5' or '2-4,8'") from None
    return tuple(ks)


def _parse_archetypes(text: str) -> tuple[str, ...]:
    t = text.strip()
    if t == "all":
        return ARCHETYPE_NAMES
    if t == "paper":
        return PAPER_ARCHETYPES
    return _entries("--archetypes", text)


def _entries(option: str, text: str) -> tuple[str, ...]:
    """A comma list's entries; an empty one is refused, never dropped."""
    parts = tuple(a.strip() for a in text.split(","))
    if not all(parts):
        raise ValueError(f"{option} {text!r}: an entry is empty (two commas, or one at an end)")
    return parts


def default_out_dir(config: StudyConfig) -> Path:
    """``runs/study/<player>`` (the spec made safe for a directory name)."""
    slug = re.sub(r"[^A-Za-z0-9._=-]+", "_", config.cell_player).strip("_")[:80] or "study"
    return Path("runs") / "study" / slug


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="arena study",
        description="One-shot matrix-game study: self-play scored against Nash, uniform play and the symmetric-play ceiling.",
    )
    p.add_argument("--player", help="registered player spec, e.g. matrix_uniform or 'openai:model=...,temperature=1'")
    p.add_argument("--opponent", default=None, help="second player spec for cross-play (default: self-play)")
    p.add_argument(
        "--archetypes",
        default="all",
        help=f"'all', 'paper' (the 7 without hide-and-seek) or a comma list of {', '.join(ARCHETYPE_NAMES)}",
    )
    p.add_argument("--k", default="2-10", help="k values: '2-10', '2,3,5' or '2-4,8'")
    p.add_argument("--trials", type=int, default=100, help="trials per cell, rounded up to a multiple of k")
    p.add_argument(
        "--no-round-trials", action="store_true", help="keep --trials as given (a warning names the unbalanced k)"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--listings", default="shared,independent", help="'shared', 'independent' or both (default)")
    p.add_argument("--independent-order", action="store_true", help="only the independent-listing condition")
    p.add_argument("--prompt", dest="prompt_variant", choices=["symmetric", "asymmetric_cue"], default="symmetric")
    p.add_argument(
        "--counterpart", choices=["copy", "other"], default=None, help="default: copy (self-play), other (cross-play)"
    )
    p.add_argument("--labels", default="letters", help="letters, numbers, or a comma list of at least k labels")
    p.add_argument("--policy", default="penalize", help="illegal-answer policy: penalize, default, retry:K, ...")
    p.add_argument(
        "--share-instance", action="store_true", help="self-play with one player instance in both seats (heavy models)"
    )
    p.add_argument(
        "--allow-greedy",
        action="store_true",
        help="run greedy (temperature 0) self-play; the copies are then identical by construction",
    )
    p.add_argument("--level", type=float, default=0.95, help="interval level")
    p.add_argument("--alpha", type=float, default=0.05, help="error rate of the multiple-comparison control")
    p.add_argument(
        "--correction",
        choices=["holm", "bh"],
        default="holm",
        help="holm (family-wise error) or bh (false discovery rate)",
    )
    p.add_argument(
        "--max-error-share",
        type=float,
        default=0.1,
        help="stop when player errors exceed this share of a cell's trials",
    )
    p.add_argument(
        "--batch", type=int, default=64, help="trials played together (an LLM player sends them concurrently)"
    )
    p.add_argument(
        "--out", default=None, help="output directory (default runs/study/<player>); an unfinished study there resumes"
    )
    p.add_argument(
        "--merge", nargs="+", metavar="RUN_DIR", help="merge finished runs into one figure per archetype (in --out)"
    )
    p.add_argument("--no-plot", action="store_true")
    p.add_argument("--no-episodes", action="store_true", help="skip episodes.jsonl (trials are always written)")
    p.add_argument("--quiet", action="store_true")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Study a player on one-shot matrix games against their Nash equilibria.

    The ``arena study`` command: returns the exit status (2 bad input, 1 the study stopped)."""
    args = build_parser().parse_args(argv)
    if args.merge:
        from .figures import merge_runs
        from .merge import merge_tables

        try:
            out_merged = args.out or "runs/study/merged"
            archetypes = _parse_archetypes(args.archetypes)
            paths = merge_tables(
                args.merge, out_merged, archetypes=archetypes, alpha=args.alpha, correction=args.correction
            )
            paths += merge_runs(args.merge, out_merged, archetypes=archetypes)
        except (ValueError, OSError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(f"wrote {', '.join(str(p) for p in paths)}")
        return 0
    if not args.player:
        print("error: --player is required (or --merge RUN_DIR ...)", file=sys.stderr)
        return 2
    labels: Any = (
        args.labels if args.labels in ("letters", "numbers") else tuple(x.strip() for x in args.labels.split(","))
    )
    try:
        # the entries are strings; StudyConfig checks they are listings (one line, exit 2, otherwise)
        listings: tuple[Any, ...] = (
            ("independent",) if args.independent_order else _entries("--listings", args.listings)
        )
        config = StudyConfig(
            player=args.player,
            opponent=args.opponent,
            archetypes=_parse_archetypes(args.archetypes),
            ks=_parse_ks(args.k),
            trials=args.trials,
            round_trials=not args.no_round_trials,
            seed=args.seed,
            listings=listings,
            prompt_variant=args.prompt_variant,
            counterpart=args.counterpart,
            labels=labels,
            policy=args.policy,
            level=args.level,
            alpha=args.alpha,
            correction=args.correction,
            max_error_share=args.max_error_share,
            share_instance=args.share_instance,
            allow_greedy=args.allow_greedy,
            batch=args.batch,
        )
    except (ValueError, TypeError) as exc:
        print(f"error: {_one_line(exc)}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else default_out_dir(config)
    try:
        result = run_study(
            config,
            out,
            write_episodes=not args.no_episodes,
            plot=not args.no_plot,
            progress=None if args.quiet else print,
        )
    except StudyAbortedError as exc:
        print(f"error: study stopped: {_one_line(exc)} (partial results in {out})", file=sys.stderr)
        return 1
    except PlayerError as exc:
        print(f"error: {_one_line(exc)}", file=sys.stderr)
        return 1
    except ArenaError as exc:
        print(f"error: {_one_line(exc)}", file=sys.stderr)
        return 2
    if not args.quiet:
        for c in result.cells:
            s = "   n/a" if c.score is None else f"{c.score:6.3f}"
            print(
                f"{c.listing:11s} {c.archetype:18s} k={c.k:2d} n={c.scored:4d}/{c.trials:<4d} s={s}  nash {c.vs_nash:17s} "
                f"uniform {c.vs_uniform:17s} => {c.verdict}{f'  ({len(c.flags)} flags)' if c.flags else ''}"
            )
    resumed = f" ({result.resumed} resumed)" if result.resumed else ""
    print(
        f"{len(result.cells)} cells{resumed} in {result.seconds:.1f} s; {result.config.correction} at alpha {config.alpha}; wrote {out}"
    )
    behaviour = behaviour_summary(result.cells)
    if behaviour["position_driven"]:
        print(f"warning: {behaviour['note']}", file=sys.stderr)
    trials, scored = sum(c.trials for c in result.cells), sum(c.scored for c in result.cells)
    if trials and not scored:
        print(
            f"error: not one of {trials} trials could be scored (answers unreadable, illegal or errors; see "
            f"{out / 'trials.csv'}): the study has no data",
            file=sys.stderr,
        )
        return 1
    return 0


def _one_line(exc: BaseException) -> str:
    text = str(exc)
    if hasattr(exc, "errors"):  # pydantic ValidationError: the first message only
        try:
            first = exc.errors()[0]
            text = f"{'.'.join(str(p) for p in first.get('loc', ()))}: {first.get('msg')}"
        except Exception:
            pass
    return " ".join(text.split())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
