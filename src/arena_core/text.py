"""Text views for language-model players: a prompt rebuilt from the state every turn, and a
parser from free text to an action that reports how it parsed."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # pragma: no cover
    from .game import Game, Position

#: ``ParseResult.method`` of an answer that names no action unambiguously
UNPARSEABLE = "unparseable"


@dataclass(frozen=True)
class Prompt:
    """One turn's prompt: system text (the rules), user text (the state) and the legal strings."""

    system: str
    user: str
    legal: tuple[str, ...]

    def messages(self) -> list[dict[str, str]]:
        return [{"role": "system", "content": self.system}, {"role": "user", "content": self.user}]


@dataclass(frozen=True)
class ParseResult:
    """How an answer was read: which method matched, whether it named an action (valid), whether
    that action is legal, and whether the default was used instead."""

    action: Any
    method: str
    valid: bool
    legal: bool
    default_used: bool
    detail: str = ""

    def telemetry(self) -> dict[str, Any]:
        return {
            "parse_method": self.method,
            "valid": self.valid,
            "legal": self.legal,
            "default_used": self.default_used,
        }


class TextView(Protocol):
    def prompt(self, game: Game[Any, Any], pos: Position[Any], player: int) -> Prompt: ...

    def parse(self, game: Game[Any, Any], pos: Position[Any], player: int, text: str) -> ParseResult: ...


def _norm(s: str) -> str:
    return " ".join(s.split()).lower()


# ---------------------------------------------------------------------------- strict answers
#: the parser looks at most at this many characters of the visible answer (its end, where the
#: answer is); a longer answer is cut and the cut is reported in ``ParseResult.detail``
MAX_ANSWER_CHARS = 16_000
#: characters that may wrap a label: markdown emphasis, code ticks, quotes and brackets
_WRAP = "*_`'\"()[]{}<>~ \t"
#: what may follow a label on its line (nothing but punctuation)
_TRAIL = ".,;:!?"
_THINK_TAGS = ("think", "thinking", "reasoning")
_ANSWER_ANYWHERE = re.compile(r"\banswer\s*[*_]*\s*[:=]\s*[*_`'\"(\[]*\s*([^\s*_`'\")\].,;:!?]+)", re.IGNORECASE)
_ANSWER_LINE = re.compile(r"^[\s>#*_-]*(?:(?:final|my)\s+)?answer\s*[*_]*\s*[:=]\s*(?P<value>.*?)\s*$", re.IGNORECASE)


def strip_think(text: str) -> str:
    """``text`` without its reasoning blocks (``<think>...</think>``, also ``thinking`` and
    ``reasoning`` tags, any case): a block's content is never an answer. An unclosed opening
    tag hides everything after it; a closing tag with no opening tag (a chat template that
    opens the block in the prompt) hides everything before it. Linear time."""
    return split_think(text)[0]


def split_think(text: str) -> tuple[str, bool]:
    """``(visible text, whether a think block was left open)``; see :func:`strip_think`."""
    if "<" not in text:
        return text, False
    low = text.lower()
    unclosed = False
    for tag in _THINK_TAGS:
        opener, closer = f"<{tag}>", f"</{tag}>"
        if opener not in low and closer not in low:
            continue
        first_open, first_close = low.find(opener), low.find(closer)
        start = 0
        if first_close != -1 and (first_open == -1 or first_close < first_open):
            start = first_close + len(closer)  # the block was opened by the prompt
        kept, pos = [], start
        while True:
            o = low.find(opener, pos)
            if o == -1:
                kept.append(text[pos:])
                break
            kept.append(text[pos:o])
            c = low.find(closer, o + len(opener))
            if c == -1:
                unclosed = True  # the rest is reasoning that never ended
                break
            kept.append("\n")
            pos = c + len(closer)
        text = "".join(kept)
        low = text.lower()
    return text, unclosed


def _unwrap(value: str) -> str:
    """A candidate answer without wrapping markdown/quotes/brackets and trailing punctuation."""
    prev = None
    while prev != value:
        prev = value
        value = value.strip(_WRAP).rstrip(_TRAIL)
    return value


class LabelIndex:
    """Legal strings for matching: whitespace-collapsed and case-insensitive, except that a
    one-letter label must match in its own case (so "a" and "I" never stand for "A" and "I")."""

    def __init__(self, legal: dict[str, Any]):
        self.exact: dict[str, Any] = {}
        self.folded: dict[str, Any] = {}
        for key, action in legal.items():
            k = " ".join(str(key).split())
            if len(k) == 1 and k.isalpha():
                self.exact[k] = action
            else:
                self.folded[k.lower()] = action

    def find(self, value: str) -> tuple[str, Any] | None:
        v = " ".join(_unwrap(value).split())
        if v in self.exact:
            return v, self.exact[v]
        if v.lower() in self.folded:
            return v.lower(), self.folded[v.lower()]
        return None


def json_fields(text: str, keys: tuple[str, ...]) -> list[tuple[str, Any]]:
    """Every ``(key, value)`` from the flat JSON objects in ``text`` that have one of ``keys``
    (per object, the first of ``keys`` it has), in order of appearance."""
    out: list[tuple[str, Any]] = []
    if "{" not in text:
        return out
    for match in re.finditer(r"\{[^{}]*\}", text):
        try:
            obj = json.loads(match.group(0))
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            for key in keys:
                if key in obj:
                    out.append((key, obj[key]))
                    break
    return out


def json_field(text: str, keys: tuple[str, ...]) -> tuple[str, Any] | None:
    """``(key, value)`` from the first flat JSON object in ``text`` that has one of ``keys``
    (the first of ``keys`` it has), or None."""
    found = json_fields(text, keys)
    return found[0] if found else None


def unparseable(default: Callable[[], Any], detail: str) -> ParseResult:
    """The result for an answer that names no action unambiguously (recorded, never guessed):
    method ``"unparseable"``, ``default_used`` True (the policy decides what happens)."""
    return ParseResult(default(), UNPARSEABLE, False, False, True, detail)


def parse_choice(
    text: Any,
    legal: dict[str, Any],
    *,
    default: Callable[[], Any],
    json_keys: tuple[str, ...] = ("action",),
    extra: Sequence[Callable[[str], list[tuple[str, str]]]] = (),
    lenient: bool = False,
    max_chars: int = MAX_ANSWER_CHARS,
) -> ParseResult:
    """Read one of ``legal`` (legal string -> action) from an answer, strictly.

    Only unambiguous answers count: the last non-empty line is exactly a label (markdown,
    quotes, brackets and trailing punctuation aside); a JSON object with one of ``json_keys``;
    a line ``Answer: X`` (also ``Final answer:``/``My answer:``) with nothing but punctuation
    after X. Every such answer found must name the same label; two different labels, a hedge
    ("B or C") or a label only inside a ``<think>`` block read as unparseable (method
    ``"unparseable"``, ``default_used`` True) -- never as a guess. Letters in prose ("a", "I")
    are never labels. Only the last ``max_chars`` characters of the visible answer are read.

    ``extra``: a game's own formats, each ``text -> [(method, value)]``; their values join the
    candidates (a game adds formats; it cannot loosen these rules). ``lenient=True`` is the
    opt-in benchmark-compatible mode: the rightmost mention of a legal string anywhere wins.
    """
    if not isinstance(text, str):
        return unparseable(default, f"not text: {type(text).__name__}")
    if lenient:
        return _parse_lenient(text, {_norm(k): v for k, v in legal.items()}, default)
    index = LabelIndex(legal)
    visible, unclosed = split_think(text)
    if unclosed:
        return unparseable(default, "a think block is never closed: the answer is unfinished reasoning")
    hidden = " (labels inside a think block are not read)" if visible != text else ""
    note = ""
    if len(visible) > max_chars:
        visible = visible[-max_chars:]
        note = f" (answer longer than {max_chars} characters: only its end was read)"
    if not visible.strip():
        return unparseable(default, f"empty answer{hidden}{note}")
    candidates: list[tuple[str, str]] = []  # (method, raw value)
    lines = [ln for ln in visible.splitlines() if _unwrap(ln)]  # lines of only punctuation do not count
    for _key, value in json_fields(visible, json_keys):
        candidates.append(("json", value if isinstance(value, str) else json.dumps(value)))
    for ln in lines:
        m = _ANSWER_LINE.match(ln)
        if m:
            candidates.append(("answer_line", m.group("value")))
    for fmt in extra:
        candidates.extend(fmt(visible))
    last = lines[-1] if lines else ""
    if not _ANSWER_LINE.match(last) and index.find(last) is not None:
        candidates.append(("exact" if len(lines) == 1 else "last_line", last))
    if not candidates:
        return unparseable(default, f"no unambiguous answer; end with a line 'Answer: <label>'{hidden}{note}")
    looked = [(method, raw, index.find(raw)) for method, raw in candidates]
    bad = [(method, raw) for method, raw, hit in looked if hit is None]
    if bad:
        method, raw = bad[-1]
        return unparseable(default, f"{method} {_clip(raw)!r} is not exactly one legal action{note}")
    read = [(method, raw, hit) for method, raw, hit in looked if hit is not None]
    labels = {hit[0] for _, _, hit in read}
    for m in _ANSWER_ANYWHERE.finditer(visible):  # an "Answer: X" inside a line still counts against
        hit = index.find(m.group(1))
        if hit is not None:
            labels.add(hit[0])
    if len(labels) > 1:
        return unparseable(default, f"the answer names different labels: {', '.join(sorted(labels))}{note}")
    method, _, (_, action) = read[0]
    return ParseResult(action, method, True, True, False, note.strip())


def _clip(s: str, n: int = 60) -> str:
    return s if len(s) <= n else s[:n] + "..."


def _parse_lenient(text: str, legal: dict[str, Any], default: Callable[[], Any]) -> ParseResult:
    """The benchmark-compatible reading: whole answer, JSON ``action``, last line, then the
    rightmost mention of any legal string in the prose (think blocks included)."""
    whole = _norm(text)
    if whole in legal:
        return ParseResult(legal[whole], "exact", True, True, False)
    found = json_field(text, ("action",))
    if found is not None:
        key = _norm(str(found[1]))
        if key in legal:
            return ParseResult(legal[key], "json", True, True, False)
        return ParseResult(default(), "json", True, False, True, f"{found[1]!r} is not legal")
    lines = [ln.strip().strip("`*'\".") for ln in text.strip().splitlines() if ln.strip()]
    if lines and _norm(lines[-1]) in legal:
        return ParseResult(legal[_norm(lines[-1])], "last_line", True, True, False)
    best, best_pos = None, -1
    for key, action in legal.items():
        for m in re.finditer(r"(?<![\w])" + re.escape(key) + r"(?![\w])", whole):
            if m.start() > best_pos:
                best, best_pos = action, m.start()
    if best is not None:
        return ParseResult(best, "mention", True, True, False)
    return ParseResult(default(), "default", False, False, True, "no legal action found in the answer")


@dataclass(frozen=True)
class GenericTextView:
    """Works for any game: the structured observation as JSON and the legal action strings.

    Answers are read strictly by :func:`parse_choice` (a final line that is exactly a legal
    string, a JSON ``"action"``, or ``Answer: X``; ambiguity is unparseable). ``lenient=True``
    is the opt-in benchmark-compatible reading (rightmost mention of a legal string).
    """

    answer_instruction: str = (
        "Think briefly, then end your answer with one line holding exactly one of the legal actions."
    )
    extra: dict[str, Any] = field(default_factory=dict)
    lenient: bool = False

    def prompt(self, game: Game[Any, Any], pos: Position[Any], player: int) -> Prompt:
        legal = tuple(game.action_to_str(a) for a in game.legal(pos, player))
        obs = game.observe(pos, player)
        system = (
            f"You are playing {game.spec.id} as player {player} of {game.num_players}.\n"
            f"{game.rules_text()}\n{self.answer_instruction}"
        )
        user = (
            "Your observation:\n"
            + json.dumps(obs, sort_keys=True, separators=(", ", ": "))
            + "\nLegal actions: "
            + ", ".join(legal)
        )
        return Prompt(system=system, user=user, legal=legal)

    def parse(self, game: Game[Any, Any], pos: Position[Any], player: int, text: str) -> ParseResult:
        legal = {game.action_to_str(a): a for a in game.legal(pos, player)}
        return parse_choice(text, legal, default=lambda: game.default_action(pos.state, player), lenient=self.lenient)
