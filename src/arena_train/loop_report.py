"""The arena loop's report (:mod:`arena_train.loop`): markdown tables of its seeds' result.json
(win rates before and after, the paired difference, the tournaments' ratings of every entrant,
the frontier seat's games and faults) and the plot of the exact training curves. Rendering only:
every number comes from the loop's results, computed by ``arena_core.stats`` and
``arena_tournament.ratings``."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .loop_config import LoopConfig


def _pct(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{100 * x:.1f}"


def _iv(iv: Sequence[float] | None, scale: float = 100.0) -> str:
    if iv is None:
        return "n/a"
    return f"[{scale * iv[0]:.1f}, {scale * iv[1]:.1f}]"


def _diff(d: dict[str, Any]) -> str:
    if d["interval"] is None:
        return "n/a"
    return f"{100 * d['diff']:+.1f} [{100 * d['interval'][0]:+.1f}, {100 * d['interval'][1]:+.1f}]"


def before_after_table(seeds: Sequence[dict[str, Any]]) -> list[str]:
    """Per seed and opponent: the model's win rate before and after (Wilson and deal-clustered
    95% intervals) and the difference after - before paired by deal."""
    lines = [
        "| seed | opponent | before | Wilson 95% | deal-clustered 95% | after | Wilson 95% | deal-clustered 95% "
        "| after - before (paired by deal) | resolved |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in seeds:
        for spec, o in r["opponents"].items():
            b, a, d = o["before"], o["after"], o["after_minus_before"]
            lines.append(
                f"| {r['seed']} | `{spec}` | {_pct(b['win_rate'])} | {_iv(b['wilson'])} | {_iv(b['deal_clustered'])} "
                f"| {_pct(a['win_rate'])} | {_iv(a['wilson'])} | {_iv(a['deal_clustered'])} "
                f"| {_diff(d)} | {'yes' if d['resolved'] else 'no'} |"
            )
    return lines


def _rating(row: dict[str, Any], key: str, digits: int = 0) -> str:
    low, high = row[f"{key}_low"], row[f"{key}_high"]
    span = "no interval" if low is None else f"[{low:.{digits}f}, {high:.{digits}f}]"
    return f"{row[key]:.{digits}f} {span}"


def ratings_table(seeds: Sequence[dict[str, Any]]) -> list[str]:
    """Per seed and tournament: every entrant's rating and rank with 95% intervals (seeds run
    before the loop rated its tournaments have none and are left out)."""
    rated = [r for r in seeds if r.get("ratings")]
    if not rated:
        return []
    lines = [
        "| seed | tournament | entrant | rating [95%] | rank [95%] | games | faults |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rated:
        for phase in ("before", "after"):
            for row in r["ratings"][phase]["leaderboard"]:
                lines.append(
                    f"| {r['seed']} | {phase} | {row['name']} | {_rating(row, 'rating')} | {_rating(row, 'rank')} "
                    f"| {row['games']} | {row['faults']} |"
                )
    return lines


def report_markdown(
    cfg: LoopConfig,
    seeds: list[dict[str, Any]],
    server: dict[str, Any] | None,
    coverage: dict[str, Any] | None,
) -> str:
    """The loop's report: a section per measure, over every finished seed."""
    lines = [
        f"Loop `{cfg.name}` on `{cfg.game}`: {len(seeds)} seed(s); tournaments of {cfg.tournament.deals} deals x 2 seatings "
        f"per pair; the model plays at temperature {cfg.tournament.model_temperature!r}. Win rates in %, 95% intervals: "
        "Wilson (games independent) and deal-clustered; the difference after - before is paired by deal (bootstrap).",
        "",
        *before_after_table(seeds),
        *_ratings_section(seeds),
        *_head_to_head_section(seeds),
        *_exact_section(cfg, seeds),
        *_faults_section(seeds),
        *_server_section(server),
    ]
    if coverage is not None:
        lines += ["", f"Tokenizer coverage: {json.dumps(coverage)}"]
    return "\n".join(lines) + "\n"


def _ratings_section(seeds: Sequence[dict[str, Any]]) -> list[str]:
    ratings = ratings_table(seeds)
    if not ratings:
        return []
    first = next(r for r in seeds if r.get("ratings"))
    legend = "; ".join(f"`{n}`: {who}" for n, who in first["entrants"].items())
    return [
        "",
        "Ratings among all entrants (`arena_tournament.ratings`: Plackett-Luce, Elo scale; "
        f"{first['ratings']['after']['method']}). The re-tournament seats the stock and the trained model "
        f"together, so its ratings put every entrant on one scale. Entrants: {legend}.",
        "",
        *ratings,
    ]


def _head_to_head_section(seeds: Sequence[dict[str, Any]]) -> list[str]:
    head = [r for r in seeds if r.get("rl_vs_stock")]
    if not head:
        return []
    return [
        "",
        "The trained model against the stock one (re-tournament, head to head): "
        + "; ".join(
            f"seed {r['seed']}: {_pct(r['rl_vs_stock']['win_rate'])}% of {r['rl_vs_stock']['games']} games, "
            f"Wilson {_iv(r['rl_vs_stock']['wilson'])}, clustered {_iv(r['rl_vs_stock']['deal_clustered'])}"
            for r in head
        ),
    ]


def _exact_section(cfg: LoopConfig, seeds: Sequence[dict[str, Any]]) -> list[str]:
    exact = [r for r in seeds if r.get("exact")]
    if not exact:
        return []
    keys = [k for k in exact[0]["exact"]["before"] if k != "step"]
    lines = [
        "",
        f"Exact values of the model's sampling policy (`{cfg.analysis}`; no games), before -> after:",
        "",
        "| seed | " + " | ".join(keys) + " |",
        "|---|" + "---|" * len(keys),
    ]
    for r in exact:
        b, a = r["exact"]["before"], r["exact"]["after"]
        lines.append(f"| {r['seed']} | " + " | ".join(f"{b[k]:.4f} -> {a[k]:.4f}" for k in keys) + " |")
    return lines


def _faults_section(seeds: Sequence[dict[str, Any]]) -> list[str]:
    lines = [
        "",
        "Faults of the model (decisions / faults): "
        + "; ".join(
            f"seed {r['seed']}: before {r['faults']['before']['decisions']}/{r['faults']['before']['faults']}, "
            f"after {r['faults']['after']['decisions']}/{r['faults']['after']['faults']}"
            for r in seeds
        ),
    ]
    frontier = [r for r in seeds if r.get("frontier")]
    if frontier:
        lines += [
            "",
            "Frontier seat (evaluation only; games / cut by its cap / decisions / faults): "
            + "; ".join(
                f"seed {r['seed']} {phase} {f['games']}/{f['unplayed']}/{f['decisions']}/{f['faults']}"
                for r in frontier
                for phase, f in r["frontier"].items()
            ),
        ]
    return lines


def _server_section(server: dict[str, Any] | None) -> list[str]:
    if server is None:
        return []
    f = server["faults"]
    rates = ", ".join(f"{spec} {_pct(o['win_rate'])}% of {o['games']}" for spec, o in server["opponents"].items())
    return [
        "",
        f"Plumbing check (stock tiny model via mlx_lm.server + openai player, counted apart): {f['games']} games, "
        f"{f['decisions']} decisions, {f['faults']} faults; win rates {rates}; {server['wall_s']} s.",
    ]


def plot_curves(seeds: list[dict[str, Any]], path: Path, title: str) -> Path | None:
    curves = [(r["seed"], r["exact"]["curve"]) for r in seeds if r.get("exact")]
    if not curves:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = [k for k in curves[0][1][0] if k != "step"]
    fig, axes = plt.subplots(1, len(keys), figsize=(4.3 * len(keys), 3.6), squeeze=False)
    for seed, curve in curves:
        steps = [c["step"] for c in curve]
        for ax, key in zip(axes[0], keys):
            ax.plot(steps, [c[key] for c in curve], label=f"seed {seed}")
    for ax, key in zip(axes[0], keys):
        ax.set_title(key, fontsize=9)
        ax.set_xlabel("GRPO step")
    axes[0][0].legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path
