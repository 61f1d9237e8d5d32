"""The study's figures: normalised score against k per archetype (one run, or several runs
merged: one figure per archetype), and per-copy histograms of the labels and listing positions
chosen. Each takes plain cell dicts (``CellScore.to_json()`` / ``summary.json["cells"]``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .payoffs import ARCHETYPE_NAMES, ARCHETYPES
from .scoring import NEAR_WORST

if TYPE_CHECKING:  # pragma: no cover - matplotlib (the "study" extra) is imported only to draw
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

_STYLE = {"shared": "-", "independent": (0, (4, 2))}
_COLOURS = ("tab:blue", "tab:orange", "tab:purple", "tab:brown", "tab:cyan", "tab:olive", "tab:pink")


def _plt() -> ModuleType:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _draw_archetype(
    ax: Axes, series: dict[str, list[dict[str, Any]]], archetype: str, *, annotate_n: bool = True
) -> None:
    """One panel: every series' score against k with its interval, and the reference lines."""
    any_cells = [c for cells in series.values() for c in cells]
    ref = {c["k"]: c for c in any_cells}
    ks = sorted(ref)
    ax.axhspan(0, NEAR_WORST, color="0.92", lw=0)
    ax.plot(ks, [ref[k]["uniform_score"] for k in ks], color="0.55", lw=1.4, ls=":", label="uniform play")
    ax.plot(ks, [ref[k]["baseline_score"] for k in ks], color="black", lw=1.2, ls="--", label="Nash baseline")
    ceil = [(k, ref[k]["ceiling_score"]) for k in ks if ref[k].get("ceiling_score") is not None]
    if ceil:
        ax.plot([k for k, _ in ceil], [v for _, v in ceil], color="black", lw=1.0, ls="-.", label="symmetric ceiling")
    players = list(dict.fromkeys(name.rsplit(" (", 1)[0] for name in series))
    for n, (name, cells) in enumerate(series.items()):
        pts = sorted((c for c in cells if c.get("score") is not None), key=lambda c: c["k"])
        if not pts:
            continue
        x = [c["k"] + 0.08 * (n - (len(series) - 1) / 2) for c in pts]
        y = [c["score"] for c in pts]
        err = [[c["score"] - c["score_low"] for c in pts], [c["score_high"] - c["score"] for c in pts]]
        listing = pts[0].get("listing", "shared")
        colour = (
            _COLOURS[players.index(name.rsplit(" (", 1)[0]) % len(_COLOURS)]
            if len(players) > 1
            else _COLOURS[n % len(_COLOURS)]
        )
        line = ax.errorbar(
            x,
            y,
            yerr=err,
            fmt="o" if listing == "shared" else "s",
            ls=_STYLE.get(listing, "-"),
            ms=3.5,
            capsize=2,
            lw=1,
            color=colour,
            mfc=colour if listing == "shared" else "white",
            label=name,
        )
        if annotate_n:
            for xi, yi, c in zip(x, y, pts):
                ax.annotate(
                    str(c["scored"]),
                    (xi, yi),
                    textcoords="offset points",
                    xytext=(3, 3),
                    fontsize=5.5,
                    color=line[0].get_color(),
                )
    ax.set_title(ARCHETYPES[archetype].title, fontsize=9)
    ax.set_xlabel("k (actions)")
    ax.set_xticks(ks)
    ax.set_ylim(-0.05, 1.05)


def plot_study(cells: Sequence[dict[str, Any]], path: str | Path, *, title: str = "") -> Path:
    """All archetypes of one run, one panel each; shared and independent listings as two series."""
    plt = _plt()
    archetypes = list(dict.fromkeys(c["archetype"] for c in cells))
    cols = min(4, len(archetypes))
    rows = (len(archetypes) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.8 * cols, 3.1 * rows), squeeze=False, sharey=True)
    for ax, archetype in zip(axes.ravel(), archetypes):
        series: dict[str, list[dict[str, Any]]] = {}
        for c in cells:
            if c["archetype"] == archetype:
                series.setdefault(f"{c.get('listing', 'shared')} listing", []).append(c)
        _draw_archetype(ax, series, archetype)
    for ax in axes.ravel()[len(archetypes) :]:
        ax.axis("off")
    axes[0][0].set_ylabel("normalised score s")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=5, fontsize=8, frameon=False)
    fig.suptitle(f"{title} (numbers: scored trials per point; grey band: s <= {NEAR_WORST})", fontsize=9)
    fig.tight_layout(rect=(0, 0.07, 1, 0.95))
    return _save(fig, path)


def _save(fig: Figure, path: str | Path) -> Path:
    """Write ``fig`` to ``path`` and free it."""
    import matplotlib.pyplot as plt

    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def load_run(run_dir: str | Path) -> tuple[str, list[dict[str, Any]]]:
    """(player, cells) from a finished run's ``summary.json``."""
    from .merge import entrant_name, read_summary  # the legend names entrants, not raw specs with base URLs

    data = read_summary(run_dir)

    config = data.get("config", {})
    player = (
        entrant_name(str(config.get("player", run_dir)))
        if data.get("self_play", True)
        else f"{entrant_name(str(config.get('player')))} vs {entrant_name(str(config.get('opponent')))}"
    )
    return player, list(data.get("cells", []))


def merge_runs(
    run_dirs: Iterable[str | Path],
    out_dir: str | Path,
    *,
    archetypes: Sequence[str] = ARCHETYPE_NAMES,
    listings: Sequence[str] | None = None,
) -> list[Path]:
    """One figure per archetype (``<archetype>.png`` in ``out_dir``) with every run's score
    against k and its interval, the uniform, Nash and ceiling lines, and n per point."""
    runs = [load_run(d) for d in run_dirs]
    if not runs:
        raise ValueError("merge needs at least one run directory")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    plt = _plt()
    written = []
    for archetype in archetypes:
        series: dict[str, list[dict[str, Any]]] = {}
        for player, cells in runs:
            for c in cells:
                if c["archetype"] == archetype and (listings is None or c.get("listing", "shared") in listings):
                    series.setdefault(f"{player} ({c.get('listing', 'shared')})", []).append(c)
        if not series:
            continue
        fig, ax = plt.subplots(figsize=(7.0, 5.4))
        _draw_archetype(ax, series, archetype)
        ax.set_ylabel("normalised score s (welfare: worst cell 0, best 1)")
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, frameon=False)
        ax.set_title(f"{ARCHETYPES[archetype].title} (numbers: scored trials per point)", fontsize=9)
        fig.tight_layout()
        path = out / f"{archetype}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    if not written:
        raise ValueError(f"none of the runs has cells for {', '.join(archetypes)}")
    return written


def plot_choices(rows: Sequence[dict[str, Any]], path: str | Path, *, title: str = "") -> Path:
    """Per copy (seat): histograms of the labels chosen and of the listing positions chosen,
    one bar series per listing condition (read answers only)."""
    plt = _plt()
    fig, axes = plt.subplots(2, 2, figsize=(9, 5.2), squeeze=False)
    listings = list(dict.fromkeys(r["listing"] for r in rows))
    for seat in (0, 1):
        for col, (field, name) in enumerate(((f"label_{seat}", "label"), (f"position_{seat}", "listing position"))):
            ax = axes[col][seat]
            width = 0.8 / max(1, len(listings))
            is_label = field.startswith("label")
            values = {
                lst: [
                    v if is_label else int(v)
                    for v in (r[field] for r in rows if r["listing"] == lst)
                    if v not in ("", None)
                ]
                for lst in listings
            }
            keys = sorted(
                {v for vals in values.values() for v in vals}, key=lambda v: (len(str(v)), str(v)) if is_label else v
            )
            for n, listing in enumerate(listings):
                vals = values[listing]
                total = max(1, len(vals))
                xs = [i + (n - (len(listings) - 1) / 2) * width for i in range(len(keys))]
                ax.bar(xs, [vals.count(key) / total for key in keys], width=width, label=f"{listing} (n={len(vals)})")
            ax.set_xticks(range(len(keys)))
            ax.set_xticklabels([str(key if is_label else key + 1) for key in keys], fontsize=7)
            ax.set_title(f"copy {seat}: {name} chosen", fontsize=9)
            ax.set_ylabel("share", fontsize=8)
            ax.legend(fontsize=7, frameon=False)
    fig.suptitle(f"{title}: what each copy chose (all cells pooled)", fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return _save(fig, path)
