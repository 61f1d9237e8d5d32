"""The rollout's forward pass in numpy, for the plain decoders mlx-lm ships (Llama, Qwen2: pre-norm
attention with plain RoPE, then a SwiGLU MLP; tied embedding or ``lm_head``), on the CPU.

Why a second forward: MLX runs every CPU evaluation on its stream's own thread, so each
``mx.eval`` is a hand-off to that thread and back. On a loaded machine each hand-off waits for the
scheduler (measured: a 6-row forward pass takes 1.5 ms back to back and 4-8 ms after a few
milliseconds of Python game logic), and a rollout evaluates once per lockstep round. numpy
computes on the calling thread with the same BLAS. Training still differentiates through MLX
(:mod:`arena_train.grpo_loss`); this module only reads the weights, and
:func:`numpy_forward_for` returns None (the caller then runs MLX) for any other model. The logits
equal mlx-lm's up to float32 rounding (tests/test_lm_engine.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: mlx-lm modules whose decoder layer is ``x + attn(norm(x))`` then ``h + mlp(norm(h))``, with
#: q/k/v/o projections and a ``rope`` applied to queries and keys alone
PLAIN_DECODERS = frozenset({"mlx_lm.models.llama", "mlx_lm.models.qwen2"})

F32 = np.float32
NEG = -1e9  # a masked logit, as arena_train.lm's
Weights = dict[str, Any]  # flat trainable parameters, as arena_train.lm's
#: the largest model (parameters, float32) run here: a copy of its weights per step is cheap, and
#: its per-evaluation compute is small beside MLX's hand-off; larger models run through MLX
MAX_PARAMETERS = 4_000_000
Array = np.ndarray[Any, np.dtype[np.float32]]


@dataclass(frozen=True)
class _Layer:
    wq: Array
    wk: Array
    wv: Array
    wo: Array
    bq: Array | None
    bk: Array | None
    bv: Array | None
    gate: Array
    up: Array
    down: Array
    norm_in: Array
    norm_post: Array


@dataclass(frozen=True)
class NumpyDecoder:
    """The weights of a plain decoder as float32 numpy arrays (transposed for ``x @ w``) and its
    shape; :meth:`last_logits` is :func:`arena_train.lm.last_logits` with ``answer_only``."""

    embed: Array  # (V, D)
    head: Array  # (D, V): the tied embedding's transpose or lm_head's
    layers: tuple[_Layer, ...]
    norm: Array
    eps: float
    heads: int
    kv_heads: int
    head_dim: int
    scale: float
    inv_freq: Array  # RoPE frequencies (head_dim / 2)

    def last_logits(self, tokens: np.ndarray[Any, Any], lengths: np.ndarray[Any, Any]) -> Array:
        """(B, V) logits at each row's last real position (right-padded ``tokens``)."""
        b, t = tokens.shape
        h = self.embed[tokens]
        pos = np.arange(t, dtype=F32)[:, None] * self.inv_freq[None, :]  # (T, d/2)
        cos, sin = np.cos(pos).astype(F32), np.sin(pos).astype(F32)
        causal = np.triu(np.full((t, t), -np.inf, dtype=F32), k=1)
        for layer in self.layers[:-1]:
            q, k, v = self._qkv(layer, h, cos, sin)
            h = h + self._attend(layer, q, k, v, causal)
            h = h + self._mlp(layer, self._rms(h, layer.norm_post))
        layer = self.layers[-1]
        q, k, v = self._qkv(layer, h, cos, sin)
        rows = np.arange(b)
        last = np.asarray(lengths, dtype=np.int64) - 1
        q = q[rows, :, last][:, :, None, :]  # (B, H, 1, d)
        keep = np.where(np.arange(t)[None, :] < np.asarray(lengths)[:, None], F32(0), F32(-np.inf))
        out = self._attend(layer, q, k, v, keep[:, None, None, :])[:, 0]
        hl = h[rows, last] + out
        hl = hl + self._mlp(layer, self._rms(hl, layer.norm_post))
        logits: Array = self._rms(hl, self.norm) @ self.head
        return logits

    def _rms(self, x: Array, w: Array) -> Array:
        out: Array = x / np.sqrt(np.mean(np.square(x), axis=-1, keepdims=True) + F32(self.eps)) * w
        return out

    def _qkv(self, layer: _Layer, h: Array, cos: Array, sin: Array) -> tuple[Array, Array, Array]:
        b, t, _ = h.shape
        x = self._rms(h, layer.norm_in)

        def project(w: Array, bias: Array | None, heads: int) -> Array:
            y = x @ w
            if bias is not None:
                y = y + bias
            out: Array = y.reshape(b, t, heads, self.head_dim).transpose(0, 2, 1, 3)
            return out

        q = self._rope(project(layer.wq, layer.bq, self.heads), cos, sin)
        k = self._rope(project(layer.wk, layer.bk, self.kv_heads), cos, sin)
        v = project(layer.wv, layer.bv, self.kv_heads)
        return q, k, v

    def _rope(self, x: Array, cos: Array, sin: Array) -> Array:
        half = self.head_dim // 2
        x1, x2 = x[..., :half], x[..., half:]
        out: Array = np.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)
        return out

    def _attend(self, layer: _Layer, q: Array, k: Array, v: Array, mask: Array) -> Array:
        """Attention of ``q`` (B, H, Tq, d) over ``k``, ``v`` (B, Hkv, T, d), its output projected."""
        group = self.heads // self.kv_heads
        if group > 1:
            k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
        scores = (q @ k.transpose(0, 1, 3, 2)) * F32(self.scale) + mask
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        scores /= scores.sum(axis=-1, keepdims=True)
        out = scores @ v  # (B, H, Tq, d)
        b, _, tq, _ = out.shape
        merged: Array = out.transpose(0, 2, 1, 3).reshape(b, tq, -1) @ layer.wo
        return merged

    def _mlp(self, layer: _Layer, x: Array) -> Array:
        gate = x @ layer.gate
        out: Array = (gate / (F32(1) + np.exp(-gate)) * (x @ layer.up)) @ layer.down
        return out


def numpy_forward_for(model: Any) -> bool:
    """Whether ``model`` is a plain decoder :class:`NumpyDecoder` runs: an mlx-lm Llama or Qwen2
    with plain RoPE (no scaling, not interleaved), full attention, no quantised or LoRA layers,
    float32 and at most :data:`MAX_PARAMETERS` parameters."""
    import mlx.core as mx
    from mlx.nn.layers.linear import Linear
    from mlx.nn.layers.positional_encoding import RoPE

    body = getattr(model, "model", None)
    layers = getattr(body, "layers", None)
    if not layers or type(layers[0]).__module__ not in PLAIN_DECODERS:
        return False
    for layer in layers:
        attn = layer.self_attn
        rope: Any = getattr(attn, "rope", None)
        linears = (attn.q_proj, attn.k_proj, attn.v_proj, attn.o_proj, layer.mlp.gate_proj, layer.mlp.up_proj)
        if getattr(layer, "use_sliding", False) or type(rope) is not RoPE or rope.traditional or rope.scale != 1.0:
            return False
        if any(type(m) is not Linear for m in (*linears, layer.mlp.down_proj)):
            return False
    head = getattr(model, "lm_head", None)
    if head is not None and type(head) is not Linear:
        return False
    params = flat_arrays(model.parameters())
    small = sum(v.size for _, v in params) <= MAX_PARAMETERS
    return small and all(v.dtype == mx.float32 for _, v in params)


def decoder_arrays(model: Any) -> tuple[Any, ...]:
    """The MLX arrays :func:`numpy_decoder` reads from ``model`` (an update replaces them: a copy
    made from them is current while they are the same objects)."""
    body = model.model
    out: list[Any] = [body.embed_tokens.weight, body.norm.weight]
    for layer in body.layers:
        attn, mlp = layer.self_attn, layer.mlp
        for m in (attn.q_proj, attn.k_proj, attn.v_proj, attn.o_proj, mlp.gate_proj, mlp.up_proj, mlp.down_proj):
            out.append(m.weight)
            if "bias" in m:
                out.append(m.bias)
        out += [layer.input_layernorm.weight, layer.post_attention_layernorm.weight]
    head = getattr(model, "lm_head", None)
    return (*out, head.weight) if head is not None else tuple(out)


def numpy_decoder(model: Any, weights: Weights | None = None) -> NumpyDecoder:
    """The weights of ``model`` (with ``weights``, a flat trainable dict, in place of its own) as a
    :class:`NumpyDecoder`. Call only when :func:`numpy_forward_for` says so."""
    flat = {name: np.array(value, dtype=F32) for name, value in _parameters(model).items()}
    if weights is not None:
        flat.update({name: np.array(value, dtype=F32) for name, value in weights.items()})
    body = model.model
    attn = body.layers[0].self_attn

    def get(name: str) -> Array:
        return flat[name]

    def bias(name: str) -> Array | None:
        return flat.get(name)

    layers = []
    for i in range(len(body.layers)):
        p = f"model.layers.{i}."
        layers.append(
            _Layer(
                wq=get(p + "self_attn.q_proj.weight").T.copy(),
                wk=get(p + "self_attn.k_proj.weight").T.copy(),
                wv=get(p + "self_attn.v_proj.weight").T.copy(),
                wo=get(p + "self_attn.o_proj.weight").T.copy(),
                bq=bias(p + "self_attn.q_proj.bias"),
                bk=bias(p + "self_attn.k_proj.bias"),
                bv=bias(p + "self_attn.v_proj.bias"),
                gate=get(p + "mlp.gate_proj.weight").T.copy(),
                up=get(p + "mlp.up_proj.weight").T.copy(),
                down=get(p + "mlp.down_proj.weight").T.copy(),
                norm_in=get(p + "input_layernorm.weight"),
                norm_post=get(p + "post_attention_layernorm.weight"),
            )
        )
    embed = get("model.embed_tokens.weight")
    head = flat.get("lm_head.weight")
    dims = int(attn.rope.dims)
    inv_freq = (1.0 / (float(attn.rope.base) ** (np.arange(0, dims, 2, dtype=np.float64) / dims))).astype(F32)
    return NumpyDecoder(
        embed=embed,
        head=(embed if head is None else head).T.copy(),
        layers=tuple(layers),
        norm=get("model.norm.weight"),
        eps=float(body.norm.eps),
        heads=int(attn.n_heads),
        kv_heads=int(attn.n_kv_heads),
        head_dim=dims,
        scale=float(attn.scale),
        inv_freq=inv_freq,
    )


def flat_arrays(tree: Any) -> list[tuple[str, Any]]:
    """``tree_flatten(tree)``: the (dotted name, array) pairs of a parameter tree."""
    from mlx.utils import tree_flatten

    flat = tree_flatten(tree)
    return list(flat.items()) if isinstance(flat, dict) else flat


def _parameters(model: Any) -> dict[str, Any]:
    """Every parameter of ``model`` (trainable or frozen), by dotted name."""
    return dict(flat_arrays(model.parameters()))


def numpy_menu_logprobs(
    decoder: Any, encoded: Sequence[tuple[tuple[int, ...], tuple[int, ...]]], temperature: float
) -> np.ndarray[Any, np.dtype[np.float64]]:
    """:func:`menu_logprobs` through a :class:`~arena_train.lm_numpy.NumpyDecoder`, for
    ``(prompt tokens, label tokens)`` pairs; (B, A) float64, masked entries ~-inf."""
    lengths = np.array([len(t) for t, _ in encoded], dtype=np.int64)
    tokens = np.zeros((len(encoded), int(lengths.max())), dtype=np.int64)
    width = max(len(lb) for _, lb in encoded)
    labels = np.zeros((len(encoded), width), dtype=np.int64)
    mask = np.zeros((len(encoded), width), dtype=bool)
    for i, (t, lb) in enumerate(encoded):
        tokens[i, : len(t)] = t
        labels[i, : len(lb)] = lb
        mask[i, : len(lb)] = True
    logits = decoder.last_logits(tokens, lengths)
    chosen = np.take_along_axis(logits, labels, axis=-1).astype(np.float64) / max(temperature, 1e-6)
    chosen = np.where(mask, chosen, NEG)
    top = chosen.max(axis=-1, keepdims=True)
    out: np.ndarray[Any, np.dtype[np.float64]] = chosen - (
        top + np.log(np.exp(chosen - top).sum(axis=-1, keepdims=True))
    )
    return out
