"""The answer contract (docs/answers.md) is one reading in every game: the table in the doc is
parsed and every row runs on Kuhn poker, MegaGem, a matrix game and two TextArena titles."""

from __future__ import annotations

import importlib.util
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from arena_core.registry import make_game

DOC = Path(__file__).resolve().parents[1] / "docs" / "answers.md"
ROW = re.compile(r"^\| (?P<n>\d+) \| (?P<shape>[^|]+) \| `(?P<answer>.*)` \| (?P<reading>A|refuse) \|$")


def table() -> list[tuple[str, str, str]]:
    rows = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        m = ROW.match(line)
        if m:
            answer = m.group("answer").strip()
            answer = "" if answer == "(empty)" else answer.replace("\\n", "\n")
            if m.group("answer").startswith(" "):  # the fenced row is written `` ```...``` ``
                answer = m.group("answer").strip()
            rows.append((f"{m.group('n')} {m.group('shape').strip()}", answer, m.group("reading")))
    return rows


ROWS = table()


def test_the_table_is_there_and_big_enough():
    assert len(ROWS) >= 20
    assert {r for _, _, r in ROWS} == {"A", "refuse"}
    numbers = [int(name.split()[0]) for name, _, _ in ROWS]
    assert numbers == list(range(1, len(ROWS) + 1)), "rows are numbered 1..n without gaps"


@dataclass
class Subject:
    """One game at one decision: how to parse, and the placeholders' values there."""

    game: Any
    pos: Any
    player: int
    a: Any  # the action the rows' A names
    subs: dict[str, str]

    def parse(self, text: str) -> Any:
        return self.game.text_view().parse(self.game, self.pos, self.player, text)


def _bare(label: str) -> str:
    return label[1:-1] if label.startswith("[") and label.endswith("]") else label


def _label_subject(game_id: str, a_index: int = 0, b_index: int = 1, **params: Any) -> Subject:
    game = make_game(game_id, **params)
    pos = game.start(0)
    player = game.current_player(pos)
    legal = list(game.legal(pos, player))
    a, b = legal[a_index], legal[b_index]
    la, lb = game.action_to_str(a), game.action_to_str(b)
    wrong = _bare(la)
    subs = {
        "A": la,
        "B": lb,
        "a": _bare(la),
        "b": _bare(lb),
        "KEY": "action",
        "JA": json.dumps(la),
        "JB": json.dumps(lb),
        # a number where a label string is expected (the label's own digits where it has them)
        "WA": wrong if wrong.isdigit() else str(a_index),
    }
    return Subject(game, pos, player, a, subs)


def _megagem_subject() -> Subject:
    game = make_game("megagem")
    pos = game.start(0)
    player = game.current_player(pos)
    legal = list(game.legal(pos, player))
    a, b = legal[2], legal[5]  # bid 2, bid 5
    subs = {
        "A": "bid 2",
        "B": "bid 5",
        "a": "2",
        "b": "5",
        "KEY": "bid",
        "JA": "2",
        "JB": "5",
        "WA": '"2"',
    }
    assert (game.action_to_str(a), game.action_to_str(b)) == ("bid 2", "bid 5")
    return Subject(game, pos, player, a, subs)


HAS_TEXTARENA = importlib.util.find_spec("textarena") is not None
SUBJECTS = {
    "kuhn_poker": lambda: _label_subject("kuhn_poker"),
    "megagem": _megagem_subject,
    "matrix": lambda: _label_subject("matrix", 0, 1),
    "textarena/TicTacToe-v0": lambda: _label_subject("textarena/TicTacToe-v0", 4, 7),
    "textarena/KuhnPoker-v0": lambda: _label_subject("textarena/KuhnPoker-v0"),
}
_made: dict[str, Subject] = {}


def subject(name: str) -> Subject:
    if name.startswith("textarena/") and not HAS_TEXTARENA:
        pytest.skip("textarena is not installed")
    if name not in _made:
        _made[name] = SUBJECTS[name]()
    return _made[name]


def fill(template: str, subs: dict[str, str]) -> str:
    return re.sub(r"\{(A|B|a|b|KEY|JA|JB|WA)\}", lambda m: subs[m.group(1)], template)


@pytest.mark.parametrize("game", list(SUBJECTS))
@pytest.mark.parametrize(("shape", "template", "reading"), ROWS, ids=[r[0] for r in ROWS])
def test_every_game_reads_the_row_as_the_contract_says(game, shape, template, reading):
    s = subject(game)
    text = fill(template, s.subs)
    r = s.parse(text)
    shown = f"{game}: {shape}: {text!r} -> action {r.action!r}, method {r.method}, detail {r.detail!r}"
    if reading == "A":
        assert (r.action, r.valid, r.default_used) == (s.a, True, False), shown
    else:
        assert (r.valid, r.default_used, r.method) == (False, True, "unparseable"), shown
        assert r.detail, shown


def test_the_readings_agree_across_games():
    """Parity as one statement: each row gives one verdict (read or refused) in every game."""
    verdicts: dict[str, set[bool]] = {}
    for name in SUBJECTS:
        if name.startswith("textarena/") and not HAS_TEXTARENA:
            continue
        s = subject(name)
        for shape, template, _ in ROWS:
            r = s.parse(fill(template, s.subs))
            verdicts.setdefault(shape, set()).add(not r.default_used)
    split = sorted(shape for shape, seen in verdicts.items() if len(seen) > 1)
    assert not split, f"games disagree on: {split}"
