"""Command line: ``arena tournament CONFIG``, ``arena ratings RESULTS``, ``arena report RESULTS``.

Each ``main_*`` takes argv (without the sub-command) and returns an exit status;
:func:`cli` dispatches on the first word. Also runnable as ``python -m arena_tournament.cli``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from arena_core.clierrors import OneLineArgumentParser, guarded, non_negative_int, positive_int

from .compare import main as main_compare  # noqa: F401  (`arena compare`, dispatched from arena_core.cli)

if TYPE_CHECKING:
    from .config import RatingOptions
    from .summary import FaultSummary, RatingsSummary


def non_negative_float(text: str) -> float:
    """Argparse type: a finite float >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text} is not a finite number >= 0")
    return value


def _rating_args(p: OneLineArgumentParser) -> None:
    p.add_argument(
        "--bootstrap",
        type=non_negative_int,
        default=None,
        help="cluster-bootstrap resamples (default: the config's, or 1000)",
    )
    p.add_argument("--seed", type=non_negative_int, default=None, help="seed of the bootstrap draws")
    p.add_argument(
        "--regularization",
        type=non_negative_float,
        default=None,
        help="virtual win and loss against an anchor (default 0.1)",
    )
    p.add_argument(
        "--faulted",
        choices=["include", "exclude", "both"],
        default="include",
        help="games with moves played while a provider was unavailable: rate them (include), leave them out "
        "(exclude), or rank with and without them side by side (both)",
    )


def _summary(
    results: str,
    args: argparse.Namespace,
    defaults: RatingOptions | None = None,
    max_fault_rate: float | None = None,
) -> RatingsSummary:
    """The ratings of a results file, with its faults (flagged above ``max_fault_rate``: default the file's)."""
    from .config import RatingOptions
    from .ratings import summarize
    from .runner import load_results

    opts = defaults or RatingOptions()
    header, games = load_results(results)
    from .audit import attach_faults

    return attach_faults(
        summarize(
            header,
            games,
            resamples=opts.bootstrap if args.bootstrap is None else args.bootstrap,
            regularization=opts.regularization if args.regularization is None else args.regularization,
            base=opts.base,
            seed=opts.seed if args.seed is None else args.seed,
            min_pair_games=opts.min_pair_games,
            faulted=args.faulted,
        ),
        header,
        games,
        max_fault_rate,
    )


def _results_dir(results: str) -> Path:
    p = Path(results)
    return p if p.is_dir() else p.parent


def tournament_parser() -> OneLineArgumentParser:
    p = OneLineArgumentParser(prog="arena tournament", description=main_tournament.__doc__)
    p.add_argument("config", help="tournament config (.toml, .yaml or .yml)")
    p.add_argument("--out", help="output directory (default: the config's 'output')")
    p.add_argument("--backend", choices=["sequential", "process", "ray"], help="override the config's run.backend")
    p.add_argument("--workers", type=positive_int, help="override the config's run.workers")
    p.add_argument("--ray-address", help="a Ray cluster address (implies --backend ray)")
    p.add_argument("--max-games", type=non_negative_int, help="stop after this many new games (resume later)")
    p.add_argument("--quiet", action="store_true", help="no progress bar or leaderboard; for scripts")
    p.add_argument("--no-report", action="store_true", help="only play; rate later with `arena ratings`")
    p.add_argument(
        "--no-preflight", action="store_true", help="skip the entrants' preflight checks (run.preflight = false)"
    )
    _rating_args(p)
    return p


def main_tournament(argv: Sequence[str] | None = None) -> int:
    """Run (or resume) the tournament of a TOML/YAML config, then rate it and write the report."""
    return guarded("arena tournament", tournament_body, argv)


def tournament_body(argv: Sequence[str] | None) -> int:
    """Run (or resume) the tournament of a TOML/YAML config, then rate it and write the report.

    `arena tournament` without its error funnel (the `arena` command, or :func:`main_tournament`, runs it in one)."""
    args = tournament_parser().parse_args(argv)
    from .config import load_config
    from .report import print_faults, print_leaderboard, write_all
    from .runner import RunInterrupted, load_results, run_tournament
    from .store import full_disk_in_one_line

    config = load_config(args.config)
    changes = {
        k: v
        for k, v in {
            "backend": "ray" if args.ray_address else args.backend,
            "workers": args.workers,
            "ray_address": args.ray_address,
            "preflight": False if args.no_preflight else None,
        }.items()
        if v is not None
    }
    options = config.run.model_validate({**config.run.model_dump(), **changes}) if changes else config.run
    out = Path(args.out or config.output)
    if config.prices:  # kept beside the results: `arena report` prices the decisions with it later
        from .usage import write_prices

        write_prices(config.prices, out)
    try:
        report = run_tournament(
            config, results_path=out / "results.jsonl", quiet=args.quiet, options=options, max_games=args.max_games
        )
    except RunInterrupted as exc:  # Ctrl-C or SIGTERM: one line, the lock released, resumable
        print(f"arena tournament: {exc}", file=sys.stderr)
        return exc.exit_status
    if not args.quiet:
        print(
            f"{report.played} games played, {report.already_recorded} already recorded, {report.total} scheduled -> {report.path}",
            file=sys.stderr,
        )
    from .audit import fault_summary

    if args.no_report:
        faults = fault_summary(*load_results(report.path), options.max_fault_rate)
    else:
        summary = _summary(report.path, args, config.ratings, options.max_fault_rate)
        assert summary.faults is not None  # attached by _summary
        faults = summary.faults
        with full_disk_in_one_line(out):
            written = write_all(summary, out, results=report.path, prices=config.prices)
        if not args.quiet:
            print_leaderboard(summary)
            print_faults(summary)
            print("report: " + ", ".join(str(v) for v in written.values()), file=sys.stderr)
    if report.incomplete:  # said even with --quiet: the run is not finished
        print(f"arena tournament: {incomplete_line(report.incomplete)}", file=sys.stderr)
        return EXIT_INCOMPLETE
    return finish_status(faults)


def finish_status(faults: FaultSummary) -> int:
    """0, or :data:`~arena_tournament.audit.EXIT_FLAGGED` after one line naming the flagged entrants."""
    from .audit import EXIT_FLAGGED

    if not faults.flagged:
        return 0
    worst = ", ".join(f"{n} ({faults.entrants[n].fault_rate:.0%})" for n in faults.flagged)
    print(
        f"arena tournament: fault rate above max_fault_rate {faults.max_fault_rate:g}: {worst}; see the faults in the summary",
        file=sys.stderr,
    )
    return EXIT_FLAGGED


#: exit status of a run that left games a provider outage cut short (run the same command again)
EXIT_INCOMPLETE = 4


def incomplete_line(games: int) -> str:
    return (
        f"{games} game(s) were cut short by a provider outage and are not recorded (nobody's move); "
        "run the same command again to replay them"
    )


def ratings_parser() -> OneLineArgumentParser:
    p = OneLineArgumentParser(prog="arena ratings", description=main_ratings.__doc__)
    p.add_argument("results", help="results.jsonl (or the tournament's output directory)")
    p.add_argument("--json", action="store_true", help="print the JSON summary instead of the table")
    _rating_args(p)
    return p


def main_ratings(argv: Sequence[str] | None = None) -> int:
    """Recompute ratings from a results file; print the leaderboard (or JSON with --json)."""
    return guarded("arena ratings", ratings_body, argv)


def ratings_body(argv: Sequence[str] | None) -> int:
    """Recompute the ratings of a results file and print the leaderboard.

    `arena ratings` without its error funnel."""
    args = ratings_parser().parse_args(argv)
    from .report import print_leaderboard

    summary = _summary(args.results, args)
    if args.json:
        import json

        print(json.dumps(summary.to_json(), indent=2))
    else:
        from .report import print_faults

        print_leaderboard(summary)
        print_faults(summary)
    return 0


def report_parser() -> OneLineArgumentParser:
    p = OneLineArgumentParser(prog="arena report", description=main_report.__doc__)
    p.add_argument("results", help="results.jsonl (or the tournament's output directory)")
    p.add_argument("--out", help="directory for the report files (default: next to the results)")
    p.add_argument("--quiet", action="store_true")
    p.add_argument(
        "--prices",
        help="price table (JSON, TOML or YAML; or a tournament config with [prices]) in USD per million tokens "
        "by model (default: the prices.json the tournament kept beside its results)",
    )
    _rating_args(p)
    return p


def main_report(argv: Sequence[str] | None = None) -> int:
    """Write summary.json, ratings.png and report.html (with every game and its decisions) for a results file."""
    return guarded("arena report", report_body, argv)


def report_body(argv: Sequence[str] | None) -> int:
    """Write report.html, summary.json and ratings.png for a tournament's results.

    `arena report` without its error funnel."""
    args = report_parser().parse_args(argv)
    from .report import write_all
    from .usage import PRICES_NAME, load_prices

    kept = _results_dir(args.results) / PRICES_NAME
    prices = load_prices(args.prices) if args.prices else load_prices(kept) if kept.is_file() else {}
    summary = _summary(args.results, args)
    written = write_all(
        summary, Path(args.out) if args.out else _results_dir(args.results), results=args.results, prices=prices
    )
    if not args.quiet:
        for kind, path in written.items():
            print(f"{kind}: {path}")
    return 0


COMMANDS = {"tournament": main_tournament, "ratings": main_ratings, "report": main_report}


def cli(argv: Sequence[str] | None = None) -> int:
    """Dispatch ``tournament``, ``ratings`` or ``report``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        print(f"usage: arena {{{','.join(COMMANDS)}}} ...", file=sys.stderr)
        return 2
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(cli())
