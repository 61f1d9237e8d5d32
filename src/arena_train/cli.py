"""``arena train CONFIG``: run a trainer from a validated JSON or TOML config.

The config's ``trainer`` key names a plugin of the ``arena.trainers`` entry-point group
(``grpo``, ``expert_iteration``, ``policy_gradient``, or a third party's); the trainer is
constructed as ``Trainer(config_dict, run_dir, progress=callback)`` and ``run()``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from arena_core.errors import ArenaError

EXIT_USER_ERROR = 2


def _load(path: str) -> dict:
    p = Path(path)
    if not p.exists():
        raise ArenaError(f"config file {path!r} does not exist")
    if p.suffix == ".toml":
        try:
            import tomllib
        except ModuleNotFoundError:  # Python 3.10
            import tomli as tomllib

        return tomllib.loads(p.read_text())
    if p.suffix == ".json":
        return json.loads(p.read_text())
    raise ArenaError(f"config {path!r}: use a .json or .toml file")


class _Progress:
    """A progress bar (tqdm when installed, else one line per step)."""

    def __init__(self, total: int, enabled: bool):
        self.bar = None
        self.enabled = enabled
        if enabled:
            try:
                from tqdm import tqdm

                self.bar = tqdm(total=total, unit="step", file=sys.stderr)
            except ImportError:
                self.bar = None

    def __call__(self, step: int, row: dict) -> None:
        if not self.enabled:
            return
        shown = {
            k: round(v, 4)
            for k, v in row.items()
            if isinstance(v, float) and k in ("reward_mean", "kl", "eval_mean", "sft_loss", "eval_agreement")
        }
        if self.bar is not None:
            self.bar.update(1)
            self.bar.set_postfix(shown)
        else:
            print(f"step {step}: {shown}", file=sys.stderr)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="arena train", description="Train a player with a registered trainer (arena.trainers)."
    )
    parser.add_argument("config", help="a .json or .toml config with a 'trainer' key")
    parser.add_argument("--run-dir", default=None, help="output directory (default: runs/<config name>)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=JSON",
        help="override a top-level config key, e.g. --set steps=10",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    try:
        from arena_core.registry import load

        from .config import parse_config

        data = _load(args.config)
        for item in args.set:
            key, eq, value = item.partition("=")
            if not eq:
                raise ArenaError(f"--set {item!r} must look like key=value")
            try:
                data[key] = json.loads(value)
            except json.JSONDecodeError:
                data[key] = value
        if "trainer" not in data:
            raise ArenaError("the config needs a 'trainer' key naming a registered trainer (arena list trainers)")
        if data["trainer"] in ("grpo", "expert_iteration", "policy_gradient"):
            parse_config(data)  # validate before loading models
        trainer_cls = load("trainers", data["trainer"])
        run_dir = Path(args.run_dir or Path("runs") / str(data.get("name", data["trainer"])))
        total = int(data.get("steps", data.get("rounds", 1)))
        progress = _Progress(total, not args.quiet)
        body = {k: v for k, v in data.items() if k != "trainer"}
        try:
            result = trainer_cls(body, run_dir, progress=progress).run()
        finally:
            progress.close()
        summary = (
            result.report()
            if hasattr(result, "report")
            else {k: v for k, v in result.items() if k in ("run_id", "final_eval", "report")}
        )
    except ArenaError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    print(json.dumps(summary, indent=2, default=str))
    print(f"run directory: {run_dir}", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
