"""A terminal player: a human-friendly view of the position, numbered legal moves, a typed choice.

The view is not the language-model prompt: it is the game's ``"human"`` view (``Game.views()``; an
object with ``render(game, pos, player) -> str``). :class:`HumanView`, a readable summary of the
player's own observation (boards as grids, nested tables indented, only the latest messages of a
transcript), is registered in ``arena.views`` as every game's ``"human"`` view, which a game may
replace with its own; ``arena play --show`` and ``arena replay --show`` render positions through it.
The moves are listed by the game's names for them (``Game.action_label``).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from arena_core.errors import ConfigError, PlayerError
from arena_core.game import Game, Position
from arena_core.players import BasePlayer, Decision, Move
from arena_core.views import get_view

#: the last messages of a transcript-like observation that the summary shows
RECENT_MESSAGES = 6
WIDTH = 100
QUIT = ("q", "quit", "exit")
HELP = ("?", "h", "help")


def _scalar(x: Any) -> bool:
    return isinstance(x, (str, int, float, bool)) or x is None


def _fmt(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:g}"
    if x is None:
        return "-"
    return str(x)


def _grid(rows: list[list[Any]], pad: str) -> list[str]:
    cells = [[_fmt(c) for c in row] for row in rows]
    width = max((len(c) for row in cells for c in row), default=1)
    return [pad + " ".join(c.rjust(width) for c in row) for row in cells]


def render_value(key: str, value: Any, pad: str = "", *, seat: int | None = None) -> list[str]:
    """``key: value`` as readable lines (scalars inline, grids as rows, tables indented)."""
    label = key.replace("_", " ")
    text = getattr(value, "text", None)
    if isinstance(text, str):  # a message of a transcript
        sender = getattr(value, "sender", None)
        head = f"{pad}{label}" + (f" (from player {sender})" if isinstance(sender, int) and sender >= 0 else "") + ":"
        return [head] + [pad + "  " + line for line in text.strip().splitlines()]
    if _scalar(value):
        return [f"{pad}{label}: {_fmt(value)}"]
    if isinstance(value, dict):
        if not value:
            return [f"{pad}{label}: (none)"]
        if all(_scalar(v) for v in value.values()):
            inline = ", ".join(f"{k}={_fmt(v)}" for k, v in value.items())
            if len(pad) + len(label) + len(inline) + 2 <= WIDTH:
                return [f"{pad}{label}: {inline}"]
        out = [f"{pad}{label}:"]
        for k, v in value.items():
            out += render_value(str(k), v, pad + "  ")
        return out
    if isinstance(value, (list, tuple)):
        items = list(value)
        if not items:
            return [f"{pad}{label}: (none)"]
        if all(_scalar(v) for v in items):
            inline = ", ".join(_fmt(v) for v in items)
            if len(pad) + len(label) + len(inline) + 2 <= WIDTH:
                return [f"{pad}{label}: {inline}"]
        if all(isinstance(getattr(v, "text", None), str) for v in items):  # a transcript: its latest messages
            shown = items[-RECENT_MESSAGES:]
            out = [
                f"{pad}{label} (latest {len(shown)} of {len(items)}):" if len(items) > len(shown) else f"{pad}{label}:"
            ]
            for v in shown:
                out += render_value("message", v, pad + "  ")
            return out
        if all(isinstance(r, (list, tuple)) and r and all(_scalar(c) for c in r) for r in items):
            return [f"{pad}{label}:"] + _grid([list(r) for r in items], pad + "  ")
        out = [f"{pad}{label}:"]
        for i, v in enumerate(items):
            mark = " (you)" if seat is not None and key == "players" and i == seat else ""
            out += render_value(f"[{i}]{mark}", v, pad + "  ")
        return out
    return [f"{pad}{label}: {value!r}"]


def numbered(names: list[str], width: int = WIDTH) -> str:
    """``  1. move`` entries, in columns when there are many short ones."""
    cells = [f"{i:>3}. {text}" for i, text in enumerate(names, 1)]
    cell = max((len(c) for c in cells), default=0) + 2
    cols = max(1, min(6, width // max(1, cell))) if len(cells) > 12 else 1
    rows = -(-len(cells) // cols)
    lines = []
    for r in range(rows):
        lines.append(
            "  " + "".join(cells[c * rows + r].ljust(cell) for c in range(cols) if c * rows + r < len(cells)).rstrip()
        )
    return "\n".join(lines)


class HumanView:
    """Any game: the player's own observation as a readable summary (never the hidden state)."""

    def render(self, game: Game[Any, Any], pos: Position[Any], player: int) -> str:
        obs = game.observe(pos, player)
        lines: list[str] = []
        if isinstance(obs, dict):
            for key, value in obs.items():
                lines += render_value(str(key), value, seat=player)
        else:
            lines += render_value("observation", obs, seat=player)
        return "\n".join(lines)


def human_view(game: Game[Any, Any]) -> Any:
    """The game's ``"human"`` view (its own, else :class:`HumanView`)."""
    return get_view(game, "human")


class HumanPlayer(BasePlayer):
    """Shows the position and the numbered legal moves; type a number or the move itself.

    ``?`` shows the rules again, ``prompt`` the language-model prompt, ``q`` quits (recorded as
    a player error; the illegal-action policy decides). Input that is not a legal move asks
    again, up to ``max_tries`` lines; then the last line goes to the runner's parser and the
    policy (a typed fault). End of input is a player error, never a silent move."""

    name = "human"
    mode = "constrained"  # picks from the numbered legal moves (other input is asked again)

    def __init__(
        self,
        seed: int = 0,
        *,
        input: TextIO | None = None,
        output: TextIO | None = None,
        show_rules: bool = True,
        max_tries: int = 10,
    ):
        super().__init__(seed)
        if not isinstance(max_tries, int) or isinstance(max_tries, bool) or max_tries < 1:
            raise ConfigError(f"human: max_tries must be a whole number >= 1, got {max_tries!r}")
        self._input = input
        self._output = output
        self.show_rules = show_rules
        self.max_tries = max_tries
        self._rules_shown: set[tuple[int, int]] = set()

    def begin_episode(self, game: Game[Any, Any], seat: int, episode_seed: int) -> None:
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

    def _rules(self, decision: Decision) -> str:
        return decision.game.rules_text()

    def act(self, decision: Decision) -> Any:
        started = time.perf_counter()
        game = decision.game
        key = (decision.episode_seed, decision.seat)
        if self.show_rules and key not in self._rules_shown:
            self._rules_shown.add(key)
            self._say(f"=== {game.spec.id}: rules ===\n{self._rules(decision)}")
        legal = list(decision.legal_actions)
        names: list[str] = decision.view_with(lambda g, pos, seat: [g.action_label(pos.state, seat, a) for a in legal])
        view = decision.view_with(human_view(game).render)
        self._say(
            f"\n--- {game.spec.id}: you are player {decision.seat}; decision {decision.ply} ---\n{view}\n\nyour legal moves:"
        )
        self._say(numbered(names))
        answer = ""
        for tries in range(1, self.max_tries + 1):
            self._say(f"your move (1-{len(names)} or the move; ? rules, prompt, q quit): ")
            answer = self._read()
            low = answer.lower()
            if low in QUIT:
                raise PlayerError("the human player quit")
            if low in HELP:
                self._say(self._rules(decision))
                continue
            if low == "prompt":
                prompt = decision.prompt()
                self._say(f"{prompt.system}\n\n{prompt.user}")
                continue
            chosen = self._choose(answer, legal, names)
            if chosen is not None:
                return Move(
                    chosen,
                    {"latency_s": round(time.perf_counter() - started, 6), "tries": tries, "parse_method": "choice"},
                )
            if answer and not answer.isdigit():  # a number is a menu choice only; other text: the game's own reading
                parsed = decision.parse(answer)
                if not parsed.default_used:
                    return Move(
                        parsed.action,
                        {"latency_s": round(time.perf_counter() - started, 6), "tries": tries, **parsed.telemetry()},
                    )
            left = self.max_tries - tries
            self._say(
                f"{answer!r} is not one of your legal moves; type a number from 1 to {len(names)}"
                + (f" ({left} tries left)" if left else "")
            )
        return answer  # the runner parses it and the illegal-action policy decides (a typed fault)

    @staticmethod
    def _choose(answer: str, legal: Sequence[Any], names: list[str]) -> Any:
        text = answer.strip()
        if text.isdigit():
            n = int(text)
            if 1 <= n <= len(legal):
                return legal[n - 1]
            return None
        want = " ".join(text.split()).lower()
        for action, name in zip(legal, names):
            if " ".join(name.split()).lower() == want:
                return action
        return None
