"""A text-answering player for the report tests: it reads the prompt, answers in free text
(sometimes garbage, so that faults appear), and records prompt and answer in its telemetry."""

from __future__ import annotations

from arena_core.players import BasePlayer, Decision, Move


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
        return Move(text, {"prompt": prompt.user, "response": text, "mode": "free"})
