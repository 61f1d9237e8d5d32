"""Players and servers for the report tests: a text-answering player that reads the prompt,
answers in free text (sometimes garbage, so that faults appear) and records prompt, answer and
token counts in its telemetry; a fake OpenAI-compatible server that plays draw-or-stand
(tournament_toys' game) for the real OpenAI-compatible player; and one that plays any TextArena
title from its prompt's legal actions (the loop's frontier seat)."""

from __future__ import annotations

import re
from typing import Any

from arena_core.players import BasePlayer, Decision, Move
from arena_games.matrix.fakellm import FakeChatServer


class Chatty(BasePlayer):
    name = "chatty"

    def __init__(self, seed: int = 0, *, garbage_every: int = 0, api_key_env: str = "NO_SUCH_KEY_VARIABLE"):
        super().__init__(seed)
        self.garbage_every = garbage_every
        self.api_key_env = api_key_env
        self.calls = 0

    def act(self, decision: Decision):
        self.calls += 1
        prompt = decision.prompt()
        legal = [decision.game.action_to_str(a) for a in decision.legal_actions]
        pick = legal[int(decision.rng().integers(len(legal)))]
        text = f"I think <{pick}> & then </script> is best.\nAnswer: {pick}"
        if self.garbage_every and self.calls % self.garbage_every == 0:
            text = "mumble </script><b>not a move</b>"
        usage = {"model": "chatty-1", "tokens_in": len(prompt.user) // 4, "tokens_out": len(text) // 4}
        return Move(text, {"prompt": prompt.user, "response": text, "mode": "free", **usage})


class DrawServer(FakeChatServer):
    """Answers every draw-or-stand prompt with a short reasoning line and ``Answer: draw``."""

    def answer(self, body: dict[str, Any]) -> str:
        return "My card is low enough to gamble.\nAnswer: draw"


class LegalFake(FakeChatServer):
    """Answers the last legal action of TextArena's prompt; every third request, words that are no move."""

    def answer(self, body):
        prompt = body["messages"][-1]["content"]
        legal = re.findall(r"\[[^\[\]]+\]", prompt.rsplit("Legal actions:", 1)[-1])
        with self._lock:
            n = len(self.log)
            self.log.append({"legal": legal})
        return "I am not sure." if n % 3 == 2 else legal[-1]
