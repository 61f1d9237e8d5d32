"""The text and outcome seam of the TextArena adapter: what a player sees (the observation,
the transcript within a length budget, the numeric encoding, the language-model view) and how
an episode ended (TextArena's rewards and reasons typed as an :class:`~.state.Outcome`, and the
core's end reason).

Observations are rebuilt from the messages the player has received *in this episode*,
read without draining TextArena's queues, with an optional length budget. The
``LLMObservationWrapper`` (which keeps transcripts across resets) is never used.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from arena_core.episode import EndReason

from .bridge import Message
from .state import NO_INDEX, AdapterError, EndKind, Outcome, TextArenaState

if TYPE_CHECKING:
    from arena_core.game import Position
    from arena_core.text import ParseResult, Prompt
    from arena_core.transcript import TranscriptTurn

    from .adapter import TextArenaGame
    from .bridge import _LiveEnv

_TURN_LIMIT = re.compile(r"turn limit|maximum number of turns|move limit", re.IGNORECASE)

_END_REASONS = {
    EndKind.NATURAL: EndReason.NATURAL,
    EndKind.TURN_LIMIT: EndReason.TURN_CAP,
    EndKind.DECISION_CAP: EndReason.TURN_CAP,
    EndKind.FORFEIT: EndReason.FORFEIT,
    EndKind.PLAYER_ERROR: EndReason.PLAYER_ERROR,
    EndKind.ENV_ERROR: EndReason.GAME_ERROR,
}


class TextAndOutcomeHooks:
    """The observation and outcome hooks of :class:`~.adapter.TextArenaGame` (a mixin; the
    game's views are declared on that class, as every game's are)."""

    if TYPE_CHECKING:  # what the mixin reads from TextArenaGame (declared for type checkers only)
        from arena_core.spec import GameSpec

        from .state import TitleSpec

        title: ClassVar[TitleSpec]
        spec: ClassVar[GameSpec]
        observation_size: ClassVar[int]
        params: Any  # a TextArenaParams (Game declares the base type)
        num_players: int
        _index: dict[str, int]
        _max_chars: int | None

        def legal_actions(self, state: TextArenaState, player: int) -> tuple[str, ...]: ...

    def _outcome(self, live: _LiveEnv) -> Outcome:
        rewards, info = live.rng.call(live.env.close)
        rewards, info = rewards or {}, info or {}
        values: list[float] = []
        reason, offender = "", None
        for p in range(self.num_players):
            values.append(float(rewards.get(p, 0.0) or 0.0))
            player_info = info.get(p)
            if player_info:
                reason = reason or str(player_info.get("reason", ""))
                if offender is None and player_info.get("invalid_move"):
                    offender = p
        returns = tuple(values)
        if offender is not None:
            return Outcome(EndKind.FORFEIT, returns, reason, offender)
        ta_state = live.env.state
        max_turns = getattr(ta_state, "max_turns", None)
        at_limit = max_turns is not None and ta_state.turn >= max_turns - 1
        if len(set(returns)) == 1 and (at_limit or _TURN_LIMIT.search(reason)):
            return Outcome(EndKind.TURN_LIMIT, returns, reason or "turn limit")
        return Outcome(EndKind.NATURAL, returns, reason)

    # ------------------------------------------------------------------ views
    def observation(self, state: TextArenaState, player: int) -> dict[str, Any]:
        messages, omitted = state.messages(player), 0
        if self._max_chars is not None:
            messages, omitted = budget(messages, self._max_chars)
        obs: dict[str, Any] = {
            "title": self.title.env_id,
            "player": player,
            "to_move": list(state.to_move),
            "messages": messages,  # a fresh list of (sender, kind, text) tuples (immutable: safe to share)
            "omitted_messages": omitted,
        }
        outcome = state.outcome
        if outcome is not None:
            obs["end"] = {"kind": outcome.kind.value, "reason": outcome.reason}
        return obs

    def transcript(self, state: TextArenaState, player: int) -> str:
        """The player's messages as one text (``[GAME] ...`` / ``[Player k] ...`` lines), within budget."""
        messages, omitted = budget(state.messages(player), self.params.max_observation_chars)
        lines = [m.render() for m in messages]
        if omitted:
            lines.insert(
                1 if messages and messages[0].kind == "PROMPT" else 0, f"[... {omitted} earlier messages omitted ...]"
            )
        return "\n".join(lines)

    def encode_observation(self, state: TextArenaState, player: int) -> np.ndarray:
        """Seat, whether to act, the legal mask and progress: not the game state (the spec says
        ``observation_is_state=False``); the game itself is in the transcript (:meth:`transcript`)."""
        out = np.zeros(self.observation_size, dtype=np.float32)
        out[player] = 1.0
        m = self.spec.max_players
        if player in state.to_move:
            out[m] = 1.0
            for a in self.legal_actions(state, player):
                out[m + 1 + self._index[a]] = 1.0
        out[-1] = min(1.0, len(state.actions) / self.title.decision_cap)
        return out

    def action_id(self, action: str) -> int:
        i = self._index.get(action)
        if i is not None:
            return i
        if self.title.free_text and isinstance(action, str):
            return NO_INDEX
        raise ValueError(f"{self.spec.id}: {action!r} is not in this title's action vocabulary")

    def action_from_id(self, index: int) -> str:
        if not 0 <= index < len(self.title.vocabulary):
            raise ValueError(
                f"{self.spec.id}: action index {index} is not in range(0, {len(self.title.vocabulary)})"
                + ("; free text has no index: submit the string" if self.title.free_text else "")
            )
        return self.title.vocabulary[index]

    def action_to_str(self, action: str) -> str:
        return action

    def default_action(self, state: TextArenaState, player: int) -> str:
        legal = self.legal_actions(state, player)
        if not legal:
            raise AdapterError(f"{self.spec.id}: no candidate action to substitute for player {player}")
        return legal[0]

    def end_kind(self, state: TextArenaState) -> EndKind | None:
        """The typed end reason, or None while the game runs."""
        return None if state.outcome is None else state.outcome.kind

    def end_reason(self, state: TextArenaState) -> EndReason:
        """The core's end reason: TextArena's own turn limit and the adapter's cap are
        truncations (no result), a livelock is a player error, an upstream dead end a game error."""
        outcome = state.outcome
        if outcome is None:
            raise AdapterError(f"{self.spec.id}: end reason asked before the end")
        return _END_REASONS[outcome.kind]

    def end_offender(self, state: TextArenaState) -> int | None:
        outcome = state.outcome
        return None if outcome is None else outcome.offender


def budget(messages: Sequence[Message], max_chars: int | None) -> tuple[list[Message], int]:
    """Keep the first message (the rules prompt) and the most recent ones within ``max_chars``."""
    msgs = list(messages)
    if max_chars is None:
        return msgs, 0
    if sum(len(m.text) + 12 for m in msgs) <= max_chars:
        return msgs, 0
    head = msgs[:1] if msgs and msgs[0].kind == "PROMPT" and len(msgs[0].text) + 12 <= max_chars // 2 else []
    room = max_chars - sum(len(m.text) + 12 for m in head)
    tail: list[Message] = []
    for m in reversed(msgs[len(head) :]):
        cost = len(m.text) + 12
        if cost > room:
            break
        tail.append(m)
        room -= cost
    tail.reverse()
    return head + tail, len(msgs) - len(head) - len(tail)


def _rank_returns(n: int, offender: int, bounds: tuple[float, float]) -> tuple[float, ...]:
    lo = bounds[0]
    others = 0.0 if n == 1 else -lo / (n - 1)
    return tuple(lo if p == offender else others for p in range(n))


@dataclass(frozen=True)
class TranscriptTextView:
    """The language-model view of a TextArena title: the player's own transcript (as
    TextArena's LLM wrapper shows it, but from this episode only and within the budget) plus
    the legal actions; answers are read the TextArena way (bracket tokens)."""

    answer_instruction: str = "Answer with your move; put the action in square brackets as the rules describe."

    def prompt(self, game: TextArenaGame, pos: Position[TextArenaState], player: int) -> Prompt:
        from arena_core.text import Prompt

        legal = tuple(game.legal(pos, player))
        system = f"You are Player {player} in TextArena's {game.title.env_id}.\n{self.answer_instruction}"
        label = "Some accepted actions" if game.title.free_text else "Legal actions"
        user = game.transcript(pos.state, player) + (f"\n\n{label}: " + ", ".join(legal) if legal else "")
        return Prompt(system=system, user=user, legal=legal)

    def parse(self, game: TextArenaGame, pos: Position[TextArenaState], player: int, text: str) -> ParseResult:
        from arena_core.text import ParseResult, parse_choice

        if game.title.free_text:
            ok = isinstance(text, str) and game.is_legal(pos.state, player, text)
            if ok:
                return ParseResult(text, "free_text", True, True, False)
            why = game.rejection_reason(pos.state, text) if isinstance(text, str) else "not text"
            return ParseResult(game.default_action(pos.state, player), "default", False, False, True, why or "rejected")
        legal = {game.action_to_str(a): a for a in game.legal(pos, player)}
        # the answer contract (docs/answers.md): a bracket token naming one legal move is read there
        return parse_choice(text, legal, default=lambda: game.default_action(pos.state, player))


@dataclass(frozen=True)
class TextArenaTranscriptView:
    """The transcript view of a TextArena title (view name ``"transcript"``): a seat's first
    turn is the snapshot prompt (:class:`TranscriptTextView`: its transcript so far and the
    legal actions); every later turn is one user message with only the messages that seat
    received since its last turn (``[GAME] ...`` / ``[Player k] ...`` lines, read from its own
    observation) and its new legal actions. The whole history is never resent, so a prompt
    grows by the new messages only. The marker is the number of messages the seat had
    received. Answers are read by the snapshot view's parser.

    After the first turn a long run of legal actions of one form is written as a range
    (:func:`compact_legal`, runs of at least ``min_run``; 0 lists every action): LiarsDice's
    forty-odd legal bids become ``every [Bid: #, #] from [Bid: 3, 5] to [Bid: 10, 6] (46 actions)``."""

    answer_instruction: str = TranscriptTextView.answer_instruction
    min_run: int = 8

    def turn(self, game: TextArenaGame, pos: Position[TextArenaState], player: int, since: Any) -> TranscriptTurn:
        from arena_core.transcript import TranscriptTurn

        obs = game.observe(pos, player)
        messages: list[Message] = obs["messages"]
        total = len(messages) + int(obs["omitted_messages"])
        if since is None:
            prompt = TranscriptTextView(self.answer_instruction).prompt(game, pos, player)
            return TranscriptTurn(tuple(prompt.messages()), prompt.legal, total)
        count = max(total - int(since), 0)
        # with a length budget the observation keeps the rules prompt and the latest messages
        head = 1 if obs["omitted_messages"] and messages and messages[0].kind == "PROMPT" else 0
        new = messages[max(len(messages) - count, head) :] if count else []
        lines = [m.render() for m in new]
        if count > len(new):  # the length budget kept fewer of them
            lines.insert(0, f"[... {count - len(new)} earlier messages omitted ...]")
        if not lines:
            lines = ["(no new messages)"]
        legal = tuple(game.legal(pos, player))
        label = "Some accepted actions" if game.title.free_text else "Legal actions"
        shown = compact_legal(legal, game.title.vocabulary, min_run=self.min_run)
        user = "\n".join(lines) + (f"\n\n{label}: {shown}" if legal else "")
        return TranscriptTurn(({"role": "user", "content": user},), legal, total)

    def parse(self, game: TextArenaGame, pos: Position[TextArenaState], player: int, text: str) -> ParseResult:
        return TranscriptTextView(self.answer_instruction).parse(game, pos, player, text)


_NUMBER = re.compile(r"\d+")


def compact_legal(legal: Sequence[str], vocabulary: Sequence[str], *, min_run: int = 8) -> str:
    """``legal`` as a comma-separated list in which every run of at least ``min_run`` actions of
    one form (the same text up to its numbers) that are consecutive in the title's
    ``vocabulary`` among the actions of that form reads ``every <form> from <first> to <last>
    (<n> actions)``. Lossless: the run holds exactly the vocabulary's actions of that form from
    the first to the last. ``min_run=0`` lists every action."""
    if min_run <= 0 or len(legal) < min_run:
        return ", ".join(legal)
    forms: dict[str, list[str]] = {}
    for a in vocabulary:
        forms.setdefault(_NUMBER.sub("#", a), []).append(a)
    rank = {a: i for members in forms.values() for i, a in enumerate(members)}
    parts: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if len(run) >= min_run:
            parts.append(f"every {_NUMBER.sub('#', run[0])} from {run[0]} to {run[-1]} ({len(run)} actions)")
        else:
            parts.extend(run)
        run.clear()

    for a in legal:
        if (
            run
            and a in rank
            and run[-1] in rank
            and _NUMBER.sub("#", a) == _NUMBER.sub("#", run[-1])
            and rank[a] == rank[run[-1]] + 1
        ):
            run.append(a)
        else:
            flush()
            run.append(a)
    flush()
    return ", ".join(parts)
