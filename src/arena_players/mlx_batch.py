"""Batched generation for the MLX engine: many requests decoded together, one forward pass per
token for the whole batch over ``mlx_lm``'s left-padded ``BatchKVCache``; the tokens are exactly
those of :meth:`~arena_players.mlx_engine.MLXEngine.generate` row by row."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import mlx.core as mx

from .mlx_cache import trimmable
from .mlx_decoding import Generated, Request, RowSampling, queue, token_ids

if TYPE_CHECKING:
    from .mlx_engine import MLXEngine


def generate_batch(engine: MLXEngine, reqs: Sequence[Request]) -> list[Generated]:
    """All requests decoded together: one forward pass per token for the whole batch
    (``mlx_lm``'s left-padded ``BatchKVCache``), every row's constraint applied as one
    mask, every row's sampler drawn in one vectorised step (:class:`RowSampling`), and
    finished rows dropped from the batch as they end; without constraints the next step is
    queued before this one is read back, as in :meth:`MLXEngine.generate`. The tokens are
    exactly those of :meth:`MLXEngine.generate` row by row.

    Each prompt is prefilled on its own first (from the shared-prefix cache): prefill is
    compute-bound, so padding prompts into one batch saves nothing on a CPU and wastes
    the padding, while the token-by-token decode steps are where batching pays.
    """
    if not reqs:
        return []
    if len(reqs) == 1:
        return [engine.generate(reqs[0])]
    started = time.perf_counter()
    prefilled = [engine.caches.prefilled(r.tokens, r.prefix_len, r.session) for r in reqs]
    uses = [use for _, use in prefilled]
    rows = [row for row, _ in prefilled]
    cache = [rows[0][layer].merge([row[layer] for row in rows]) for layer in range(len(rows[0]))]
    del rows, prefilled
    sampling = RowSampling([r.sampler for r in reqs])
    active = list(range(len(reqs)))
    outs: list[list[int]] = [[] for _ in reqs]
    drawn_by_row: list[list[int]] = [[] for _ in reqs]
    keeping = engine.max_sessions > 0 and trimmable(cache)
    model, eos_ids = engine.model, engine.eos_ids

    def leave(leaving: Sequence[int]) -> None:
        """Keep the conversations of the rows at ``leaving`` (indices into ``active``) that
        belong to a session: each row's keys and values are copied out of the batch."""
        for j in leaving:
            i = active[j]
            if keeping and reqs[i].session is not None:
                row = [layer.extract(j) for layer in cache]
                engine.caches.keep(reqs[i].session, reqs[i].tokens, row, drawn_by_row[i], len(outs[i]))

    finish = ["length"] * len(reqs)
    # without constraints the next step's forward pass is queued before this step's tokens
    # are read back (rows that end meanwhile are dropped from its result)
    pipelined = all(r.constraint is None for r in reqs)
    logits = model(mx.array([r.tokens[-1:] for r in reqs]), cache=cache)[:, -1, :]
    while active:
        constraints = [reqs[i].constraint for i in active]
        if not pipelined:
            vocab = logits.shape[-1]
            free = mx.zeros((vocab,), dtype=logits.dtype)
            logits = logits + mx.stack([free if c is None else c.bias(vocab) for c in constraints])
        logprobs = logits - mx.logsumexp(logits, axis=-1, keepdims=True)
        drawn = sampling(logprobs)
        queued = None
        if pipelined and any(len(outs[i]) + 1 < reqs[i].max_tokens for i in active):
            queued = model(drawn[:, None].astype(mx.uint32), cache=cache)[:, -1, :]
            queue(queued)
        tokens = token_ids(drawn)
        kept: list[int] = []
        for j, (i, token) in enumerate(zip(active, tokens, strict=True)):
            drawn_by_row[i].append(token)
            if token in eos_ids:
                finish[i] = "stop"
                continue
            outs[i].append(token)
            c = constraints[j]
            if c is not None:
                done = c.completes(token)
                c.advance(token)
                if done:  # only EOS could follow
                    finish[i] = "complete"
                    continue
            if len(outs[i]) >= reqs[i].max_tokens:
                continue
            kept.append(j)
        if len(kept) < len(active):
            leave(sorted(set(range(len(active))) - set(kept)))
        if not kept:
            break
        if len(kept) < len(active):
            for layer in cache:
                layer.filter(kept)
            sampling.keep(kept)
            if queued is not None:
                queued = queued[mx.array(kept)]
        active = [active[j] for j in kept]
        if queued is not None:
            logits = queued
        else:
            logits = model(mx.array([[outs[i][-1]] for i in active]), cache=cache)[:, -1, :]
    engine.account(started, sum(len(r.tokens) for r in reqs), sum(len(o) for o in outs))
    return [Generated(o, f, use) for o, f, use in zip(outs, finish, uses, strict=True)]
