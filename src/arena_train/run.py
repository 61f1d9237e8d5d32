"""The run directory every trainer writes: claimed once, then the manifest, the metrics and the
checkpoints, and the restore point a resumed run continues from.

Layout (docs/training.md)::

    RUN_DIR/manifest.json          who, what, from which parent (arena_train.manifest)
    RUN_DIR/metrics.jsonl          one JSON object per step; evaluation rows carry eval_* keys
    RUN_DIR/metrics.png            the curves, at the end
    RUN_DIR/checkpoints/step_NNNNNN/state.json   the trainer's state at step N (+ its arrays)

A directory that already holds a run is refused (runs never mix), except by a run that resumes
from one of its own checkpoints.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena_core.errors import ConfigError

from .manifest import build_manifest, plot_metrics, write_manifest

CHECKPOINTS = "checkpoints"
STATE = "state.json"


class MetricsLog:
    """Append-only JSON lines; ``truncate_after(step)`` drops rows past a resumed checkpoint."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def append(self, row: Mapping[str, Any]) -> None:
        with self.path.open("a") as fh:
            fh.write(json.dumps(row, sort_keys=True) + "\n")

    def rows(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text().splitlines() if line.strip()]

    def write(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Replace the file by ``rows`` (a fresh run: none; a resumed one: those up to its step)."""
        self.path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))

    def truncate_after(self, step: int) -> None:
        self.write([r for r in self.rows() if r.get("step", 0) <= step])


def checkpoint_dir(path: str | Path) -> Path:
    """A checkpoint directory (holding ``state.json``), or a run directory's latest checkpoint."""
    path = Path(path)
    if (path / STATE).exists():
        return path
    found = sorted((path / CHECKPOINTS).glob("step_*")) if (path / CHECKPOINTS).exists() else []
    found = [f for f in found if (f / STATE).exists()]
    if not found:
        raise ConfigError(f"{str(path)!r} is neither a checkpoint (state.json) nor a run directory with checkpoints/")
    return found[-1]


def read_state(checkpoint: Path) -> dict[str, Any]:
    state = json.loads((checkpoint / STATE).read_text())
    if not isinstance(state, dict):
        raise ConfigError(f"{checkpoint / STATE} is not a trainer state (a JSON object)")
    return state


@dataclass
class RunDir:
    """One training run's directory (see the module docstring). ``resume``: the checkpoint this
    run continues (claimed with it; None for a fresh run)."""

    path: Path
    resume: Path | None = None
    manifest: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def claim(cls, path: str | Path, *, resume: str | Path | None = None) -> RunDir:
        """The run directory at ``path``, refused when it already holds a run (manifest, metrics or
        checkpoints) unless ``resume`` names one of its own checkpoints."""
        run = Path(path)
        ckpt = checkpoint_dir(resume) if resume is not None else None
        used = [n for n in ("manifest.json", "metrics.jsonl", CHECKPOINTS) if (run / n).exists()]
        if used and not (ckpt is not None and ckpt.resolve().parent.parent == run.resolve()):
            raise ConfigError(
                f"run directory {str(run)!r} already holds a run ({', '.join(used)}); choose a new directory "
                "(runs never mix), or resume_from one of its checkpoints to continue it"
            )
        run.mkdir(parents=True, exist_ok=True)
        return cls(run, ckpt)

    @property
    def metrics(self) -> MetricsLog:
        return MetricsLog(self.path / "metrics.jsonl")

    # ------------------------------------------------------------------ the manifest
    def start(
        self,
        config: Mapping[str, Any],
        *,
        trainer: str,
        seeds: dict[str, int],
        parent: str | Path | None,
        **extra: Any,
    ) -> dict[str, Any]:
        """Write the manifest of a starting (or resumed) run; its run id is a hash of the config
        and the parent's id."""
        self.manifest = build_manifest(
            dict(config), seeds=seeds, parent_dir=parent, extra={"trainer": trainer, **extra}
        )
        write_manifest(self.path, self.manifest)
        return self.manifest

    @property
    def run_id(self) -> str:
        return str(self.manifest["run_id"])

    def finish(self, **fields: Any) -> None:
        """Add the run's outcome (status, final numbers, wall time) to the manifest."""
        self.manifest.update(fields)
        write_manifest(self.path, self.manifest)

    def plot(self, rows: Sequence[dict[str, Any]], keys: tuple[str, ...]) -> Path | None:
        return plot_metrics(list(rows), self.path / "metrics.png", keys=keys, title=self.run_id)

    # ------------------------------------------------------------------ checkpoints
    def checkpoint(self, step: int) -> Path:
        """The directory of the checkpoint at ``step`` (created)."""
        path = self.path / CHECKPOINTS / f"step_{step:06d}"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def save_state(self, step: int, state: Mapping[str, Any]) -> Path:
        """``checkpoints/step_NNNNNN/state.json``, written last: a checkpoint is complete once it is there."""
        path = self.checkpoint(step)
        (path / STATE).write_text(json.dumps(dict(state), indent=2))
        return path

    def resumed_metrics(self, step: int) -> list[dict[str, Any]]:
        """The metrics rows up to ``step`` of the run whose checkpoint this run resumes (a trainer
        writes them back as this run's once its state is restored; later rows are replayed)."""
        if self.resume is None:
            raise ConfigError("resumed_metrics needs a run that resumes from a checkpoint")
        return [r for r in MetricsLog(self.resume.parent.parent / "metrics.jsonl").rows() if r.get("step", 0) <= step]
