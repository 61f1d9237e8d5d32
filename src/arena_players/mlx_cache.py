"""The MLX engine's kept KV caches: the shared rules' prefix caches (a small LRU) and each seat's
conversation between its turns (least recently used evicted beyond ``max_sessions``).

A prompt is compared token by token with the tokens a kept cache holds; the cache is trimmed
back to their longest common prefix and only the rest is prefilled. The reuse is exact: a causal
model's keys and values at a position depend only on the tokens up to it.
"""

from __future__ import annotations

import copy
import functools
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import mlx.core as mx

#: one model's per-layer KV caches, as ``mlx_lm.models.cache.make_prompt_cache`` makes them (mlx_lm ships no types)
KVLayers = list[Any]


@dataclass(frozen=True)
class CacheUse:
    """How a prompt was prefilled: ``cached`` leading tokens came from a kept KV cache (a seat's
    earlier turns, or the shared rules), ``prefilled`` went through the model (the last prompt
    token included: its logits start the answer). ``new`` is the prompt's growth since the seat's
    last turn (tokens beyond that turn's prompt and answer; None on a seat's first turn).
    ``event``: ``hit`` (the whole kept conversation extends into this prompt), ``partial`` (only
    a prefix of it does: the cache was trimmed back to the longest common prefix), ``miss`` (no
    kept conversation, or it shares no more than the rules), ``off`` (no session asked)."""

    cached: int = 0
    prefilled: int = 0
    new: int | None = None
    event: str = "off"


@dataclass
class EngineStats:
    """Wall time spent inside generation (model forward passes, sampling, masks), and the part
    of it spent prefilling prompts."""

    generate_s: float = 0.0
    prefill_s: float = 0.0
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    prefill_tokens: int = 0  # prompt tokens run through the model
    cached_tokens: int = 0  # prompt tokens whose KV cache was reused (rules or a seat's conversation)
    session_hits: int = 0
    session_partial: int = 0
    session_misses: int = 0
    session_evictions: int = 0


@dataclass
class _Session:
    """A seat's conversation between its turns: ``cache`` holds the keys and values of exactly
    ``tokens`` (the last prompt, then the answer tokens that went through the model)."""

    tokens: list[int]
    cache: KVLayers
    prompt_len: int
    answer_len: int


def common_prefix(a: Sequence[int], b: Sequence[int], limit: int) -> int:
    """Length of the longest common prefix of ``a`` and ``b``, at most ``limit``."""
    n = min(len(a), len(b), limit)
    if list(a[:n]) == list(b[:n]):
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo] and a[:hi] != b[:hi]: bisect on slices (compared in C)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if list(a[:mid]) == list(b[:mid]):
            lo = mid
        else:
            hi = mid
    return lo


def trimmable(cache: KVLayers) -> bool:
    """Whether a model's cache can be kept across turns: plain (batched) KV caches only, whose
    keys and values at a position depend on the tokens up to it and can be trimmed back
    (sliding-window, quantized or recurrent caches are not kept)."""
    from mlx_lm.models.cache import BatchKVCache, KVCache

    return bool(cache) and all(type(layer) in (KVCache, BatchKVCache) for layer in cache)


class KVCaches:
    """The KV caches one engine keeps: the rules' prefixes and the seats' conversations.

    ``stats`` is the engine's :class:`EngineStats`; prefill time and the cache events are counted there.
    """

    def __init__(self, model: Any, stats: EngineStats, *, prefill_step: int, max_sessions: int):
        self.model = model
        self.stats = stats
        self.prefill_step = prefill_step
        self.max_sessions = max_sessions
        self.prefix_cache_size = 8
        self.prefixes: OrderedDict[tuple[int, ...], KVLayers] = OrderedDict()
        # seats' conversations kept between their turns, least recently used first
        self.sessions: OrderedDict[Hashable, _Session] = OrderedDict()

    def prefill(self, tokens: Sequence[int], cache: KVLayers) -> None:
        """Run ``tokens`` through the model into ``cache`` (logits are never computed)."""
        arr = mx.array(list(tokens))
        for start in range(0, len(tokens), self.prefill_step):
            self.model(arr[start : start + self.prefill_step][None], cache=cache)
            mx.eval([c.state for c in cache])

    def prefix(self, prefix: Sequence[int]) -> KVLayers:
        """A private copy of the KV cache after ``prefix`` (computed once, kept in a small LRU)."""
        from mlx_lm.models.cache import make_prompt_cache

        key = tuple(prefix)
        cache = self.prefixes.get(key)
        if cache is None:
            cache = make_prompt_cache(self.model)
            self.prefill(prefix, cache)
            self.prefixes[key] = cache
            while len(self.prefixes) > self.prefix_cache_size:
                self.prefixes.popitem(last=False)
        else:
            self.prefixes.move_to_end(key)
        return copy.deepcopy(cache)

    def prefilled(self, tokens: list[int], prefix_len: int, session: Hashable | None) -> tuple[KVLayers, CacheUse]:
        """A KV cache holding every prompt token but the last, and how it was obtained.

        With a ``session`` the seat's kept conversation is taken out of the store (a request
        owns it while it runs): it is trimmed back to the longest common prefix of its tokens
        and the prompt's (all of it when the prompt extends it, the usual case), and only the
        rest is prefilled. Reuse is exact whatever the tokenizer does at message boundaries: a
        causal model's keys and values at a position depend only on the tokens up to it. When
        the kept conversation shares no more than the rules (the first ``prefix_len`` tokens),
        the rules' cache is used."""
        from mlx_lm.models.cache import make_prompt_cache

        started = time.perf_counter()
        need = len(tokens) - 1  # the last token is run by the caller: its logits start the answer
        cache: KVLayers | None = None
        cached, held, new, event = 0, 0, None, "off"
        if session is not None and self.max_sessions > 0 and self.supported:
            kept = self.sessions.pop(session, None)
            event = "miss"
            if kept is not None:
                new = max(len(tokens) - kept.prompt_len - kept.answer_len, 0)
                common = common_prefix(kept.tokens, tokens, need)
                if common > 0 and common > prefix_len:
                    for layer in kept.cache:
                        layer.trim(layer.offset - common)
                    cache, cached = kept.cache, common
                    held = common
                    event = "hit" if common == len(kept.tokens) else "partial"
        if cache is None:
            if prefix_len:
                fresh = tuple(tokens[:prefix_len]) not in self.prefixes
                cache = self.prefix(tokens[:prefix_len])
                cached = 0 if fresh else prefix_len  # rules prefilled just now count as prefilled
                held = prefix_len
            else:
                cache, held = make_prompt_cache(self.model), 0
        self.prefill(tokens[held:need], cache)
        use = CacheUse(cached=cached, prefilled=len(tokens) - cached, new=new, event=event)
        self.stats.prefill_s += time.perf_counter() - started
        self.stats.prefill_tokens += use.prefilled
        self.stats.cached_tokens += use.cached
        if event == "hit":
            self.stats.session_hits += 1
        elif event == "partial":
            self.stats.session_partial += 1
        elif event == "miss":
            self.stats.session_misses += 1
        return cache, use

    @functools.cached_property
    def supported(self) -> bool:
        """Whether this model's KV cache can be kept across a seat's turns (see :func:`trimmable`)."""
        from mlx_lm.models.cache import make_prompt_cache

        return trimmable(make_prompt_cache(self.model))

    def keep(
        self, session: Hashable | None, prompt: Sequence[int], cache: KVLayers, drawn: Sequence[int], answer_len: int
    ) -> None:
        """Store ``cache`` as ``session``'s conversation: it holds the ``prompt`` and then the
        first of the ``drawn`` tokens (sampled in order, EOS included), as many as went through
        the model; the least recently used sessions beyond ``max_sessions`` are evicted."""
        if session is None or self.max_sessions <= 0 or not trimmable(cache):
            return
        held = cache[0].offset
        tokens = (list(prompt) + list(drawn))[:held]
        if len(tokens) != held or any(layer.offset != held for layer in cache):
            return  # cannot say which tokens the cache holds: keep nothing rather than guess
        self.sessions[session] = _Session(tokens, cache, len(prompt), answer_len)
        self.sessions.move_to_end(session)
        while len(self.sessions) > self.max_sessions:
            self.sessions.popitem(last=False)
            self.stats.session_evictions += 1

    def drop(self, where: Callable[[Hashable], bool] | None = None) -> int:
        """Forget the kept conversations whose key satisfies ``where`` (all without it); returns how many."""
        keys = [k for k in self.sessions if where is None or where(k)]
        for key in keys:
            del self.sessions[key]
        return len(keys)

    def tokens(self, key: Hashable) -> list[int] | None:
        """The tokens a kept conversation's cache holds (None if not kept)."""
        kept = self.sessions.get(key)
        return None if kept is None else list(kept.tokens)
