"""Local language-model players on MLX (``mlx-lm``), with constrained and free decoding.

One file (over 500 lines) because the engine, constrained decoding, the kept KV caches and the player share one token-level state (trie masks, samplers, caches) that no other module should touch.

- **constrained**: a logits processor walks a token trie of the legal action strings, so the
  answer is always exactly one legal action whatever the model (multi-token strings, shared
  prefixes, and end-of-sequence after a complete string are all handled).
- **free**: the model writes freely; the game's parser reads the answer. An unreadable or
  illegal answer is retried inside the player (``retries``, with feedback), then handed to the
  runner as text, where the illegal-action policy decides.

Every random draw comes from a key derived from (episode seed, seat, ply, player seed,
attempt) through :meth:`Decision.rng`, never from MLX's global random state, so a seeded game
with a sampled model replays exactly. :meth:`MLXPlayer.act_batch` decides many positions in one
batched generation (one forward pass per token for the whole batch over ``mlx_lm``'s
``BatchKVCache``, the rows' trie masks and samplers applied in one vectorised step); the
runner in :mod:`arena_players.batched` uses it.

**Views and prompt caches.** ``view='snapshot'`` (the default) rebuilds the prompt from the
position every turn; the system turn (the rules) is the same at every decision and its KV cache
is kept (``prefix_cache``). ``view='transcript'`` sends each seat one growing conversation (the
game's ``transcript`` view through :class:`~arena_players.llm_common.ViewPrompts`), and the engine
keeps each seat's KV cache between its turns, keyed by (player, episode seed, seat): a prompt
is compared token by token with the tokens the kept cache holds, the cache is trimmed back to
their longest common prefix (all of it when the prompt extends the last prompt and answer, the
usual case) and only the rest is prefilled. The reuse is exact -- a causal model's keys and
values at a position depend only on the tokens up to it -- whatever the tokenizer does at a
message boundary (a tokenizer whose tokens cross the newline before an answer re-reads those few
tokens: a ``partial`` hit). After an answer the cache holds exactly the prompt and the answer
tokens that went through the model. At most ``max_cached_seats`` seats' caches are kept
(least recently used evicted); ``begin_episode`` and ``end_episode`` (called by the game
loops) free them early. In batched play each row is prefilled from its own kept cache, the rows
are merged into one ``BatchKVCache`` for the decode steps, and each row's cache is copied back
out of the batch when the row finishes. Telemetry per decision: ``kv_cache`` (``hit``, ``partial``, ``miss``,
``off``), ``prefill_tokens``, ``cached_tokens`` and ``new_tokens`` (the prompt's growth since the
seat's last prompt and answer).
"""

from __future__ import annotations

import copy
import functools
import itertools
import json
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import mlx.core as mx
import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from arena_core.errors import ConfigError, PlayerError
from arena_core.players import BasePlayer, Decision, Move

from .llm_common import (
    NO_ACTION,
    VIEW_FIELD_DESCRIPTION,
    DecisionPrompt,
    PromptView,
    TextRecord,
    ViewPrompts,
    legal_action_for,
    player_settings,
    retry_feedback,
    text_record,
)


# ---------------------------------------------------------------------- settings
class MLXSettings(BaseModel):
    """Options of :class:`MLXPlayer` (also accepted as ``mlx:key=value,...`` player specs)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = Field(
        default="tiny",
        description="'tiny' (our offline test model), 'random-qwen2.5-0.5b' (Qwen2.5-0.5B's shape, random weights, "
        "built offline), a local directory, or a hub id",
    )
    mode: Literal["constrained", "free"] = "constrained"
    temperature: float = Field(default=0.0, ge=0.0, description="0 is greedy")
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    max_tokens: int = Field(default=256, ge=1, description="free mode: the longest answer")
    retries: int = Field(default=0, ge=0, description="free mode: re-asks after an unreadable answer")
    record_prompt: TextRecord = Field(
        default="hash", description="'full' text, its 'hash' and length, or 'none' (length only)"
    )
    record_response: TextRecord = "full"
    prefill_step: int = Field(default=2048, ge=16)
    prefix_cache: bool = Field(
        default=True, description="reuse the KV cache of the system turn (the rules) across decisions"
    )
    view: PromptView = Field(default="snapshot", description=VIEW_FIELD_DESCRIPTION)
    max_cached_seats: int = Field(
        default=64,
        ge=0,
        description="transcript view: the most seats' KV caches kept between turns (least recently used evicted; "
        "0 keeps none); one engine shared by several players keeps the largest asked",
    )


# ---------------------------------------------------------------------- constrained decoding
@dataclass
class TrieNode:
    children: dict[int, TrieNode] = field(default_factory=dict)
    value: int | None = None  # index of the legal string that ends here
    _mask: Any = field(default=None, repr=False)


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
    def from_strings(cls, strings: Sequence[str], encode) -> TokenTrie:
        return cls([encode(s) for s in strings])

    def lookup(self, tokens: Sequence[int]) -> int | None:
        """Index of the legal string whose tokens are exactly ``tokens``, else None."""
        node = self.root
        for tok in tokens:
            node = node.children.get(int(tok))
            if node is None:
                return None
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
            self.advance(int(tokens[-1].item()))
        self._calls += 1
        return logits + self.bias(logits.shape[-1])


# ---------------------------------------------------------------------- sampling
def top_p_filter(logprobs: mx.array, top_p: float) -> mx.array:
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
        picked = [samplers[i] for i in self.rows]
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


# ---------------------------------------------------------------------- the engine
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


@dataclass(frozen=True)
class Generated:
    tokens: list[int]  # generated tokens, EOS excluded
    finish_reason: str  # "stop" (EOS), "complete" (a constrained string ended), "length"
    cache: CacheUse = CacheUse()
    logits: list[np.ndarray] | None = None  # each step's raw logits, when the request kept them


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
    cache: list
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


#: Qwen2.5-0.5B's architecture with random weights and our own tokenizer, built offline (2 GB)
RANDOM_QWEN = "random-qwen2.5-0.5b"


@functools.lru_cache(maxsize=4)
def load_model(model: str):
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
        return mlx_lm.load(path)
    except Exception as exc:
        raise ConfigError(
            f"cannot load model {model!r} ({type(exc).__name__}: {exc}); pass model='tiny', a local directory "
            "holding config.json, *.safetensors and tokenizer files, or a hub id such as "
            "'mlx-community/Qwen2.5-0.5B-Instruct-4bit' (needs network access the first time)"
        ) from exc


class MLXEngine:
    """A loaded model and tokenizer: chat-template encoding and generation, one at a time or batched."""

    def __init__(self, model, tokenizer, *, prefill_step: int = 2048, max_sessions: int = 64):
        self.model = model
        self.tokenizer = tokenizer
        self.prefill_step = prefill_step
        self.eos_ids = frozenset(int(t) for t in tokenizer.eos_token_ids)
        if not self.eos_ids:
            raise ConfigError("the tokenizer names no end-of-sequence token; constrained decoding needs one")
        eos = getattr(tokenizer, "eos_token_id", None)
        self.eos = int(eos) if eos is not None else min(self.eos_ids)
        self.stats = EngineStats()
        self._prefixes: OrderedDict[tuple[int, ...], list] = OrderedDict()
        self.prefix_cache_size = 8
        # seats' conversations kept between their turns, least recently used first
        self._sessions: OrderedDict[Hashable, _Session] = OrderedDict()
        self.max_sessions = max_sessions
        self._heads: dict[str, tuple[str, list[int]] | None] = {}
        self._answers: dict[str, list[int]] = {}
        try:
            self._specials = tuple(sorted(tokenizer.get_added_vocab(), key=len, reverse=True))
        except Exception:  # tokenizers without an added vocabulary: never split the encoding
            self._specials = ()

    def encode_chat(self, messages: list[dict[str, str]]) -> tuple[list[int], int]:
        """``(prompt tokens, shared prefix length)`` through the tokenizer's chat template.

        The prefix is the system turn (the rules), identical at every decision: its tokens are
        cached, and when the rest of the prompt starts with a special token (so tokenization
        cannot merge across the boundary) only the rest is encoded. Templates without a system
        role get it merged into the user turn; tokenizers without a template get plain text.
        """
        tok = self.tokenizer
        if not getattr(tok, "has_chat_template", False):
            text = "\n\n".join(f"{m['role']}: {m['content']}" for m in messages) + "\n\nassistant: "
            return list(tok.encode(text)), 0
        try:
            text = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        except Exception:  # e.g. templates that reject a system role
            merged = [
                {
                    "role": "user",
                    "content": "\n\n".join(m["content"] for m in messages if m["role"] in ("system", "user")),
                }
            ]
            messages = merged + [m for m in messages if m["role"] == "assistant"]
            text = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        head = self._system_head(messages)
        if head is not None:
            head_text, head_tokens = head
            rest = text[len(head_text) :]
            if text.startswith(head_text) and rest and any(rest.startswith(s) for s in self._specials):
                return head_tokens + self._encode(rest), len(head_tokens)
        tokens = self._encode(text)
        if head is not None and 0 < len(head[1]) < len(tokens) and tokens[: len(head[1])] == head[1]:
            return tokens, len(head[1])
        return tokens, 0

    def _encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def _system_head(self, messages: list[dict[str, str]]) -> tuple[str, list[int]] | None:
        """The rendered system turn and its tokens (cached by its text), or None."""
        if len(messages) < 2 or messages[0]["role"] != "system":
            return None
        content = messages[0]["content"]
        if content not in self._heads:
            try:
                head_text = self.tokenizer.apply_chat_template(
                    messages[:1], add_generation_prompt=False, tokenize=False
                )
                self._heads[content] = (head_text, self._encode(head_text))
            except Exception:
                self._heads[content] = None
            while len(self._heads) > self.prefix_cache_size:
                self._heads.pop(next(iter(self._heads)))
        return self._heads[content]

    def _prefill(self, tokens: Sequence[int], cache: list) -> None:
        """Run ``tokens`` through the model into ``cache`` (logits are never computed)."""
        arr = mx.array(list(tokens))
        for start in range(0, len(tokens), self.prefill_step):
            self.model(arr[start : start + self.prefill_step][None], cache=cache)
            mx.eval([c.state for c in cache])

    def _prefix_cache(self, prefix: Sequence[int]) -> list:
        """A private copy of the KV cache after ``prefix`` (computed once, kept in a small LRU)."""
        from mlx_lm.models.cache import make_prompt_cache

        key = tuple(prefix)
        cache = self._prefixes.get(key)
        if cache is None:
            cache = make_prompt_cache(self.model)
            self._prefill(prefix, cache)
            self._prefixes[key] = cache
            while len(self._prefixes) > self.prefix_cache_size:
                self._prefixes.popitem(last=False)
        else:
            self._prefixes.move_to_end(key)
        return copy.deepcopy(cache)

    def encode_answer(self, text: str) -> list[int]:
        """Tokens of an answer string (cached: the same legal strings recur every turn)."""
        tokens = self._answers.get(text)
        if tokens is None:
            if len(self._answers) > 65536:
                self._answers.clear()
            tokens = self._answers[text] = self._encode(text)
        return list(tokens)

    def decode(self, tokens: Sequence[int]) -> str:
        return self.tokenizer.decode(list(tokens))

    # -- one at a time
    def generate(self, req: Request) -> Generated:
        started = time.perf_counter()
        cache, use = self._prefilled(req)
        logits = self.model(mx.array(req.tokens[-1:])[None], cache=cache)[:, -1, :]
        seen: list[np.ndarray] | None = [] if req.keep_logits else None
        if req.constraint is None:
            out, finish, drawn = self._decode_free(req, logits, cache, seen)
        else:
            out, finish, drawn = self._decode_constrained(req, logits, cache, seen)
        self._keep(req, cache, drawn, len(out))
        self._account(started, len(req.tokens), len(out))
        return Generated(out, finish, use, seen)

    def _decode_constrained(
        self, req: Request, logits: mx.array, cache: list, seen: list | None
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
            token = int(y.item())
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
        self, req: Request, logits: mx.array, cache: list, seen: list | None = None
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
        mx.async_eval(y)
        out: list[int] = []
        drawn: list[int] = []
        while True:
            queued = None
            if len(out) + 1 < req.max_tokens:
                queued = draw(self.model(y.reshape(1, 1).astype(mx.uint32), cache=cache)[:, -1, :])
                mx.async_eval(queued)
            token = int(y.item())
            drawn.append(token)
            if token in self.eos_ids:
                return out, "stop", drawn
            out.append(token)
            if queued is None:
                return out, "length", drawn
            y = queued

    def _prefilled(self, req: Request) -> tuple[list, CacheUse]:
        """A KV cache holding every prompt token but the last, and how it was obtained.

        With ``req.session`` the seat's kept conversation is taken out of the store (a request
        owns it while it runs): it is trimmed back to the longest common prefix of its tokens
        and the prompt's (all of it when the prompt extends it, the usual case), and only the
        rest is prefilled. Reuse is exact whatever the tokenizer does at message boundaries: a
        causal model's keys and values at a position depend only on the tokens up to it. When
        the kept conversation shares no more than the rules, the rules' cache is used."""
        from mlx_lm.models.cache import make_prompt_cache

        started = time.perf_counter()
        need = len(req.tokens) - 1  # the last token is run by the caller: its logits start the answer
        cache, cached, held, new, event = None, 0, 0, None, "off"
        if req.session is not None and self.max_sessions > 0 and self.sessions_supported:
            kept = self._sessions.pop(req.session, None)
            event = "miss"
            if kept is not None:
                new = max(len(req.tokens) - kept.prompt_len - kept.answer_len, 0)
                common = common_prefix(kept.tokens, req.tokens, need)
                if common > 0 and common > req.prefix_len:
                    for layer in kept.cache:
                        layer.trim(layer.offset - common)
                    cache, cached = kept.cache, common
                    held = common
                    event = "hit" if common == len(kept.tokens) else "partial"
        if cache is None:
            if req.prefix_len:
                fresh = tuple(req.tokens[: req.prefix_len]) not in self._prefixes
                cache = self._prefix_cache(req.tokens[: req.prefix_len])
                cached = 0 if fresh else req.prefix_len  # rules prefilled just now count as prefilled
                held = req.prefix_len
            else:
                cache, held = make_prompt_cache(self.model), 0
        self._prefill(req.tokens[held:need], cache)
        use = CacheUse(cached=cached, prefilled=len(req.tokens) - cached, new=new, event=event)
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
    def sessions_supported(self) -> bool:
        """Whether this model's KV cache can be kept across a seat's turns (see :func:`_trimmable`)."""
        from mlx_lm.models.cache import make_prompt_cache

        return _trimmable(make_prompt_cache(self.model))

    def _keep(self, req: Request, cache: list, drawn: Sequence[int], answer_len: int) -> None:
        """Store ``cache`` as ``req.session``'s conversation: it holds the prompt and then the
        first of the ``drawn`` tokens (sampled in order, EOS included), as many as went through
        the model; the least recently used sessions beyond ``max_sessions`` are evicted."""
        if req.session is None or self.max_sessions <= 0 or not _trimmable(cache):
            return
        held = cache[0].offset
        tokens = (list(req.tokens) + list(drawn))[:held]
        if len(tokens) != held or any(layer.offset != held for layer in cache):
            return  # cannot say which tokens the cache holds: keep nothing rather than guess
        self._sessions[req.session] = _Session(tokens, cache, len(req.tokens), answer_len)
        self._sessions.move_to_end(req.session)
        while len(self._sessions) > self.max_sessions:
            self._sessions.popitem(last=False)
            self.stats.session_evictions += 1

    def drop_sessions(self, where: Callable[[Hashable], bool] | None = None) -> int:
        """Forget the kept conversations whose key satisfies ``where`` (all without it); returns how many."""
        keys = [k for k in self._sessions if where is None or where(k)]
        for key in keys:
            del self._sessions[key]
        return len(keys)

    def session_tokens(self, key: Hashable) -> list[int] | None:
        """The tokens a kept conversation's cache holds (None if not kept)."""
        kept = self._sessions.get(key)
        return None if kept is None else list(kept.tokens)

    # -- batched
    def generate_batch(self, reqs: Sequence[Request]) -> list[Generated]:
        """All requests decoded together: one forward pass per token for the whole batch
        (``mlx_lm``'s left-padded ``BatchKVCache``), every row's constraint applied as one
        mask, every row's sampler drawn in one vectorised step (:class:`RowSampling`), and
        finished rows dropped from the batch as they end; without constraints the next step is
        queued before this one is read back, as in :meth:`generate`. The tokens are exactly
        those of :meth:`generate` row by row.

        Each prompt is prefilled on its own first (from the shared-prefix cache): prefill is
        compute-bound, so padding prompts into one batch saves nothing on a CPU and wastes
        the padding, while the token-by-token decode steps are where batching pays.
        """
        if not reqs:
            return []
        if len(reqs) == 1:
            return [self.generate(reqs[0])]
        started = time.perf_counter()
        prefilled = [self._prefilled(r) for r in reqs]
        uses = [use for _, use in prefilled]
        rows = [row for row, _ in prefilled]
        cache = [rows[0][layer].merge([row[layer] for row in rows]) for layer in range(len(rows[0]))]
        del rows, prefilled
        sampling = RowSampling([r.sampler for r in reqs])
        active = list(range(len(reqs)))
        outs: list[list[int]] = [[] for _ in reqs]
        drawn_by_row: list[list[int]] = [[] for _ in reqs]
        keeping = self.max_sessions > 0 and _trimmable(cache)

        def leave(leaving: Sequence[int]) -> None:
            """Keep the conversations of the rows at ``leaving`` (indices into ``active``) that
            belong to a session: each row's keys and values are copied out of the batch."""
            for j in leaving:
                i = active[j]
                if keeping and reqs[i].session is not None:
                    self._keep(reqs[i], [layer.extract(j) for layer in cache], drawn_by_row[i], len(outs[i]))

        finish = ["length"] * len(reqs)
        # without constraints the next step's forward pass is queued before this step's tokens
        # are read back (rows that end meanwhile are dropped from its result)
        pipelined = all(r.constraint is None for r in reqs)
        logits = self.model(mx.array([r.tokens[-1:] for r in reqs]), cache=cache)[:, -1, :]
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
                queued = self.model(drawn[:, None].astype(mx.uint32), cache=cache)[:, -1, :]
                mx.async_eval(queued)
            tokens = drawn.tolist()
            kept: list[int] = []
            for j, (i, token) in enumerate(zip(active, tokens, strict=True)):
                drawn_by_row[i].append(token)
                if token in self.eos_ids:
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
                logits = self.model(mx.array([[outs[i][-1]] for i in active]), cache=cache)[:, -1, :]
        self._account(started, sum(len(r.tokens) for r in reqs), sum(len(o) for o in outs))
        return [Generated(o, f, use) for o, f, use in zip(outs, finish, uses, strict=True)]

    def _account(self, started: float, tokens_in: int, tokens_out: int) -> None:
        self.stats.generate_s += time.perf_counter() - started
        self.stats.calls += 1
        self.stats.tokens_in += tokens_in
        self.stats.tokens_out += tokens_out


def _trimmable(cache: list) -> bool:
    """Whether a model's cache can be kept across turns: plain (batched) KV caches only, whose
    keys and values at a position depend on the tokens up to it and can be trimmed back
    (sliding-window, quantized or recurrent caches are not kept)."""
    from mlx_lm.models.cache import BatchKVCache, KVCache

    return bool(cache) and all(type(layer) in (KVCache, BatchKVCache) for layer in cache)


# ---------------------------------------------------------------------- the player
_PLAYER_TAGS = itertools.count()


@dataclass
class _Pending:
    """One decision in flight: its conversation so far and what it has cost."""

    decision: Decision
    legal: tuple[str, ...]
    messages: list[dict[str, str]]
    attempt: int  # how many times the runner has asked for this same decision before
    started: float
    prompt_text: str
    trie: TokenTrie | None = None
    rounds: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    responses: list[str] = field(default_factory=list)
    finish_reason: str = ""
    prompt: DecisionPrompt | None = None
    cache: dict[str, Any] = field(default_factory=dict)  # prompt-cache telemetry, summed over rounds


class MLXPlayer(BasePlayer):
    """A local model through ``mlx-lm``; see the module docstring and docs/players.md.

    ``MLXPlayer(model='tiny')`` uses the offline test model; ``model='path/or/hub-id'`` any
    ``mlx_lm.load``-able model. Options are :class:`MLXSettings` fields.
    """

    name = "mlx"

    def __init__(self, seed: int = 0, *, engine: MLXEngine | None = None, **options: Any):
        super().__init__(seed)
        self.settings = player_settings(MLXSettings, "MLXPlayer", options)
        own_engine = engine is None
        if engine is None:
            model, tokenizer = load_model(self.settings.model)
            engine = MLXEngine(model, tokenizer, prefill_step=self.settings.prefill_step)
        self.engine = engine
        self.name = f"mlx:{self.settings.model}:{self.settings.mode}"
        self._last_ply: dict[tuple[int, int], tuple[int, int]] = {}
        self._transcript = self.settings.view == "transcript"
        self._prompts = ViewPrompts(self.settings.view, max_conversations=max(256, self.settings.max_cached_seats))
        if self._transcript:
            self.name += ":transcript"
            limit = self.settings.max_cached_seats
            engine.max_sessions = limit if own_engine else max(engine.max_sessions, limit)
        self._tag = next(_PLAYER_TAGS)  # this player's sessions in a shared engine

    # -- episode bookkeeping
    def begin_episode(self, game, seat: int, episode_seed: int) -> None:
        self._last_ply.pop((int(episode_seed), int(seat)), None)
        self._prompts.begin_episode(game, seat, episode_seed)
        if self._transcript:
            self.engine.drop_sessions(lambda key: key == self._session(episode_seed, seat))

    def end_episode(self, end) -> None:
        """An episode ended (:class:`~arena_core.players.EpisodeEnd`): free the seat's kept KV cache."""
        self.free_episode(end.episode_seed, end.seat)

    def free_episode(self, episode_seed: int, seat: int | None = None) -> int:
        """Free the kept KV caches of ``episode_seed`` (one ``seat``'s or all of them); returns how
        many were freed. The least recently used go anyway once over ``max_cached_seats``."""
        return self.engine.drop_sessions(
            lambda key: key[0] == self._tag and key[1] == int(episode_seed) and seat in (None, key[2])
        )

    def _session(self, episode_seed: int, seat: int) -> tuple[int, int, int]:
        return (self._tag, int(episode_seed), int(seat))

    def _attempt(self, decision: Decision) -> int:
        """0 the first time a decision is asked, 1, 2, ... when the runner asks it again (retry policy)."""
        key = (decision.episode_seed, decision.seat)
        ply, count = self._last_ply.get(key, (-1, -1))
        count = count + 1 if ply == decision.ply else 0
        self._last_ply[key] = (decision.ply, count)
        return count

    # -- the Player protocol
    def act(self, decision: Decision) -> Move:
        answer = self._decide([decision], batched=False)[0]
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def act_batch(self, decisions: Sequence[Decision]) -> list[Move | BaseException]:
        """Decide every position in ``decisions`` with batched generation; a decision that
        cannot be prompted comes back as its exception (the batched runner records it)."""
        return self._decide(list(decisions), batched=True)

    # -- internals
    def _decide(self, decisions: list[Decision], *, batched: bool) -> list[Move | BaseException]:
        moves: list[Move | BaseException | None] = [None] * len(decisions)
        pending: dict[int, _Pending] = {}
        for i, decision in enumerate(decisions):
            try:
                pending[i] = self._start(decision)
            except Exception as exc:  # this row fails; the others still play
                moves[i] = exc
        todo = sorted(pending)
        while todo:
            reqs = [self._request(pending[i]) for i in todo]
            gens = self.engine.generate_batch(reqs) if batched else [self.engine.generate(r) for r in reqs]
            retry = []
            for i, req, gen in zip(todo, reqs, gens, strict=True):
                p = pending[i]
                p.rounds += 1
                p.tokens_in += len(req.tokens)
                p.tokens_out += len(gen.tokens) + (gen.finish_reason == "stop")
                p.finish_reason = gen.finish_reason
                use = gen.cache
                for key, value in (("prefill_tokens", use.prefilled), ("cached_tokens", use.cached)):
                    p.cache[key] = p.cache.get(key, 0) + value
                p.cache.setdefault("kv_cache", use.event)  # the first round's: the seat's turn
                p.cache.setdefault("new_tokens", use.new)
                move = self._finish(p, gen)
                if move is None:
                    retry.append(i)
                else:
                    moves[i] = move
            todo = retry
        return moves  # type: ignore[return-value]

    def _start(self, decision: Decision) -> _Pending:
        prompt = self._prompts.prompt(decision)
        pending = _Pending(
            decision=decision,
            legal=prompt.legal,
            messages=prompt.messages,
            attempt=self._attempt(decision),
            started=time.perf_counter(),
            prompt_text=json.dumps(prompt.messages, ensure_ascii=False),
            prompt=prompt,
        )
        if self.settings.mode == "constrained":
            if not pending.legal:
                raise ConfigError(f"{decision.game.spec.id}'s text view lists no legal strings; use mode='free'")
            pending.trie = TokenTrie.from_strings(pending.legal, self.engine.encode_answer)
        return pending

    def _request(self, p: _Pending) -> Request:
        s = self.settings
        sampler = None
        if s.temperature > 0:
            seed = int(p.decision.rng("mlx", self.seed, p.attempt, p.rounds).integers(0, 2**62))
            sampler = KeyedSampler(seed, s.temperature, s.top_p)
        tokens, prefix = self.engine.encode_chat(p.messages)
        if not s.prefix_cache:
            prefix = 0
        session = None
        if self._transcript and s.max_cached_seats > 0:
            session = self._session(p.decision.episode_seed, p.decision.seat)
        if p.trie is not None:
            constraint = TrieConstraint(p.trie, self.engine.eos)
            return Request(tokens, p.trie.depth + 1, sampler, constraint, prefix, session)
        return Request(tokens, s.max_tokens, sampler, None, prefix, session)

    def _finish(self, p: _Pending, gen: Generated) -> Move | None:
        """The move for a finished generation, or None to ask again (free mode, retries left)."""
        text = self.engine.decode(gen.tokens)
        p.responses.append(text)
        if p.trie is not None:
            index = p.trie.lookup(gen.tokens)
            if index is None:  # only a token budget cut could do this; the runner's policy decides
                return Move(
                    text, self._telemetry(p, parse_method="constrained", valid=False, legal=False, default_used=False)
                )
            action = legal_action_for(p.decision, p.legal[index])
            if action is NO_ACTION:  # the text view lists a string neither canonical nor parseable
                return Move(
                    p.legal[index],
                    self._telemetry(p, parse_method="constrained", valid=False, legal=False, default_used=False),
                )
            return Move(
                action, self._telemetry(p, parse_method="constrained", valid=True, legal=True, default_used=False)
            )
        parsed = self._prompts.parse(p.decision, text)
        if not parsed.default_used:
            return Move(parsed.action, self._telemetry(p, **parsed.telemetry()))
        if p.rounds <= self.settings.retries:
            if p.prompt is None:  # pragma: no cover - every pending decision has its prompt
                raise PlayerError("a decision retried without its prompt")
            p.prompt = self._prompts.retry(p.prompt, text, retry_feedback(p.legal, parsed.detail))
            p.messages = p.prompt.messages
            return None
        # hand the unreadable text to the runner: it records it and applies the policy
        return Move(text, self._telemetry(p, **parsed.telemetry(), parse_detail=parsed.detail))

    def _telemetry(self, p: _Pending, **parse: Any) -> dict[str, Any]:
        """The move's telemetry; in the transcript view also the seat's conversation gets the
        answer (every move is built here, once per decision)."""
        s = self.settings
        if p.prompt is not None:
            self._prompts.answered(p.prompt, p.responses[-1])
        out: dict[str, Any] = {
            "model": s.model,
            "mode": s.mode,
            "temperature": s.temperature,
            "tokens_in": p.tokens_in,
            "tokens_out": p.tokens_out,
            "latency_s": round(time.perf_counter() - p.started, 6),
            "finish_reason": p.finish_reason,
            "retries": p.rounds - 1,
            "attempt": p.attempt,
            "view": s.view,
            # the prompt cache's use (transcript view: it is the point there; a snapshot record stays as it was)
            **(p.cache if self._transcript else {}),
            **parse,
        }
        out.update(text_record("prompt", p.prompt_text, s.record_prompt))
        out.update(text_record("response", p.responses[-1], s.record_response))
        if len(p.responses) > 1 and s.record_response == "full":
            out["earlier_responses"] = p.responses[:-1]
        return out
