"""The local-model arena loop: a baseline tournament, self-play GRPO with a snapshot pool, the
re-tournament, and a before/after report, from one config::

    python -m arena_train.loop examples/textarena_loop.toml [--out DIR] [--seeds 0,1,2]

The stages are functions passing typed results: :func:`prepare_training` (a :class:`Training`
to run, or None), :func:`seating` (the :class:`Seating` of both tournaments), :func:`play_phase`
(a tournament's games), :func:`train_seed` (a :class:`Trained`, with the :class:`ExactCurve`
filled a row per step), :func:`seed_result`; :func:`run_seed` composes them, :func:`run_loop`
runs the seeds and :func:`write_report` the report. The config is :mod:`arena_train.loop_config`,
the tournaments and their measures :mod:`arena_train.loop_tournaments`, the rendering
:mod:`arena_train.loop_report`.

For every seed: a GRPO trainer is built (the untrained model is saved as its step-0
checkpoint), the model -- a ``checkpoint`` entrant at the training temperature, i.e. the
sampling policy GRPO optimises -- plays a round-robin tournament against the fixed opponents,
GRPO trains it against a pool of frozen snapshots of itself (no fixed opponent is in the
pool), and the trained checkpoint plays the same tournament again (same deals, same seats).
The report gives, per fixed opponent, the model's win rate before and after with a Wilson
interval (games taken as independent) and a deal-clustered interval (:func:`arena_core.stats.cluster_mean`),
and the difference after - before paired by deal (:func:`arena_core.stats.paired_bootstrap`).
Both tournaments are also rated among all their entrants by the tournament's own machinery
(:func:`arena_tournament.ratings.summarize`: Plackett-Luce ratings with deal-clustered bootstrap
intervals); the re-tournament seats the stock model (``stock``, step 0) beside the trained one
(``rl``), so its ratings put stock, RL'd, the generalist and the scripted players on one scale.

An optional frontier seat (``[tournament.frontier]``): an OpenAI-compatible player for a real
model, cached and capped, in both tournaments and never in training; without its key or
endpoint in the environment it is skipped with one line.

Resume: rerunning the same command on a partly written ``--out`` continues it. A seed with a
``result.json`` is skipped; a tournament continues through the tournament runner's own resume
(games already recorded are kept); an unfinished training resumes from its latest checkpoint
(the trainer resumes exactly; steps after that checkpoint are replayed). ``loop.json`` holds the
digest of the config (seeds and output left out, so more seeds may be added later); a directory
written by another config, or by something else, is refused with one line.

Once per run, a plumbing check: the stock tiny model, served by a local ``mlx_lm.server`` and
played through the OpenAI-compatible player (free text through the game's text view), plays a
small tournament against the same opponents; its faults are counted apart (it is a
random-weight model: its games say little).

``analysis`` (optional) names a game's exact analysis, ``"package.module:function"`` taking the
policy's ``distributions(menus)`` and returning named values; it is called before training, at
every step (the training curve) and after. For ``textarena/KuhnPoker-v0`` it is
``arena_games.textarena.kuhn_v0:exact_values``: the model's exact win probability against the
equilibrium bot and the random player, and its exploitability. (The trainer package imports no
game package: the game supplies the analysis, named in the config.)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena_core.errors import ArenaError, ConfigError
from arena_core.playerspec import PlayerSpec
from arena_core.registry import Progress
from arena_core.seeding import derive_seed

from .loop_config import (
    Analysis,
    Log,
    LoopConfig,
    frontier_options,
    frontier_spec,
    grpo_config,
    load_config,
    loop_identity,
    parse_loop_config,
    pin_model,
    resolve_analysis,
)
from .loop_report import plot_curves, report_markdown
from .loop_tournaments import (
    difference,
    entrant,
    faults_of,
    head_to_head,
    opponent_names,
    rate_tournament,
    run_tournament_games,
    tokenizer_coverage,
    win_rate,
)

if TYPE_CHECKING:
    from arena_tournament.config import RatingOptions
    from arena_tournament.results import GameResult
    from arena_tournament.schedule import Entrant

    from .grpo import GRPOSession
    from .run import RunDir

__all__ = ["LoopConfig", "frontier_options", "load_config", "main", "parse_loop_config", "run_loop", "run_seed"]

#: entrant names: the model at step 0 (both tournaments) and the trained model (the re-tournament)
STOCK, RL, FRONTIER = "stock", "rl", "frontier"


# ---------------------------------------------------------------------- the stages of a seed
@dataclass(frozen=True)
class Seating:
    """Who plays a seed's tournaments: the fixed opponents (and the frontier seat when seated),
    each with its name and its label in the report, and the model's checkpoint entrants."""

    seed: int  # the tournaments' seed (their deals, the entrants' seeds, the ratings' bootstrap)
    ratings: RatingOptions
    opponents: list[Entrant]
    names: list[str]
    labels: list[str]
    run_dir: Path  # the training's run directory, whose checkpoints the model entrants play
    temperature: float | str

    def model(self, name: str, step: int) -> Entrant:
        """The model at ``step`` (its checkpoint) as an entrant."""
        options: dict[str, Any] = {"run": str(self.run_dir), "temperature": self.temperature, "step": step}
        return entrant(name, PlayerSpec("checkpoint", options), derive_seed(self.seed, "model"))


def seating(cfg: LoopConfig, seed: int, run_dir: Path, frontier: Mapping[str, Any] | None) -> Seating:
    from arena_tournament.config import RatingOptions

    t_seed = derive_seed(cfg.tournament.seed, "loop", seed)
    ratings = RatingOptions(bootstrap=cfg.tournament.bootstrap, seed=derive_seed(t_seed, "ratings") % 2**31)
    specs = cfg.tournament.opponents
    names = opponent_names(specs)
    opponents = [entrant(n, o, derive_seed(t_seed, "opponent", i)) for i, (n, o) in enumerate(zip(names, specs))]
    labels = [str(o) for o in specs]
    if frontier is not None and cfg.tournament.frontier is not None:
        opponents.append(entrant(FRONTIER, PlayerSpec("openai", dict(frontier)), derive_seed(t_seed, "frontier")))
        names.append(FRONTIER)
        labels.append(frontier_spec(cfg.tournament.frontier))
    return Seating(t_seed, ratings, opponents, names, labels, run_dir, cfg.tournament.model_temperature)


def play_phase(
    cfg: LoopConfig, seat: Seating, phase: str, entrants: list[Entrant], out: Path, log: Log
) -> list[GameResult]:
    """One tournament of the seed (``before`` or ``after``) into ``out/phase``; its games."""
    t0 = time.perf_counter()
    games = run_tournament_games(
        f"{cfg.name}-{phase}",
        cfg.game,
        entrants,
        cfg.tournament.deals,
        seat.seed,
        out / phase,
        ratings=seat.ratings,
        log=log,
    )
    log(
        f"seed {out.name.removeprefix('seed')}: {phase} tournament, {len(games)} games, {time.perf_counter() - t0:.0f} s"
    )
    return games


@dataclass
class Training:
    """A training still to run: fresh (``resumed_from`` None) or from its latest checkpoint."""

    run: RunDir
    session: GRPOSession
    resumed_from: int | None


def prepare_training(cfg: LoopConfig, seed: int, out: Path, log: Log) -> Training | None:
    """The seed's training: None when it is done (``train.json``), else fresh (the untrained model
    saved as its step-0 checkpoint, the baseline entrant) or resumed from its latest checkpoint (a
    training killed before its step-0 checkpoint starts again, cleanly)."""
    from . import grpo
    from .run import RunDir, checkpoint_dir
    from .trainer import Parts

    run_dir, gcfg = out / "train", grpo_config(cfg, seed)
    if (out / "train.json").exists():
        return None
    try:
        latest: Path | None = checkpoint_dir(run_dir)
    except ConfigError:
        latest = None
    if latest is None:
        if run_dir.exists():
            shutil.rmtree(run_dir)
        (out / ExactCurve.FILE).unlink(missing_ok=True)
        run = RunDir.claim(run_dir)
        session = grpo.start(gcfg, run, Parts())
        grpo.save_checkpoint(run, session)
        return Training(run, session, None)
    log(f"seed {seed}: resuming the training from {latest.name}")
    run = RunDir.claim(run_dir, resume=latest)
    session = grpo.start(gcfg.model_copy(update={"resume_from": str(latest)}), run, Parts())
    return Training(run, session, session.state.step)


class ExactCurve:
    """The game's exact analysis of the sampling policy at every training step (``exact.jsonl``,
    appended a row per step; rows past a resumed checkpoint are dropped once, then replayed)."""

    FILE = "exact.jsonl"

    def __init__(self, out: Path, analysis: Analysis | None, upto: int | None) -> None:
        self.path, self.analysis = out / self.FILE, analysis
        rows = [json.loads(x) for x in self.path.read_text().splitlines() if x.strip()] if self.path.exists() else []
        self.rows = [r for r in rows if upto is None or r["step"] <= upto]
        if upto is not None:
            self.path.write_text("".join(json.dumps(r) + "\n" for r in self.rows))

    def add(self, step: int, session: GRPOSession) -> None:
        if self.analysis is None or (self.rows and self.rows[-1]["step"] == step):
            return
        self.rows.append({"step": step, **self.analysis(session.policy().distributions)})
        with self.path.open("a") as fh:
            fh.write(json.dumps(self.rows[-1]) + "\n")


@dataclass(frozen=True)
class Trained:
    """A finished training (``train.json``)."""

    run_id: str
    train_status: str
    train_s: float
    resumed_from_step: int | None


def train_seed(
    cfg: LoopConfig, seed: int, training: Training, curve: ExactCurve, log: Log, progress: Progress | None
) -> Trained:
    """GRPO against the snapshot pool, the curve a row per step, a log line every 10 steps."""
    from . import grpo
    from .trainer import Parts

    steps = training.session.config.steps

    def each_step(step: int, row: Mapping[str, Any]) -> None:
        curve.add(step, training.session)
        if step % 10 == 0 or step == steps:
            exact = f" exact {curve.rows[-1]}" if curve.rows else ""
            log(f"seed {seed} step {step}/{steps} reward {row['reward_mean']:+.3f}{exact}")
        if progress is not None:
            progress(step, row)

    t0 = time.perf_counter()
    summary = grpo.run_steps(training.run, training.session, Parts(progress=each_step))
    trained = Trained(summary.run_id, summary.status, round(time.perf_counter() - t0, 1), training.resumed_from)
    log(f"seed {seed}: {steps} GRPO steps in {trained.train_s:.0f} s")
    return trained


def seed_result(
    cfg: LoopConfig,
    seed: int,
    seat: Seating,
    games: tuple[list[GameResult], list[GameResult]],
    trained: Trained,
    curve: ExactCurve,
    out: Path,
) -> dict[str, Any]:
    """The seed's ``result.json``: win rates before and after against every opponent (with the
    difference paired by deal), RL'd against stock, faults, both tournaments' ratings, the curve."""
    before, after = games
    steps = grpo_config(cfg, seed).steps
    labels = dict(zip(seat.names, seat.labels))
    result: dict[str, Any] = {
        "seed": seed,
        "run_dir": str(seat.run_dir),
        **asdict(trained),
        "steps": steps,
        "tournament_seed": seat.seed,
        "entrants": {
            STOCK: "the model at step 0",
            RL: f"the model at step {steps}",
            **{n: f"`{s}`" for n, s in labels.items()},
        },
        "opponents": {},
        "faults": {"before": faults_of(before, STOCK), "after": faults_of(after, RL)},
        "rl_vs_stock": win_rate(head_to_head(after, RL, STOCK)),
        "ratings": {phase: rate_tournament(out / phase, seat.ratings) for phase in ("before", "after")},
    }
    if FRONTIER in labels:
        result["frontier"] = {"before": faults_of(before, FRONTIER), "after": faults_of(after, FRONTIER)}
    for i, (name, label) in enumerate(labels.items()):
        hb, ha = head_to_head(before, STOCK, name), head_to_head(after, RL, name)
        bootstrap = difference(ha, hb, derive_seed(seat.seed, "bootstrap", i), cfg.tournament.bootstrap)
        result["opponents"][label] = {"before": win_rate(hb), "after": win_rate(ha), "after_minus_before": bootstrap}
    if curve.rows:
        result["exact"] = {"before": curve.rows[0], "after": curve.rows[-1], "curve": curve.rows}
    return result


def run_seed(
    cfg: LoopConfig,
    seed: int,
    out: Path,
    *,
    frontier: Mapping[str, Any] | None = None,
    log: Log = print,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """One seed: before tournament, training, re-tournament, ``out/result.json``. A partly
    written ``out`` is continued: each tournament through the runner's resume, the training from
    its latest checkpoint. ``progress``: called after every training step with its metrics row."""
    out.mkdir(parents=True, exist_ok=True)
    training = prepare_training(cfg, seed, out, log)
    analysis = resolve_analysis(cfg.analysis) if cfg.analysis else None
    curve = ExactCurve(out, analysis, None if training is None else training.session.state.step)
    if training is not None:
        curve.add(training.session.state.step, training.session)
    seat = seating(cfg, seed, out / "train", frontier)
    before = play_phase(cfg, seat, "before", [seat.model(STOCK, 0), *seat.opponents], out, log)
    if training is not None:
        if (out / "after").exists():  # games of a model that is trained again: they restart with it
            log(f"seed {seed}: the re-tournament restarts after the training")
            shutil.rmtree(out / "after")
        trained = train_seed(cfg, seed, training, curve, log, progress)
        (out / "train.json").write_text(json.dumps(asdict(trained), indent=2))
    trained = Trained(**json.loads((out / "train.json").read_text()))
    # the re-tournament seats both models: one rating scale for stock, RL'd and every opponent
    steps = grpo_config(cfg, seed).steps
    after = play_phase(cfg, seat, "after", [seat.model(RL, steps), seat.model(STOCK, 0), *seat.opponents], out, log)
    result = seed_result(cfg, seed, seat, (before, after), trained, curve, out)
    (out / "result.json").write_text(json.dumps(result, indent=2))
    return result


# ---------------------------------------------------------------------- the loop directory
LOOP_FILE = "loop.json"


def _digest(data: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def _changed(old: Any, new: Any, prefix: str = "") -> list[str]:
    if isinstance(old, dict) and isinstance(new, dict):
        return [c for k in sorted(set(old) | set(new)) for c in _changed(old.get(k), new.get(k), f"{prefix}{k}.")]
    return [] if old == new else [prefix.rstrip(".")]


def claim_loop_dir(out: Path, identity: Mapping[str, Any]) -> bool:
    """Start ``out`` (empty or new) or continue it (its ``loop.json`` has this config's digest);
    True when continuing. Anything else is refused with one line naming the fix."""
    marker = out / LOOP_FILE
    if out.exists() and any(out.iterdir()):
        if not marker.exists():
            raise ConfigError(f"loop output {str(out)!r} is not empty and holds no {LOOP_FILE}; pass a new --out")
        stored = json.loads(marker.read_text())
        if stored.get("digest") != _digest(identity):
            changed = _changed(stored.get("identity", {}), dict(identity)) or ["(unknown)"]
            raise ConfigError(
                f"loop output {str(out)!r} was started by another config (it differs in {', '.join(changed[:5])}); "
                "rerun with the config that started it, or pass a new --out"
            )
        return True
    out.mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps({"digest": _digest(identity), "identity": identity}, indent=2))
    return False


def run_server_check(cfg: LoopConfig, out: Path, *, log: Log = print) -> dict[str, Any]:
    """The stock tiny model behind a local ``mlx_lm.server``, through the OpenAI player."""
    from arena_players.mlx_server import mlx_server

    if (out / "result.json").exists():
        log(f"server check: done already ({out / 'result.json'})")
        done: dict[str, Any] = json.loads((out / "result.json").read_text())
        return done
    if out.exists():  # a cut check restarts: the server's port (part of the entrant) changes every start
        shutil.rmtree(out)
    t_seed = derive_seed(cfg.tournament.seed, "server")
    names = opponent_names(cfg.tournament.opponents)
    opponents = [entrant(n, o, i) for i, (n, o) in enumerate(zip(names, cfg.tournament.opponents))]
    t0 = time.perf_counter()
    path = grpo_config(cfg, cfg.seeds[0]).model.path
    with mlx_server(None if path == "tiny" else path, startup_s=cfg.server.startup_s) as (url, model):
        options = {"base_url": url, "model": model, "api_key_env": "", "max_retries": 1}
        options.update(temperature=cfg.server.temperature, max_tokens=cfg.server.max_tokens)
        stock = entrant("stock-server", PlayerSpec("openai", options), 0)
        # the schedule is a round robin: keep only the stock model's games in the analysis
        games = run_tournament_games(f"{cfg.name}-server", cfg.game, [stock, *opponents], cfg.server.deals, t_seed, out)
    result: dict[str, Any] = {
        "wall_s": round(time.perf_counter() - t0, 1),
        "faults": faults_of(games, "stock-server"),
        "opponents": {
            str(spec): win_rate(head_to_head(games, "stock-server", n))
            for n, spec in zip(names, cfg.tournament.opponents)
        },
    }
    (out / "result.json").write_text(json.dumps(result, indent=2))
    log(f"server check: {result['faults']} in {result['wall_s']} s")
    return result


def _finished_seeds(out: Path) -> dict[int, dict[str, Any]]:
    found = {}
    for path in out.glob("seed*/result.json"):
        r = json.loads(path.read_text())
        found[int(r["seed"])] = r
    return found


def run_loop(
    cfg: LoopConfig,
    out: Path,
    *,
    seeds: Sequence[int] | None = None,
    plot: Path | None = None,
    log: Log = print,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Every seed of ``cfg`` (or ``seeds``) into ``out``; a partly written ``out`` of the same
    config is continued (finished seeds are skipped). The report covers every finished seed in
    ``out`` (``report.json``, ``report.md``); ``progress`` sees every training step."""
    out = Path(out)
    seeds = list(seeds if seeds is not None else cfg.seeds)
    cfg = pin_model(cfg)
    frontier = frontier_options(cfg, log=log)
    if claim_loop_dir(out, loop_identity(cfg, frontier)):
        log(f"continuing {out}")
    log(f"model: {grpo_config(cfg, seeds[0]).model.path}")
    server = run_server_check(cfg, out / "server", log=log) if cfg.server.enabled else None
    coverage = None
    for seed in seeds:
        if (out / f"seed{seed}" / "result.json").exists():
            log(f"seed {seed}: finished already, skipped")
        else:
            run_seed(cfg, seed, out / f"seed{seed}", frontier=frontier, log=log, progress=progress)
        if coverage is None:
            from .lm import load_lm

            path = grpo_config(cfg, seed).model.path
            coverage = {"model": Path(path).name, **tokenizer_coverage(cfg.game, load_lm(path)[1])}
        report = write_report(cfg, out, server, coverage)
    if plot is not None:
        plot_curves(report["seeds"], plot, f"{cfg.name}: exact values of the sampling policy during GRPO")
    return report


def write_report(
    cfg: LoopConfig, out: Path, server: dict[str, Any] | None, coverage: dict[str, Any] | None
) -> dict[str, Any]:
    """``report.json`` and ``report.md`` over every finished seed in ``out``."""
    results = [r for _, r in sorted(_finished_seeds(out).items())]
    report = {"config": cfg.model_dump(mode="json"), "seeds": results, "server": server, "coverage": coverage}
    (out / "report.json").write_text(json.dumps(report, indent=2))
    (out / "report.md").write_text(report_markdown(cfg, results, server, coverage))
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m arena_train.loop", description=__doc__.split("\n\n")[0])
    parser.add_argument("config", help="a loop config (.toml), e.g. examples/textarena_loop.toml")
    parser.add_argument("--out", default=None, help="output directory (default: the config's output)")
    parser.add_argument("--seeds", default=None, help="comma-separated seeds (default: the config's)")
    parser.add_argument("--plot", default=None, help="write the training curves here (png)")
    args = parser.parse_args(argv)
    try:
        cfg = load_config(args.config)
        seeds = [int(s) for s in args.seeds.split(",")] if args.seeds else None
        report = run_loop(cfg, Path(args.out or cfg.output), seeds=seeds, plot=Path(args.plot) if args.plot else None)
    except (ArenaError, ValueError) as exc:
        print(f"arena loop: {exc}", file=sys.stderr)
        return 2
    print(report_markdown(cfg, report["seeds"], report["server"], report["coverage"]))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
