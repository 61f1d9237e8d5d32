"""The MLX engine: a loaded model and tokenizer that turns :class:`~.mlx_decoding.Request` s into
:class:`~.mlx_decoding.Generated` answers, one at a time here and batched in :mod:`.mlx_batch`.
Prompts are encoded by :mod:`.mlx_prompting`; the KV caches it keeps live in :mod:`.mlx_cache`."""

from __future__ import annotations

import functools
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import mlx.core as mx
import numpy as np
import numpy.typing as npt

from arena_core.errors import ConfigError

from .mlx_batch import generate_batch
from .mlx_cache import EngineStats, KVCaches, KVLayers, _Session
from .mlx_decoding import Generated, Request, queue, token_id
from .mlx_prompting import ChatEncoder

#: Qwen2.5-0.5B's architecture with random weights and our own tokenizer, built offline (2 GB)
RANDOM_QWEN = "random-qwen2.5-0.5b"


@functools.lru_cache(maxsize=4)
def load_model(model: str) -> tuple[Any, Any]:
    """``(model, tokenizer)`` via ``mlx_lm.load``: ``'tiny'`` builds/uses the cached offline
    test model, :data:`RANDOM_QWEN` a random-weight model of Qwen2.5-0.5B's shape (for speed
    measurements); anything else is a local directory or a hub id (downloaded once by mlx-lm)."""
    import mlx_lm

    path = model
    if model == "tiny":
        from .tiny_model import ensure_tiny_model

        path = str(ensure_tiny_model())
    elif model == RANDOM_QWEN:
        from .tiny_model import ensure_tiny_model, qwen25_05b_shape

        path = str(ensure_tiny_model(config=qwen25_05b_shape()))
    try:
        loaded = mlx_lm.load(path)
    except Exception as exc:
        raise ConfigError(
            f"cannot load model {model!r} ({type(exc).__name__}: {exc}); pass model='tiny', a local directory "
            "holding config.json, *.safetensors and tokenizer files, or a hub id such as "
            "'mlx-community/Qwen2.5-0.5B-Instruct-4bit' (needs network access the first time)"
        ) from exc
    return loaded[0], loaded[1]


class MLXEngine:
    """A loaded model and tokenizer: chat-template encoding and generation, one at a time or batched."""

    def __init__(self, model: Any, tokenizer: Any, *, prefill_step: int = 2048, max_sessions: int = 64):
        self.model = model  # an mlx_lm model (mlx_lm ships no types)
        self.tokenizer = tokenizer
        self.prefill_step = prefill_step
        self.eos_ids = frozenset(int(t) for t in tokenizer.eos_token_ids)
        if not self.eos_ids:
            raise ConfigError("the tokenizer names no end-of-sequence token; constrained decoding needs one")
        eos = getattr(tokenizer, "eos_token_id", None)
        self.eos = int(eos) if eos is not None else min(self.eos_ids)
        self.stats = EngineStats()
        self.prompts = ChatEncoder(tokenizer)
        self.caches = KVCaches(model, self.stats, prefill_step=prefill_step, max_sessions=max_sessions)

    # -- prompts (see ChatEncoder)
    def encode_chat(self, messages: list[dict[str, str]]) -> tuple[list[int], int]:
        """``(prompt tokens, shared prefix length)``: :meth:`ChatEncoder.encode_chat`."""
        return self.prompts.encode_chat(messages)

    def encode_answer(self, text: str) -> list[int]:
        """Tokens of an answer string (cached: the same legal strings recur every turn)."""
        return self.prompts.encode_answer(text)

    def decode(self, tokens: Sequence[int]) -> str:
        return self.prompts.decode(tokens)

    # -- kept KV caches (see KVCaches)
    @property
    def max_sessions(self) -> int:
        """The most seats' conversations kept between their turns (0 keeps none)."""
        return self.caches.max_sessions

    @max_sessions.setter
    def max_sessions(self, value: int) -> None:
        self.caches.max_sessions = value

    @property
    def sessions_supported(self) -> bool:
        """Whether this model's KV cache can be kept across a seat's turns."""
        return self.caches.supported

    @property
    def _sessions(self) -> OrderedDict[Hashable, _Session]:
        """The kept conversations, least recently used first (tests count them)."""
        return self.caches.sessions

    def drop_sessions(self, where: Callable[[Hashable], bool] | None = None) -> int:
        """Forget the kept conversations whose key satisfies ``where`` (all without it); returns how many."""
        return self.caches.drop(where)

    def session_tokens(self, key: Hashable) -> list[int] | None:
        """The tokens a kept conversation's cache holds (None if not kept)."""
        return self.caches.tokens(key)

    def _prefill(self, tokens: Sequence[int], cache: KVLayers) -> None:
        """Run ``tokens`` through the model into ``cache`` (bench/players_bench.py times it)."""
        self.caches.prefill(tokens, cache)

    def _prefix_cache(self, prefix: Sequence[int]) -> KVLayers:
        """A private copy of the KV cache after ``prefix`` (bench/players_bench.py times it)."""
        return self.caches.prefix(prefix)

    # -- one at a time
    def generate(self, req: Request) -> Generated:
        started = time.perf_counter()
        cache, use = self.caches.prefilled(req.tokens, req.prefix_len, req.session)
        logits = self.model(mx.array(req.tokens[-1:])[None], cache=cache)[:, -1, :]
        seen: list[npt.NDArray[Any]] | None = [] if req.keep_logits else None
        if req.constraint is None:
            out, finish, drawn = self._decode_free(req, logits, cache, seen)
        else:
            out, finish, drawn = self._decode_constrained(req, logits, cache, seen)
        self.caches.keep(req.session, req.tokens, cache, drawn, len(out))
        self.account(started, len(req.tokens), len(out))
        return Generated(out, finish, use, seen)

    def _decode_constrained(
        self, req: Request, logits: mx.array, cache: KVLayers, seen: list[npt.NDArray[Any]] | None
    ) -> tuple[list[int], str, list[int]]:
        """``(answer tokens, finish reason, every token drawn in order, EOS included)``."""
        constraint = req.constraint
        if constraint is None:  # pragma: no cover - the caller checks
            raise ValueError("constrained decoding needs a constraint")
        out: list[int] = []
        drawn: list[int] = []
        finish = "length"
        for _ in range(req.max_tokens):
            if seen is not None:
                seen.append(np.array(logits[0]))
            logits = constraint(mx.array((req.tokens + out)[-1:]), logits)  # it reads the last token only
            logprobs = logits - mx.logsumexp(logits, axis=-1, keepdims=True)
            y = req.sampler(logprobs) if req.sampler is not None else mx.argmax(logprobs, axis=-1)
            token = token_id(y)
            drawn.append(token)
            if token in self.eos_ids:
                finish = "stop"
                break
            out.append(token)
            if constraint.completes(token):
                finish = "complete"  # only EOS could follow: stop without the extra step
                break
            if len(out) == req.max_tokens:
                break  # the budget is spent: no forward pass for a token nobody reads
            logits = self.model(y.reshape(1, 1).astype(mx.uint32), cache=cache)[:, -1, :]
        return out, finish, drawn

    def _decode_free(
        self, req: Request, logits: mx.array, cache: KVLayers, seen: list[npt.NDArray[Any]] | None = None
    ) -> tuple[list[int], str, list[int]]:
        """Unconstrained decoding, pipelined: the next token's forward pass and draw are queued
        before this token is read back, so Python's bookkeeping overlaps the model (the same
        draws in the same order as one token at a time; at most one queued step is discarded,
        though its token went through the model: the cache then holds it too)."""

        def draw(logits: mx.array) -> mx.array:
            if seen is not None:
                seen.append(np.array(logits[0]))
            logprobs = logits - mx.logsumexp(logits, axis=-1, keepdims=True)
            return req.sampler(logprobs) if req.sampler is not None else mx.argmax(logprobs, axis=-1)

        y = draw(logits)
        queue(y)
        out: list[int] = []
        drawn: list[int] = []
        while True:
            queued = None
            if len(out) + 1 < req.max_tokens:
                queued = draw(self.model(y.reshape(1, 1).astype(mx.uint32), cache=cache)[:, -1, :])
                queue(queued)
            token = token_id(y)
            drawn.append(token)
            if token in self.eos_ids:
                return out, "stop", drawn
            out.append(token)
            if queued is None:
                return out, "length", drawn
            y = queued

    # -- batched
    def generate_batch(self, reqs: Sequence[Request]) -> list[Generated]:
        """All requests decoded together, one forward pass per token for the whole batch; the
        tokens are exactly those of :meth:`generate` row by row (:func:`.mlx_batch.generate_batch`)."""
        return generate_batch(self, reqs)

    def account(self, started: float, tokens_in: int, tokens_out: int) -> None:
        """Count one generation call (started at ``started``) in :attr:`stats`."""
        self.stats.generate_s += time.perf_counter() - started
        self.stats.calls += 1
        self.stats.tokens_in += tokens_in
        self.stats.tokens_out += tokens_out
