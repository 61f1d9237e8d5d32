"""GRPO's checkpoints, alone: :func:`save_checkpoint` writes ``checkpoints/step_NNNNNN/`` (the
trainable weights, the frozen reference, the magnet, AdamW's state, the pool's snapshots and
``state.json`` with the step, baselines, evaluation baseline, policy snapshots, the stall guard's
count and the compiled average), and :func:`restore` loads one into a session so that the same
seed continues exactly.
"""

from __future__ import annotations

from pathlib import Path

from mlx.utils import tree_unflatten

from arena_core.errors import ConfigError
from arena_core.playerspec import as_player_spec

from .compiled import ReachAverage
from .grpo_rollout import Baselines, Pool
from .grpo_state import GRPOSession, GRPOState
from .lm import flat_arrays, load_flat, load_trainables, save_flat, trainables
from .run import RunDir, read_state


def save_checkpoint(run: RunDir, session: GRPOSession) -> Path:
    """``checkpoints/step_NNNNNN/``: the weights, the optimizer, the pool and ``state.json``."""
    state, cfg = session.state, session.config
    ckpt = run.checkpoint(state.step)
    save_flat(ckpt / "trainable.safetensors", trainables(session.model))
    save_flat(ckpt / "reference.safetensors", state.reference)
    if cfg.magnet_every:
        save_flat(ckpt / "magnet.safetensors", state.magnet)
    save_flat(ckpt / "optimizer.safetensors", dict(flat_arrays(session.optimizer.state)))
    for i, (_snap_step, weights) in enumerate(state.pool.snapshots):
        save_flat(ckpt / "pool" / f"snapshot_{i}.safetensors", weights)
    return run.save_state(
        state.step,
        {
            "trainer": "grpo",
            "step": state.step,
            "seed": cfg.seed,
            "rng": {"scheme": "derive_seed(seed, purpose, step, ...)", "next_step": state.step + 1},
            "pool": {
                "players": [str(p) for p in state.pool.players],
                "snapshot_steps": [s for s, _ in state.pool.snapshots],
            },
            "eval_baseline": state.eval_baseline,
            "role_baseline": state.baselines.role,
            "info_baseline": [[list(k), v] for k, v in state.baselines.info.items()],
            "episodes_total": state.episodes_total,
            "no_signal_steps": state.no_signal_steps,
            "stalled_at": state.stalled_at,
            "policy_tables": state.policy_tables,
            "policy_table_steps": state.policy_table_steps,
            **({"compiled_average": state.average.to_json()} if state.average is not None else {}),
            "config": cfg.model_dump(mode="json"),
        },
    )


def restore(run: RunDir, session: GRPOSession) -> None:
    """Load the checkpoint ``run`` resumes into the session: the same seed continues exactly."""
    ckpt, cfg = run.resume, session.config
    if ckpt is None:
        raise ConfigError("restore needs a run that resumes from a checkpoint")
    saved = read_state(ckpt)
    if saved.get("trainer", "grpo") != "grpo":
        raise ConfigError(
            f"checkpoint {ckpt} is a {saved['trainer']} run; resume_from continues a GRPO run (use init_from to start from its weights)"
        )
    if saved["seed"] != cfg.seed:
        raise ConfigError(
            f"checkpoint {ckpt} was trained with seed {saved['seed']}; an exact resume needs the same seed"
        )
    load_trainables(session.model, load_flat(ckpt / "trainable.safetensors"))
    session.optimizer.state = tree_unflatten(list(load_flat(ckpt / "optimizer.safetensors").items()))
    reference = load_flat(ckpt / "reference.safetensors")
    magnet = ckpt / "magnet.safetensors"
    snapshots = [
        (s, load_flat(ckpt / "pool" / f"snapshot_{i}.safetensors"))
        for i, s in enumerate(saved["pool"]["snapshot_steps"])
    ]
    role = list(saved.get("role_baseline", session.state.baselines.role))
    tables = [{k: {int(a): p for a, p in d.items()} for k, d in t.items()} for t in saved.get("policy_tables", [])]
    step = int(saved["step"])
    rows = run.resumed_metrics(step)
    # older checkpoints lack the snapshots' steps: the evaluations in the metrics are the snapshots
    steps = (
        saved["policy_table_steps"]
        if "policy_table_steps" in saved
        else [int(r["step"]) for r in rows if "eval_exploitability" in r]
    )
    if len(steps) != len(tables):
        raise ConfigError(
            f"checkpoint {ckpt} keeps {len(tables)} policy snapshots but {len(steps)} steps for them; "
            "resume from a checkpoint whose run directory still has its metrics.jsonl"
        )
    session.state = GRPOState(
        reference=reference,
        magnet=load_flat(magnet) if cfg.magnet_every and magnet.exists() else reference,
        pool=Pool([as_player_spec(p) for p in saved["pool"]["players"]], snapshots),
        baselines=Baselines(role, {tuple(k): float(v) for k, v in saved.get("info_baseline", [])}),
        step=step,
        episodes_total=int(saved.get("episodes_total", 0)),
        no_signal_steps=int(saved.get("no_signal_steps", 0)),
        stalled_at=[int(s) for s in saved.get("stalled_at", [])],
        eval_baseline=saved["eval_baseline"],
        policy_tables=tables,
        policy_table_steps=[int(s) for s in steps],
    )
    if session.tree is not None:
        if "compiled_average" not in saved:
            raise ConfigError(
                f"checkpoint {ckpt} keeps no compiled average; eval.snapshot_every needs a run that kept one"
            )
        session.state.average = ReachAverage.from_json(session.tree, saved["compiled_average"])
    run.metrics.write(rows)  # the rows after the checkpoint are replayed by this run
