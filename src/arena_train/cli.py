"""``arena train CONFIG``: run a trainer from a validated JSON or TOML config.

The config's ``trainer`` key names a plugin of the ``arena.trainers`` entry-point group
(``grpo``, ``expert_iteration``, ``policy_gradient``, ``selfplay_pg``, or a third party's), an object
of the core's :class:`arena_core.registry.Trainer` protocol: ``trainer.run(config, run_dir,
progress=callback)`` validates the config, trains, and returns the summary printed here.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from arena_core.errors import ArenaError

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

EXIT_USER_ERROR = 2


def _load(path: str) -> dict[str, Any]:
    p = Path(path)
    if not p.exists():
        raise ArenaError(f"config file {path!r} does not exist")
    if p.suffix == ".toml":
        return tomllib.loads(p.read_text())
    if p.suffix == ".json":
        data = json.loads(p.read_text())
        if not isinstance(data, dict):
            raise ArenaError(f"config {path!r}: the JSON file must hold an object (key: value pairs)")
        return data
    raise ArenaError(f"config {path!r}: use a .json or .toml file")


class _Progress:
    """A progress bar (tqdm when installed, else one line per step)."""

    def __init__(self, total: int, enabled: bool):
        self.bar: Any = None  # a tqdm bar (tqdm is optional and untyped here)
        self.enabled = enabled
        if enabled:
            try:
                from tqdm import tqdm  # type: ignore[import-untyped]  # no stubs: types-tqdm is not a dependency

                self.bar = tqdm(total=total, unit="step", file=sys.stderr)
            except ImportError:
                self.bar = None

    def __call__(self, step: int, row: Mapping[str, Any]) -> None:
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
    """Train a player with a registered trainer from a TOML/JSON config."""
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
        from arena_core.registry import Trainer, load

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
        trainer: Trainer = load("trainers", data["trainer"])  # checked against the protocol by the registry
        run_dir = Path(args.run_dir or Path("runs") / str(data.get("name", data["trainer"])))
        total = int(data.get("steps", data.get("rounds", 1)))
        progress = _Progress(total, not args.quiet)
        body = {k: v for k, v in data.items() if k != "trainer"}
        try:
            summary = trainer.run(body, run_dir, progress=progress)
        finally:
            progress.close()
    except ArenaError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    print(json.dumps(summary, indent=2, default=str))
    print(f"run directory: {run_dir}", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
