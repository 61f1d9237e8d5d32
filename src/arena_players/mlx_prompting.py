"""Prompts to tokens for the MLX engine: a chat through the tokenizer's template, with the system
turn (the rules) encoded once and marked as a prefix whose KV cache can be shared, and answer
strings (the legal actions) encoded once each."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class ChatEncoder:
    """A tokenizer's chat-template encoding, with the system turns and answers it has seen cached."""

    def __init__(self, tokenizer: Any, *, head_cache_size: int = 8):
        self.tokenizer = tokenizer  # an mlx_lm TokenizerWrapper (mlx_lm ships no types)
        self.head_cache_size = head_cache_size
        self._heads: dict[str, tuple[str, list[int]] | None] = {}
        self._answers: dict[str, list[int]] = {}
        try:
            self._specials: tuple[str, ...] = tuple(sorted(tokenizer.get_added_vocab(), key=len, reverse=True))
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
                return head_tokens + self.encode(rest), len(head_tokens)
        tokens = self.encode(text)
        if head is not None and 0 < len(head[1]) < len(tokens) and tokens[: len(head[1])] == head[1]:
            return tokens, len(head[1])
        return tokens, 0

    def encode(self, text: str) -> list[int]:
        """The tokens of ``text``, no special tokens added."""
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def _system_head(self, messages: list[dict[str, str]]) -> tuple[str, list[int]] | None:
        """The rendered system turn and its tokens (cached by its text), or None."""
        if len(messages) < 2 or messages[0]["role"] != "system":
            return None
        content = messages[0]["content"]
        if content not in self._heads:
            try:
                head_text: str = self.tokenizer.apply_chat_template(
                    messages[:1], add_generation_prompt=False, tokenize=False
                )
                self._heads[content] = (head_text, self.encode(head_text))
            except Exception:
                self._heads[content] = None
            while len(self._heads) > self.head_cache_size:
                self._heads.pop(next(iter(self._heads)))
        return self._heads[content]

    def encode_answer(self, text: str) -> list[int]:
        """Tokens of an answer string (cached: the same legal strings recur every turn)."""
        tokens = self._answers.get(text)
        if tokens is None:
            if len(self._answers) > 65536:
                self._answers.clear()
            tokens = self._answers[text] = self.encode(text)
        return list(tokens)

    def decode(self, tokens: Sequence[int]) -> str:
        text: str = self.tokenizer.decode(list(tokens))
        return text
