"""The local-model arena loop: a baseline tournament, training, the re-tournament and a
before/after report, from one config::

    arena loop examples/textarena_loop_liars.toml [--set key=value ...] [--out DIR] [--seeds 0,1,2]
    python -m arena_train.loop CONFIG ...     # the same, as a module

The stages are functions passing typed results: :func:`seating` (the :class:`Seating` of both
tournaments), :func:`play_phase` (a tournament's games), the seed's training plan
(:mod:`arena_train.loop_training`: one GRPO run, or a recipe of trainer stages), and
:func:`seed_result`; :func:`run_seed` composes them, :func:`run_loop` runs the seeds and
:func:`write_report` the report (``report.json``, ``report.md`` and the page ``report.html``,
:mod:`arena_train.loop_report`). The config is :mod:`arena_train.loop_config`, the tournaments
and their measures :mod:`arena_train.loop_tournaments`.

For every seed: the stock model (a ``checkpoint`` entrant at the training temperature, i.e. the
sampling policy the training optimises) plays a round-robin tournament against the fixed
opponents; it is trained (GRPO against a pool of frozen snapshots of itself, where no fixed
opponent is; or the recipe's stages); the trained checkpoint plays the same tournament again
(same deals, same seats), with the stock model seated beside it, so the re-tournament's ratings
put stock, RL'd, the generalist, the frontier and the bots on one scale. The report gives, per
fixed opponent, the model's win rate before and after with a Wilson interval and a deal-clustered
one, the difference after - before paired by deal (clipped to its range), both tournaments'
ratings, the training curve, and for every entrant what it reads and how it answers. Each
tournament directory also holds the tournament's own report page with its drill-down.

An optional frontier seat (``[tournament.frontier]``): an OpenAI-compatible player for a real
model, cached and capped, in both tournaments and never in training; without its key or endpoint
in the environment it is skipped with one line, or (``required = true``) the loop stops at the
start with one line.

Resume: rerunning the same command on a partly written ``--out`` continues it. A finished seed is
skipped; a tournament continues through the tournament runner's own resume (games already
recorded are kept); an unfinished training resumes from its latest checkpoint. ``loop.json`` holds
the digest of the config (seeds and output left out, so more seeds may be added later, and the
frontier's seating: a frontier seat may join a directory later, and then only its own games are
played, in every seed, without replaying the rest); a directory written by another config, or by
something else, is refused with one line.

Once per run (``[server]``), a plumbing check: the stock model, served by a local
``mlx_lm.server`` and played through the OpenAI-compatible player (free text through the game's
text view), plays a small tournament against the same opponents; its faults are counted apart.

``analysis`` (optional) names a game's exact analysis, ``"package.module:function"`` taking the
policy's ``distributions(menus)`` and returning named values; it is called before training, at
every step and after. For ``textarena/KuhnPoker-v0`` it is ``arena_games.textarena.kuhn_v0:exact_values``.
(The trainer package imports no game package: the game supplies the analysis, named in the config.)
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
    Log,
    LoopConfig,
    frontier_options,
    frontier_spec,
    learner_model,
    load_config,
    loop_identity,
    parse_loop_config,
    pin_model,
    resolve_analysis,
)
from .loop_plots import plot_training
from .loop_report import anchor_label, report_html, report_markdown
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
from .loop_training import (
    GRPOTraining,
    ModelAt,
    Trained,
    Training,
    TrainingProgress,
    read_trained,
    training_plan,
    write_trained,
)

if TYPE_CHECKING:
    from arena_tournament.config import RatingOptions
    from arena_tournament.results import GameResult
    from arena_tournament.schedule import Entrant

__all__ = ["LoopConfig", "frontier_options", "load_config", "main", "parse_loop_config", "run_loop", "run_seed"]

#: entrant names: the model before training (both tournaments) and after it (the re-tournament)
STOCK, RL, FRONTIER = "stock", "rl", "frontier"


# ---------------------------------------------------------------------- the stages of a seed
@dataclass(frozen=True)
class Seating:
    """Who plays a seed's tournaments: the fixed opponents (and the frontier seat when seated),
    each with its name, its label in the report and its role (``generalist``, ``frontier`` or
    ``opponent``), and how the model's checkpoint entrants are built."""

    seed: int  # the tournaments' seed (their deals, the entrants' seeds, the ratings' bootstrap)
    ratings: RatingOptions
    opponents: list[Entrant]
    names: list[str]
    labels: list[str]
    roles: list[str]
    temperature: float | str

    def model(self, name: str, at: ModelAt) -> Entrant:
        """The model at the checkpoint ``at`` as an entrant."""
        options: dict[str, Any] = {"run": str(at.run), "temperature": self.temperature}
        if at.step is not None:
            options["step"] = at.step
        return entrant(name, PlayerSpec("checkpoint", options), derive_seed(self.seed, "model"))


def seating(cfg: LoopConfig, seed: int, frontier: Mapping[str, Any] | None) -> Seating:
    from arena_tournament.config import RatingOptions

    t_seed = derive_seed(cfg.tournament.seed, "loop", seed)
    ratings = RatingOptions(bootstrap=cfg.tournament.bootstrap, seed=derive_seed(t_seed, "ratings") % 2**31)
    specs = cfg.tournament.opponents
    names = opponent_names(specs)
    opponents = [entrant(n, o, derive_seed(t_seed, "opponent", i)) for i, (n, o) in enumerate(zip(names, specs))]
    labels = [str(o) for o in specs]
    roles = ["generalist" if cfg.tournament.generalist == i + 1 else "opponent" for i in range(len(specs))]
    if frontier is not None and cfg.tournament.frontier is not None:
        opponents.append(entrant(FRONTIER, PlayerSpec("openai", dict(frontier)), derive_seed(t_seed, "frontier")))
        names.append(FRONTIER)
        labels.append(frontier_spec(cfg.tournament.frontier))
        roles.append("frontier")
    return Seating(t_seed, ratings, opponents, names, labels, roles, cfg.tournament.model_temperature)


def play_phase(
    cfg: LoopConfig, seat: Seating, phase: str, entrants: list[Entrant], out: Path, log: Log, *, quiet: bool = True
) -> list[GameResult]:
    """One tournament of the seed (``before`` or ``after``) into ``out/phase``; its games."""
    n, pairs = len(entrants), len(entrants) * (len(entrants) - 1) // 2
    log(
        f"seed {out.name.removeprefix('seed')}: {phase} tournament, {n} entrants, {pairs} pairs x "
        f"{cfg.tournament.deals} deals x 2 seatings"
    )
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
        quiet=quiet,
    )
    log(
        f"seed {out.name.removeprefix('seed')}: {phase} tournament, {len(games)} games, {time.perf_counter() - t0:.0f} s"
    )
    return games


def seed_result(
    cfg: LoopConfig,
    seed: int,
    seat: Seating,
    games: tuple[list[GameResult], list[GameResult]],
    trained: Trained,
    plan: Training,
    out: Path,
) -> dict[str, Any]:
    """The seed's ``result.json``: win rates before and after against every opponent (with the
    difference paired by deal), RL'd against stock, faults, both tournaments' ratings, every
    entrant's seat (what it reads, how it answers), the training curve and the exact curve."""
    before, after = games
    total = plan.total_steps()
    labels = dict(zip(seat.names, seat.labels))
    pages = cfg.tournament.pages
    ratings = {phase: rate_tournament(out / phase, seat.ratings, page=pages) for phase in ("before", "after")}
    formats = {**ratings["before"]["seats"], **ratings["after"]["seats"]}
    roles = {STOCK: "stock", RL: "rl", **dict(zip(seat.names, seat.roles))}
    result: dict[str, Any] = {
        "seed": seed,
        "run_dir": str(out / "train"),
        **asdict(trained),
        "steps": total,
        "tournament_seed": seat.seed,
        "entrants": {
            STOCK: "the model before training",
            RL: f"the model after {total} training steps",
            **{n: f"`{s}`" for n, s in labels.items()},
        },
        "seats": {n: {"role": roles.get(n, "opponent"), **formats.get(n, {})} for n in [RL, STOCK, *seat.names]},
        "opponents": {},
        "faults": {"before": faults_of(before, STOCK), "after": faults_of(after, RL)},
        "rl_vs_stock": win_rate(head_to_head(after, RL, STOCK)),
        "ratings": ratings,
        "curve": plan.curve_rows(),
    }
    if cfg.tournament.generalist is not None:
        result["generalist"] = seat.names[cfg.tournament.generalist - 1]
    if FRONTIER in labels:
        result["frontier"] = {"before": faults_of(before, FRONTIER), "after": faults_of(after, FRONTIER)}
    for i, (name, label) in enumerate(labels.items()):
        hb, ha = head_to_head(before, STOCK, name), head_to_head(after, RL, name)
        bootstrap = difference(ha, hb, derive_seed(seat.seed, "bootstrap", i), cfg.tournament.bootstrap)
        result["opponents"][label] = {"before": win_rate(hb), "after": win_rate(ha), "after_minus_before": bootstrap}
    # the opponents' own results against each other before training (e.g. the generalist against the anchor)
    result["opponent_pairs"] = {
        f"{a}|{b}": win_rate(head_to_head(before, a, b)) for i, a in enumerate(seat.names) for b in seat.names[i + 1 :]
    }
    if isinstance(plan, GRPOTraining) and plan.curve.rows:  # the exact analysis, when the config names one
        rows = plan.curve.rows
        result["exact"] = {"before": rows[0], "after": rows[-1], "curve": rows}
    return result


def run_seed(
    cfg: LoopConfig,
    seed: int,
    out: Path,
    *,
    frontier: Mapping[str, Any] | None = None,
    log: Log = print,
    progress: Progress | None = None,
    quiet: bool = True,
) -> dict[str, Any]:
    """One seed: before tournament, training, re-tournament, ``out/result.json``. A partly
    written ``out`` is continued: each tournament through the runner's resume (extended when a
    seat joined), the training from its latest checkpoint. ``progress``: called after every
    training step with its metrics row; ``quiet``: no progress bars."""
    out.mkdir(parents=True, exist_ok=True)
    analysis = resolve_analysis(cfg.analysis) if cfg.analysis else None
    plan = training_plan(cfg, seed, out, analysis)
    tokenizer = plan.prepare(log)
    if tokenizer is not None:
        coverage = {"model": Path(str(learner_model(cfg).get("path", "tiny"))).name}
        coverage.update(tokenizer_coverage(cfg.game, tokenizer))
        (out / "coverage.json").write_text(json.dumps(coverage, indent=2))
    seat = seating(cfg, seed, frontier)
    before = play_phase(cfg, seat, "before", [seat.model(STOCK, plan.stock), *seat.opponents], out, log, quiet=quiet)
    if not plan.done():
        if (out / "after").exists():  # games of a model that is trained again: they restart with it
            log(f"seed {seed}: the re-tournament restarts after the training")
            shutil.rmtree(out / "after")
        bar = TrainingProgress(enabled=not quiet, also=progress)
        try:
            write_trained(out, plan.train(bar.lines(log), bar))
        finally:
            bar.close()
    trained = read_trained(out)
    entrants = [seat.model(RL, plan.final), seat.model(STOCK, plan.stock), *seat.opponents]
    after = play_phase(cfg, seat, "after", entrants, out, log, quiet=quiet)
    result = seed_result(cfg, seed, seat, (before, after), trained, plan, out)
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


#: files that hold a loop's work: games, trainings, results
_WORK = ("results.jsonl", "manifest.json", "metrics.jsonl", "state.json", "result.json", "train.json")


def _holds_work(out: Path) -> bool:
    """Whether ``out`` holds anything a run recorded (a run that failed before its first game or
    training step, e.g. on a model path that does not load, left none: its directory may be reused)."""
    return any(p.name in _WORK for p in out.rglob("*"))


def claim_loop_dir(out: Path, identity: Mapping[str, Any], seats: Sequence[str] = ()) -> tuple[bool, list[str]]:
    """Start ``out`` (empty or new) or continue it (its ``loop.json`` has this config's digest, or
    it holds nothing recorded yet): (whether continuing, the optional seats it has held so far,
    ``seats`` now added). Anything else is refused with one line naming the fix."""
    marker = out / LOOP_FILE
    if out.exists() and any(out.iterdir()):
        if not marker.exists():
            raise ConfigError(f"loop output {str(out)!r} is not empty and holds no {LOOP_FILE}; pass a new --out")
        stored = json.loads(marker.read_text())
        if stored.get("digest") != _digest(identity) and not _holds_work(out):
            stored = {"digest": _digest(identity), "identity": identity, "seats": []}  # nothing recorded: start again
            marker.write_text(json.dumps(stored, indent=2))
        if stored.get("digest") != _digest(identity):
            changed = _changed(stored.get("identity", {}), dict(identity)) or ["(unknown)"]
            raise ConfigError(
                f"loop output {str(out)!r} was started by another config (it differs in {', '.join(changed[:5])}); "
                "rerun with the config that started it, or pass a new --out"
            )
        held = list(stored.get("seats", []))
        if set(seats) - set(held):
            stored["seats"] = sorted(set(held) | set(seats))
            marker.write_text(json.dumps(stored, indent=2))
        return True, held
    out.mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps({"digest": _digest(identity), "identity": identity, "seats": sorted(seats)}, indent=2))
    return False, []


def run_server_check(cfg: LoopConfig, out: Path, *, log: Log = print, quiet: bool = True) -> dict[str, Any]:
    """The stock model behind a local ``mlx_lm.server``, through the OpenAI player."""
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
    path = str(learner_model(cfg).get("path", "tiny"))
    log(f"server check: the stock model behind mlx_lm.server, {cfg.server.deals} deals per opponent")
    with mlx_server(None if path == "tiny" else path, startup_s=cfg.server.startup_s) as (url, model):
        options = {"base_url": url, "model": model, "api_key_env": "", "max_retries": 1}
        options.update(temperature=cfg.server.temperature, max_tokens=cfg.server.max_tokens)
        stock = entrant("stock-server", PlayerSpec("openai", options), 0)
        # the schedule is a round robin: keep only the stock model's games in the analysis
        games = run_tournament_games(
            f"{cfg.name}-server", cfg.game, [stock, *opponents], cfg.server.deals, t_seed, out, quiet=quiet
        )
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
    quiet: bool = True,
) -> dict[str, Any]:
    """Every seed of ``cfg`` (or ``seeds``) into ``out``; a partly written ``out`` of the same
    config is continued (finished seeds are skipped; a frontier seat that joins is added to them,
    its games alone played). The report covers every finished seed in ``out`` (``report.json``,
    ``report.md``, ``report.html``); ``progress`` sees every training step; ``quiet``: no
    progress bars (the tournaments' and the training's); ``plot``: the training curves there."""
    out = Path(out)
    seeds = list(seeds if seeds is not None else cfg.seeds)
    frontier = frontier_options(cfg, log=log)  # with required = true and no key: one line, before anything runs
    cfg = pin_model(cfg)
    continuing, held = claim_loop_dir(out, loop_identity(cfg), [FRONTIER] if frontier is not None else [])
    if continuing:
        log(f"continuing {out}")
    if frontier is not None and FRONTIER not in held and _finished_seeds(out):
        log(f"the frontier seat joins {out}: only its games are played in the finished seeds")
    log(f"model: {learner_model(cfg).get('path', 'tiny')}")
    server = run_server_check(cfg, out / "server", log=log, quiet=quiet) if cfg.server.enabled else None
    names = {STOCK, RL, *opponent_names(cfg.tournament.opponents), *([FRONTIER] if frontier is not None else [])}
    for seed in seeds:
        result_path = out / f"seed{seed}" / "result.json"
        if result_path.exists() and names <= set(json.loads(result_path.read_text())["entrants"]):
            log(f"seed {seed}: finished already, skipped")
        elif FRONTIER in held and frontier is None:
            f = cfg.tournament.frontier
            needs = " and ".join(v for v in (f.base_url_env, f.api_key_env) if v) if f is not None else "its key"
            raise ConfigError(
                f"loop output {str(out)!r} seats the frontier, and seed {seed} has games to play with it; "
                f"set {needs} to continue, or pass a new --out"
            )
        else:
            run_seed(cfg, seed, out / f"seed{seed}", frontier=frontier, log=log, progress=progress, quiet=quiet)
            write_report(cfg, out, server, page=False)  # a run cut later still has the finished seeds' tables
    report = write_report(cfg, out, server)
    if plot is not None:
        drawn = plot_training(report["seeds"], plot, f"{cfg.name}: training", anchor_label(cfg))
        if isinstance(drawn, Path):
            log(f"training curves: {drawn}")
        else:  # asked for: said even under --quiet
            print(f"no plot written to {plot}: {drawn}", file=sys.stderr)
    return report


def write_report(cfg: LoopConfig, out: Path, server: dict[str, Any] | None, *, page: bool = True) -> dict[str, Any]:
    """``report.json``, ``report.md`` and (``page``) ``report.html`` over every finished seed in ``out``."""
    from arena_core.outputs import atomic_write_text

    results = [r for _, r in sorted(_finished_seeds(out).items())]
    coverage = None
    for r in results:
        path = out / f"seed{r['seed']}" / "coverage.json"
        if path.exists():
            coverage = json.loads(path.read_text())
            break
    report = {"config": cfg.model_dump(mode="json"), "seeds": results, "server": server, "coverage": coverage}
    atomic_write_text(out / "report.json", json.dumps(report, indent=2))
    atomic_write_text(out / "report.md", report_markdown(cfg, results, server))
    if page:
        atomic_write_text(out / "report.html", report_html(cfg, results, server))
    return report


def main(argv: Sequence[str] | None = None) -> int:
    """Run the local-model arena loop: tournament, training, re-tournament, before/after report."""
    parser = argparse.ArgumentParser(
        prog="arena loop",
        description="The local-model arena loop from one config: a baseline tournament, training, the "
        "re-tournament, and a before/after report (report.md, report.html). Rerun to continue a directory.",
    )
    parser.add_argument("config", help="a loop config (.toml), e.g. examples/textarena_loop_liars.toml")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config value (dotted keys into tables, TOML values), e.g. --set tournament.deals=4",
    )
    parser.add_argument("--out", default=None, help="output directory (default: the config's output)")
    parser.add_argument("--seeds", default=None, help="comma-separated seeds (default: the config's)")
    parser.add_argument("--plot", default=None, help="write the training curves here (png)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines or bars; the report alone")
    args = parser.parse_args(argv)
    log: Log = (lambda _: None) if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    try:
        cfg = load_config(args.config, args.set)
        try:
            seeds = [int(s) for s in args.seeds.split(",")] if args.seeds else None
        except ValueError:
            raise ConfigError(f"--seeds {args.seeds!r} must be comma-separated integers, e.g. --seeds 0,1,2") from None
        out = Path(args.out or cfg.output)
        plot = Path(args.plot) if args.plot else None
        report = run_loop(cfg, out, seeds=seeds, plot=plot, log=log, quiet=args.quiet)
    except (ArenaError, ValueError) as exc:
        print(f"arena loop: {' '.join(str(exc).split())}", file=sys.stderr)  # one line, whatever a library wrote
        return 2
    print(report_markdown(cfg, report["seeds"], report["server"]))
    log(f"report: {out / 'report.html'}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
