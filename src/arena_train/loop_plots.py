"""The arena loop's plots (:mod:`arena_train.loop_report` puts them in the page): the re-tournament's
ratings of every entrant on one scale, the training curves (the evaluation win rate against the
anchor beside the generalist's level against it, the mean reward, the entropy), and the game's
exact analysis over the steps. matplotlib draws them (an ImportError says it is missing)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def _png(fig: Any) -> bytes:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    return buf.getvalue()


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


ROLE_COLOURS = {"rl": "#d62728", "stock": "#7f7f7f", "generalist": "#1f77b4", "frontier": "#9467bd"}


def ratings_png(seeds: Sequence[dict[str, Any]]) -> bytes | None:
    """Each seed's re-tournament ratings with 95% intervals, every entrant on one scale, coloured by role."""
    rated = [r for r in seeds if r.get("ratings")]
    if not rated:
        return None
    plt = _pyplot()
    fig, axes = plt.subplots(
        1, len(rated), figsize=(4.6 * len(rated), 0.5 * max(3, len(rated[0]["seats"])) + 1.2), squeeze=False
    )
    for ax, r in zip(axes[0], rated):
        board = r["ratings"]["after"]["leaderboard"][::-1]
        for y, row in enumerate(board):
            role = r["seats"].get(row["name"], {}).get("role", "opponent")
            colour = ROLE_COLOURS.get(role, "#2ca02c")
            if row["rating_low"] is not None:
                ax.plot([row["rating_low"], row["rating_high"]], [y, y], color=colour, lw=2)
            ax.plot([row["rating"]], [y], "o", color=colour)
        ax.set_yticks(range(len(board)), [row["name"] for row in board], fontsize=8)
        ax.set_xlabel("rating (Elo scale), 95% interval", fontsize=8)
        ax.set_title(f"seed {r['seed']}: after training", fontsize=9)
    fig.tight_layout()
    return _png(fig)


def generalist_level(r: dict[str, Any], anchor_label: str | None) -> tuple[str, float] | None:
    """The generalist's win rate against the training's evaluation anchor in the before tournament
    (when the anchor is one of the opponents): the level the training curve is drawn against."""
    g = r.get("generalist")
    if g is None or anchor_label is None:
        return None
    names = {label.strip("`"): n for n, label in r["entrants"].items()}
    anchor = names.get(anchor_label)
    if anchor is None or anchor == g:
        return None
    pair = r.get("opponent_pairs", {})
    if f"{g}|{anchor}" in pair:
        return anchor_label, pair[f"{g}|{anchor}"]["win_rate"]
    if f"{anchor}|{g}" in pair:
        return anchor_label, 1.0 - pair[f"{anchor}|{g}"]["win_rate"]
    return None


def training_png(seeds: Sequence[dict[str, Any]], anchor_label: str | None, title: str | None = None) -> bytes | None:
    """Per seed, over the training steps: the evaluation win rate against the anchor with the
    generalist's level against the same anchor, the mean reward, and the entropy."""
    curves = [r for r in seeds if r.get("curve")]
    if not curves:
        return None
    plt = _pyplot()
    panels = [
        ("eval_win_rate", f"win rate vs {anchor_label or 'the anchor'} (greedy)"),
        ("reward_mean", "mean reward"),
        ("entropy", "entropy"),
    ]
    panels = [(k, t) for k, t in panels if any(k in row for r in curves for row in r["curve"])]
    if not panels:
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(4.3 * len(panels), 3.4), squeeze=False)
    for r in curves:
        for ax, (key, _) in zip(axes[0], panels):
            pts = [(row["step"], row[key]) for row in r["curve"] if key in row]
            line = ax.plot(
                [p[0] for p in pts],
                [p[1] for p in pts],
                marker="." if len(pts) < 30 else None,
                label=f"seed {r['seed']}",
            )
            level = generalist_level(r, anchor_label)
            if key == "eval_win_rate" and level is not None:
                ax.axhline(level[1], ls="--", color=line[0].get_color(), lw=1, label=f"generalist, seed {r['seed']}")
    for ax, (_, heading) in zip(axes[0], panels):
        ax.set_title(heading, fontsize=9)
        ax.set_xlabel("training step", fontsize=8)
    axes[0][0].legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return _png(fig)


def plot_training(seeds: list[dict[str, Any]], path: Path, title: str, anchor_label: str | None = None) -> Path | str:
    """The training curves (:func:`training_png`) written to ``path``; or why not, as a sentence."""
    if not any(r.get("curve") for r in seeds):
        return "no finished seed has a training curve yet"
    try:
        png = training_png(seeds, anchor_label, title)
    except ImportError:
        return "matplotlib is not installed (pip install matplotlib)"
    if png is None:
        return "the training logged none of reward_mean, entropy, eval_win_rate"
    from arena_core.outputs import atomic_write_bytes

    atomic_write_bytes(path, png)
    return path


def plot_curves(seeds: list[dict[str, Any]], path: Path, title: str) -> Path | None:
    """The exact analysis' curves (the config's ``analysis``), every step, every seed."""
    curves = [(r["seed"], r["exact"]["curve"]) for r in seeds if r.get("exact")]
    if not curves:
        return None
    plt = _pyplot()
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
