"""Decoding for the MLX player: the token trie that constrains an answer to the legal strings,
keyed samplers (one row at a time, or a whole batch in one vectorised draw), and one
generation's request and result (:class:`Request`, :class:`Generated`).

Every draw comes from an explicit PRNG key; MLX's global random state is never read or changed.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

import mlx.core as mx
import numpy as np
import numpy.typing as npt

from arena_core.errors import ConfigError, PlayerError

from .mlx_cache import CacheUse


# ---------------------------------------------------------------------- constrained decoding
@dataclass
class TrieNode:
    children: dict[int, TrieNode] = field(default_factory=dict)
    value: int | None = None  # index of the legal string that ends here
    _mask: mx.array | None = field(default=None, repr=False)


class TokenTrie:
    """Prefix tree over the token sequences of the legal strings; ``value`` marks where a
    complete string ends (a node can end one string and continue into others)."""

    def __init__(self, sequences: Sequence[Sequence[int]]):
        self.root = TrieNode()
        self.depth = 0
        for index, seq in enumerate(sequences):
            if not seq:
                raise ConfigError(
                    f"legal string #{index} encodes to no tokens; constrained decoding needs non-empty strings"
                )
            node = self.root
            for tok in seq:
                node = node.children.setdefault(int(tok), TrieNode())
            if node.value is not None:
                raise ConfigError(
                    f"legal strings #{node.value} and #{index} encode to the same tokens {list(seq)}; "
                    "the text view must give distinct strings"
                )
            node.value = index
            self.depth = max(self.depth, len(seq))

    @classmethod
    def from_strings(cls, strings: Sequence[str], encode: Callable[[str], Sequence[int]]) -> TokenTrie:
        return cls([encode(s) for s in strings])

    def lookup(self, tokens: Sequence[int]) -> int | None:
        """Index of the legal string whose tokens are exactly ``tokens``, else None."""
        node = self.root
        for tok in tokens:
            nxt = node.children.get(int(tok))
            if nxt is None:
                return None
            node = nxt
        return node.value

    def allowed(self, node: TrieNode, eos: int) -> list[int]:
        """Tokens that keep the answer on a legal string: the children, plus EOS where a
        complete string ends."""
        out = list(node.children)
        if node.value is not None:
            out.append(eos)
        return out


class TrieConstraint:
    """An ``mlx-lm`` logits processor (``(tokens, logits) -> logits``) that allows only the
    continuations of the legal strings, then end-of-sequence.

    It is called once per generated token; on every call after the first, ``tokens[-1]`` is
    the token sampled at the previous step. ``done`` turns true once a string is complete and
    cannot be extended (only EOS would be allowed), so generation may stop there.
    """

    def __init__(self, trie: TokenTrie, eos: int):
        self.trie = trie
        self.eos = int(eos)
        self.node: TrieNode = trie.root
        self.path: list[int] = []
        self._calls = 0

    @property
    def done(self) -> bool:
        return self.node.value is not None and not self.node.children

    def completes(self, token: int) -> bool:
        """Whether ``token`` (not yet seen by the processor) ends a string that cannot be extended."""
        nxt = self.node.children.get(int(token))
        return nxt is not None and nxt.value is not None and not nxt.children

    def advance(self, token: int) -> None:
        """Move along the trie by ``token`` (EOS after a complete string leaves it in place)."""
        if token == self.eos and self.node.value is not None:
            return  # the string is complete; EOS ends generation
        nxt = self.node.children.get(token)
        if nxt is None:
            raise PlayerError(
                f"constrained decoding produced token {token}, outside the legal trie (the sampler ignored the mask)"
            )
        self.path.append(token)
        self.node = nxt

    def bias(self, vocab: int) -> mx.array:
        """``(vocab,)``: 0 for the tokens allowed at the current node, -inf elsewhere (cached per node)."""
        node = self.node
        if node._mask is None or node._mask.shape[-1] != vocab:
            bias = np.full((vocab,), -np.inf, dtype=np.float32)
            bias[self.trie.allowed(node, self.eos)] = 0.0
            node._mask = mx.array(bias)
        return node._mask

    def __call__(self, tokens: mx.array, logits: mx.array) -> mx.array:
        if self._calls:
            self.advance(token_id(tokens[-1]))
        self._calls += 1
        return logits + self.bias(logits.shape[-1])


# ---------------------------------------------------------------------- sampling
def token_id(y: mx.array) -> int:
    """The token in a one-element array of token ids (what argmax and the samplers give)."""
    value = y.item()
    if not isinstance(value, int):
        raise PlayerError(f"a sampler gave {value!r}, not a token id")
    return value


def _token_list(values: object) -> TypeGuard[list[int]]:
    return isinstance(values, list) and all(isinstance(v, int) for v in values)


def token_ids(drawn: mx.array) -> list[int]:
    """The tokens of a ``(rows,)`` array of token ids, one per row."""
    values = drawn.tolist()
    if not _token_list(values):
        raise PlayerError(f"a sampler gave {values!r}, not one token id per row")
    return values


def queue(*arrays: mx.array) -> None:
    """Start computing ``arrays`` in the background (``mx.async_eval``)."""
    mx.async_eval(*arrays)  # type: ignore[no-untyped-call]  # mlx's stub leaves async_eval unannotated


def top_p_filter(logprobs: mx.array, top_p: float | mx.array) -> mx.array:
    """Keep the smallest set of most likely tokens whose mass reaches ``top_p`` (the top token always)."""
    order = mx.argsort(-logprobs, axis=-1)
    sorted_lp = mx.take_along_axis(logprobs, order, axis=-1)
    sorted_p = mx.exp(sorted_lp)
    keep_sorted = (mx.cumsum(sorted_p, axis=-1) - sorted_p) < top_p
    keep = mx.put_along_axis(mx.zeros(logprobs.shape, dtype=mx.bool_), order, keep_sorted, axis=-1)
    return mx.where(keep, logprobs, mx.array(-np.inf, dtype=logprobs.dtype))


def _gumbel_argmax(scaled: mx.array, key: mx.array) -> mx.array:
    """One draw from softmax(``scaled``) over the last axis (Gumbel-max) with ``key``."""
    return mx.argmax(scaled + mx.random.gumbel(scaled.shape, key=key), axis=-1)


def _row_noise(key: mx.array, vocab: int) -> mx.array:
    """The Gumbel noise :class:`KeyedSampler` draws for one ``(1, vocab)`` row, as ``(vocab,)``."""
    return mx.random.gumbel((1, vocab), key=key)[0]


_split_rows = mx.vmap(lambda key: mx.random.split(key, 2))


class KeyedSampler:
    """Temperature / top-p sampling from an explicit PRNG key that is split at every token;
    MLX's global random state is never read or changed.

    A draw is Gumbel-max over the row's scaled log-probabilities, so :class:`RowSampling`
    can draw a whole batch at once (the noise vectorised over the rows' keys) and get exactly
    the tokens these samplers draw one row at a time.
    """

    def __init__(self, seed: int, temperature: float, top_p: float = 1.0):
        if temperature <= 0:
            raise ValueError("KeyedSampler needs temperature > 0 (greedy decoding draws nothing)")
        self._key = mx.random.key(int(seed))
        self.temperature = float(temperature)
        self.top_p = float(top_p)

    def __call__(self, logprobs: mx.array) -> mx.array:
        """``logprobs``: ``(1, vocab)``; returns ``(1,)``."""
        keys = mx.random.split(self._key, 2)
        self._key, sub = keys[0], keys[1]
        if self.top_p < 1.0:
            logprobs = top_p_filter(logprobs, self.top_p)
        return _gumbel_argmax(logprobs * (1.0 / self.temperature), sub)


class RowSampling:
    """The next token of every row of a batch in one vectorised draw: greedy rows take the
    argmax, sampled rows draw exactly what their own :class:`KeyedSampler` would (same key
    schedule, same top-p filter, same noise), so a batched game replays its one-at-a-time twin.
    The rows' samplers are consumed: their keys live here while the batch runs."""

    def __init__(self, samplers: Sequence[KeyedSampler | None]):
        self.rows = [i for i, s in enumerate(samplers) if s is not None]
        self.size = len(samplers)
        picked = [s for s in samplers if s is not None]
        if picked:
            self.keys = mx.stack([s._key for s in picked])
            self.inv_temperature = mx.array([1.0 / s.temperature for s in picked])[:, None]
            self.top_p = mx.array([s.top_p for s in picked])[:, None]
            self.any_top_p = any(s.top_p < 1.0 for s in picked)

    def __call__(self, logprobs: mx.array) -> mx.array:
        """``logprobs``: ``(rows, vocab)``; returns ``(rows,)`` tokens."""
        if not self.rows:
            return mx.argmax(logprobs, axis=-1)
        split = _split_rows(self.keys)
        self.keys, subs = split[:, 0], split[:, 1]
        everyone = len(self.rows) == self.size
        lp = logprobs if everyone else logprobs[mx.array(self.rows)]
        if self.any_top_p:
            lp = mx.where(self.top_p < 1.0, top_p_filter(lp, self.top_p), lp)
        vocab = lp.shape[-1]
        noise = mx.vmap(lambda key: _row_noise(key, vocab))(subs)
        drawn = mx.argmax(lp * self.inv_temperature + noise, axis=-1)
        if everyone:
            return drawn
        out = mx.argmax(logprobs, axis=-1)
        out[mx.array(self.rows)] = drawn
        return out

    def keep(self, kept: list[int]) -> None:
        """Drop the rows not in ``kept`` (indices into the current rows, in order)."""
        where = {row: j for j, row in enumerate(self.rows)}
        mine = [where[i] for i in kept if i in where]
        self.rows = [kept.index(self.rows[j]) for j in mine]
        self.size = len(kept)
        if mine:
            index = mx.array(mine)
            self.keys, self.inv_temperature, self.top_p = (
                self.keys[index],
                self.inv_temperature[index],
                self.top_p[index],
            )


# ---------------------------------------------------------------------- one generation
@dataclass
class Request:
    """One generation: prompt tokens, a token budget, and optional sampler and constraint."""

    tokens: list[int]
    max_tokens: int
    sampler: KeyedSampler | None = None  # None: greedy
    constraint: TrieConstraint | None = None
    prefix_len: int = 0  # leading tokens shared by many prompts (the rules): their KV cache is reused
    session: Hashable | None = None  # a seat's conversation: its KV cache is kept for the next turn
    keep_logits: bool = False  # one at a time: return each step's raw logits (tests of cache exactness)


@dataclass(frozen=True)
class Generated:
    tokens: list[int]  # generated tokens, EOS excluded
    finish_reason: str  # "stop" (EOS), "complete" (a constrained string ended), "length"
    cache: CacheUse = CacheUse()
    logits: list[npt.NDArray[Any]] | None = None  # each step's raw logits, when the request kept them
