"""The run manifest (who, what, from which parent) and the metrics plot of a run directory
(:class:`arena_train.run.RunDir`). The run id is a hash of the config and the parent's id, so the
same config from the same parent always has the same id.
"""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

#: the development install (turn-arena) or the four distributions, whichever is installed
PACKAGES = (
    "turn-arena",
    "turn-arena-core",
    "turn-arena-games",
    "turn-arena-players",
    "turn-arena-train",
    "numpy",
    "mlx",
    "mlx-lm",
    "pydantic",
    "tokenizers",
    "matplotlib",
)


def package_versions(names: Iterable[str] = PACKAGES) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def git_revision(cwd: str | Path | None = None) -> dict[str, Any]:
    """The checkout's commit and whether it had uncommitted changes (None outside git)."""
    here = Path(cwd) if cwd else Path(__file__).resolve().parent
    try:
        rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=10)
        if rev.returncode != 0:
            return {"commit": None, "dirty": None}
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=10,
        )
        return {"commit": rev.stdout.strip(), "dirty": bool(dirty.stdout.strip())}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def config_diff(parent: dict[str, Any] | None, child: dict[str, Any], prefix: str = "") -> dict[str, dict[str, Any]]:
    """``{"a.b": {"parent": old, "run": new}}`` for every leaf that differs."""
    if parent is None:
        return {}
    out: dict[str, dict[str, Any]] = {}
    for key in sorted(set(parent) | set(child)):
        a, b = parent.get(key), child.get(key)
        name = f"{prefix}{key}"
        if isinstance(a, dict) and isinstance(b, dict):
            out.update(config_diff(a, b, name + "."))
        elif a != b:
            out[name] = {"parent": a, "run": b}
    return out


def run_id(config: dict[str, Any], parent_id: str | None) -> str:
    h = hashlib.blake2b(digest_size=6)
    h.update(json.dumps(config, sort_keys=True).encode())
    h.update((parent_id or "").encode())
    return f"{config.get('name', 'run')}-{h.hexdigest()}"


def read_manifest(run_dir: str | Path) -> dict[str, Any]:
    from arena_core.errors import ConfigError

    path = Path(run_dir) / "manifest.json"
    if not path.exists():
        raise ConfigError(f"{run_dir} holds no manifest.json; parent_run must name a run directory")
    manifest = json.loads(path.read_text())
    if not isinstance(manifest, dict):
        raise ConfigError(f"{path} is not a run manifest (a JSON object)")
    return manifest


def build_manifest(
    config: dict[str, Any],
    *,
    seeds: dict[str, int],
    parent_dir: str | Path | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    parent = read_manifest(parent_dir) if parent_dir else None
    parent_id = parent["run_id"] if parent else None
    return {
        "run_id": run_id(config, parent_id),
        "parent_run": parent_id,
        "parent_dir": str(parent_dir) if parent_dir else None,
        "config": config,
        "config_diff_from_parent": config_diff(parent["config"] if parent else None, config),
        "seeds": seeds,
        "packages": package_versions(),
        "python": platform.python_version(),
        "git": git_revision(),
        **(extra or {}),
    }


def write_manifest(run_dir: str | Path, manifest: dict[str, Any]) -> Path:
    path = Path(run_dir) / "manifest.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True, default=str))
    tmp.replace(path)
    return path


def plot_metrics(
    rows: list[dict[str, Any]],
    path: str | Path,
    *,
    keys: tuple[str, ...] = ("reward_mean", "kl", "clip_frac", "eval_mean"),
    title: str = "",
) -> Path | None:
    """A PNG with one panel per key present in ``rows`` (None if matplotlib is missing)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    present = [k for k in keys if any(k in r for r in rows)]
    if not present:
        return None
    fig, axes = plt.subplots(len(present), 1, figsize=(6, 2.2 * len(present)), sharex=True, squeeze=False)
    for ax, key in zip(axes[:, 0], present):
        pts = [(r["step"], r[key]) for r in rows if key in r and r[key] is not None]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="." if len(pts) < 40 else None)
        lo, hi = f"{key}_low", f"{key}_high"
        band = [(r["step"], r[lo], r[hi]) for r in rows if lo in r and hi in r]
        if band:
            ax.fill_between([b[0] for b in band], [b[1] for b in band], [b[2] for b in band], alpha=0.25)
        ax.set_ylabel(key)
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("step")
    if title:
        axes[0, 0].set_title(title)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return out
