"""A language model as a policy over a compact view's menu: one forward pass per decision,
logits restricted to the menu's single-token labels, exact log-probabilities.

Only the learner's answer token gets a gradient: the prompt is context, opponents are other
players, and the loss reads one position per decision. Weights can be swapped in and out
(:func:`swapped`), so the frozen reference, pool snapshots and the learner share one model.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import mlx.core as mx
import numpy as np
from mlx.nn.layers.base import Module  # not re-exported by mlx.nn for a type checker
from mlx.utils import tree_flatten, tree_unflatten

from arena_core.errors import ConfigError
from arena_core.players import BasePlayer, Decision
from arena_core.seeding import make_rng

from .lm_engine import REFERENCE as REFERENCE  # re-exported with Engine: what a policy runs
from .lm_engine import Engine as Engine
from .lm_engine import sample_index, sample_rows
from .lm_numpy import PLAIN_DECODERS, decoder_arrays, numpy_decoder, numpy_forward_for, numpy_menu_logprobs
from .rollout import Choice, Learner, Request
from .views import ActionTokens, CompactView, Menu, Tokenizer

if TYPE_CHECKING:
    from .config import ModelConfig

NEG = -1e9  # a masked logit (finite, so gradients stay finite)

Weights = dict[str, mx.array]  # flat trainable parameters: dotted name -> array


def flat_arrays(tree: Any) -> list[tuple[str, mx.array]]:
    """``tree_flatten(tree)``: the (dotted name, array) pairs of a parameter tree."""
    flat = tree_flatten(tree)
    return list(flat.items()) if isinstance(flat, dict) else flat


def trainable_arrays(model: Module) -> list[tuple[str, mx.array]]:
    """The model's trainable parameters as (dotted name, array) pairs."""
    tree = model.trainable_parameters()  # type: ignore[no-untyped-call]  # mlx leaves Module.trainable_parameters unannotated
    return flat_arrays(tree)


def load_lm(path: str, *, tiny_games: Sequence[str] | None = None) -> tuple[Module, Tokenizer]:
    """``(model, tokenizer)``; ``'tiny'`` is the offline test model, its tokenizer trained on the
    text of ``tiny_games`` (None: the tiny model's own default corpus; built once and cached)."""
    import mlx_lm

    if path == "tiny":
        from arena_players.tiny_model import ensure_tiny_model

        path = str(ensure_tiny_model(game_ids=tiny_games))
    try:
        loaded = mlx_lm.load(path)
    except Exception as exc:
        raise ConfigError(
            f"cannot load model {path!r} ({type(exc).__name__}: {exc}); pass 'tiny' or a local mlx-lm model directory"
        ) from exc
    return loaded[0], loaded[1]


def prepare_trainable(
    model: Module,
    finetune: Literal["full", "lora"],
    *,
    seed: int,
    lora_layers: int = 4,
    lora_rank: int = 8,
    lora_scale: float = 20.0,
) -> None:
    """Full fine-tuning (every weight trains) or LoRA adapters via mlx-lm's tuner utilities.

    mlx-lm draws the adapters' A matrices from MLX's global random state (seeded from the
    clock); we redraw them from ``make_rng(seed, "lora", name)`` with the same law (uniform in
    +-1/sqrt(fan_in)), so a LoRA run is as reproducible as a full one."""
    if finetune == "full":
        model.unfreeze()
        return
    from mlx_lm.tuner.utils import linear_to_lora_layers

    model.freeze()
    linear_to_lora_layers(model, lora_layers, {"rank": lora_rank, "scale": lora_scale, "dropout": 0.0})
    redrawn: Weights = {}
    for name, value in trainable_arrays(model):
        if name.endswith("lora_a"):
            bound = 1.0 / np.sqrt(value.shape[0])
            redrawn[name] = mx.array(
                make_rng(seed, "lora", name).uniform(-bound, bound, size=value.shape).astype(np.float32)
            )
    load_trainables(model, redrawn)


def trainable_model(
    model_cfg: ModelConfig, *, seed: int, model: Module | None = None, tokenizer: Tokenizer | None = None
) -> tuple[Module, Tokenizer]:
    """``(model, tokenizer)`` ready to train: loaded from ``model_cfg.path`` unless injected,
    then prepared as ``model_cfg`` says (LoRA adapters initialised from ``seed``, or all weights)."""
    if model is None:
        model, tokenizer = load_lm(model_cfg.path, tiny_games=model_cfg.tiny_games)
    elif tokenizer is None:
        raise ConfigError("pass the tokenizer together with an injected model")
    prepare_trainable(
        model,
        model_cfg.finetune,
        seed=seed,
        lora_layers=model_cfg.lora_layers,
        lora_rank=model_cfg.lora_rank,
        lora_scale=model_cfg.lora_scale,
    )
    return model, tokenizer


def trainables(model: Module) -> Weights:
    """A flat copy of the trainable parameters (``name -> array``)."""
    flat = dict(trainable_arrays(model))
    mx.eval(list(flat.values()))
    return {k: mx.array(v) for k, v in flat.items()}


def load_trainables(model: Module, flat: Weights) -> None:
    model.update(tree_unflatten(list(flat.items())))


@contextlib.contextmanager
def swapped(model: Module, flat: Weights | None) -> Iterator[Module]:
    """Run with ``flat`` trainable weights in place, then restore the learner's."""
    if flat is None:
        yield model
        return
    saved = dict(trainable_arrays(model))
    load_trainables(model, flat)
    try:
        yield model
    finally:
        load_trainables(model, saved)


@dataclass(frozen=True)
class LMRecord:
    """What training needs from one decision."""

    tokens: tuple[int, ...]
    labels: tuple[int, ...]  # token id per menu entry
    legal: tuple[bool, ...]
    chosen: int  # index into the menu
    logprob: float  # log-probability of ``chosen`` under the sampling policy
    text: str


def pad_batch(
    token_lists: Sequence[Sequence[int]], label_lists: Sequence[Sequence[int]], bucket: int = 16
) -> tuple[mx.array, mx.array, mx.array, mx.array]:
    """Right-padded tokens (lengths rounded up to ``bucket``, so few distinct shapes), lengths,
    padded labels and their mask."""
    lengths = np.array([len(t) for t in token_lists], dtype=np.int32)
    width = int(-(-lengths.max() // bucket) * bucket)
    tokens = np.zeros((len(token_lists), width), dtype=np.int32)
    for i, t in enumerate(token_lists):
        tokens[i, : len(t)] = t
    a = max(len(lb) for lb in label_lists)
    labels = np.zeros((len(label_lists), a), dtype=np.int32)
    mask = np.zeros((len(label_lists), a), dtype=bool)
    for i, lb in enumerate(label_lists):
        labels[i, : len(lb)] = lb
        mask[i, : len(lb)] = True
    return mx.array(tokens), mx.array(lengths), mx.array(labels), mx.array(mask)


def menu_logprobs(
    model: Module,
    tokens: mx.array,
    lengths: mx.array,
    labels: mx.array,
    mask: mx.array,
    temperature: float = 1.0,
    *,
    answer_only: bool = False,
) -> mx.array:
    """(B, A) log-probabilities over each menu (masked entries get ~-inf). Causal attention
    means right padding never reaches the last real position, so no attention mask is needed.
    ``answer_only``: the last layer at the answer position alone (:func:`last_logits`)."""
    last = last_logits(model, tokens, lengths, answer_only=answer_only)  # (B, V)
    chosen = mx.take_along_axis(last, labels, axis=-1).astype(mx.float32) / max(temperature, 1e-6)
    chosen = mx.where(mask, chosen, mx.array(NEG, dtype=mx.float32))
    return chosen - mx.logsumexp(chosen, axis=-1, keepdims=True)


def last_logits(model: Module, tokens: mx.array, lengths: mx.array, *, answer_only: bool = False) -> mx.array:
    """Logits at each row's last real position. For mlx-lm models with the usual layout
    (``model.model`` the transformer, a tied embedding or ``lm_head``) only those positions
    are projected onto the vocabulary, which is most of the cost on a small model. With
    ``answer_only``, on the decoders whose layers are known (:func:`answer_only_layer`), the last
    layer runs its attention query, output projection and MLP at that position alone (the
    others only give it keys and values): the same logits up to float rounding, ~40% fewer
    multiplications on a two-layer model."""
    rows = mx.arange(tokens.shape[0])
    body = getattr(model, "model", None)
    head = getattr(model, "lm_head", None)
    embed = getattr(body, "embed_tokens", None)
    if head is not None:
        project = head
    elif embed is not None and hasattr(embed, "as_linear"):
        project = embed.as_linear
    else:
        project = None
    if body is None or project is None:
        if not callable(model):  # Module declares no __call__; each model class defines its own
            raise TypeError(f"{type(model).__name__} is not callable on a batch of tokens")
        logits: mx.array = model(tokens)[rows, lengths - 1]
        return logits
    if answer_only and answer_only_layer(body) and tokens.shape[1] > 1:
        from mlx_lm.models.base import create_attention_mask

        h = body.embed_tokens(tokens)
        mask = create_attention_mask(h, None)
        for layer in body.layers[:-1]:
            h = layer(h, mask, cache=None)
        answer: mx.array = project(body.norm(_last_layer_at_answer(body.layers[-1], h, lengths)))
        return answer
    logits = project(body(tokens)[rows, lengths - 1])
    return logits


def answer_only_layer(body: Any) -> bool:
    """Whether :func:`last_logits` may compute ``body``'s last layer at the answer position alone:
    a known plain decoder (Llama, Qwen2) with full attention in every layer; any other model runs
    whole."""
    layers = getattr(body, "layers", None)
    if not layers or not hasattr(body, "norm") or not hasattr(body, "embed_tokens"):
        return False
    last = layers[-1]
    return type(last).__module__ in PLAIN_DECODERS and not getattr(last, "use_sliding", False)


def _last_layer_at_answer(layer: Any, h: mx.array, lengths: mx.array) -> mx.array:
    """The decoder layer's output at each row's last real position, (B, D): keys and values at
    every position (masked past the row's length), the query, output projection and MLP at that
    position only."""
    attn = layer.self_attn
    b, t, _ = h.shape
    x = layer.input_layernorm(h)
    q = attn.rope(attn.q_proj(x).reshape(b, t, attn.n_heads, -1).transpose(0, 2, 1, 3))
    k = attn.rope(attn.k_proj(x).reshape(b, t, attn.n_kv_heads, -1).transpose(0, 2, 1, 3))
    v = attn.v_proj(x).reshape(b, t, attn.n_kv_heads, -1).transpose(0, 2, 1, 3)
    last = (lengths - 1).astype(mx.int32)
    q = mx.take_along_axis(q, last[:, None, None, None], axis=2)  # (B, H, 1, d)
    keep = (mx.arange(t)[None, :] < lengths[:, None])[:, None, None, :]
    out = mx.fast.scaled_dot_product_attention(q, k, v, scale=attn.scale, mask=keep)
    out = attn.o_proj(out.transpose(0, 2, 1, 3).reshape(b, 1, -1))
    hl = mx.take_along_axis(h, last[:, None, None], axis=1) + out
    out_h: mx.array = (hl + layer.mlp(layer.post_attention_layernorm(hl)))[:, 0, :]
    return out_h


class PromptCache:
    """Token ids of prompts and menu labels for one tokenizer, kept across the policies of a run
    (a policy object per step must not tokenize the same prompts again)."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokens = ActionTokens(tokenizer)
        self._prompts: dict[str, tuple[int, ...]] = {}

    def encode(self, menu: Menu) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """``(prompt token ids, one token id per menu label)``."""
        toks = self._prompts.get(menu.text)
        if toks is None:
            toks = self._prompts[menu.text] = tuple(self.tokens.encode_text(menu.text))
        return toks, tuple(self.tokens.tokens(menu.labels))


class LMPolicy:
    """A :class:`~arena_train.rollout.Learner` over a compact view.

    ``temperature`` 0 is greedy. ``include_illegal`` offers the view's full menu, so the model
    can choose an illegal action (the rollout plays the default and applies the penalty).
    ``weights`` (a flat trainable dict) plays a frozen snapshot instead of the live weights.
    ``engine``: how the forward passes and draws are computed (:class:`Engine`); ``cache``: the
    run's :class:`PromptCache` (a fresh one if None).
    """

    def __init__(
        self,
        model: Module,
        tokenizer: Tokenizer,
        view: CompactView,
        *,
        temperature: float = 1.0,
        include_illegal: bool = False,
        weights: Weights | None = None,
        max_batch: int = 256,
        engine: Engine = REFERENCE,
        cache: PromptCache | None = None,
    ) -> None:
        self.model = model
        self.cache = cache or PromptCache(tokenizer)
        self.tokens = self.cache.tokens
        self.view = view
        self.temperature = float(temperature)
        self.include_illegal = include_illegal
        self.weights = weights
        self.max_batch = max_batch
        self.engine = engine
        self._numpy_ok: bool | None = None
        self._numpy_cache: tuple[tuple[Any, ...], Any] | None = None

    def encode(self, menu: Menu) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return self.cache.encode(menu)

    def distributions(self, menus: Sequence[Menu]) -> list[np.ndarray[Any, np.dtype[np.float64]]]:
        """Log-probabilities over each menu; one forward row per distinct (prompt, labels)."""
        encoded = [self.encode(m) for m in menus]
        index: dict[tuple[tuple[int, ...], tuple[int, ...]], int] = {}
        for e in encoded:
            index.setdefault(e, len(index))
        unique = list(index)
        rows: list[np.ndarray[Any, np.dtype[np.float64]]] = []
        temperature = self.temperature if self.temperature > 0 else 1.0
        decoder = self._numpy_decoder()
        for start in range(0, len(unique), self.max_batch):
            chunk = unique[start : start + self.max_batch]
            if decoder is not None:
                lp_np = numpy_menu_logprobs(decoder, chunk, temperature)
            else:
                batch = pad_batch([e[0] for e in chunk], [e[1] for e in chunk], bucket=self.engine.bucket)
                with swapped(self.model, self.weights):
                    lp = menu_logprobs(self.model, *batch, temperature=temperature, answer_only=self.engine.answer_only)
                    mx.eval(lp)
                lp_np = np.array(lp, dtype=np.float64)
            rows.extend(lp_np[i, : len(e[1])] for i, e in enumerate(chunk))
        return [rows[index[e]] for e in encoded]

    def _numpy_decoder(self) -> Any:
        """The fast engine's numpy copy of the weights this policy plays (rebuilt when they change),
        or None: the reference engine, or a model :mod:`arena_train.lm_numpy` does not run."""
        if not self.engine.numpy_forward:
            return None
        if self._numpy_ok is None:
            self._numpy_ok = numpy_forward_for(self.model)
        if not self._numpy_ok:
            return None
        key = decoder_arrays(self.model) if self.weights is None else (self.weights,)
        held = self._numpy_cache
        if held is None or len(held[0]) != len(key) or any(a is not b for a, b in zip(held[0], key)):
            held = self._numpy_cache = (key, numpy_decoder(self.model, self.weights))
        return held[1]

    def decide(self, requests: Sequence[Request]) -> list[Choice]:
        menus = [self.view.menu(r.game, r.pos, r.seat, include_illegal=self.include_illegal) for r in requests]
        dists = self.distributions(menus)
        if self.temperature <= 0:
            picks = [int(np.argmax(lp)) for lp in dists]
        elif self.engine.name == "reference":
            picks = [sample_index(lp, self.engine.uniform(r.key)) for r, lp in zip(requests, dists)]
        else:
            picks = sample_rows(dists, [self.engine.uniform(r.key) for r in requests])
        choices = []
        for menu, lp, idx in zip(menus, dists, picks):
            toks, labels = self.encode(menu)
            record = LMRecord(toks, labels, menu.legal, idx, float(lp[idx]), menu.text)
            legal = menu.legal[idx]
            choices.append(Choice(menu.actions[idx] if legal else None, illegal=not legal, record=record))
        return choices


class SnapshotPlayer(BasePlayer):
    """A frozen copy of a learner as an ordinary arena player (greedy, or sampled from the
    decision's seeded generator)."""

    name = "snapshot"

    def __init__(self, policy: Learner, seed: int = 0):  # an LMPolicy, or a text policy
        super().__init__(seed)
        self.policy = policy

    def act(self, decision: Decision) -> Any:
        key = int(decision.rng("snapshot", self.seed).integers(0, 2**62))
        req = decision.view_with(lambda game, pos, seat: Request(game, pos, seat, 0, key))
        choice = self.policy.decide([req])[0]
        return choice.action if choice.action is not None else decision.legal_actions[0]


def save_flat(path: Path, flat: Weights) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    mx.save_safetensors(str(path), flat)


def load_flat(path: Path) -> Weights:
    loaded = mx.load(str(path))
    if not isinstance(loaded, dict):
        raise ConfigError(f"{path} holds no named arrays (a safetensors file of trainable weights expected)")
    return dict(loaded)


def grad_norm(grads: Any) -> mx.array:
    """The global L2 norm of a gradient tree."""
    total = mx.array(0.0, dtype=mx.float32)
    for _, g in flat_arrays(grads):
        total = total + mx.sum(g.astype(mx.float32) ** 2)
    return mx.sqrt(total)


def records_batch(
    records: Sequence[LMRecord], engine: Engine = REFERENCE
) -> tuple[mx.array, mx.array, mx.array, mx.array]:
    return pad_batch([r.tokens for r in records], [r.labels for r in records], bucket=engine.bucket)


def model_param_count(model: Module) -> int:
    return int(sum(v.size for _, v in trainable_arrays(model)))
