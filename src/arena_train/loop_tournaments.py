"""The arena loop's tournaments and what it measures from them: round robins through the
tournament runner (resumable, and extended in place when a seat joins: :func:`extend_results`),
the tournament's own ratings and report page (with its drill-down), what each entrant reads and how
it answers (:func:`seat_formats`), head-to-head win rates with a Wilson and a deal-clustered
interval, after-minus-before differences paired by deal, the faults of an entrant, and how the
model's tokenizer covers the game's actions.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena_core.errors import ConfigError
from arena_core.playerspec import PlayerSpec
from arena_core.stats import cluster_mean, paired_bootstrap, wilson_interval

from .loop_config import Log

if TYPE_CHECKING:
    from arena_tournament.config import RatingOptions, TournamentConfig
    from arena_tournament.results import GameResult
    from arena_tournament.schedule import Entrant

    from .views import Tokenizer

#: per deal seed: (wins, games) of one entrant against another
HeadToHead = dict[int, tuple[float, int]]


def entrant(name: str, spec: PlayerSpec, seed: int) -> Entrant:
    """A tournament entrant of the parsed ``spec``, named ``name``."""
    from arena_tournament.schedule import Entrant

    return Entrant(name=name, player=spec.name, options=dict(spec.options), seed=seed)


def opponent_names(opponents: Sequence[PlayerSpec]) -> list[str]:
    return [f"opp{i + 1}-{o.name}" for i, o in enumerate(opponents)]


def run_tournament_games(
    name: str,
    game: str,
    entrants: list[Entrant],
    deals: int,
    seed: int,
    out: Path,
    policy: str = "default",
    ratings: RatingOptions | None = None,
    log: Log | None = None,
    quiet: bool = True,
) -> list[GameResult]:
    """A round robin of ``entrants`` on ``deals`` shared deals (both seatings); its games. A
    results file already in ``out`` is continued (the runner's resume; a changed schedule or
    entrant is refused there), and extended when ``entrants`` adds to it (:func:`extend_results`).
    Unless ``quiet``, the runner's progress bar (games, rate, ETA) is on the terminal."""
    from arena_tournament.config import RatingOptions, RunOptions, TournamentConfig
    from arena_tournament.results import load_results
    from arena_tournament.runner import run_tournament

    config = TournamentConfig(
        name=name,
        game=game,
        entrants=entrants,
        deals=deals,
        seed=seed,
        output=str(out),
        run=RunOptions(backend="sequential", fresh_players=False, policy=policy),
        ratings=ratings or RatingOptions(bootstrap=0),
    )
    added = extend_results(config)
    if added and log is not None:
        log(f"{name}: {', '.join(added)} joins the recorded games (only the games with it are played)")
    report = run_tournament(config, quiet=quiet)
    if log is not None:
        log(f"{name}: {report.played} games played, {report.already_recorded} already recorded")
    return load_results(out)[1]


def extend_results(config: TournamentConfig) -> list[str]:
    """The entrants ``config`` adds to a tournament already recorded in its output with fewer of
    them (the same game, deals, settings and other entrants, each unchanged): the results file's
    schedule line is rewritten for the whole schedule (atomically; every game line kept as it
    is), so the runner then plays only the new entrant's games. Anything else is left to the
    runner's own check (which refuses a changed schedule or entrant in one line)."""
    from arena_core.outputs import RunLock, atomic_write_text
    from arena_tournament.entrants import preflight_entrants, resolve_schedule
    from arena_tournament.results import ResultsFile, ScheduleLine
    from arena_tournament.runner import settings_of

    path = Path(config.output) / "results.jsonl"
    if not path.exists():
        return []
    with RunLock(path.parent):
        results = ResultsFile(path)
        results.drop_torn_tail()
        header, _ = results.read()
        if header is None:
            return []
        schedule = resolve_schedule(config)
        old = {e.name: e for e in header.schedule.entrants}
        added = [e for e in schedule.entrants if e.name not in old]
        kept = [e for e in schedule.entrants if e.name in old]
        same = header.schedule.model_copy(update={"entrants": schedule.entrants, "tables": schedule.tables})
        if (
            not added
            or len(kept) != len(old)
            or any(old[e.name] != e for e in kept)
            or same != schedule
            or header.settings != settings_of(config.run)
        ):
            return []
        identities = preflight_entrants(schedule.model_copy(update={"entrants": tuple(added)}))
        line = header.model_copy(update={"schedule": schedule, "identities": {**header.identities, **identities}})
        first, _, rest = path.read_text(encoding="utf-8").partition("\n")
        if json.loads(first).get("type") != "schedule":  # pragma: no cover - read() found the schedule line first
            return []
        atomic_write_text(path, ScheduleLine.model_validate(line.model_dump()).model_dump_json() + "\n" + rest)
    return [e.name for e in added]


#: a leaderboard row's fields kept in result.json (the full summary is the tournament's summary.json)
RATING_FIELDS = ("name", "rating", "rating_low", "rating_high", "rank", "rank_low", "rank_high", "games", "faults")


def rate_tournament(out: Path, options: RatingOptions, *, page: bool = True) -> dict[str, Any]:
    """The tournament's own ratings of every entrant (:func:`arena_tournament.ratings.summarize`
    with the fault audit, as ``arena ratings`` computes them), written to ``out/summary.json``, and
    (``page``) its report page ``out/report.html`` with the drill-down (every game, each decision's
    prompt and answer, the seat's view, usage), as ``arena report`` writes it; the leaderboard,
    the rating differences of every pair with their intervals, and what each entrant reads and how
    it answers."""
    from arena_tournament.audit import attach_faults
    from arena_tournament.ratings import summarize
    from arena_tournament.report import write_html, write_json
    from arena_tournament.results import load_results

    header, games = load_results(out)
    summary = attach_faults(
        summarize(
            header,
            games,
            resamples=options.bootstrap,
            regularization=options.regularization,
            base=options.base,
            seed=options.seed,
            min_pair_games=options.min_pair_games,
        ),
        header,
        games,
    )
    write_json(summary, out / "summary.json")
    if page:
        write_html(summary, out / "report.html", results=out)
    modes = {r.name: r.mode for r in summary.leaderboard}
    return {
        "method": summary.method.intervals,
        "note": summary.note,
        "leaderboard": [r.model_dump(mode="json", include=set(RATING_FIELDS)) for r in summary.leaderboard],
        "pairs": [p.model_dump(mode="json") for p in summary.rating_pairs],
        "seats": {n: {**f, "mode": modes.get(n)} for n, f in seat_formats(header.identities).items()},
    }


def seat_formats(identities: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, str]]:
    """What each entrant reads and how it answers, from its resolved identity (the tournament
    records it): a checkpoint by the view it was trained on (its compact view or the game's menu
    answered by one menu token, or the game's text view answered in the title's action strings
    under constrained decoding), a text player (OpenAI-compatible, MLX) by its prompt view and
    mode (free text that the game parses, or constrained text), anything else as a program that
    reads the game's observation and picks a legal action."""
    out = {}
    for name, ident in identities.items():
        params = ident.get("params") or {}
        view, mode = params.get("view_name"), ident.get("mode")
        if view in ("auto", "compact"):
            reads, answers = "the game's compact view", "menu (one token per move)"
        elif view == "menu":
            reads, answers = "the game's prompt with a lettered menu", "menu (one token per move)"
        elif view == "text":
            reads, answers = "the game's text view", "constrained text (the title's action strings)"
        elif mode in ("free", "constrained"):
            shown = params.get("view") or "snapshot"
            reads = "the game's text view" if shown == "snapshot" else f"the game's {shown} view"
            answers = "free text (parsed by the game)" if mode == "free" else "constrained text (legal strings only)"
        else:
            reads, answers = "the game's observation", "a legal action (a program)"
        out[name] = {"reads": reads, "answers": answers}
    return out


def head_to_head(games: Sequence[GameResult], name: str, opponent: str) -> HeadToHead:
    """Deal seed -> (wins of ``name`` against ``opponent``, games); a tie counts one half."""
    per: dict[int, list[float]] = {}
    for g in games:
        if g.returns is None or set(g.seats) != {name, opponent}:
            continue
        me, them = g.returns[g.seats.index(name)], g.returns[g.seats.index(opponent)]
        per.setdefault(int(g.seed), []).append(1.0 if me > them else (0.5 if me == them else 0.0))
    return {d: (sum(v), len(v)) for d, v in per.items()}


def faults_of(games: Sequence[GameResult], name: str) -> dict[str, int]:
    """``name``'s decisions, faults and games (``unplayed``: games its spending cap cut)."""
    decisions = sum((g.decisions[g.seats.index(name)] if g.decisions else 0) for g in games if name in g.seats)
    faults = sum(1 for g in games for f in g.faults if f.player == name)
    mine = [g for g in games if name in g.seats]
    return {
        "decisions": int(decisions),
        "faults": int(faults),
        "games": len(mine),
        "unplayed": sum(1 for g in mine if g.unplayed),
    }


def win_rate(h2h: HeadToHead) -> dict[str, Any]:
    wins = sum(w for w, _ in h2h.values())
    n = sum(c for _, c in h2h.values())
    lo, hi = wilson_interval(wins, n)
    clustered = None
    if len(h2h) >= 2:  # a deal-clustered interval needs 2 deals or more
        cm = cluster_mean([w for w, _ in h2h.values()], [c for _, c in h2h.values()], bounds=(0.0, 1.0), null=0.5)
        clustered = [cm.low, cm.high]
    return {
        "win_rate": wins / n if n else math.nan,
        "games": n,
        "deals": len(h2h),
        "wilson": [lo, hi],
        "deal_clustered": clustered,
    }


def difference(after: HeadToHead, before: HeadToHead, seed: int, resamples: int) -> dict[str, Any]:
    common = sorted(set(after) & set(before))
    if len(common) < 2:  # e.g. a capped frontier seat that played too few deals in one of them
        return {"diff": math.nan, "interval": None, "deals": len(common), "resolved": False}
    a = [after[d][0] / after[d][1] for d in common]
    b = [before[d][0] / before[d][1] for d in common]
    iv = paired_bootstrap(a, b, seed=seed, resamples=resamples, bounds=(-1.0, 1.0))  # win-rate differences
    return {"diff": iv.mean, "interval": [iv.low, iv.high], "deals": iv.n, "resolved": iv.low > 0 or iv.high < 0}


def tokenizer_coverage(game_id: str, tokenizer: Tokenizer) -> dict[str, Any]:
    """How the model's tokenizer encodes the game's action strings (its action-index space, read
    through the protocol: ``action_to_str(action_from_id(i))``) and the compact view's labels."""
    from arena_core.registry import make_game
    from arena_core.views import get_view

    from .rollout import seat_to_act
    from .views import ActionTokens

    game = make_game(game_id)
    tokens = ActionTokens(tokenizer)
    strings = [game.action_to_str(game.action_from_id(i)) for i in range(game.num_actions)]
    vocab = {a: len(tokens.encode_text(a)) for a in strings}
    roundtrip = all(tokenizer.decode(tokens.encode_text(a)) == a for a in vocab)
    out: dict[str, Any] = {"action_tokens": vocab, "roundtrip": roundtrip}
    try:
        view = get_view(game, "compact")
        pos = game.start(0)
        menu = view.menu(game, pos, seat_to_act(game, pos))
        out["compact_labels_single_token"] = all(len(tokens.encode_text(lb)) == 1 for lb in menu.labels)
        out["compact_prompt_tokens"] = len(tokens.encode_text(menu.text))
    except ConfigError:
        pass
    return out
