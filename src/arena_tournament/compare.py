"""``arena compare``: two players against the same fixed opponents on the same deals.

Each compared player (and, optionally, a reference policy) sits at the same tables: the same
opponents, the same deal seeds, every seat rotation. The unit is the deal: a deal's games
are averaged into one margin per player (own score minus the mean of the others), and the
per-deal differences A − B go through a battery of paired checks side by side (paired t,
Wilcoxon signed-rank, deal-cluster bootstrap, sign test, share of deals won) from
:mod:`arena_core.stats`.

Luck control: the reference plays the same deal, seat and opponents; its margin measures how
lucky that deal and seat were. Each player's margin *minus the reference's* (how much better
than the reference it does) then has less per-deal variance than its own margin (the share is
printed: it is real for that quantity). The difference A − B gets no narrower interval from
the reference: the reference's own mean margin is unknown, so a control ``d − β (c − μ_c)``
must estimate ``μ_c`` from the same deals, and ``d̄ − β (c̄ − c̄) = d̄`` is the plain mean
whatever ``β`` (cross-fitting ``β`` leaves it at ``d̄`` up to noise). Its honest interval is
the paired t's; fitting ``β`` and quoting the residual spread (as this module once did)
covered the truth in 83.5% of simulated nulls where A and B respond differently to the
deal's luck. What the reference does tell about A − B is that slope: how differently the two
respond to the deal's luck, printed with its interval.

Results are written in the tournament format (``results.jsonl``), so ``--results`` can
re-analyse them, or analyse any tournament's results where both players played.
"""

from __future__ import annotations

import itertools
import json
import math
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from arena_core.errors import ArenaError, ConfigError
from arena_core.faults import FaultKind
from arena_core.stats import deals_needed, paired_battery, paired_t, regression_slope

from .results import GameResult, Settings
from .schedule import Entrant, Rotations, Schedule


def _label(prefix: str, spec: str) -> str:
    """The entrant name of ``spec`` in role ``prefix``: the spec as written, with an option that is
    a file path shown by its last folder (``A=checkpoint:run=megagem-student`` for
    ``checkpoint:run=$PWD/models/megagem-student``), never the machine's whole path."""
    from pathlib import PurePath

    from arena_core.playerspec import parse_player_spec

    text = spec
    try:
        options = parse_player_spec(spec).options
    except ConfigError:  # not a spec (an entrant name given to --results): shown as written
        options = {}
    for value in options.values():
        if isinstance(value, str) and "/" in value and "://" not in value and PurePath(value).name:
            text = text.replace(value, PurePath(value).name)
    return f"{prefix}={text}".replace("/", "_").replace("|", "_")


def _entrant(name: str, spec: str, seed: int) -> Entrant:
    """A player spec in any spelling of :mod:`arena_core.playerspec` (``name``,
    ``name{key = value, ...}``, ``name:key=value,...``) as a tournament entrant."""
    from arena_core.playerspec import parse_player_spec

    return Entrant.model_validate({"name": name, "player": parse_player_spec(spec), "seed": seed})


def compare_schedule(
    game: str,
    a: str,
    b: str,
    opponents: Sequence[str],
    deals: Sequence[int],
    *,
    reference: str | None = None,
    num_players: int,
    params: dict[str, Any] | None = None,
    rotations: Rotations = "cyclic",
    seed: int = 0,
) -> Schedule:
    """The tables of a comparison: every compared player (and the reference) with every choice
    of ``num_players - 1`` of the opponents, on every deal, in every rotation. A, B and the
    reference get seeds ``seed``, ``seed + 1`` and ``seed + 2`` (so ``compare X X`` plays two
    independently seeded copies of X: a real null), the opponents ``seed + 100 + i``."""
    if num_players < 2:
        raise ConfigError("arena compare needs a game with 2 or more players")
    if len(opponents) < num_players - 1:
        raise ConfigError(f"a {num_players}-player game needs at least {num_players - 1} opponents; add --opponents")
    focal = [_entrant(_label("A", a), a, seed), _entrant(_label("B", b), b, seed + 1)]
    if reference:
        focal.append(_entrant(_label("ref", reference), reference, seed + 2))
    opps = [_entrant(_label(f"opp{i + 1}", o), o, seed + 100 + i) for i, o in enumerate(opponents)]
    entrants = focal + opps
    combos = list(itertools.combinations(range(len(focal), len(entrants)), num_players - 1))
    tables = [(f,) + c for f in range(len(focal)) for c in combos]
    return Schedule(
        game=game,
        params=dict(params or {}),
        num_players=num_players,
        entrants=tuple(entrants),
        tables=tuple(tables),
        deals=tuple(deals),
        rotations=rotations,
        design="compare",
    )


def play(schedule: Schedule, settings: Settings, *, quiet: bool = False, out: Path | None = None) -> list[Any]:
    """Play every game of ``schedule`` in this process; writes ``out/results.jsonl`` when given."""
    from .play import GameContext, play_game
    from .results import ScheduleLine

    ctx = GameContext(schedule, settings, fresh_players=False)
    games = schedule.games()
    results = []
    fh = None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        fh = open(out / "results.jsonl", "w", encoding="utf-8")
        fh.write(ScheduleLine(name="compare", schedule=schedule, settings=settings).model_dump_json() + "\n")
    try:
        for k, sg in enumerate(games, 1):
            result = play_game(ctx, sg, record=False)[0]
            results.append(result)
            if fh is not None:
                fh.write(result.model_dump_json() + "\n")
                fh.flush()
            if not quiet and (k % 50 == 0 or k == len(games)):
                print(f"\r{k}/{len(games)} games", end="" if k < len(games) else "\n", file=sys.stderr, flush=True)
    finally:
        if fh is not None:
            fh.close()
    return results


# ---------------------------------------------------------------------- analysis
def _margin(scores: Sequence[float], i: int) -> float:
    k = len(scores)
    return float(scores[i] - (sum(scores) - scores[i]) / max(k - 1, 1))


def per_deal_margins(games: Iterable[GameResult], name: str) -> dict[int, float]:
    """Deal seed -> the player's mean margin over its games on that deal."""
    acc: dict[int, list[float]] = {}
    for g in games:
        if g.returns is not None and name in g.seats:
            acc.setdefault(g.seed, []).append(_margin(g.returns, g.seats.index(name)))
    return {d: float(np.mean(v)) for d, v in acc.items()}


def reference_margins(games: Sequence[GameResult], name: str, reference: str) -> dict[int, float] | None:
    """Deal seed -> the reference's mean margin on the very games ``name`` played (same deal,
    same seat, same opponents in the same seats); None if any of them has no twin."""
    ref: dict[tuple[int, tuple[str, ...]], float] = {}
    for g in games:
        if g.returns is not None and reference in g.seats:
            seats = tuple("*" if s == reference else s for s in g.seats)
            ref[(g.seed, seats)] = _margin(g.returns, g.seats.index(reference))
    acc: dict[int, list[float]] = {}
    for g in games:
        if g.returns is not None and name in g.seats:
            key = (g.seed, tuple("*" if s == name else s for s in g.seats))
            if key not in ref:
                return None
            acc.setdefault(g.seed, []).append(ref[key])
    return {d: float(np.mean(v)) for d, v in acc.items()}


def _mean_interval(x: np.ndarray, level: float) -> tuple[float, float, float]:
    mean, lo, hi, _ = paired_t(x, level)
    return mean, lo, hi


def entrant_name(games: Sequence[GameResult], name: str, prefix: str) -> str:
    """``name`` if an entrant of ``games`` is called so, else the name :func:`compare_schedule`
    gives the spec ``name`` in the ``prefix`` role (``A=random`` for ``random`` as A), so the
    plain spec strings of the schedule work in the analysis too."""
    seated = {s for g in games for s in g.seats}
    if name in seated:
        return name
    label = _label(prefix, name)
    return label if label in seated else name


def _check_effect(effect: float | None) -> None:
    if effect is not None and not (math.isfinite(effect) and effect > 0):
        raise ConfigError(f"effect must be a positive size of difference to resolve (got {effect}); e.g. --effect 0.5")


def analyse(
    games: Sequence[GameResult],
    a: str,
    b: str,
    *,
    reference: str | None = None,
    effect: float | None = None,
    level: float = 0.95,
    power: float = 0.8,
    seed: int = 0,
    resamples: int = 2000,
) -> dict[str, Any]:
    """The comparison of ``a`` and ``b`` over the deals both played: entrant names, or the plain
    spec strings given to :func:`compare_schedule` (``"random"`` for ``A=random``). ``effect``
    (> 0) sizes the deals needed; default the observed difference."""
    _check_effect(effect)
    a, b = entrant_name(games, a, "A"), entrant_name(games, b, "B")
    if reference is not None:
        reference = entrant_name(games, reference, "ref")
    ma, mb = per_deal_margins(games, a), per_deal_margins(games, b)
    deals = sorted(set(ma) & set(mb))
    if len(deals) < 2:
        raise ConfigError(
            f"{a!r} and {b!r} share {len(deals)} scored deal(s); a paired comparison needs at least 2 (more for intervals that mean much)"
        )
    xa, xb = np.array([ma[d] for d in deals]), np.array([mb[d] for d in deals])
    d = xa - xb
    battery = paired_battery(d, seed=seed, resamples=resamples, level=level)
    out: dict[str, Any] = {
        "a": a,
        "b": b,
        "deals": len(deals),
        "level": level,
        "games": {
            a: sum(1 for g in games if g.returns is not None and a in g.seats),
            b: sum(1 for g in games if g.returns is not None and b in g.seats),
        },
        "mean_margin": {a: float(xa.mean()), b: float(xb.mean())},
        "difference": battery.__dict__,
        "reference": None,
        "faults": fault_counts(games, (a, b) if reference is None else (a, b, reference)),
    }
    sd = battery.sd
    size = effect if effect is not None else abs(battery.mean)
    out["effect"] = size
    out["deals_needed"] = deals_needed(size, sd, level, power) if size > 0 and sd > 0 else None
    if reference is not None:
        ra, rb = reference_margins(games, a, reference), reference_margins(games, b, reference)
        if ra is None or rb is None or any(x not in ra or x not in rb for x in deals):
            out["reference"] = {
                "name": reference,
                "available": False,
                "why": "the reference did not play every deal, seat and opponent set the compared players played",
            }
        else:
            ca, cb = np.array([ra[x] for x in deals]), np.array([rb[x] for x in deals])
            per_player = {}
            for name, x, c in ((a, xa, ca), (b, xb, cb)):
                adj = x - c
                raw_var, adj_var = float(np.var(x, ddof=1)), float(np.var(adj, ddof=1))
                estimate = 1.0 - adj_var / raw_var if raw_var > 0 else None
                # var(x - c) < var(x) exactly when the slope of x on c exceeds 1/2: the reduction
                # is shown only when the slope's interval lies above 1/2 (real, not chance)
                _, slope_low, _, _ = regression_slope(x, c, level)
                per_player[name] = {
                    "raw": _mean_interval(x, level),
                    "controlled": _mean_interval(adj, level),
                    "variance_reduction": estimate if estimate is not None and slope_low > 0.5 else None,
                    "variance_reduction_estimate": estimate,
                }
            c = (ca + cb) / 2
            slope, slope_low, slope_high, slope_p = regression_slope(d, c, level)
            mean, lo, hi, p = paired_t(d, level)
            diff = {
                "mean": mean,
                "low": lo,
                "high": hi,
                "p": p,
                "variance_reduction": None,
                "why": "the reference's own mean is unknown: on the deals A and B share, a luck control leaves the estimate at the plain mean and cannot narrow it",
                "beta": slope,
                "beta_low": slope_low,
                "beta_high": slope_high,
                "beta_p": slope_p,
                "deals_needed": out["deals_needed"],
            }
            out["reference"] = {"name": reference, "available": True, "per_player": per_player, "difference": diff}
    return out


def fault_counts(games: Iterable[GameResult], names: Sequence[str]) -> dict[str, dict[str, int]]:
    """Failed decisions of each named entrant by kind (the kind each fault's game recorded,
    read by :func:`arena_core.faults.fault_of`; faults written before kinds were typed count as
    errors, as in the leaderboard)."""
    out: dict[str, dict[str, int]] = {name: {} for name in names}
    for g in games:
        for f in g.faults:
            if f.player in out:
                kind = (f.kind or FaultKind.ERROR).value
                out[f.player][kind] = out[f.player].get(kind, 0) + 1
    return out


def _iv(lo: float, hi: float) -> str:
    return f"[{lo:+.3f}, {hi:+.3f}]" if math.isfinite(lo) else "[-inf, inf]"


def format_report(r: dict[str, Any]) -> str:
    """The comparison as plain text: the battery side by side, the luck control, deals needed."""
    a, b, dd = r["a"], r["b"], r["difference"]
    pct = f"{r['level']:.0%}"
    lines = [
        f"{a} vs {b}: {r['deals']} shared deals ({r['games'][a]} and {r['games'][b]} games); unit = one deal (its seats and tables averaged)",
        f"mean margin per game: {a} {r['mean_margin'][a]:+.3f}, {b} {r['mean_margin'][b]:+.3f}; difference A-B {dd['mean']:+.3f} (sd per deal {dd['sd']:.3f})",
        "",
        f"{'check':<24}{'estimate':>10}  {pct + ' interval':<22}{'p':>8}",
        f"{'paired t':<24}{dd['mean']:>+10.3f}  {_iv(dd['t_low'], dd['t_high']):<22}{dd['t_p']:>8.4f}",
        f"{'Wilcoxon signed-rank':<24}{'':>10}  {'':<22}{dd['wilcoxon_p']:>8.4f}",
        f"{'deal-cluster bootstrap':<24}{dd['mean']:>+10.3f}  {_iv(dd['bootstrap_low'], dd['bootstrap_high']):<22}{'':>8}",
        f"{'sign test':<24}{dd['sign_positive']:>6} of {dd['sign_nonzero']:<3}{'':<22}{dd['sign_p']:>8.4f}",
        f"{'deals won by A':<24}{dd['win_share']:>10.1%}",
    ]
    faults = r.get("faults") or {}
    shown = [
        f"{name} {sum(k.values())} ({', '.join(f'{kind} {n}' for kind, n in sorted(k.items()))})"
        if k
        else f"{name} none"
        for name, k in faults.items()
    ]
    if shown:
        lines.append("failed decisions: " + "; ".join(shown))
    ref = r.get("reference")
    if ref is None:
        lines.append(
            "luck control: none (give --reference, e.g. megagem_expert, to play the same deals and seats with a reference policy)"
        )
    elif not ref["available"]:
        lines.append(f"luck control ({ref['name']}): not available: {ref['why']}")
    else:
        lines.append("")
        lines.append(f"luck control: {ref['name']} played the same deals, seats and opponents")
        for name, p in ref["per_player"].items():
            raw, ctl = p["raw"], p["controlled"]
            red = (
                "no variance reduction shown: the reference's luck does not track this player's beyond chance"
                if p["variance_reduction"] is None
                else f"variance reduction {p['variance_reduction']:.0%}: of that quantity against the own margin's"
            )
            lines.append(
                f"  {name}: own margin {raw[0]:+.3f} {_iv(raw[1], raw[2])}; own minus the reference's margin on the same games "
                f"{ctl[0]:+.3f} {_iv(ctl[1], ctl[2])} ({red})"
            )
        diff = ref["difference"]
        if diff is not None:
            if not math.isfinite(diff["beta"]):
                slope = "slope of A-B on the reference's margin: none (too few deals or no spread)"
            else:
                differ = diff["beta_low"] > 0 or diff["beta_high"] < 0
                slope = (
                    f"slope of A-B on the reference's margin {diff['beta']:+.2f} {_iv(diff['beta_low'], diff['beta_high'])}, "
                    f"p {diff['beta_p']:.4f}: "
                    + (
                        "A and B respond differently to the deal's luck"
                        if differ
                        else "no sign that A and B respond differently to the deal's luck"
                    )
                )
            lines.append(
                f"  difference A-B: {diff['mean']:+.3f} {_iv(diff['low'], diff['high'])}, p {diff['p']:.4f}, the paired t's: the reference "
                "cannot narrow it (its own mean is unknown, so a control fitted on these deals leaves the plain mean); "
                f"{slope}"
            )
    if r.get("deals_needed"):
        lines.append(
            f"deals needed to resolve a difference of {r['effect']:.3f} (two-sided {pct}, 80% power): {r['deals_needed']}; played {r['deals']}"
        )
    return "\n".join(lines)


# ---------------------------------------------------------------------- command line
def main(argv: Sequence[str] | None = None) -> int:
    """Compare two players on shared deals with seat rotation (or re-analyse a results file)."""
    from arena_core.clierrors import guarded

    return guarded("arena compare", compare_body, argv)


def compare_body(argv: Sequence[str] | None) -> int:
    """Compare two players on shared deals with seat rotation (or re-analyse a results file).

    `arena compare` without its error funnel (the `arena` command, or :func:`main`, runs it in one)."""
    from arena_core.clierrors import OneLineArgumentParser

    p = OneLineArgumentParser(prog="arena compare", description=main.__doc__)
    p.add_argument(
        "a",
        help="player A: a player spec, 'name' or 'name{key=value, ...}' (see arena_core.playerspec; with --results: an entrant name)",
    )
    p.add_argument("b", help="player B, as A")
    p.add_argument("--game", help="registered game id (not with --results)")
    p.add_argument("--params", default="{}", help="game parameters as JSON")
    p.add_argument("--num-players", type=int, help="seats per table (default: the game's default)")
    p.add_argument(
        "--opponents", nargs="+", default=["random"], help="the fixed opponents' player specs (default: random)"
    )
    p.add_argument("--reference", help="a reference policy for the luck control variate, e.g. megagem_expert")
    p.add_argument("--deals", type=int, default=40, help="number of shared deals (seeds seed..seed+deals-1)")
    p.add_argument("--seed", type=int, default=0, help="first deal seed; also seeds the players")
    p.add_argument("--rotations", choices=["cyclic", "all"], default="cyclic")
    p.add_argument("--policy", default="default", help="illegal-action policy (as in tournaments)")
    p.add_argument(
        "--effect", type=float, help="difference in margin to size the deals for (default: the observed one)"
    )
    p.add_argument("--results", help="analyse an existing results file (tournament or compare) instead of playing")
    p.add_argument("--out", help="directory for results.jsonl and compare.json")
    p.add_argument("--json", action="store_true", help="print the analysis as JSON")
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)
    try:
        _check_effect(args.effect)
        if args.results:
            from .results import load_results

            header, games = load_results(args.results)
            names = [e.name for e in header.schedule.entrants]
            a, b = entrant_name(games, args.a, "A"), entrant_name(games, args.b, "B")
            ref = entrant_name(games, args.reference, "ref") if args.reference else None
            for n in (a, b) + ((ref,) if ref else ()):
                if n not in names:
                    raise ConfigError(f"{n!r} is not an entrant of {args.results}; entrants: {', '.join(names)}")
        else:
            if not args.game:
                raise ConfigError("give --game GAME to play (or --results FILE to analyse)")
            from arena_core.registry import make_game

            from .results import Settings

            try:
                params = json.loads(args.params)
            except json.JSONDecodeError as exc:
                raise ConfigError(
                    f'--params is not JSON ({exc}); write e.g. --params \'{{"value_chart": "A"}}\''
                ) from None
            if args.deals < 2:
                raise ConfigError("--deals must be at least 2 (4 or more for intervals that mean much)")
            k = args.num_players or make_game(args.game, params).num_players
            schedule = compare_schedule(
                args.game,
                args.a,
                args.b,
                args.opponents,
                range(args.seed, args.seed + args.deals),
                reference=args.reference,
                num_players=k,
                params=params,
                rotations=args.rotations,
                seed=args.seed,
            )
            from .runner import check_entrants

            check_entrants(schedule)
            games = play(
                schedule, Settings(policy=args.policy), quiet=args.quiet, out=Path(args.out) if args.out else None
            )
            names = [e.name for e in schedule.entrants]
            a, b = names[0], names[1]
            ref = names[2] if args.reference else None
        result = analyse(games, a, b, reference=ref, effect=args.effect, seed=args.seed)
    except ArenaError as exc:
        print(f"arena compare: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # a schedule or entrant that does not validate
        print(f"arena compare: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "compare.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2) if args.json else format_report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
