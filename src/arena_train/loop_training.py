"""The arena loop's training stage for one seed, as one of two plans with the same shape:

- :class:`GRPOTraining` (the ``[train]`` table): one GRPO run in ``seedN/train``; its step-0
  checkpoint is the stock model, its last the trained one; the game's exact analysis (optional)
  is taken at every step (:class:`ExactCurve`).
- :class:`RecipeTraining` (``[[stages]]``): registered trainers run in order in
  ``seedN/train/<stage>``, each given the previous stage's run directory (``{previous}`` in its
  config), e.g. numeric self-play, then expert iteration into the language model with the
  self-play policy as the expert, then a short GRPO polish from the distilled weights
  (``init_from = "{previous}"``). The stock model is the last stage's model as configured, before
  any training (saved by the loop as ``seedN/train/stock``); the trained one is the last stage's
  latest checkpoint. A finished stage is skipped on a rerun; an unfinished one resumes from its
  latest checkpoint when its trainer takes ``resume_from`` (GRPO, residual), else starts again.

Both write ``train.json`` (a :class:`Trained`) when done, report every step to a
:class:`TrainingProgress` (a bar with the reward, the entropy and the ETA), and give the training
curve (:meth:`curve_rows`) the report draws.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena_core.errors import ConfigError
from arena_core.registry import Progress
from arena_core.seeding import derive_seed

from .loop_config import Analysis, Log, LoopConfig, LoopStage, grpo_config, parsed_stage, stage_config

if TYPE_CHECKING:
    from .grpo import GRPOSession
    from .run import RunDir
    from .views import Tokenizer

#: metrics a training curve keeps (the rest stays in each run's metrics.jsonl)
CURVE_KEYS = ("reward_mean", "entropy", "eval_win_rate", "eval_mean", "sft_loss", "eval_agreement")


@dataclass(frozen=True)
class Trained:
    """A finished training (``train.json``)."""

    run_id: str
    train_status: str
    train_s: float
    resumed_from_step: int | None


@dataclass(frozen=True)
class ModelAt:
    """A checkpoint the tournaments seat: a run (or checkpoint) directory and a step (None: the latest)."""

    run: Path
    step: int | None


class TrainingProgress:
    """Training steps on the terminal: a bar per training run (tqdm, on stderr) at the trainer's
    own step, with the step's reward, entropy and evaluation win rate and the ETA; silent when not
    ``enabled``. ``also`` is called with every step too."""

    def __init__(self, *, enabled: bool, also: Progress | None = None) -> None:
        self.enabled, self.also, self.bar = enabled, also, None

    def start(self, label: str, total: int, done: int = 0) -> None:
        """A bar for the next run (a recipe's stage): ``total`` steps, ``done`` already."""
        self.close()
        if self.enabled:
            from tqdm import tqdm  # type: ignore[import-untyped]  # no stubs: types-tqdm is not a dependency

            self.bar = tqdm(total=total, initial=done, desc=label, unit="step", file=sys.stderr, dynamic_ncols=True)

    def __call__(self, step: int, row: Mapping[str, Any]) -> None:
        if self.bar is not None:
            shown = {
                name: fmt.format(row[key])
                for key, name, fmt in (
                    ("reward_mean", "reward", "{:+.3f}"),
                    ("entropy", "entropy", "{:.3f}"),
                    ("eval_win_rate", "eval_win", "{:.3f}"),
                )
                if isinstance(row.get(key), float)
            }
            self.bar.update(max(0, step - self.bar.n))  # trainers that report every N steps move it N at once
            self.bar.set_postfix(shown, refresh=False)
        if self.also is not None:
            self.also(step, row)

    def lines(self, log: Log) -> Log:
        """``log``, printed above the bar while it is shown (not through it)."""
        bar = self.bar
        if bar is None:
            return log
        return lambda line: bar.write(line, file=sys.stderr)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def curve_of(run_dir: Path, stage: str | None = None, offset: int = 0) -> list[dict[str, Any]]:
    """A run's metrics rows as a training curve: the step (plus ``offset``) and :data:`CURVE_KEYS`."""
    from .run import MetricsLog

    rows = []
    for r in MetricsLog(run_dir / "metrics.jsonl").rows():
        kept = {k: r[k] for k in CURVE_KEYS if isinstance(r.get(k), (int, float))}
        if kept:
            rows.append({"step": int(r.get("step", 0)) + offset, **({"stage": stage} if stage else {}), **kept})
    return rows


# ---------------------------------------------------------------------- one GRPO run
class ExactCurve:
    """The game's exact analysis of the sampling policy at every training step (``exact.jsonl``,
    appended a row per step; rows past a resumed checkpoint are dropped once, then replayed)."""

    FILE = "exact.jsonl"

    def __init__(self, out: Path, analysis: Analysis | None, upto: int | None) -> None:
        self.path, self.analysis = out / self.FILE, analysis
        rows = [json.loads(x) for x in self.path.read_text().splitlines() if x.strip()] if self.path.exists() else []
        self.rows = [r for r in rows if upto is None or r["step"] <= upto]
        if upto is not None:
            self.path.write_text("".join(json.dumps(r) + "\n" for r in self.rows))

    def add(self, step: int, session: GRPOSession) -> None:
        if self.analysis is None or (self.rows and self.rows[-1]["step"] == step):
            return
        policy = session.policy()
        from .lm import LMPolicy

        if not isinstance(policy, LMPolicy):  # refused by the config: text answers have no menus
            raise ConfigError("the loop's analysis needs a menu view (view = 'auto' or 'menu')")
        self.rows.append({"step": step, **self.analysis(policy.distributions)})
        with self.path.open("a") as fh:
            fh.write(json.dumps(self.rows[-1]) + "\n")


class GRPOTraining:
    """``[train]``: one GRPO run in ``out/train`` (see the module docstring)."""

    def __init__(self, cfg: LoopConfig, seed: int, out: Path, analysis: Analysis | None) -> None:
        self.cfg, self.seed, self.out = cfg, seed, out
        self.config = grpo_config(cfg, seed)
        self.run_dir = out / "train"
        self.stock = ModelAt(self.run_dir, 0)
        self.final = ModelAt(self.run_dir, self.config.steps)
        self.view, self.temperature = self.config.view, self.config.temperature
        self.analysis = analysis
        self.run: RunDir | None = None
        self.session: GRPOSession | None = None
        self.resumed_from: int | None = None
        self.curve = ExactCurve(out, analysis, None)

    def done(self) -> bool:
        return (self.out / "train.json").exists()

    def prepare(self, log: Log) -> Tokenizer | None:
        """Build the run (the untrained model saved as its step-0 checkpoint, the stock entrant) or
        resume it from its latest checkpoint (a training killed before its step-0 checkpoint starts
        again, cleanly); nothing when it is done. The model's tokenizer, when it was loaded."""
        from . import grpo
        from .run import RunDir, checkpoint_dir
        from .trainer import Parts

        if self.done():
            return None
        try:
            latest: Path | None = checkpoint_dir(self.run_dir)
        except ConfigError:
            latest = None
        if latest is None:
            if self.run_dir.exists():
                shutil.rmtree(self.run_dir)
            (self.out / ExactCurve.FILE).unlink(missing_ok=True)
            self.run = RunDir.claim(self.run_dir)
            self.session = grpo.start(self.config, self.run, Parts())
            grpo.save_checkpoint(self.run, self.session)
        else:
            log(f"seed {self.seed}: resuming the training from {latest.name}")
            self.run = RunDir.claim(self.run_dir, resume=latest)
            self.session = grpo.start(self.config.model_copy(update={"resume_from": str(latest)}), self.run, Parts())
            self.resumed_from = self.session.state.step
        self.curve = ExactCurve(self.out, self.analysis, self.session.state.step)
        self.curve.add(self.session.state.step, self.session)
        return self.session.tokenizer

    def train(self, log: Log, progress: TrainingProgress) -> Trained:
        """GRPO against the snapshot pool, the exact curve a row per step, a log line every 10 steps."""
        from . import grpo
        from .trainer import Parts

        if self.run is None or self.session is None:
            raise ConfigError("prepare the training before running it")
        session, steps = self.session, self.config.steps
        progress.start(f"seed {self.seed} training", steps, session.state.step)

        def each_step(step: int, row: Mapping[str, Any]) -> None:
            self.curve.add(step, session)
            progress(step, row)
            if step % 10 == 0 or step == steps:
                exact = f" exact {self.curve.rows[-1]}" if self.curve.rows else ""
                log(f"seed {self.seed} step {step}/{steps} reward {row['reward_mean']:+.3f}{exact}")

        t0 = time.perf_counter()
        summary = grpo.run_steps(self.run, session, Parts(progress=each_step))
        trained = Trained(summary.run_id, summary.status, round(time.perf_counter() - t0, 1), self.resumed_from)
        log(f"seed {self.seed}: {steps} GRPO steps in {trained.train_s:.0f} s")
        return trained

    def total_steps(self) -> int:
        """The training's steps."""
        return self.config.steps

    def curve_rows(self) -> list[dict[str, Any]]:
        return curve_of(self.run_dir)


# ---------------------------------------------------------------------- a recipe of stages
class RecipeTraining:
    """``[[stages]]``: registered trainers in order (see the module docstring)."""

    def __init__(self, cfg: LoopConfig, seed: int, out: Path) -> None:
        self.cfg, self.seed, self.out = cfg, seed, out
        self.stages: list[LoopStage] = list(cfg.stages or [])
        self.root = out / "train"
        last = parsed_stage(cfg, self.stages[-1], seed, self._previous(len(self.stages) - 1))
        last_config = last.model_dump(mode="json") if last is not None else dict(self.stages[-1].config)
        self.model = dict(last_config.get("model", {}))
        self.view = str(last_config.get("view", "auto"))
        self.temperature = float(last_config.get("temperature", 1.0))
        self.stock = ModelAt(self.root / "stock", 0)
        self.final = ModelAt(self.stage_dir(len(self.stages) - 1), None)
        self.resumed_from: int | None = None

    def stage_dir(self, i: int) -> Path:
        return self.root / f"{i + 1}-{self.stages[i].name}"

    def _previous(self, i: int) -> str | None:
        return str(self.stage_dir(i - 1)) if i > 0 else None

    def done(self) -> bool:
        return (self.out / "train.json").exists()

    def prepare(self, log: Log) -> Tokenizer | None:
        """Save the stock model (the last stage's model as configured, untrained) as a checkpoint
        the ``checkpoint`` player plays, once; its tokenizer when the model was loaded."""
        if (self.stock.run / "checkpoints" / "step_000000" / "state.json").exists():
            return None
        from .config import ModelConfig
        from .lm import save_flat, trainable_model, trainables
        from .run import RunDir

        if self.stock.run.exists():
            shutil.rmtree(self.stock.run)
        model, tokenizer = trainable_model(ModelConfig(**self.model), seed=derive_seed(self.seed, "init"))
        run = RunDir.claim(self.stock.run)
        ckpt = run.checkpoint(0)
        save_flat(ckpt / "trainable.safetensors", trainables(model))
        config = {"game": self.cfg.game, "model": self.model, "view": self.view, "temperature": self.temperature}
        run.save_state(0, {"trainer": "stock", "step": 0, "config": config})
        log(f"seed {self.seed}: the stock model saved as {self.stock.run.name}")
        return tokenizer

    def train(self, log: Log, progress: TrainingProgress) -> Trained:
        """Every stage not yet finished, in order (a stage's ``stage.json`` marks it finished)."""
        from arena_core.registry import load

        from .run import checkpoint_dir

        t0 = time.perf_counter()
        run_ids = []
        for i, stage in enumerate(self.stages):
            run_dir, marker = self.stage_dir(i), self.stage_dir(i).with_suffix(".json")
            if marker.exists():
                run_ids.append(json.loads(marker.read_text())["run_id"])
                continue
            config = stage_config(self.cfg, stage, self.seed, self._previous(i))
            trainer = load("trainers", stage.trainer)
            if run_dir.exists():
                try:
                    latest: Path | None = checkpoint_dir(run_dir)
                except ConfigError:
                    latest = None
                if latest is not None and _takes("resume_from", trainer):
                    log(f"seed {self.seed}: stage {stage.name} resumes from {latest.name}")
                    config = {**{k: v for k, v in config.items() if k != "init_from"}, "resume_from": str(latest)}
                    self.resumed_from = self.resumed_from or i
                else:
                    log(f"seed {self.seed}: stage {stage.name} starts again (its trainer cannot resume it)")
                    shutil.rmtree(run_dir)
            log(f"seed {self.seed}: stage {i + 1}/{len(self.stages)} {stage.name} ({stage.trainer})")
            progress.start(f"seed {self.seed} {stage.name}", _stage_steps(stage.config))
            s0 = time.perf_counter()
            summary = trainer.run(config, run_dir, progress=progress)
            run_id = str(summary.get("run_id", run_dir.name))
            marker.write_text(json.dumps({"run_id": run_id, "trainer": stage.trainer, "summary": summary}, default=str))
            log(f"seed {self.seed}: stage {stage.name} done in {time.perf_counter() - s0:.0f} s")
            run_ids.append(run_id)
        return Trained(" > ".join(run_ids), "ok", round(time.perf_counter() - t0, 1), self.resumed_from)

    def total_steps(self) -> int:
        """The stages' steps, as each trainer counts them."""
        return sum(_stage_steps(stage.config) for stage in self.stages)

    def curve_rows(self) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        for i, stage in enumerate(self.stages):
            part = curve_of(self.stage_dir(i), stage.name, offset=rows[-1]["step"] if rows else 0)
            rows.extend(part)
        return rows


def _stage_steps(config: Mapping[str, Any]) -> int:
    """A stage's steps as its trainer counts them for the progress bar: ``steps``, else ``rounds``,
    else ``episodes`` over ``episodes_per_step`` (tabular self-play), else ``games`` over
    ``batch_games`` (numeric self-play), else 1."""
    if config.get("steps"):
        return int(config["steps"])
    if config.get("rounds"):
        return int(config["rounds"])
    if config.get("episodes"):
        return max(1, int(config["episodes"]) // int(config.get("episodes_per_step", 64)))
    if config.get("games"):
        return max(1, -(-int(config["games"]) // int(config.get("batch_games", 64))))
    return 1


def _takes(option: str, trainer: Any) -> bool:
    """Whether a registered trainer's config has ``option`` (a trainer without a
    :class:`~arena_train.trainer.TrainerPlugin` config is taken not to)."""
    from .trainer import TrainerPlugin

    return isinstance(trainer, TrainerPlugin) and option in trainer.config_type.model_fields


Training = GRPOTraining | RecipeTraining


def training_plan(cfg: LoopConfig, seed: int, out: Path, analysis: Analysis | None) -> Training:
    """The seed's training: one GRPO run, or the recipe of stages."""
    if cfg.train is not None:
        return GRPOTraining(cfg, seed, out, analysis)
    return RecipeTraining(cfg, seed, out)


def write_trained(out: Path, trained: Trained) -> None:
    (out / "train.json").write_text(json.dumps(asdict(trained), indent=2))


def read_trained(out: Path) -> Trained:
    return Trained(**json.loads((out / "train.json").read_text()))
