"""``arena check GAME``: the conformance kit from the command line (docs/testing.md); exit 0 when
nothing failed, 1 when a check failed, 2 on bad input (one line).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ArenaError

if TYPE_CHECKING:
    from collections.abc import Callable

    from .game import Game
    from .testing.strategies import Playthrough

EXIT_FAILED = 1
EXIT_USER_ERROR = 2


def build_parser() -> argparse.ArgumentParser:
    from .clierrors import OneLineArgumentParser

    p = OneLineArgumentParser(prog="arena check", description="Run the conformance kit on a registered game.")
    p.add_argument("game", help="a registered game id (`arena list games`)")
    p.add_argument("--players", type=int, default=None, help="number of players (default: the game's default)")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="game parameter (repeatable)")
    p.add_argument("--max-examples", type=int, default=20, help="hypothesis examples (default 20)")
    p.add_argument("--checks", default=None, help="comma-separated check names (default: all)")
    p.add_argument("--out", default="arena-check", help="folder for minimal failing episodes (default ./arena-check)")
    return p


def minimal_failing_playthrough(game: Game[Any, Any], check: str, *, max_examples: int = 200) -> Playthrough | None:
    """Search and shrink a playthrough on which ``check`` fails by itself; None if none is found
    (a claim settled only over many playthroughs, or a failure not met again in the search)."""
    from hypothesis import HealthCheck, given, settings

    from .testing.checks import PLAYTHROUGH_CHECKS
    from .testing.strategies import PlaythroughError, playthroughs

    fn = PLAYTHROUGH_CHECKS.get(check)
    if fn is None and check != "legal_play":
        return None
    found: list[Playthrough] = []

    @settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
        report_multiple_bugs=False,
    )
    # one decision past the declared bound, so that a game running too long shows it
    @given(pt=playthroughs(game, complete=check != "legal_play", max_decisions=game.spec.max_length + 1))
    def probe(pt: Playthrough) -> None:
        if fn is not None and _fails(fn, game, pt):  # keep the last failing one: the shrunk one
            found.append(pt)
            raise AssertionError(check)

    try:
        probe()
    except PlaythroughError as exc:  # legal play crashed: the moves before the crash lead to it
        return exc.playthrough
    except Exception:
        if fn is None or not found:  # legal_play (no fn) shows only as a PlaythroughError
            return None
        return _smaller_seed(game, check, fn, _shortest_prefix(game, check, fn, found[-1]))
    return None


def _fails(fn: Callable[..., None], game: Game[Any, Any], pt: Playthrough, check: str | None = None) -> bool:
    """Whether ``fn`` fails on ``pt``; with ``check``, only a failure of that check counts (a
    prefix that stops before the end fails the checks that need an end for that reason alone)."""
    from .seeding import make_rng
    from .testing.checks import CheckFailure, replay_moves

    try:
        fn(game, replay_moves(game, pt.seed, list(pt.moves)), make_rng(pt.seed, "kit"))
    except CheckFailure as exc:
        return check is None or str(exc).startswith(f"{check}:")
    except Exception:
        return check is None
    return False


def _shortest_prefix(game: Game[Any, Any], check: str, fn: Callable[..., None], pt: Playthrough) -> Playthrough:
    """The shortest prefix of ``pt``'s moves on which ``check`` fails by itself (``pt`` when only
    the whole playthrough shows it, e.g. a claim about the end)."""
    from .testing.strategies import Playthrough

    for n in range(len(pt.moves)):
        # positions replayed afresh: a state-mutating game changed the drawn ones
        prefix = Playthrough.replayed(game, pt.seed, pt.moves[:n])
        if _fails(fn, game, prefix, check):
            return prefix
    return pt


def _smaller_seed(game: Game[Any, Any], check: str, fn: Callable[..., None], pt: Playthrough) -> Playthrough:
    """Hypothesis shrinks a seed greedily; try the smaller seeds (below 256) with the same moves."""
    from .testing.strategies import Playthrough

    for seed in range(min(pt.seed, 256)):
        try:
            candidate = Playthrough.replayed(game, seed, pt.moves)
        except Exception:  # the moves are not legal after this deal
            continue
        if candidate.complete == pt.complete and _fails(fn, game, candidate, None if pt.complete else check):
            return candidate
    return pt


def _unknown_game(name: str) -> str:
    """The line for a game id nobody registered: the close matches that load here (a registered
    game whose extra is missing or whose registration is broken is not offered)."""
    import difflib

    from .registry import availability, list_plugins

    installed = [p.name for p in list_plugins("games") if p.available]
    close = [c for c in difflib.get_close_matches(name, installed, n=5, cutoff=0.5) if availability("games", c)[0]]
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return f"no game named {name!r}{hint}; `arena list games` shows every registered game and whether it loads here"


def run(args: argparse.Namespace) -> int:
    try:
        import hypothesis  # noqa: F401
    except ImportError:
        raise ArenaError("the conformance kit needs hypothesis: pip install hypothesis") from None
    from .cli import _parse_params
    from .errors import UnknownGameError
    from .registry import make_game
    from .spec import CONFORMANCE_CHECKS

    if args.max_examples < 1:
        raise ArenaError(f"--max-examples must be at least 1, got {args.max_examples}")
    checks = None
    if args.checks:
        checks = [c.strip() for c in args.checks.split(",") if c.strip()]
        unknown = [c for c in checks if c not in CONFORMANCE_CHECKS]
        if unknown:
            raise ArenaError(f"unknown check(s) {', '.join(unknown)}; known: {', '.join(CONFORMANCE_CHECKS)}")
    try:
        game = make_game(args.game, _parse_params(args.param), num_players=args.players)
    except UnknownGameError:
        raise ArenaError(_unknown_game(args.game)) from None
    return check_game(game, max_examples=args.max_examples, checks=checks, out=args.out)


def check_game(
    game: Game[Any, Any],
    *,
    max_examples: int = 20,
    checks: Sequence[str] | None = None,
    out: str | Path = "arena-check",
) -> int:
    """Run the kit on ``game`` and print one line per check (what ``arena check`` does after
    making the game); returns the exit status."""
    from .testing import run_conformance

    print(f"arena check {game.spec.id} ({game.num_players} players), {max_examples} examples", flush=True)
    with warnings.catch_warnings(record=True) as caught:  # shown after the table, not inside it
        warnings.simplefilter("always")
        results = run_conformance(game, max_examples=max_examples, checks=checks)
        width = max(len(r.name) for r in results)
        for r in results:
            if r.status == "passed":
                print(f"  passed  {r.name}")
            else:
                tag = "exempt" if r.status == "exempt" else "FAILED"
                print(f"  {tag}  {r.name:<{width}}  {' '.join(r.detail.split())}")
            if r.status == "failed":
                print(f"          {_save_minimal(game, r.name, Path(out))}")
    counts = Counter(r.status for r in results)
    summary = f"{counts['passed']} passed, {counts['failed']} failed, {counts['exempt']} exempt"
    print(f"{len(results)} checks: {summary}", flush=True)
    _show_warnings(caught)
    return EXIT_FAILED if counts["failed"] else 0


def _show_warnings(caught: list[warnings.WarningMessage]) -> None:
    """Each distinct warning once, on stderr, with how often it was raised."""
    counts = Counter((w.category.__name__, str(w.message), w.filename, w.lineno) for w in caught)
    for (category, message, filename, lineno), n in counts.items():
        times = f" ({n} times)" if n > 1 else ""
        print(f"warning{times}: {filename}:{lineno}: {category}: {message}", file=sys.stderr)


def _save_minimal(game: Game[Any, Any], check: str, out: Path) -> str:
    found = minimal_failing_playthrough(game, check)
    if found is None:
        return "no single playthrough shows it on its own (see the message above); no episode saved"
    path = out / f"{game.spec.id.replace('/', '_')}-{check}-seed{found.seed}.jsonl"
    try:
        found.write(path)
    except Exception as exc:  # the defect may be what stops the record (e.g. a replay check)
        return f"minimal failing playthrough: {found.describe()} (not saved as an episode: {type(exc).__name__}: {exc})"
    return f"minimal failing episode ({len(found.moves)} decisions): {path}; step through it: arena replay {path}"


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else (EXIT_USER_ERROR if exc.code else 0)
    except ArenaError as exc:
        print(f"arena check: error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    try:
        return run(args)
    except (ArenaError, ValueError) as exc:
        print(f"arena check: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return EXIT_USER_ERROR
