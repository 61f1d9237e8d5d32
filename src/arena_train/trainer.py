"""The trainer spine, in the mlx-lm style: a trainer is a function

    train(config, run, parts) -> RunSummary

over a validated config, a claimed :class:`~arena_train.run.RunDir` and the injected
:class:`Parts` (whatever the caller leaves out is built from the config). A trainer registers as an
``arena.trainers`` entry point through :class:`TrainerPlugin`, which is what the core's
:class:`arena_core.registry.Trainer` protocol asks for: ``arena train CONFIG`` parses the config,
claims the run directory and calls the function. docs/developing.md, "Adding a trainer", writes one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from arena_core.errors import ArenaError
from arena_core.registry import Progress

from .config import RunConfig, trainer_config
from .run import RunDir

if TYPE_CHECKING:
    from .views import CompactView, Tokenizer

M = TypeVar("M")
C = TypeVar("C", bound=RunConfig)


class SilentPlayerError(ArenaError):
    """The learner's answers were empty, unparseable or illegal above the configured rate: a
    broken run, not a result."""


class StalledRunError(ArenaError):
    """Every advantage was zero for the configured number of steps in a row: the game gave the
    learner no signal (a run that only looks like training). Raised with ``on_stall = "refuse"``."""


class StalledRunWarning(UserWarning):
    """The same finding under ``on_stall = "warn"``: the run goes on, the manifest records where."""


@dataclass(frozen=True)
class Parts(Generic[M]):
    """What a caller injects into a trainer; what is left None is built from the config.

    ``model``: the policy to train (an MLX ``Module`` for the language-model trainers, a
    ``NumericPolicy`` for the numpy policy gradient); ``tokenizer`` comes with an injected language
    model; ``view`` replaces the game's compact view; ``progress`` is called after every step with
    the step and its metrics row."""

    model: M | None = None
    tokenizer: Tokenizer | None = None
    view: CompactView | None = None
    progress: Progress | None = None

    def report(self, step: int, row: Mapping[str, Any]) -> None:
        if self.progress is not None:
            self.progress(step, row)


@dataclass
class RunSummary:
    """What a trainer returns: the run, its metrics rows, and its final numbers (``final_eval``:
    the last evaluation's ``eval_*`` values; ``report``: a trainer's own summary, e.g. expert
    iteration's comparison with the expert; ``files``: what it wrote besides the checkpoints)."""

    run_dir: Path
    run_id: str
    steps: int
    metrics: list[dict[str, Any]]
    status: str = "ok"
    final_eval: dict[str, Any] | None = None
    report: dict[str, Any] | None = None
    files: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The run's final numbers, as ``arena train`` prints them; a run rejected by the
        silent-player guard raises :class:`SilentPlayerError` instead of being reported."""
        if self.status.startswith("rejected"):
            raise SilentPlayerError(f"{self.run_id}: {self.status}")
        out: dict[str, Any] = {"run_id": self.run_id, "steps": self.steps}
        for key in ("final_eval", "report"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return {**out, **self.files}


#: a trainer function, as the spine calls it
TrainFn = Callable[[C, RunDir, Parts[Any]], RunSummary]


@dataclass(frozen=True)
class TrainerPlugin(Generic[C]):
    """A trainer function registered as an ``arena.trainers`` entry point (the core's
    :class:`arena_core.registry.Trainer`): ``run`` validates a config dict with ``config_type``,
    claims the run directory (resuming where the config says) and calls ``train``."""

    name: str
    config_type: type[C]
    train: TrainFn[C]

    def __post_init__(self) -> None:
        """The plugin's docstring is its function's (what ``arena list trainers`` shows)."""
        object.__setattr__(self, "__doc__", self.train.__doc__)

    def parse(self, config: C | Mapping[str, Any]) -> C:
        """``config`` validated (a ConfigError naming the field), whether or not it has the trainer key."""
        return trainer_config(self.config_type, config)

    def __call__(
        self, config: C | Mapping[str, Any], run_dir: str | Path, parts: Parts[Any] | None = None
    ) -> RunSummary:
        """Parse, claim and train: the whole run, from Python."""
        cfg = self.parse(config)
        return self.train(cfg, RunDir.claim(run_dir, resume=cfg.resume_checkpoint()), parts or Parts())

    def run(self, config: Mapping[str, Any], run_dir: Path, *, progress: Progress | None = None) -> dict[str, Any]:
        return self(config, run_dir, Parts(progress=progress)).to_json()
