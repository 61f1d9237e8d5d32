"""A terminal player: shows the game's text view and the legal actions, reads a choice."""
from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from arena_core.errors import PlayerError
from arena_core.players import BasePlayer, Decision, Move

from .llm_common import NO_ACTION, legal_action_for


class HumanPlayer(BasePlayer):
    """Type the number of a legal action or the action itself; ``q`` quits (the runner records
    the quit as a player error and the illegal-action policy decides). After ``max_tries``
    unreadable lines the last one goes to the runner's parser and policy."""

    name = "human"

    def __init__(self, seed: int = 0, *, input: TextIO | None = None, output: TextIO | None = None, show_rules: bool = True, max_tries: int = 5):
        super().__init__(seed)
        if max_tries < 1:
            raise ValueError("max_tries must be >= 1")
        self._input = input
        self._output = output
        self.show_rules = show_rules
        self.max_tries = max_tries
        self._rules_shown: set[tuple[int, int]] = set()

    def begin_episode(self, game, seat: int, episode_seed: int) -> None:
        self._rules_shown.discard((int(episode_seed), int(seat)))

    def _say(self, text: str) -> None:
        out = self._output or sys.stdout
        out.write(text + "\n")
        out.flush()

    def _read(self) -> str:
        line = (self._input or sys.stdin).readline()
        if line == "":
            raise PlayerError("no input: the terminal was closed (end of file)")
        return line.strip()

    def act(self, decision: Decision) -> Any:
        started = time.perf_counter()
        prompt = decision.prompt()
        key = (decision.episode_seed, decision.seat)
        if self.show_rules and key not in self._rules_shown:
            self._rules_shown.add(key)
            self._say(prompt.system)
        self._say(f"\n--- you are player {decision.seat}, decision {decision.ply} ---\n{prompt.user}\n")
        for i, text in enumerate(prompt.legal, 1):
            self._say(f"  {i:>3}. {text}")
        answer = ""
        for tries in range(1, self.max_tries + 1):
            self._say("your choice (number or action, q to quit): ")
            answer = self._read()
            if answer.lower() in ("q", "quit", "exit"):
                raise PlayerError("the human player quit")
            if answer.isdigit() and 1 <= int(answer) <= len(prompt.legal):
                answer = prompt.legal[int(answer) - 1]
            action = legal_action_for(decision, answer)
            if action is not NO_ACTION:
                telemetry = {"latency_s": round(time.perf_counter() - started, 6), "tries": tries, "parse_method": "choice"}
                return Move(action, telemetry)
            parsed = decision.parse(answer)
            if not parsed.default_used:
                telemetry = {"latency_s": round(time.perf_counter() - started, 6), "tries": tries, **parsed.telemetry()}
                return Move(parsed.action, telemetry)
            self._say(f"not a legal action ({parsed.detail}); try again")
        return answer
