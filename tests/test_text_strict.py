"""The core's strict answer parsing (``arena_core.text.parse_choice``): a label is read only
from an unambiguous answer; everything else is recorded as unparseable, never guessed."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_core.text import MAX_ANSWER_CHARS, UNPARSEABLE, parse_choice, strip_think
from arena_games.matrix import MatrixGame

LABELS = "ABCDEFGHIJ"
LEGAL = {c: i for i, c in enumerate(LABELS)}
MISS = -1


def read(text, **kw):
    r = parse_choice(text, LEGAL, default=lambda: MISS, json_keys=("action", "label", "answer", "choice"), **kw)
    return None if r.default_used else LABELS[r.action], r


# (answer, the label it must read or None for unparseable)
KNOWN = [
    ("C", "C"),
    ("  C  ", "C"),
    ("**C**", "C"),
    ("`C`", "C"),
    ('"C"', "C"),
    ("(C)", "C"),
    ("[C]", "C"),
    ("C.", "C"),
    ("Answer: C", "C"),
    ("answer: C!", "C"),
    ("**Answer:** C.", "C"),
    ("Answer: **C**", "C"),
    ("Final answer: C", "C"),
    ("My answer = C", "C"),
    ("> Answer: C", "C"),
    ("I think about it for a while.\nAnswer: C", "C"),
    ("Answer: C\nI hope the other copy agrees!", "C"),
    ("I weigh A against B.\nC", "C"),
    ('{"action": "C"}', "C"),
    ('Reasoning... {"label": "C"}', "C"),
    ('```json\n{"answer": "C"}\n```', "C"),
    ('{"action": "C"}\nAnswer: C', "C"),
    ("<think>Maybe A, maybe B.</think>\nAnswer: C", "C"),
    ("<think>Answer: A</think>Answer: C", "C"),
    ("I lean to A. </think>\nAnswer: C", "C"),  # the template opened the think block
    ("<THINKING>A</THINKING>\nC", "C"),
    # unparseable: hedges, two labels, prose, think-only, not a label
    ("B or C", None),
    ("Answer: B or C", None),
    ("Answer: B/C", None),
    ("Answer: C (My choice is a focal one.)", None),
    ("Answer: C because it is focal", None),
    ("Answer: B\nAnswer: C", None),
    ("Answer: B\nC", None),
    ('{"action": "B"} Answer: C', None),
    ('{"action": "B"}\n{"action": "C"}', None),
    ("I pick a letter.", None),
    ("I", "I"),  # a whole answer that is exactly a label (k = 10 has I) ...
    ("I pick.", None),  # ... but the pronoun in prose never is
    ("a", None),
    ("c", None),
    ("My choice is C.", None),
    ("I choose C", None),
    ("C is the focal point, so I go with it", None),
    ("<think>Answer: C</think>", None),
    ("<think>C", None),
    ("Answer: C is what I would say</think>", None),
    ("Answer: Q", None),
    ('{"action": "Z"}', None),
    ('{"action": 3}', None),
    ("", None),
    ("   \n  ", None),
]


@pytest.mark.parametrize("answer, expected", KNOWN)
def test_known_answers(answer, expected):
    got, r = read(answer)
    assert got == expected, r.detail
    if expected is None:
        assert (r.method, r.valid, r.default_used) == (UNPARSEABLE, False, True)
        assert r.detail  # says why
    else:
        assert r.valid and r.legal and not r.default_used


def test_the_table_is_big_enough():
    assert len(KNOWN) >= 30 and sum(e is None for _, e in KNOWN) >= 15


def test_not_text_is_unparseable():
    got, r = read(None)
    assert got is None and r.method == UNPARSEABLE


def test_multi_word_labels_fold_case_and_spaces():
    legal = {"add 1": 1, "add 2": 2}
    r = parse_choice("so...\nANSWER:  Add   2.", legal, default=lambda: 0)
    assert (r.action, r.method) == (2, "answer_line")
    assert parse_choice("add 1 or add 2", legal, default=lambda: 0).default_used


def test_lenient_mode_is_opt_in():
    assert read("C is the focal point, so I go with it")[0] is None
    got, r = read("C is the focal point, so I go with it", lenient=True)
    assert got is None or r.method == "mention"  # single letters in prose: lenient mode's risk


def test_a_ten_megabyte_answer_is_read_from_its_end():
    big = "blah " * 2_000_000 + "\nAnswer: D"
    got, r = read(big)
    assert got == "D" and str(MAX_ANSWER_CHARS) in r.detail
    got, r = read("<think>" * 1_000_000)  # hostile: linear-time think stripping
    assert got is None
    got, r = read("{" * 5_000_000)
    assert got is None


def test_strip_think():
    assert strip_think("a<think>b</think>c") == "a\nc"
    assert strip_think("a<think>b") == "a"
    assert strip_think("b</think>c") == "c"
    assert strip_think("no tags") == "no tags"


# -- generated prose: the parser never reads a label other than the intended one ----------
PLAIN = [
    "a",
    "I",
    "A",
    "B",
    "C",
    "D",
    "E",
    "J",
    "option",
    "choose",
    "answer",
    "the",
    "copy",
    "focal",
    "is",
    "or",
    "pick",
    "label",
    "C.",
    "(B)",
    "**A**",
    "maybe",
    "Answer",
    "answer:",
    "think",
    "same",
    "model",
]
WORDS = st.sampled_from(PLAIN + ["<think>", "</think>"])
PROSE_LINE = st.lists(WORDS, min_size=2, max_size=12).map(" ".join)
PROSE = st.lists(PROSE_LINE, min_size=0, max_size=6).map("\n".join)
PLAIN_PROSE = st.lists(st.lists(st.sampled_from(PLAIN), min_size=2, max_size=12).map(" ".join), max_size=6).map(
    "\n".join
)
FORMATS = [
    "{x}",
    "**{x}**",
    "Answer: {x}",
    "Answer: {x}.",
    "Final answer: **{x}**",
    '{{"action": "{x}"}}',
    '{{"label": "{x}"}}',
    "Answer: `{x}`!",
]


@settings(max_examples=300, deadline=None)
@given(PROSE, st.sampled_from(LABELS), st.sampled_from(FORMATS), st.booleans(), st.text(alphabet=" .!\n", max_size=4))
def test_generated_prose_never_yields_another_label(prose, label, fmt, think_decoy, tail):
    """Prose before a well-formed answer (with label words, hedges, stray 'answer' words and
    think tags) reads the intended label or nothing; with a clean prefix it is always read."""
    decoy = "<think>Answer: " + ("B" if label != "B" else "C") + "</think>\n" if think_decoy else ""
    answer = fmt.format(x=label)
    got, r = read(f"{decoy}{prose}\n{answer}{tail}")
    assert got in (label, None), (prose, answer, r)
    assert read(f"{decoy}I thought about it for a while.\n{answer}{tail}")[0] == label


@settings(max_examples=300, deadline=None)
@given(PLAIN_PROSE)
def test_prose_lines_of_several_words_are_never_an_answer(prose):
    """Lines of two or more words with no 'Answer:' line and no JSON name no label."""
    got, r = read(prose.replace(":", ""))
    assert got is None


def test_every_game_view_is_strict():
    """The matrix view and the generic view read through the same core rules."""
    from arena_core.text import GenericTextView
    from arena_games.kuhn import KuhnPoker

    game = MatrixGame({"k": 4})
    pos = game.start(0)
    view = game.text_view()
    for text, expected in [
        ("Answer: C (focal)", None),
        ("<think>Answer: B</think>", None),
        ("a\nAnswer: B", "B"),
        ("I", None),
    ]:
        r = view.parse(game, pos, 0, text)
        assert (None if r.default_used else game.action_to_str(r.action)) == expected
    kuhn = KuhnPoker()
    r = GenericTextView().parse(kuhn, kuhn.start(0), 0, "I could pass or bet")
    assert r.default_used and r.method == UNPARSEABLE


def test_a_game_may_add_a_format_but_not_loosen_the_rules():
    """``extra``: a game's own answer format joins the candidates; a conflict with another
    answer is still unparseable, and prose is still never read."""
    import re

    def move_format(text):  # e.g. a game that also accepts "Move #C"
        return [("move", m.group(1)) for m in re.finditer(r"Move #(\w+)", text)]

    got, r = read("Thinking.\nMove #C", extra=(move_format,))
    assert got == "C" and r.method == "move"
    assert read("Move #C\nAnswer: B", extra=(move_format,))[0] is None
    assert read("Move #C", extra=())[0] is None
    assert read("I like C", extra=(move_format,))[0] is None
