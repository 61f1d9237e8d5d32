"""The one-shot self-play (or cross-play) study: N seeded trials per (archetype, k) cell.

Trial t of a cell uses label rotation t mod k (shared by both players), a fresh episode seed,
and two separately seeded player instances, so the copies sample independently. Every trial is
recorded as an episode (JSON lines); the per-cell table, a JSON summary and a plot are written.

    python -m arena_games.matrix.study --player matrix_uniform --trials 200 --out runs/uniform
    python -m arena_games.matrix.study --player mlx:model=... --opponent random --k 2-5 ...
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from arena_core.match import Match
from arena_core.policy import IllegalActionPolicy
from arena_core.registry import make_player
from arena_core.runner import play_match
from arena_core.seeding import derive_seed

from .equilibria import reference_points
from .payoffs import ARCHETYPE_NAMES, ARCHETYPES, K_VALUES
from .rules import MatrixGame
from .scoring import NEAR_WORST, CellScore, score_cell


class StudyConfig(BaseModel):
    """What to run; recorded verbatim in the summary."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    player: str = Field(description="registered player spec, e.g. 'matrix_uniform' or 'mlx:model=...'")
    opponent: str | None = Field(None, description="a second player spec for cross-play; None: self-play")
    archetypes: tuple[str, ...] = ARCHETYPE_NAMES
    ks: tuple[int, ...] = K_VALUES
    trials: int = Field(100, ge=1)
    seed: int = Field(0, ge=0)
    independent_order: bool = False
    prompt_variant: Literal["symmetric", "asymmetric_cue"] = "symmetric"
    counterpart: Literal["copy", "other"] | None = Field(None, description="None: 'copy' in self-play, 'other' in cross-play")
    labels: Literal["letters", "numbers"] | tuple[str, ...] = "letters"
    policy: str = Field("penalize", description="illegal-answer policy (forfeited trials are excluded from welfare and counted)")
    share_instance: bool = Field(
        False,
        description="self-play with ONE player instance in both seats (for heavy models); the copies then sample "
        "independently only if the player draws from decision.rng (keyed by seat) or samples afresh per call",
    )
    level: float = Field(0.95, gt=0, lt=1)
    resamples: int = Field(4000, ge=100)

    @field_validator("archetypes")
    @classmethod
    def _known_archetypes(cls, value):
        unknown = [a for a in value if a not in ARCHETYPES]
        if unknown or not value:
            raise ValueError(f"unknown archetypes {unknown}; choose from {', '.join(ARCHETYPE_NAMES)}")
        return tuple(value)

    @field_validator("ks")
    @classmethod
    def _known_ks(cls, value):
        bad = [k for k in value if k not in K_VALUES]
        if bad or not value:
            raise ValueError(f"k values {bad} outside {K_VALUES[0]}..{K_VALUES[-1]}")
        return tuple(value)

    @model_validator(mode="after")
    def _policy_parses(self) -> "StudyConfig":
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


@dataclass
class StudyResult:
    config: StudyConfig
    cells: list[CellScore]
    out_dir: Path | None
    seconds: float
    files: dict[str, str] = field(default_factory=dict)


TRIAL_FIELDS = ("archetype", "k", "trial", "episode_seed", "rotation", "seat_of_player", "label_0", "label_1",
                "action_0", "action_1", "return_0", "return_1", "metric", "end")


def _games(config: StudyConfig, archetype: str, k: int) -> list[MatrixGame]:
    return [
        MatrixGame(
            {
                "archetype": archetype,
                "k": k,
                "rotation": r,
                "labels": config.labels,
                "independent_order": config.independent_order,
                "prompt_variant": config.prompt_variant,
                "counterpart": config.resolved_counterpart,
            }
        )
        for r in range(k)
    ]


def trial_seeds(seed: int, archetype: str, k: int, trials: int) -> list[int]:
    """The episode seeds of one cell: 63-bit values from one SeedSequence per (seed, archetype, k)."""
    cell = np.random.SeedSequence(derive_seed(seed, "trial", archetype, k))
    return [int(v) for v in cell.generate_state(trials, np.uint64) >> np.uint64(1)]


def _make_players(config: StudyConfig, player_factory: Callable[[str, int], Any]) -> tuple[Any, Any]:
    """Two instances, separately seeded: the copies never share a random stream."""
    if config.share_instance and config.self_play:
        one = player_factory(config.player, derive_seed(config.seed, "player", 0))
        return one, one
    specs = (config.player, config.player if config.self_play else config.opponent)
    return tuple(player_factory(spec, derive_seed(config.seed, "player", copy)) for copy, spec in enumerate(specs))  # type: ignore[return-value]


def run_study(
    config: StudyConfig,
    out_dir: str | Path | None = None,
    *,
    player_factory: Callable[[str, int], Any] | None = None,
    write_episodes: bool = True,
    plot: bool = True,
    progress: Callable[[str], None] | None = None,
) -> StudyResult:
    """Run every cell; write episodes.jsonl, trials.csv, cells.csv, summary.json, study.png."""
    started = time.perf_counter()
    factory = player_factory or (lambda spec, seed: make_player(spec, seed=seed))
    policy = IllegalActionPolicy.parse(config.policy)
    players = _make_players(config, factory)
    names = [getattr(p, "name", type(p).__name__) for p in players]
    out = Path(out_dir) if out_dir is not None else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    episodes_fh = open(out / "episodes.jsonl", "w", encoding="utf-8") if (out is not None and write_episodes) else None
    trials_fh = open(out / "trials.csv", "w", encoding="utf-8", newline="") if out is not None else None
    trials_csv = csv.writer(trials_fh) if trials_fh else None
    if trials_csv:
        trials_csv.writerow(TRIAL_FIELDS)
    sink = (lambda line: episodes_fh.write(line.model_dump_json() + "\n")) if episodes_fh else None
    cells: list[CellScore] = []
    try:
        for archetype in config.archetypes:
            for k in config.ks:
                ref = reference_points(archetype, k)
                games = _games(config, archetype, k)
                values: list[float] = []
                for t, seed in enumerate(trial_seeds(config.seed, archetype, k, config.trials)):
                    game = games[t % k]
                    # cross-play alternates seats every full rotation cycle; self-play copies are interchangeable
                    swap = (not config.self_play) and (t // k) % 2 == 1
                    seated = (players[1], players[0]) if swap else players
                    match = Match(game, seed, policy=policy, players=[names[1], names[0]] if swap else names, sink=sink)
                    play_match(match, seated)
                    row = _trial_row(game, match, archetype, k, t, seed, swap)
                    if row["metric"] != "":
                        values.append(row["metric"])
                    if trials_csv:
                        trials_csv.writerow([row[f] for f in TRIAL_FIELDS])
                cell = score_cell(config.cell_player, ref, values, trials=config.trials, level=config.level,
                                  resamples=config.resamples, seed=config.seed)
                cells.append(cell)
                if progress:
                    progress(f"{archetype:18s} k={k:2d}  mean {cell.mean:7.3f} [{cell.low:.3f}, {cell.high:.3f}]  s={cell.score:.3f}  {cell.verdict} (baseline {cell.baseline:.3f})")
    finally:
        for fh in (episodes_fh, trials_fh):
            if fh is not None:
                fh.close()
    result = StudyResult(config, cells, out, time.perf_counter() - started)
    if out is not None:
        result.files = write_outputs(result, plot=plot)
        if write_episodes:
            result.files["episodes"] = str(out / "episodes.jsonl")
        result.files["trials"] = str(out / "trials.csv")
    return result


def _trial_row(game: MatrixGame, match: Match, archetype: str, k: int, t: int, seed: int, swap: bool) -> dict:
    steps = {s.player: s for s in match.record.steps}
    natural = match.end is not None and match.end.returns is not None and match.end.reason.value == "natural"
    row: dict[str, Any] = {
        "archetype": archetype, "k": k, "trial": t, "episode_seed": seed, "rotation": game.params.rotation,
        "seat_of_player": 1 if swap else 0,
        "label_0": steps[0].action if 0 in steps else "", "label_1": steps[1].action if 1 in steps else "",
        "action_0": "", "action_1": "", "return_0": "", "return_1": "", "metric": "",
        "end": match.end.reason.value if match.end else "",
    }
    if natural:
        i, j = game.underlying_actions(match.position.state)
        r0, r1 = match.end.returns
        row.update(action_0=i, action_1=j, return_0=r0, return_1=r1)
        row["metric"] = r0 if ARCHETYPES[archetype].zero_sum else r0 + r1
    elif match.end is not None and match.end.returns is not None:
        row.update(return_0=match.end.returns[0], return_1=match.end.returns[1])
    return row


# ---------------------------------------------------------------------------- outputs
CELL_FIELDS = ("player", "archetype", "k", "metric", "trials", "scored", "invalid", "mean", "low", "high", "score",
               "score_low", "score_high", "worst_cell", "best_cell", "baseline", "baseline_score", "verdict",
               "near_worst", "symmetric_ceiling", "uniform")


def write_outputs(result: StudyResult, *, plot: bool = True) -> dict[str, str]:
    out = result.out_dir
    if out is None:
        raise ValueError("write_outputs needs a result with an output directory")
    files = {"cells": str(out / "cells.csv"), "summary": str(out / "summary.json")}
    with open(out / "cells.csv", "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(CELL_FIELDS)
        for c in result.cells:
            d = c.to_json()
            writer.writerow([d[f] for f in CELL_FIELDS])
    summary = {
        "format": "arena.matrix-study/1",
        "config": result.config.model_dump(mode="json"),
        "self_play": result.config.self_play,
        "counterpart": result.config.resolved_counterpart,
        "seconds": round(result.seconds, 3),
        "near_worst_threshold": NEAR_WORST,
        "cells": [c.to_json() for c in result.cells],
        "reference_points": [reference_points(c.archetype, c.k).to_json() for c in result.cells],
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=float), encoding="utf-8")
    if plot:
        files["plot"] = str(plot_study(result.cells, out / "study.png", title=result.config.cell_player))
    return files


def plot_study(cells: Sequence[CellScore], path: str | Path, *, title: str = "") -> Path:
    """Normalised score against k per archetype, with the Nash baseline and the worst joint cell."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    archetypes = list(dict.fromkeys(c.archetype for c in cells))
    cols = min(4, len(archetypes))
    rows = (len(archetypes) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 3.0 * rows), squeeze=False, sharey=True)
    for ax, archetype in zip(axes.ravel(), archetypes):
        mine = sorted((c for c in cells if c.archetype == archetype), key=lambda c: c.k)
        ks = [c.k for c in mine]
        ax.axhspan(0, NEAR_WORST, color="0.9", label=f"near worst (s ≤ {NEAR_WORST})")
        ax.axhline(0, color="black", lw=1, label="worst joint cell")
        ax.plot(ks, [c.baseline_score for c in mine], "r--", lw=1.2, label="Nash baseline")
        ax.errorbar(ks, [c.score for c in mine], yerr=[[c.score - c.score_low for c in mine], [c.score_high - c.score for c in mine]],
                    fmt="o-", color="tab:blue", ms=4, capsize=2, label="measured s")
        ax.set_title(ARCHETYPES[archetype].title, fontsize=9)
        ax.set_xlabel("k")
        ax.set_xticks(ks)
        ax.set_ylim(-0.05, 1.05)
    for ax in axes.ravel()[len(archetypes):]:
        ax.axis("off")
    axes[0][0].set_ylabel("normalised score s")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8, frameon=False)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.06, 1, 0.96))
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# ---------------------------------------------------------------------------- CLI
def _parse_ks(text: str) -> tuple[int, ...]:
    ks: list[int] = []
    for part in text.split(","):
        lo, dash, hi = part.strip().partition("-")
        ks.extend(range(int(lo), int(hi) + 1) if dash else [int(lo)])
    return tuple(ks)


def _parse_archetypes(text: str) -> tuple[str, ...]:
    return ARCHETYPE_NAMES if text.strip() == "all" else tuple(a.strip() for a in text.split(",") if a.strip())


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m arena_games.matrix.study", description="One-shot matrix-game study scored against Nash.")
    p.add_argument("--player", required=True, help="registered player spec, e.g. matrix_uniform or 'mlx:model=...'")
    p.add_argument("--opponent", default=None, help="second player spec for cross-play (default: self-play)")
    p.add_argument("--archetypes", default="all", help=f"'all' or a comma list of {', '.join(ARCHETYPE_NAMES)}")
    p.add_argument("--k", default="2-10", help="k values: '2-10', '2,3,5' or '2-4,8'")
    p.add_argument("--trials", type=int, default=100, help="trials per (archetype, k) cell")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--independent-order", action="store_true", help="each player sees its own random listing order")
    p.add_argument("--prompt", dest="prompt_variant", choices=["symmetric", "asymmetric_cue"], default="symmetric")
    p.add_argument("--counterpart", choices=["copy", "other"], default=None, help="default: copy (self-play), other (cross-play)")
    p.add_argument("--labels", default="letters", help="letters, numbers, or a comma list of at least k labels")
    p.add_argument("--policy", default="penalize", help="illegal-answer policy: penalize, default, retry:K, ...")
    p.add_argument("--share-instance", action="store_true", help="self-play with one player instance in both seats (heavy models)")
    p.add_argument("--level", type=float, default=0.95, help="bootstrap interval level")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--no-plot", action="store_true")
    p.add_argument("--no-episodes", action="store_true", help="skip episodes.jsonl (trials.csv is always written)")
    p.add_argument("--quiet", action="store_true")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry (``arena study`` will call this): returns the exit status."""
    args = build_parser().parse_args(argv)
    labels: Any = args.labels if args.labels in ("letters", "numbers") else tuple(x.strip() for x in args.labels.split(","))
    try:
        config = StudyConfig(
            player=args.player, opponent=args.opponent, archetypes=_parse_archetypes(args.archetypes), ks=_parse_ks(args.k),
            trials=args.trials, seed=args.seed, independent_order=args.independent_order, prompt_variant=args.prompt_variant,
            counterpart=args.counterpart, labels=labels, policy=args.policy, level=args.level,
            share_instance=args.share_instance,
        )
    except (ValueError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    result = run_study(config, args.out, write_episodes=not args.no_episodes, plot=not args.no_plot,
                       progress=None if args.quiet else print)
    print(f"{len(result.cells)} cells x {config.trials} trials in {result.seconds:.1f} s; wrote {', '.join(sorted(result.files.values()))}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
