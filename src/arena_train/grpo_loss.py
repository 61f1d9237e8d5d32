"""GRPO's loss and update, alone: the clipped policy-gradient surrogate on the exact
log-probability of each chosen menu entry, plus ``kl_beta`` times the exact KL divergence over the
menu from a reference (the magnet), minus ``entropy_beta`` times the menu's entropy; one optimizer
update over a list of :class:`Sample` with gradient accumulation and global-norm clipping.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import mlx.core as mx
import mlx.optimizers as optim
import numpy as np
from mlx.nn.layers.base import Module  # not re-exported by mlx.nn for a type checker
from mlx.nn.utils import value_and_grad
from mlx.utils import tree_map

from .lm import LMRecord, Weights, grad_norm, menu_logprobs, records_batch, swapped
from .lm_engine import REFERENCE, Engine


@dataclass(frozen=True)
class Sample:
    record: LMRecord
    advantage: float
    ref_logprobs: tuple[float, ...]  # over the menu, from the frozen reference


def grpo_loss(
    model: Module,
    tokens: mx.array,
    lengths: mx.array,
    labels: mx.array,
    mask: mx.array,
    inverse: mx.array,
    chosen: mx.array,
    old_lp: mx.array,
    ref_lp: mx.array,
    adv: mx.array,
    clip_eps: float,
    kl_beta: float,
    temperature: float,
    entropy_beta: float,
    answer_only: bool = False,
) -> tuple[mx.array, tuple[mx.array, mx.array, mx.array]]:
    # one forward pass per distinct (prompt, menu); each decision reads its row (exact, and
    # much cheaper when decisions repeat, as in a small game)
    lp_all = menu_logprobs(model, tokens, lengths, labels, mask, temperature, answer_only=answer_only)[inverse]
    mask = mask[inverse]
    lp = mx.take_along_axis(lp_all, chosen[:, None], axis=-1)[:, 0]
    ratio = mx.exp(lp - old_lp)
    clipped = mx.clip(ratio, 1.0 - clip_eps, 1.0 + clip_eps)
    surrogate = -mx.minimum(ratio * adv, clipped * adv)
    p = mx.exp(lp_all)
    kl = mx.sum(mx.where(mask, p * (lp_all - ref_lp), 0.0), axis=-1)
    entropy = -mx.sum(mx.where(mask, p * lp_all, 0.0), axis=-1)
    loss = mx.mean(surrogate + kl_beta * kl - entropy_beta * entropy)
    clip_frac = mx.mean((mx.abs(ratio - 1.0) > clip_eps).astype(mx.float32))
    return loss, (mx.mean(kl), clip_frac, mx.mean(entropy))


def grpo_update(
    model: Module,
    optimizer: optim.Optimizer,
    samples: Sequence[Sample],
    *,
    order: np.ndarray,
    grad_accum: int,
    max_grad_norm: float,
    clip_eps: float,
    kl_beta: float,
    temperature: float,
    entropy_beta: float = 0.0,
    engine: Engine = REFERENCE,
) -> dict[str, float]:
    """One optimizer update over ``samples`` (in ``order``), split into ``grad_accum``
    micro-batches whose gradients are averaged, then clipped by global norm (``engine``: how the
    forward passes are computed, :class:`~arena_train.lm.Engine`)."""
    loss_and_grad = value_and_grad(model, grpo_loss)
    chunks = [c for c in np.array_split(order, grad_accum) if len(c)]
    total: dict[str, Any] | None = None  # the gradient tree, summed over micro-batches
    stats: list[tuple[float, mx.array, mx.array, mx.array, mx.array]] = []  # weight, loss, kl, clip, entropy
    for chunk in chunks:
        part = [samples[i] for i in chunk]
        unique, inverse = distinct([s.record for s in part])
        tokens, lengths, labels, mask = records_batch(unique, engine)
        a = labels.shape[1]
        ref = np.full((len(part), a), -1e9, dtype=np.float32)
        for i, s in enumerate(part):
            ref[i, : len(s.ref_logprobs)] = s.ref_logprobs
        (loss, (kl, clip, ent)), grads = loss_and_grad(
            model,
            tokens,
            lengths,
            labels,
            mask,
            mx.array(inverse, dtype=mx.int32),
            mx.array([s.record.chosen for s in part], dtype=mx.int32),
            mx.array([s.record.logprob for s in part], dtype=mx.float32),
            mx.array(ref),
            mx.array([s.advantage for s in part], dtype=mx.float32),
            clip_eps,
            kl_beta,
            temperature,
            entropy_beta,
            engine.answer_only,
        )
        weight = len(part) / len(order)
        grads = tree_map(lambda g, w=weight: g * w, grads)
        total = grads if total is None else tree_map(lambda x, y: x + y, total, grads)
        stats.append((weight, loss, kl, clip, ent))
    if total is None:
        raise ValueError("grpo_update needs at least one sample")
    norm = grad_norm(total)
    total, _ = optim.clip_grad_norm(total, max_grad_norm)  # type: ignore[no-untyped-call]  # mlx leaves it unannotated
    optimizer.update(model, total)
    # one evaluation for the whole update (each is a hand-off to MLX's stream thread)
    mx.eval(model.parameters(), optimizer.state, norm, [s[1:] for s in stats])  # type: ignore[no-untyped-call]  # mlx leaves Module.parameters unannotated
    loss_v, kl_v, clip_v, ent_v = (sum(float(s[k]) * s[0] for s in stats) for k in (1, 2, 3, 4))
    return {"loss": loss_v, "kl": kl_v, "clip_frac": clip_v, "entropy": ent_v, "grad_norm": float(norm)}


def distinct(records: Sequence[LMRecord]) -> tuple[list[LMRecord], list[int]]:
    """The records with distinct (tokens, labels), and each record's index among them."""
    index: dict[tuple[tuple[int, ...], tuple[int, ...]], int] = {}
    unique: list[LMRecord] = []
    inverse: list[int] = []
    for r in records:
        key = (r.tokens, r.labels)
        if key not in index:
            index[key] = len(unique)
            unique.append(r)
        inverse.append(index[key])
    return unique, inverse


def reference_logprobs(
    model: Module,
    records: Sequence[LMRecord],
    weights: Weights | None,
    temperature: float,
    engine: Engine = REFERENCE,
) -> list[np.ndarray[Any, Any]]:
    """Each record's log-probabilities over its menu under ``weights`` swapped into ``model`` (one
    forward row per distinct prompt and menu, 256 at a time)."""
    unique, inverse = distinct(records)
    rows: list[np.ndarray[Any, Any]] = []
    for start in range(0, len(unique), 256):
        part = unique[start : start + 256]
        with swapped(model, weights):
            lp = menu_logprobs(model, *records_batch(part, engine), temperature, answer_only=engine.answer_only)
            mx.eval(lp)
        arr = np.array(lp)
        rows.extend(arr[i, : len(r.labels)] for i, r in enumerate(part))
    return [rows[i] for i in inverse]
