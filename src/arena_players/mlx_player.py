"""Local language-model players on MLX (``mlx-lm``), with constrained and free decoding.

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

The pieces, one module each: :mod:`.mlx_prompting` (chat-template encoding), :mod:`.mlx_decoding`
(the token trie, samplers, a request and its result), :mod:`.mlx_cache` (the kept KV caches),
:mod:`.mlx_batch` (batched generation) and :mod:`.mlx_engine` (the engine that joins them). This
module holds the player and re-exports the names older code imports from it.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from arena_core.errors import ConfigError, PlayerError
from arena_core.game import Game
from arena_core.players import BasePlayer, Decision, EpisodeEnd, Move

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
from .mlx_cache import CacheUse, EngineStats, common_prefix
from .mlx_decoding import (
    Generated,
    KeyedSampler,
    Request,
    RowSampling,
    TokenTrie,
    TrieConstraint,
    TrieNode,
    top_p_filter,
)
from .mlx_engine import RANDOM_QWEN, MLXEngine, load_model

__all__ = [
    "RANDOM_QWEN",
    "CacheUse",
    "EngineStats",
    "Generated",
    "KeyedSampler",
    "MLXEngine",
    "MLXPlayer",
    "MLXSettings",
    "Request",
    "RowSampling",
    "TokenTrie",
    "TrieConstraint",
    "TrieNode",
    "common_prefix",
    "load_model",
    "top_p_filter",
]


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
        default="full", description="'full' text, its 'hash' and length, or 'none' (length only)"
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
    def begin_episode(self, game: Game[Any, Any], seat: int, episode_seed: int) -> None:
        self._last_ply.pop((int(episode_seed), int(seat)), None)
        self._prompts.begin_episode(game, seat, episode_seed)
        if self._transcript:
            self.engine.drop_sessions(lambda key: key == self._session(episode_seed, seat))

    def end_episode(self, end: EpisodeEnd) -> None:
        """An episode ended (:class:`~arena_core.players.EpisodeEnd`): free the seat's kept KV cache."""
        self.free_episode(end.episode_seed, end.seat)

    def free_episode(self, episode_seed: int, seat: int | None = None) -> int:
        """Free the kept KV caches of ``episode_seed`` (one ``seat``'s or all of them); returns how
        many were freed. The least recently used go anyway once over ``max_cached_seats``."""
        return self.engine.drop_sessions(
            lambda key: (
                isinstance(key, tuple)
                and key[0] == self._tag
                and key[1] == int(episode_seed)
                and seat in (None, key[2])
            )
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
        moves: dict[int, Move | BaseException] = {}
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
        return [moves[i] for i in range(len(decisions))]  # every row has its move or its exception

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
