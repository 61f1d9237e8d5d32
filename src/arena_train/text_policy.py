"""A language model that reads and answers as the frontier does: the game's text view (the prompt
the OpenAI-compatible and MLX players send, through the tokenizer's chat template) and an answer
in the title's own action strings, decoded under the MLX player's constraint (its
:class:`~arena_players.mlx_decoding.TokenTrie` of the legal strings, end-of-sequence once a string
is complete), so every answer is a legal move.

The walk down the trie is a chain of single-token menus: where the trie branches, the menu is the
node's children (plus end-of-sequence where a string may end there); where it does not, the token
is forced (probability 1, nothing to learn). A decision's record is the tuple of its branching
steps' :class:`~arena_train.lm.LMRecord` s, so the action's exact log-probability is their sum and
GRPO trains each step with the decision's advantage (token-level GRPO). At temperature T the
draw is the distribution of ``mlx:mode=constrained,temperature=T`` over the same strings; greedy
gives the MLX player's greedy answer (tested).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import mlx.core as mx
import numpy as np
from mlx.nn.layers.base import Module  # not re-exported by mlx.nn for a type checker

from arena_core.errors import ConfigError
from arena_core.players import Decision
from arena_core.seeding import make_rng

from .lm import LMRecord, Weights, menu_logprobs, pad_batch, swapped
from .rollout import Choice, Request
from .views import Tokenizer

__all__ = ["TextPolicy", "TextPrompt", "records_of"]


def records_of(record: Any) -> tuple[LMRecord, ...]:
    """The trainable records of one decision: a menu answer's one record, a text answer's steps."""
    if record is None:
        return ()
    if isinstance(record, tuple):
        return record
    return (record,)


@dataclass(frozen=True)
class TextPrompt:
    """One decision through the text view: the prompt's tokens, the legal strings and their trie."""

    tokens: tuple[int, ...]
    legal: tuple[str, ...]
    trie: Any  # arena_players.mlx_decoding.TokenTrie
    decision: Decision


class TextPolicy:
    """A :class:`~arena_train.rollout.Learner` answering in the title's action strings (see the
    module docstring). ``temperature`` 0 is greedy; ``weights`` plays a frozen snapshot."""

    include_illegal = False  # the trie offers legal strings only

    def __init__(
        self,
        model: Module,
        tokenizer: Tokenizer,
        *,
        temperature: float = 1.0,
        weights: Weights | None = None,
        max_batch: int = 64,
    ) -> None:
        from arena_players.mlx_prompting import ChatEncoder

        self.model = model
        self.tokenizer = tokenizer
        self.temperature = float(temperature)
        self.weights = weights
        self.max_batch = max_batch
        self.chat = ChatEncoder(tokenizer)
        self.eos = end_of_sequence(tokenizer)

    def prompt(self, req: Request) -> TextPrompt:
        """The decision's text-view prompt as tokens, and the trie of its legal strings."""
        from arena_players.mlx_decoding import TokenTrie

        decision = Decision.at(req.game, req.pos, req.seat, 0)
        prompt = decision.prompt()  # the game's text view: what the frontier is sent
        if not prompt.legal:
            raise ConfigError(f"{req.game.spec.id}'s text view lists no legal strings; train it on view = 'auto'")
        tokens, _ = self.chat.encode_chat(prompt.messages())
        legal = tuple(prompt.legal)
        return TextPrompt(tuple(tokens), legal, TokenTrie.from_strings(legal, self.chat.encode_answer), decision)

    def _logprobs(self, rows: Sequence[tuple[tuple[int, ...], tuple[int, ...]]]) -> list[np.ndarray[Any, Any]]:
        """Log-probabilities over each row's single-token menu (one forward row per distinct row)."""
        index: dict[tuple[tuple[int, ...], tuple[int, ...]], int] = {}
        for r in rows:
            index.setdefault(r, len(index))
        unique = list(index)
        out: list[np.ndarray[Any, Any]] = []
        temperature = self.temperature if self.temperature > 0 else 1.0
        for start in range(0, len(unique), self.max_batch):
            chunk = unique[start : start + self.max_batch]
            batch = pad_batch([r[0] for r in chunk], [r[1] for r in chunk])
            with swapped(self.model, self.weights):
                lp = menu_logprobs(self.model, *batch, temperature=temperature)
                mx.eval(lp)
            arr = np.array(lp, dtype=np.float64)
            out.extend(arr[i, : len(r[1])] for i, r in enumerate(chunk))
        return [out[index[r]] for r in rows]

    def decide(self, requests: Sequence[Request]) -> list[Choice]:
        """Every request's walk down its trie, the rows that still branch forwarded together."""
        from arena_players.llm_common import NO_ACTION, legal_action_for

        prompts = [self.prompt(r) for r in requests]
        nodes = [p.trie.root for p in prompts]
        paths: list[list[int]] = [[] for _ in prompts]
        steps: list[list[LMRecord]] = [[] for _ in prompts]
        done = [False] * len(prompts)
        depth = 0
        while not all(done):
            branching: list[int] = []
            for i, p in enumerate(prompts):
                if done[i]:
                    continue
                allowed = p.trie.allowed(nodes[i], self.eos)
                if len(allowed) == 1:  # forced: no choice, nothing to learn
                    self._advance(i, allowed[0], prompts, nodes, paths, done)
                else:
                    branching.append(i)
            if not branching:
                continue
            rows = [
                (prompts[i].tokens + tuple(paths[i]), tuple(prompts[i].trie.allowed(nodes[i], self.eos)))
                for i in branching
            ]
            for i, (tokens, labels), lp in zip(branching, rows, self._logprobs(rows)):
                if self.temperature <= 0:
                    k = int(np.argmax(lp))
                else:
                    p = np.exp(lp - lp.max())
                    k = int(make_rng(requests[i].key, "text_policy", depth).choice(len(p), p=p / p.sum()))
                steps[i].append(LMRecord(tokens, labels, (True,) * len(labels), k, float(lp[k]), ""))
                self._advance(i, labels[k], prompts, nodes, paths, done)
            depth += 1
        choices = []
        for p, path, recs in zip(prompts, paths, steps):
            index = p.trie.lookup(path[:-1] if path and path[-1] == self.eos else path)
            action = NO_ACTION if index is None else legal_action_for(p.decision, p.legal[index])
            if action is NO_ACTION:  # a listed string the game cannot read: the rollout plays the default
                choices.append(Choice(None, unparseable=True, record=tuple(recs)))
            else:
                choices.append(Choice(action, record=tuple(recs)))
        return choices

    def _advance(
        self, i: int, token: int, prompts: list[TextPrompt], nodes: list[Any], paths: list[list[int]], done: list[bool]
    ) -> None:
        paths[i].append(int(token))
        if token == self.eos:
            done[i] = True
            return
        nodes[i] = nodes[i].children[int(token)]
        if not nodes[i].children and nodes[i].value is not None:
            done[i] = True  # a complete string that nothing extends: only end-of-sequence would follow


def end_of_sequence(tokenizer: Any) -> int:
    """The tokenizer's end-of-sequence id, as the MLX engine picks it."""
    ids = [int(t) for t in getattr(tokenizer, "eos_token_ids", ()) or ()]
    eos = getattr(tokenizer, "eos_token_id", None)
    if eos is not None:
        return int(eos)
    if not ids:
        raise ConfigError("the tokenizer names no end-of-sequence token; text answers need one")
    return min(ids)
