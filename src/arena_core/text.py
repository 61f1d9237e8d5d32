"""Text views for language-model players: a prompt rebuilt from the state every turn, and a
parser from free text to an action that reports how it parsed."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

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
    """``text`` without its reasoning blocks (``<think>``, ``<thinking>``, ``<reasoning>``, any case).
    An unclosed opening tag hides everything after it; a closing tag with no opening tag (a chat
    template that opens the block in the prompt) hides everything before it. Linear time."""
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


def unwrap_answer(value: str) -> str:
    """An answer value as the contract compares it: wrapping markdown, quotes and brackets and
    trailing punctuation removed, whitespace collapsed (case kept)."""
    return " ".join(_unwrap(value).split())


class LabelIndex:
    """Legal strings for matching, by the contract's exactness rule (docs/answers.md, rule 3); a
    label with its own wrapping matches unwrapped unless two labels would then read alike."""

    def __init__(self, legal: dict[str, Any]):
        self.exact: dict[str, tuple[str, Any]] = {}
        self.folded: dict[str, tuple[str, Any]] = {}
        bare: dict[str, list[tuple[str, Any]]] = {}
        for key, action in legal.items():
            k = " ".join(str(key).split())
            if len(k) == 1 and k.isalpha():
                self.exact[k] = (k, action)
            else:
                self.folded[k.lower()] = (k, action)
            u = " ".join(_unwrap(k).split())
            if u and u != k:
                bare.setdefault(u if len(u) == 1 and u.isalpha() else u.lower(), []).append((k, action))
        for u, entries in bare.items():
            table = self.exact if len(u) == 1 and u.isalpha() else self.folded
            if len(entries) == 1 and u not in table:
                table[u] = entries[0]

    def find(self, value: str) -> tuple[str, Any] | None:
        """``(the legal string as listed, its action)`` for an answer value, or None."""
        whole = " ".join(value.split())
        if len(whole) > 1 and whole.lower() in self.folded:  # a label with its own wrapping, as listed
            return self.folded[whole.lower()]
        v = " ".join(_unwrap(value).split())
        if v in self.exact:
            return self.exact[v]
        return self.folded.get(v.lower())


# ---------------------------------------------------------------------------- the answer contract
#: balanced ``{...}`` starts tried per answer (bounded work on hostile answers)
JSON_ATTEMPTS = 256
#: a label in square brackets anywhere in the answer (TextArena's own answer format)
_BRACKET = re.compile(r"\[[^\[\]\n]{1,200}\]")
#: a committed statement of the answer in prose ("I'll go with X"); its value runs to the end of its clause
_STATEMENT = re.compile(
    r"\b(?:I\s*(?:'ll|will|shall)\s+(?:go\s+with|choose|pick|play)|my\s+(?:final\s+)?(?:answer|choice|move)\s+is)"
    r"\s*:?\s*(?P<value>[^\n.;!?,]*?)\s*(?=$|[\n.;!?,]|\s+(?:because|since|as|so|to|for)\b)",
    re.IGNORECASE,
)
JsonKind = Literal["label", "integer"]


@dataclass(frozen=True)
class Reading:
    """The contract's verdict on one answer: the key it names (``None``: refused), the carrier
    that named it first, and why it was refused."""

    key: Any
    method: str
    detail: str = ""


def _objects(text: str) -> list[tuple[int, int, dict[str, Any]]]:
    """``(start, end, object)`` for every JSON object in ``text`` whose braces balance (nested ones
    too, outer first), at most :data:`JSON_ATTEMPTS` starts tried."""
    if "{" not in text:
        return []
    stack: list[int] = []
    spans: list[tuple[int, int]] = []
    for m in re.finditer(r"[{}]", text):
        if m.group() == "{":
            stack.append(m.start())
        elif stack:
            spans.append((stack.pop(), m.start() + 1))
    out: list[tuple[int, int, dict[str, Any]]] = []
    for start, end in sorted(spans)[:JSON_ATTEMPTS]:
        try:
            obj = json.loads(text[start:end])
        except ValueError:
            continue
        if isinstance(obj, dict):
            out.append((start, end, obj))
    return out


def _json_raw(value: Any, kind: JsonKind) -> tuple[str | None, str]:
    """A JSON value as the raw text of an answer, or ``(None, why)`` when its type is wrong:
    a label is a string, an integer an integer (never a boolean, a decimal or a string)."""
    if kind == "label" and isinstance(value, str):
        return value, ""
    if kind != "label" and isinstance(value, int) and not isinstance(value, bool):
        return str(value), ""
    wanted = "a label string" if kind == "label" else "an integer"
    return None, f"{json.dumps(value)} is a JSON {_jtype(value)}, not {wanted}"


def _jtype(value: Any) -> str:
    """The JSON type of a value ``json.loads`` gave."""
    kinds = {bool: "boolean", int: "integer", float: "decimal", str: "string", list: "list", dict: "object"}
    return kinds.get(type(value), "null" if value is None else type(value).__name__)


def read_answer(
    text: Any,
    resolve: Callable[[str], Any],
    *,
    json_keys: tuple[str, ...],
    json_kind: JsonKind = "label",
    extra: Sequence[Callable[[str], list[tuple[str, str]]]] = (),
) -> Reading:
    """Read one answer by the contract (its carriers and rules: docs/answers.md); ``resolve(raw) ->
    key or None`` maps a raw value to the game's canonical key, ``json_keys`` and ``json_kind`` say
    what a JSON carrier holds, ``extra`` are the game's own formats."""
    if not isinstance(text, str):
        return Reading(None, UNPARSEABLE, f"not text: {type(text).__name__}")
    visible, unclosed = split_think(text)
    if unclosed:
        return Reading(None, UNPARSEABLE, "a think block is never closed: the answer is unfinished reasoning")
    hidden = " (labels inside a think block are not read)" if visible != text else ""
    note = ""
    if len(visible) > MAX_ANSWER_CHARS:
        visible = visible[-MAX_ANSWER_CHARS:]
        note = f" (answer longer than {MAX_ANSWER_CHARS} characters: only its end was read)"
    if not visible.strip():
        return Reading(None, UNPARSEABLE, f"empty answer{hidden}{note}")
    strict: list[tuple[str, str]] = []  # (method, raw): must name a key
    loose: list[tuple[str, str]] = []  # (method, raw): count only when they name one
    objects = _objects(visible)
    prose = visible  # the answer outside its JSON objects: brackets and statements are read there
    for start, end, _ in reversed(objects):
        prose = prose[:start] + " " * (end - start) + prose[end:]
    for _, _, obj in objects:
        key = next((k for k in json_keys if k in obj), None)
        if key is None:
            continue
        raw, why = _json_raw(obj[key], json_kind)
        if raw is None:
            return Reading(None, UNPARSEABLE, f"json {key!r}: {why}{note}")
        strict.append(("json", raw))
    lines = [ln for ln in visible.splitlines() if _unwrap(ln)]  # lines of only punctuation do not count
    for ln in lines:
        m = _ANSWER_LINE.match(ln)
        if m and not m.group("value").startswith("{"):  # "Answer: {...}" is read as its JSON
            strict.append(("answer_line", m.group("value")))
    for fmt in extra:
        strict.extend(fmt(visible))
    last = lines[-1] if lines else ""
    if last and not _ANSWER_LINE.match(last) and resolve(last) is not None:
        strict.append(("exact" if len(lines) == 1 else "last_line", last))
    loose.extend(("bracket", t) for t in _BRACKET.findall(prose))
    # never an answer alone, but a different key named this way refuses the answer
    against = [m.group("value") for m in _STATEMENT.finditer(prose)]
    against.extend(m.group(1) for m in _ANSWER_ANYWHERE.finditer(prose))
    keys: dict[Any, str] = {}  # key -> the first carrier that named it
    for method, raw in strict:
        key = resolve(raw)
        if key is None:
            return Reading(None, UNPARSEABLE, f"{method} {_clip(raw)!r} is not exactly one legal action{note}")
        keys.setdefault(key, method)
    for method, raw in loose:
        key = resolve(raw)
        if key is not None:
            keys.setdefault(key, method)
    if not keys:
        return Reading(None, UNPARSEABLE, f"no unambiguous answer; end with a line 'Answer: <label>'{hidden}{note}")
    named = set(keys) | {k for k in map(resolve, filter(None, against)) if k is not None}
    if len(named) > 1:
        return Reading(
            None, UNPARSEABLE, f"the answer names different answers: {', '.join(sorted(map(str, named)))}{note}"
        )
    ((key, method),) = keys.items()
    return Reading(key, method, note.strip())


def json_field(text: str, keys: tuple[str, ...]) -> tuple[str, Any] | None:
    """``(key, value)`` from the first JSON object in ``text`` (outer objects first) that has one
    of ``keys`` (the first of ``keys`` it has), or None."""
    for _, _, obj in _objects(text):
        for key in keys:
            if key in obj:
                return key, obj[key]
    return None


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
) -> ParseResult:
    """Read one of ``legal`` (legal string -> action) from an answer by :func:`read_answer`;
    anything ambiguous is :func:`unparseable`, never a guess. ``extra``: a game's own formats, each
    ``text -> [(method, value)]``; ``lenient=True``: the opt-in benchmark-compatible reading."""
    if not isinstance(text, str):
        return unparseable(default, f"not text: {type(text).__name__}")
    if lenient:
        return _parse_lenient(text, {_norm(k): v for k, v in legal.items()}, default)
    index = LabelIndex(legal)

    def resolve(raw: str) -> Any:
        hit = index.find(raw)
        return None if hit is None else hit[0]

    reading = read_answer(text, resolve, json_keys=json_keys, extra=extra)
    if reading.key is None:
        return unparseable(default, reading.detail)
    found = index.find(reading.key)
    if found is None:  # pragma: no cover - a key comes from the index
        return unparseable(default, f"{reading.key!r} is not a legal action")
    return ParseResult(found[1], reading.method, True, True, False, reading.detail)


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
    """Works for any game: the structured observation as JSON and the legal action strings;
    answers are read by :func:`parse_choice` (strict unless ``lenient``)."""

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
        shown = json.dumps(obs, sort_keys=True, separators=(", ", ": "))
        user = f"Your observation:\n{shown}\nLegal actions: {', '.join(legal)}"
        return Prompt(system=system, user=user, legal=legal)

    def parse(self, game: Game[Any, Any], pos: Position[Any], player: int, text: str) -> ParseResult:
        legal = {game.action_to_str(a): a for a in game.legal(pos, player)}
        return parse_choice(text, legal, default=lambda: game.default_action(pos.state, player), lenient=self.lenient)
